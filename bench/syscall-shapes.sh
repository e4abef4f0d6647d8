#!/usr/bin/env bash
# The null system call and the 1-byte read in yamba's three shapes (raw
# instruction inline, a call to a `syscall; ret` function, libc's wrapper)
# next to lmbench's lat_syscall null/read and `perf bench syscall basic`,
# in one run: ROUNDS rounds, each running every tool once, all pinned to
# one CPU. Prints each figure's median over the rounds (ns), its spread,
# and its ratio to the yamba shape it corresponds to, plus the machine's
# load (others' share of the CPUs while it ran) and its mitigation lines.
#
# Usage: bench/syscall-shapes.sh [ROUNDS]     (default 5)
# Needs: cargo, perf (linux-perf), the peers' lmbench (built here if missing).
set -euo pipefail
rounds=${1:-5}
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
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf" >&2; exit 1; }
(cd "$repo" && cargo build --release -q -p yamba-cli)
yamba="$repo/target/release/yamba"
cpu=$(( $(nproc) - 1 ))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

busy() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
read -r b0 t0 < <(busy)
load0=$(cut -d' ' -f1-3 /proc/loadavg)

for i in $(seq 1 "$rounds"); do
  "$yamba" run --cpu "$cpu" cpu.syscall --out "$out/y$i.json" >/dev/null 2>&1
  jq -r '.results[] | select(.mode=="hot") | "\(.id) \(.summary.median)"' "$out/y$i.json" >> "$out/all"
  ENOUGH=5000 taskset -c "$cpu" "$lmb/bin/x86/lat_syscall" null 2>&1 \
    | awk '{print "lmbench.lat_syscall.null", $3*1000}' >> "$out/all"
  ENOUGH=5000 taskset -c "$cpu" "$lmb/bin/x86/lat_syscall" read 2>&1 \
    | awk '{print "lmbench.lat_syscall.read", $3*1000}' >> "$out/all"
  # Wall time per call as perf reports it, and the CPU time the process
  # was given per call (what a busy CPU cannot inflate).
  TIMEFORMAT='%U %S'
  { time taskset -c "$cpu" perf bench syscall basic --loop 2000000 > "$out/perf" 2>&1; } 2> "$out/cpu"
  awk '/usecs\/op/{print "perf.bench.syscall.basic", $1*1000}' "$out/perf" >> "$out/all"
  awk '{print "perf.bench.syscall.basic.cpu_time", ($1+$2)*1e9/2000000}' "$out/cpu" >> "$out/all"
done

read -r b1 t1 < <(busy)
load1=$(cut -d' ' -f1-3 /proc/loadavg)

median() { sort -g | awk '{v[NR]=$1} END{ if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2 }'; }
spread() { sort -g | awk '{v[NR]=$1} END{ printf "%.1f%%", (v[NR]-v[1])/v[1]*100 }'; }
fig() { awk -v k="$1" '$1==k{print $2}' "$out/all"; }

printf '\nsystem call shapes vs peers, %s rounds, pinned to CPU %s (ns per call)\n\n' "$rounds" "$cpu"
printf '%-34s %10s %9s %-34s %7s\n' figure median range "compared with" ratio
row() {  # id, reference id
  local m r
  m=$(fig "$1" | median)
  if [ -n "$2" ]; then r=$(fig "$2" | median); else r=""; fi
  printf '%-34s %10.1f %9s %-34s %7s\n' "$1" "$m" "$(fig "$1" | spread)" "${2:--}" \
    "$( [ -n "$r" ] && awk -v a="$m" -v b="$r" 'BEGIN{printf "%.3f", a/b}' || echo -)"
}
row cpu.syscall.getppid ""
row cpu.syscall.getppid.call cpu.syscall.getppid
row cpu.syscall.getppid.libc cpu.syscall.getppid
row lmbench.lat_syscall.null cpu.syscall.getppid.libc
row perf.bench.syscall.basic cpu.syscall.getppid.libc
row perf.bench.syscall.basic.cpu_time cpu.syscall.getppid.libc
row cpu.syscall.read_devzero ""
row cpu.syscall.read_devzero.call cpu.syscall.read_devzero
row cpu.syscall.read_devzero.libc cpu.syscall.read_devzero
row lmbench.lat_syscall.read cpu.syscall.read_devzero.libc

printf '\nload: all CPUs %s busy while this ran (this script itself keeps one of %s CPUs busy); loadavg %s before, %s after\n' \
  "$(awk -v b="$((b1-b0))" -v t="$((t1-t0))" 'BEGIN{printf "%.0f%%", b/t*100}')" "$(nproc)" "$load0" "$load1"
printf '(yamba takes medians of short observations; lmbench and perf time long runs of calls, which a busy CPU inflates)\n'
printf '\nmitigations (/sys/devices/system/cpu/vulnerabilities):\n'
for f in spectre_v2 spec_rstack_overflow retbleed indirect_target_selection; do
  [ -r "/sys/devices/system/cpu/vulnerabilities/$f" ] && printf '  %s: %s\n' "$f" "$(cat /sys/devices/system/cpu/vulnerabilities/$f)"
done
grep -o 'mitigations=[^ ]*' /proc/cmdline | sed 's/^/  /' || true
