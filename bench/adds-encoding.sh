#!/bin/bash
# Whether the core-throughput probe's reading depends on where its loop
# sits: bench/adds-encoding.c with 1-byte and 32-bit immediates at eight
# offsets from a 64-byte boundary (the most common reading of each), then
# the packed form at offset 0 and the wide one interleaved ROUNDS times
# (default 12): how many readings each put below 90% of its own most
# common one (a shared core). x86-64 only. docs/certainty.md, "A shared
# core"; crates/yamba-core/src/coreclock.rs.
set -euo pipefail
rounds=${1:-12}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mode() { awk '{printf "%.1f\n", $1}' "$1" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }'; }
for imm in 1 4096; do
  line="imm $imm:"
  for off in 0 8 16 24 32 40 48 56; do
    cc -O2 -DIMM=$imm -DOFFSET=$off -o "$tmp/p-$imm-$off" "$here/adds-encoding.c"
    "$tmp/p-$imm-$off" >"$tmp/r"
    line+=" @$off $(mode "$tmp/r")"
  done
  echo "$line"
done
for i in $(seq "$rounds"); do
  "$tmp/p-1-0" >>"$tmp/packed"
  "$tmp/p-4096-0" >>"$tmp/wide"
done
for k in packed wide; do
  m=$(mode "$tmp/$k")
  awk -v m="$m" -v k="$k" '$1 < 0.9 * m { low++ } END { printf "%s at offset 0: %d of %d readings below 90%% of %s\n", k, low, NR, m }' "$tmp/$k"
done
