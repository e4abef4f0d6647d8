#!/usr/bin/env bash
# Between-run certainty, yamba next to lmbench 3 (issue 10's benchmark).
#
# Part 1 — spread of medians: ROUNDS rounds; in each, every primitive is
# measured once by `yamba run` (a precise run: its value is the mean of 6
# fresh processes' medians) and once by lmbench's own program, interleaved,
# both pinned to the same CPU. Per primitive it prints both tools' median
# over the rounds, their CV of per-round values, the ratio of the CVs
# (goal ≤ 0.5), and whether each yamba round's 95% interval held the
# median of the other rounds' values; then yamba's CV and holding in core
# cycles (`certainty.cycles`), which a host's turbo steps between rounds
# do not move (lmbench reports no cycles: its CV holds those steps).
# Part 2 — time: one precise `yamba run` of the default suite vs one
# lmbench pass of the same programs (skipped unless FULL=1: it takes a
# while).
# Part 3 — false alarms: PAIRS pairs of identical precise runs of the cpu
# and ipc areas compared with `yamba compare --threshold 5`; prints how
# many pairs exited non-zero and how many result lines were called
# slower/faster (skipped unless PAIRS > 0).
#
# Usage: bench/certainty-vs-lmbench.sh [ROUNDS]   (default 5; 0 skips part 1)
#        FULL=1 PAIRS=10 bench/certainty-vs-lmbench.sh
#        KEEP=DIR keeps part 3's results files (DIR/a1.json, DIR/b1.json, DIR/cmp1 …)
# Needs: cargo, jq, the peers' lmbench (built here if missing).
set -euo pipefail
rounds=${1:-5}
pairs=${PAIRS:-0}
repo=$(cd "$(dirname "$0")/.." && pwd)
peers=""
for d in "$repo/../shared/peers" /work/shared/peers; do
  [ -x "$d/build-lmbench.sh" ] && { peers=$d; break; }
done
lmb=${LMBENCH_DIR:-/tmp/lmbench}
if [ ! -x "$lmb/bin/x86/lat_syscall" ]; then
  [ -n "$peers" ] || { echo "no shared/peers/build-lmbench.sh to build lmbench with" >&2; exit 1; }
  "$peers/build-lmbench.sh" "$lmb" >/dev/null
fi
command -v jq >/dev/null || { echo "jq not found: apt-get install jq" >&2; exit 1; }
(cd "$repo" && cargo build --release -q -p yamba-cli)
yamba="$repo/target/release/yamba"
bin="$lmb/bin/x86"
cpu=$(( $(nproc) - 1 ))
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; bash "$repo/bench/lmbench-reap.sh" "$bin"; rm -rf "$out"' EXIT

busy() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
read -r b0 t0 < <(busy)
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# primitive | yamba id | lmbench command (prints microseconds last on its line)
prims=(
  "null syscall|cpu.syscall.getppid.libc|$bin/lat_syscall null"
  "null syscall (raw)|cpu.syscall.getppid|"
  "read 1 byte|cpu.syscall.read_devzero.libc|$bin/lat_syscall read"
  "context switch|ipc.ctxsw.pipe|$bin/lat_ctx -s 0 2"
  "fork+exit+wait|proc.fork.light|$bin/lat_proc fork"
  "pipe rtt (1 CPU)|ipc.rtt.pipe.same_cpu|$bin/lat_pipe"
  "sigaction|signal.sigaction|$bin/lat_sig install"
  "tcp rtt (1 CPU)|net.tcp.rtt|TCP"
)
lm_value() {  # command → microseconds
  local cmd=$1
  if [ "$cmd" = TCP ]; then
    taskset -c "$cpu" "$bin/lat_tcp" -s >/dev/null 2>&1
    sleep 0.2
    taskset -c "$cpu" "$bin/lat_tcp" localhost 2>&1 | awk '{print $(NF-1)}'
    "$bin/lat_tcp" -S localhost >/dev/null 2>&1 || true
  else
    # lat_ctx prints "size=0k ovr=..." then "2 1.83"; the others "...: 0.1666 microseconds"
    taskset -c "$cpu" $cmd 2>&1 | awk 'NF{l=$0} END{n=split(l,f," "); if (f[n]=="microseconds") print f[n-1]; else print f[n]}'
  fi
}

# lmbench's timing interval found once and exported, as lmbench's suite
# does (bench/lmbench-enough.sh says why): 1000000 (1 s a timing) where
# its test fails, as on a busy host, and lmbench then spends ~100x longer
# on each figure; printed with the table.
ENOUGH=$("$repo/bench/lmbench-enough.sh" "$lmb" "$cpu")
export ENOUGH

# the benchmarks that give those results (ipc.rtt limited to pipes)
ids="cpu.syscall.getppid cpu.syscall.read_devzero ipc.ctxsw.pipe proc.fork.light ipc.rtt signal.sigaction net.tcp.rtt"
sets=(--set net.peer_cpu=same --set ipc.transports=pipe)
for i in $(seq 1 "$rounds"); do
  echo "round $i/$rounds" >&2
  "$yamba" run --cpu "$cpu" "${sets[@]}" $ids --out "$out/y$i.json" >/dev/null 2>&1 || true
  for p in "${prims[@]}"; do
    IFS='|' read -r name id cmd <<<"$p"
    jq -r --arg id "$id" '.results[] | select(.id==$id and .mode=="hot" and .status=="ok")
      | "\(.certainty.estimate // .summary.median) \(.certainty.ci.lo // "nan") \(.certainty.ci.hi // "nan") \(if any(.warnings[]?; test("describes a shared core")) then 1 else 0 end) \(.certainty.cycles.estimate // "nan") \(.certainty.cycles.ci.lo // "nan") \(.certainty.cycles.ci.hi // "nan")"' \
      "$out/y$i.json" | awk -v n="$name" '{print n "|yamba|" $1 "|" $2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7}' >> "$out/all"
    if [ -n "$cmd" ]; then
      v=$(lm_value "$cmd")
      [ -n "$v" ] && echo "$name|lmbench|$(awk -v v="$v" 'BEGIN{print v*1000}')||" >> "$out/all"
    fi
  done
done
read -r b1 t1 < <(busy)
load1=$(cut -d' ' -f1-3 /proc/loadavg)

if [ "$rounds" -gt 0 ]; then
printf '\nbetween-run spread, %s rounds, both tools pinned to CPU %s (ns; yamba precise: 6 processes per run)\n\n' "$rounds" "$cpu"
printf '%-20s %12s %8s %12s %8s %9s %10s %8s %9s %9s %10s\n' primitive "yamba med" "CV" "lmbench med" "CV" "CV ratio" "CI held" shared "CV rest" "CV cyc" "held cyc"
for p in "${prims[@]}"; do
  IFS='|' read -r name id cmd <<<"$p"
  awk -F'|' -v n="$name" '
    function med(a, k,   i, j, t, b) { for (i = 1; i <= k; i++) b[i] = a[i]
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
      return k % 2 ? b[(k + 1) / 2] : (b[k / 2] + b[k / 2 + 1]) / 2 }
    function cv(a, k,   i, m, s) { if (k < 2) return -1; for (i = 1; i <= k; i++) m += a[i]; m /= k
      for (i = 1; i <= k; i++) s += (a[i] - m) ^ 2; return sqrt(s / (k - 1)) / m * 100 }
    $1 == n && $2 == "yamba"   { y[++ny] = $3; lo[ny] = $4; hi[ny] = $5; if ($6 == 1) nsh++; else u[++nu] = $3
                                 if ($7 != "nan" && $7 != "") { c[++nc] = $7; clo[nc] = $8; chi[nc] = $9 }
                                 vals = vals sprintf(" %.4g%s", $3, $6 == 1 ? "*" : "") }
    $1 == n && $2 == "lmbench" { lvals = lvals sprintf(" %.4g", $3) }
    $1 == n && $2 == "lmbench" { l[++nl] = $3 }
    END {
      held = 0; tried = 0
      for (i = 1; i <= ny; i++) {            # leave-one-out: does run i hold the others median?
        k = 0; for (j = 1; j <= ny; j++) if (j != i) o[++k] = y[j]
        if (k > 0 && lo[i] != "nan") { tried++; m = med(o, k); if (m >= lo[i] && m <= hi[i]) held++ }
      }
      cheld = 0; ctried = 0                  # the same in core cycles, where every round has them
      for (i = 1; nc == ny && i <= nc; i++) {
        k = 0; for (j = 1; j <= nc; j++) if (j != i) o[++k] = c[j]
        if (k > 0 && clo[i] != "nan") { ctried++; m = med(o, k); if (m >= clo[i] && m <= chi[i]) cheld++ }
      }
      cc = (nc == ny && nc > 1 ? sprintf("%.2f%%", cv(c, nc)) : "-")
      ch = (ctried ? cheld "/" ctried : "-")
      cy = cv(y, ny); cl = cv(l, nl)
      my = (ny ? med(y, ny) : 0)
      ml = (nl ? sprintf("%.4g", med(l, nl)) : "-")
      sl = (nl > 1 ? sprintf("%.2f%%", cl) : "-")
      r = ((nl > 1 && cl > 0) ? sprintf("%.2f", cy / cl) : "-")
      cu = (nu > 1 ? sprintf("%.2f%%", cv(u, nu)) : "-")
      printf "%-20s %12.4g %7.2f%% %12s %8s %9s %10s %8s %9s %9s %10s\n", n, my, cy, ml, sl, r, held "/" tried, nsh + 0 "/" ny, cu, cc, ch
      printf "  %-20s yamba%s\n  %-20s lmbench%s\n", n, vals, "", lvals >> rounds
    }' rounds="$out/rounds" "$out/all"
done
echo
echo "per-round values (ns; *: yamba said half or more of its processes ran on a shared core, so the value describes one):"
cat "$out/rounds"
echo
echo "CV: stddev of the per-round values over their mean. CV ratio: yamba's over lmbench's (goal <= 0.5)."
echo "lmbench's timing interval (ENOUGH): $ENOUGH us$([ "$ENOUGH" -ge 1000000 ] && echo ": its calibration found no shorter interval linear within 0.25%, so every lmbench timing took 1 s")."
echo "CI held: rounds whose reported 95% interval contained the median of the other rounds' values."
echo "shared: yamba rounds whose value describes a shared core (another hardware thread of the host busy); CV rest: yamba's CV without them."
echo "lmbench cannot tell such rounds: its CV includes them unmarked."
echo "CV cyc, held cyc: yamba's CV and holding in core cycles (each process's median times its core clock), which the host's turbo steps between rounds do not move; lmbench reports no cycles."
echo "lmbench's null syscall and read are libc's getppid()/read(): compare them with yamba's .libc shapes."
fi

if [ "${FULL:-0}" = 1 ]; then
  echo; echo "time for one pass (s):"
  s=$SECONDS; "$yamba" run --out "$out/full.json" >/dev/null 2>&1 || true; ty=$((SECONDS - s))
  s=$SECONDS
  for p in "${prims[@]}"; do IFS='|' read -r _ _ cmd <<<"$p"; [ -n "$cmd" ] && lm_value "$cmd" >/dev/null; done
  for c in "lat_mmap 64m /tmp/lmb.dat" "bw_mem 64m rd" "bw_mem 64m wr" "bw_mem 64m cp" "lat_pagefault /tmp/lmb.dat" \
           "lat_proc exec" "lat_proc shell" "lat_sig catch" "lat_sig prot /tmp/lmb.dat" "lat_unix" "lat_udp localhost" \
           "bw_pipe" "bw_unix" "lat_connect localhost" "lat_fs /tmp"; do
    [ -f /tmp/lmb.dat ] || dd if=/dev/zero of=/tmp/lmb.dat bs=1M count=64 status=none
    taskset -c "$cpu" $bin/$c >/dev/null 2>&1 || true
  done
  tl=$((SECONDS - s)); rm -f /tmp/lmb.dat
  printf '  yamba run (default suite, precise, 6 processes per quantity): %s s\n  lmbench programs above, one pass:                              %s s\n' "$ty" "$tl"
fi

if [ "$pairs" -gt 0 ]; then
  echo; echo "false alarms: $pairs pairs of identical precise runs of cpu and ipc, compare --threshold 5"
  fails=0; calls=0; lines=0
  keep=${KEEP:-$out}; mkdir -p "$keep"
  for i in $(seq 1 "$pairs"); do
    a=$keep/a$i.json b=$keep/b$i.json c=$keep/cmp$i
    "$yamba" run --cpu "$cpu" cpu ipc --out "$a" >/dev/null 2>&1 || true
    "$yamba" run --cpu "$cpu" cpu ipc --out "$b" >/dev/null 2>&1 || true
    if "$yamba" compare "$a" "$b" --threshold 5 > "$c" 2>&1; then :; else fails=$((fails + 1)); fi
    "$yamba" compare "$a" "$b" --format json > "$c.json" 2>/dev/null || true
    calls=$((calls + $(jq '[.rows[] | select(.verdict == "slower" or .verdict == "faster")] | length' "$c.json")))
    lines=$((lines + $(jq '[.rows[] | select(.verdict != "not_compared")] | length' "$c.json")))
    jq -r '.rows[] | select(.verdict == "slower" or .verdict == "faster") | "    \(.key) \(.verdict) \(.change_pct)%"' "$c.json" >&2
    echo "  pair $i: exit-nonzero so far $fails, lines called slower/faster so far $calls of $lines" >&2
  done
  printf '  pairs exiting non-zero: %d of %d\n  result lines called slower/faster: %d of %d\n' "$fails" "$pairs" "$calls" "$lines"
fi

awk -v b0="$b0" -v t0="$t0" -v b1="$b1" -v t1="$t1" -v l0="$load0" -v l1="$load1" 'BEGIN{
  printf "\nmachine: %.0f%% of all CPUs busy during part 1 (yamba and lmbench included); load %s -> %s\n", (b1-b0)/(t1-t0)*100, l0, l1 }'
