#!/bin/bash
# How long a host's neighbour stays on the vCPUs' sibling hyper-threads:
# bench/shared-core-bursts.c on every CPU at once for SECONDS (default
# 120), then per CPU the share of readings below 90% of REFERENCE adds per
# cycle (default 3.75, the Zen 3 guest's core alone; use the best a quiet
# moment gives) and the lengths of the shared and quiet stretches.
# x86-64 only (rdtsc, inline asm). docs/certainty.md, "A shared core".
set -euo pipefail
secs=${1:-120}
ref=${REFERENCE:-3.75}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Wall -o "$tmp/bursts" "$here/shared-core-bursts.c"
cpus=$(nproc)
for c in $(seq 0 $((cpus - 1))); do
  "$tmp/bursts" "$c" "$secs" >"$tmp/cpu$c" &
done
wait
python3 - "$tmp" "$cpus" "$ref" <<'PY'
import statistics as st, sys
tmp, cpus, ref = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
for c in range(cpus):
    v = [tuple(map(float, l.split())) for l in open(f"{tmp}/cpu{c}")]
    if len(v) < 2:
        print(f"cpu{c}: too few readings"); continue
    dt = v[-1][0] / (len(v) - 1)
    shared = [x < 0.9 * ref for _, x in v]
    runs, cur, n = [], shared[0], 0
    for s in shared:
        if s == cur: n += 1
        else: runs.append((cur, n)); cur, n = s, 1
    runs.append((cur, n))
    def stretch(flag):
        r = [n * dt for s, n in runs if s == flag]
        return f"{len(r)} stretches, median {st.median(r):.2f} s, longest {max(r):.1f} s" if r else "none"
    xs = sorted(x for _, x in v)
    print(f"cpu{c}: {len(v)} readings, median {xs[len(xs)//2]:.2f} adds/cycle, "
          f"{100 * sum(shared) / len(shared):.0f}% below 90% of {ref}")
    print(f"  shared: {stretch(True)}\n  quiet:  {stretch(False)}")
PY
