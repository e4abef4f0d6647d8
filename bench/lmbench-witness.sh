#!/usr/bin/env bash
# Who is right where yamba and lmbench disagree on fork, sigaction and the
# TCP round trip on one CPU (issue 26; docs/lmbench.md): yamba, lmbench and
# a C witness that takes each difference between the two apart, in
# interleaved rounds, all pinned to one CPU.
#
# Usage: bench/lmbench-witness.sh [ROUNDS]      (default 3)
#   CPU=N        CPU to pin everything to (default: the last one)
#   LMBENCH=DIR  where lmbench is built (default /tmp/lmbench; built if absent)
#
# Prints each round's figures as they come, then per row the median over
# the rounds. The witnesses are bench/fork-witness.c, bench/sigaction-witness.c
# and bench/tcp-rtt-witness.c; each prints its own rows (read their heads).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
CPU=${CPU:-$(( $(nproc) - 1 ))}
LMBENCH=${LMBENCH:-/tmp/lmbench}
for tool in jq taskset cc; do
  command -v $tool >/dev/null || { echo "bench/lmbench-witness.sh: needs $tool" >&2; exit 2; }
done
if [ ! -x "$LMBENCH/bin/x86/lat_tcp" ]; then
  for p in "$repo/../shared/peers" /work/shared/peers; do [ -f "$p/build-lmbench.sh" ] && bash "$p/build-lmbench.sh" "$LMBENCH" >/dev/null && break; done
fi
LB=$LMBENCH/bin/x86
work=$(mktemp -d /var/tmp/yamba-witness.XXXXXX)
trap '"$LB/lat_tcp" -S localhost >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
for w in fork-witness sigaction-witness tcp-rtt-witness; do
  cc -O2 -pthread -o "$work/$w" "$repo/bench/$w.c"
done
(cd "$repo" && cargo build --release -q -p yamba-cli)
Y=$repo/target/release/yamba
pin() { taskset -c "$CPU" "$@"; }
# lmbench's figure: the number before "microseconds" on its last line (lat_tcp: before its unit too).
lmnum() { awk 'NF{l=$0} END{n=split(l,f," "); print f[n-1]}'; }

out=$work/rows.txt
: >"$out"
# rec ROW VALUE: one round's value of a row.
rec() { printf '%s\t%s\n' "$1" "$2" >>"$out"; printf '  %-52s %s\n' "$1" "$2" >&2; }

# ym FILE ID SCALE: a hot result's median × SCALE, or n/a.
ym() { jq -r --arg id "$2" --argjson k "$3" '[.results[] | select(.id == $id and .mode == "hot")][0] | if . == null or .summary == null then "n/a" else .summary.median * $k end' "$1"; }
# witness ROW PROGRAM UNIT: a witness's rows (name, a tab, the median and its unit).
witness() {
  pin "$2" | while IFS=$'\t' read -r name rest; do rec "$1: C ${name%"${name##*[! ]}"} ($3)" "$(awk '{print $1}' <<<"$rest")"; done
}

echo "load before: $(cat /proc/loadavg); CPU $CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" >&2
for i in $(seq "$rounds"); do
  echo "round $i/$rounds" >&2
  y=$work/y$i.json
  "$Y" run --cpu "$CPU" --set net.peer_cpu=same proc.fork.light signal.sigaction net.tcp.rtt --out "$y" >/dev/null 2>&1 || true
  "$Y" run --cpu "$CPU" --set net.peer_cpu=same --set net.msg_bytes=8 net.tcp.rtt --out "$work/y1b$i.json" >/dev/null 2>&1 || true
  rec "fork: yamba proc.fork.light (µs)" "$(ym "$y" proc.fork.light 0.001)"
  rec "fork: yamba parent's anonymous memory (MiB)" "$(jq -r '[.results[] | select(.id == "proc.fork.light")][0].params.parent_rss_anon_bytes // "n/a" | if type == "number" then . / 1048576 else . end' "$y")"
  rec "fork: lmbench lat_proc fork (µs)" "$(pin "$LB/lat_proc" -N 3 fork 2>&1 | lmnum)"
  witness fork "$work/fork-witness" µs
  rec "sigaction: yamba signal.sigaction (ns)" "$(ym "$y" signal.sigaction 1)"
  rec "sigaction: lmbench lat_sig install (ns)" "$(pin "$LB/lat_sig" -N 3 install 2>&1 | lmnum | awk '{print $1 * 1000}')"
  witness sigaction "$work/sigaction-witness" ns
  rec "tcp: yamba net.tcp.rtt, 64 B (µs)" "$(ym "$y" net.tcp.rtt 0.001)"
  rec "tcp: yamba net.tcp.rtt, 8 B (µs)" "$(ym "$work/y1b$i.json" net.tcp.rtt 0.001)"
  pin "$LB/lat_tcp" -s >/dev/null 2>&1; sleep 0.2
  rec "tcp: lmbench lat_tcp (µs)" "$(pin "$LB/lat_tcp" -N 3 localhost 2>&1 | lmnum)"
  "$LB/lat_tcp" -S localhost >/dev/null 2>&1 || true
  witness tcp "$work/tcp-rtt-witness" µs
done
echo
echo "median over $rounds rounds (CPU $CPU)"
awk -F'\t' '{ if (!($1 in n)) order[++k] = $1; v[$1, ++n[$1]] = $2 }
  END { for (j = 1; j <= k; j++) { r = order[j]; m = n[r]; s = "";
          for (a = 1; a <= m; a++) x[a] = v[r, a];
          for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (x[b] + 0 < x[a] + 0) { t = x[a]; x[a] = x[b]; x[b] = t }
          for (a = 1; a <= m; a++) s = s " " x[a];
          med = (m % 2) ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2;
          printf "%-52s %10.4g   (%s )\n", r, med, s } }' "$out"
