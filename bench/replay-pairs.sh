#!/usr/bin/env bash
# Compares the pairs a `KEEP=DIR bench/trust-at-speed.sh` run kept, again,
# with one or more yamba binaries: a change to `compare`'s rules judged on
# the same files and the same history (DIR/history.sqlite; compare reads
# only runs that started before A, so the history as kept is the history
# each pair met). Per pair and binary: the gate's exit status, the lines
# called slower or faster, getppid's verdict, and the lines dismissed as a
# state of the machine.
#
# Usage: bench/replay-pairs.sh DIR identical|planted YAMBA [YAMBA...]
#   identical: pairs r1/r2, r3/r4, … (part 3); planted: zeroI/plantedI
#   (part "planted").
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,13p "$0" >&2; exit 2; }
dir=$1 kind=$2
shift 2
[ -f "$dir/history.sqlite" ] || { echo "no $dir/history.sqlite: not a kept trust-at-speed directory" >&2; exit 1; }
case "$kind" in identical | planted) ;; *) echo "kind: identical or planted, not $kind" >&2; exit 2 ;; esac
command -v jq >/dev/null || { echo "jq not found" >&2; exit 1; }
export YAMBA_HISTORY="$dir/history.sqlite"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A called dismissed slower exits
pairs=0
for i in $(seq 1 2 199); do
  if [ "$kind" = planted ]; then a=$dir/zero$i.json b=$dir/planted$i.json; else a=$dir/r$i.json b=$dir/r$((i + 1)).json; fi
  [ -f "$a" ] && [ -f "$b" ] || continue
  pairs=$((pairs + 1))
  line="pair $i:"
  for y in "$@"; do
    st=0; "$y" compare "$a" "$b" --threshold 5 >"$tmp/t" 2>&1 || st=$?
    "$y" compare "$a" "$b" --format json >"$tmp/j" 2>/dev/null || true
    c=$(jq '[.rows[] | select(.verdict == "slower" or .verdict == "faster")] | length' "$tmp/j")
    d=$(jq '[.rows[] | select((.note // "") | test("identical runs give|a state of the machine, not"))] | length' "$tmp/j")
    g=$(jq -r '[.rows[] | select(.key == "cpu.syscall.getppid@hot") | .verdict] | first // "-"' "$tmp/j")
    called[$y]=$((${called[$y]:-0} + c)) dismissed[$y]=$((${dismissed[$y]:-0} + d))
    [ "$g" = slower ] && slower[$y]=$((${slower[$y]:-0} + 1))
    exits[$y]="${exits[$y]:-}$st"
    line="$line  exit $st, $c called, $d as states, getppid $g |"
  done
  echo "$line"
done
[ "$pairs" -gt 0 ] || { echo "no $kind pairs in $dir" >&2; exit 1; }
for y in "$@"; do
  printf '%s: %d pairs; getppid slower in %d; lines called %d; dismissed as states %d; gate exits %s\n' \
    "$y" "$pairs" "${slower[$y]:-0}" "${called[$y]}" "${dismissed[$y]}" "${exits[$y]}"
done
