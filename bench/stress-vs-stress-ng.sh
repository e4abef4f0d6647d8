#!/usr/bin/env bash
# yamba stress, for the closing note of issue 16:
#  1. a 60 s `yamba stress` with every stressor and the error tests, and the
#     cost it causes to ipc.rtt.pipe, proc.fork.light and mem.pagefault.anon:
#     what it finds (invariants, error tests) and what it costs;
#  2. side by side with stress-ng on one comparable stressor, fork (fork a
#     child that exits, reap it): operations per second, and the latency
#     cost to ipc.rtt.pipe, measured by the same yamba harness for both
#     (yamba: inside `yamba stress --measure`; stress-ng: `yamba run` idle,
#     then again while stress-ng runs, placed by the scheduler as it is
#     by default, and pinned one instance per CPU as yamba's workers are).
# The machine's load is printed with the numbers: compare ratios in one run.
#
# Usage: bench/stress-vs-stress-ng.sh   (T=60 SIDE=20 WORKERS=2 to change; SKIP_FULL=1 for part 2 only)
set -euo pipefail
cd "$(dirname "$0")/.."
T=${T:-60}
SIDE=${SIDE:-20}
WORKERS=${WORKERS:-2}
command -v stress-ng >/dev/null || { echo "needs stress-ng: apt-get install stress-ng" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3 to read the results files" >&2; exit 1; }
cargo build --release -q -p yamba-cli
Y=$PWD/target/release/yamba
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$out"
cpus=$(nproc)
echo "machine: $(nproc) CPUs, $(uname -r), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "stress-ng: $(stress-ng --version)"
echo

if [ "${SKIP_FULL:-0}" != 1 ]; then
echo "== 1. yamba stress --time $T (every stressor, error tests, cost on three benchmarks)"
set +e
"$Y" stress --time "$T" --measure ipc.rtt.pipe --measure proc.fork.light --measure mem.pagefault.anon \
  --out full.json > full.txt 2> full.err
code=$?
set -e
sed -n '/^stress: seed/,$p' full.txt
echo "exit status $code (0: every invariant held and no error test found anything); load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - full.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["results"] if r["id"].startswith("stress.churn.")]
print("\nchurn, operations per second per worker (create + use + destroy):")
for r in rows:
    p = r["params"]
    print(f"  {r['id'][13:]:11s} {r['summary']['median']:10.0f}/s   created {p['created']:>8}  destroyed {p['destroyed']:>8}  used {p['used']:>8}")
calls = sum(r["params"].get("calls", 0) for r in d["results"] if r["id"].startswith("stress.errors."))
print(f"error-test calls: {calls}")
PY
echo
fi

echo "== 2. fork, side by side: $WORKERS workers, $SIDE s each"
# yamba: churn processes only; its pipe round trip idle and under the stress in one invocation.
"$Y" stress --time "$SIDE" --workers "$WORKERS" --stressors process --no-errors \
  --measure ipc.rtt.pipe --out y.json > y.txt 2>&1 || true
# stress-ng: the same harness measures the round trip idle, then while stress-ng forks:
# once as stress-ng runs by default (its workers placed by the scheduler), once
# pinned like yamba's workers (one stress-ng instance per worker, --taskset i mod CPUs).
"$Y" run --no-history ipc.rtt --set ipc.transports=pipe --out ng-idle.json > /dev/null 2>&1
ng_early=""
for variant in default pinned; do
  pids=""
  if [ $variant = default ]; then
    stress-ng --fork "$WORKERS" -t "$SIDE" --metrics-brief --yaml "ng-$variant-0.yaml" > "ng-$variant-0.txt" 2>&1 &
    pids=$!
  else
    for ((i = 0; i < WORKERS; i++)); do
      stress-ng --fork 1 --taskset $((i % cpus)) -t "$SIDE" --metrics-brief --yaml "ng-$variant-$i.yaml" > "ng-$variant-$i.txt" 2>&1 &
      pids="$pids $!"
    done
  fi
  sleep 2
  "$Y" run --no-history ipc.rtt --set ipc.transports=pipe --out "ng-$variant-stressed.json" > /dev/null 2>&1
  for p in $pids; do kill -0 "$p" 2>/dev/null || ng_early="$ng_early $variant"; done
  wait $pids || true
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORKERS" "$SIDE" "$ng_early" <<'PY'
import glob, json, re, sys
workers, side, ng_early = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3].split()
def res(path, rid):
    d = json.load(open(path))
    return next(r for r in d["results"] if r["id"] == rid)
y = json.load(open("y.json"))
proc = next(r for r in y["results"] if r["id"] == "stress.churn.process")
elapsed = max(w["elapsed_s"] for w in next(r for r in y["results"] if r["id"] == "stress.churn")["extra"]["per_worker"])
y_forks = proc["params"]["created"] / elapsed
per_worker = next(r for r in y["results"] if r["id"] == "stress.churn")["extra"]["per_worker"]
y_cpu = sum(w["cpu_s"] + w["children_cpu_s"] for w in per_worker) / (elapsed * len(per_worker))
yi = next(r for r in y["results"] if r["id"] == "ipc.rtt.pipe.same_cpu.idle")
ys = next(r for r in y["results"] if r["id"] == "ipc.rtt.pipe.same_cpu.stressed")
def ng_metrics(variant):
    """bogo ops/s summed over the variant's stress-ng instances; CPU per worker."""
    ops = cpu = 0.0
    for path in glob.glob(f"ng-{variant}-*.yaml"):
        ng, in_metrics = {}, False
        for line in open(path):
            in_metrics = in_metrics or line.startswith("metrics:")
            m = re.search(r"^\s*([a-z-]+):\s*([0-9.]+)\s*$", line)
            if in_metrics and m:
                try:
                    ng[m.group(1)] = float(m.group(2))
                except ValueError:
                    pass
        ops += ng.get("bogo-ops-per-second-real-time", float("nan"))
        cpu += (ng.get("user-time", 0) + ng.get("system-time", 0)) / ng.get("wall-clock-time", 1)
    return ops, cpu / workers
ni = res("ng-idle.json", "ipc.rtt.pipe.same_cpu")
def us(r, k="median"):
    return r["summary"][k] / 1000 if r.get("summary") else float("nan")
rows = [("yamba", y_forks, y_cpu, yi, ys)]
for variant, label in (("default", "stress-ng"), ("pinned", "stress-ng pinned")):
    ops, cpu = ng_metrics(variant)
    rows.append((label, ops, cpu, ni, res(f"ng-{variant}-stressed.json", "ipc.rtt.pipe.same_cpu")))
print(f"\n{'tool':24s} {'forks/s':>10s} {'CPU/worker':>10s}  {'rtt idle med':>12s} {'stressed med':>12s} {'ratio':>6s}  {'idle p99':>9s} {'stress p99':>10s}  status")
for name, ops, cpu, i, s in rows:
    st = f"{i['status']}/{s['status']}"
    print(f"{name:24s} {ops or float('nan'):10.0f} {100*cpu:9.0f}%  {us(i):10.2f}µs {us(s):10.2f}µs {us(s)/us(i):6.2f}  {us(i,'p99'):7.2f}µs {us(s,'p99'):8.2f}µs  {st}")
print("\nforks/s: yamba counts processes created (each forked, held, signalled, told to exit and reaped);")
print("stress-ng counts bogo ops of its fork stressor (fork, child _exit, wait), real time.")
print("CPU/worker: user + system time of the worker and the children it reaped, over its wall time.")
print("yamba's workers are pinned, one per CPU (one shares the measurement's CPU); stress-ng's are placed by the")
print("scheduler, or pinned the same way (one instance per worker, --taskset).")
if ng_early:
    print(f"WARNING: stress-ng ({' '.join(sorted(set(ng_early)))}) ended before the measurement under it did: raise SIDE")
PY
