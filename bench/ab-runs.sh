#!/usr/bin/env bash
# Two yamba binaries side by side, in one session: ROUNDS rounds, each a
# precise default run of A and one of B (which goes first alternates), both
# pinned to the same CPU, each binary with its own history. Then per
# binary: wall time per run, leave-one-out coverage of its runs' intervals
# (bench/between-runs.py), per run the results left with fewer than two
# processes alone where half or more shared a core (a gate against a run
# alone cannot decide them), and `compare --threshold 5` over its runs as
# pairs (1-2, 3-4, …): how many fail (exit 1) and how many are undecided
# (exit 3). For a change to what a run does (not to how compare reads it:
# bench/replay-pairs.sh does that on kept files), judged on the same
# machine state: interleaved rounds meet the same neighbour.
#
# Usage: bench/ab-runs.sh DIR YAMBA_A YAMBA_B [ROUNDS]   (default 8)
#   DIR keeps the files (a{i}.json, b{i}.json, each binary's history);
#   runs already there are not run again, so a stopped session resumes.
# Needs: jq, python3.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,17p "$0" >&2; exit 2; }
dir=$1 ya=$2 yb=$3 rounds=${4:-8}
repo=$(cd "$(dirname "$0")/.." && pwd)
for t in jq python3; do command -v $t >/dev/null || { echo "$t not found" >&2; exit 1; }; done
for y in "$ya" "$yb"; do [ -x "$y" ] || { echo "not an executable: $y" >&2; exit 1; }; done
mkdir -p "$dir"
cpu=$(( $(nproc) - 1 ))
one() { # arm binary round
  local f=$dir/$1$3.json
  [ -f "$f" ] && return 0
  local s=$SECONDS
  YAMBA_HISTORY="$dir/history-$1.sqlite" "$2" run --cpu "$cpu" --out "$f" >"$dir/$1$3.txt" 2>&1 || true
  echo "$((SECONDS - s))" >"$dir/$1$3.secs"
  echo "  $1 round $3: $((SECONDS - s)) s" >&2
}
for i in $(seq 1 "$rounds"); do
  if [ $((i % 2)) -eq 1 ]; then one a "$ya" "$i"; one b "$yb" "$i"; else one b "$yb" "$i"; one a "$ya" "$i"; fi
done
for arm in a b; do
  y=$ya; [ $arm = b ] && y=$yb
  # A run that wrote no file (it failed) is left out, not fatal.
  files=$(for i in $(seq 1 "$rounds"); do if [ -f "$dir/$arm$i.json" ]; then echo "$dir/$arm$i.json"; fi; done)
  secs=$(for i in $(seq 1 "$rounds"); do cat "$dir/$arm$i.secs" 2>/dev/null || echo "-"; done | tr '\n' ' ')
  echo; echo "== $arm: $y"
  echo "wall time per run (s): $secs"
  python3 "$repo/bench/between-runs.py" $files | grep -E "^held" || true
  # Per run: results whose processes shared a core at all, and those left
  # describing a shared core with fewer than 2 alone (half or more shared):
  # the lines a gate against a run alone cannot decide.
  short=$(for f in $files; do jq -r '[.results[] | select(.certainty.block == "process") | .certainty
    | {s: (.shared_core | length), n: (.medians | length)} | select(.s > 0)]
    | "\([.[] | select(2 * .s >= .n and .n - .s < 2)] | length)/\(length)"' "$f"; done | tr '\n' ' ')
  echo "results short of 2 alone / with a shared process, per run: $short"
  exits=""; called=0; blind=""
  for i in $(seq 1 2 "$rounds"); do
    a=$dir/$arm$i.json b=$dir/$arm$((i + 1)).json
    [ -f "$a" ] && [ -f "$b" ] || continue
    st=0; YAMBA_HISTORY="$dir/history-$arm.sqlite" "$y" compare "$a" "$b" --threshold 5 >"$dir/cmp-$arm$i.txt" 2>&1 || st=$?
    YAMBA_HISTORY="$dir/history-$arm.sqlite" "$y" compare "$a" "$b" --format json >"$dir/cmp-$arm$i.json" 2>/dev/null || true
    c=$(jq '[.rows[] | select(.verdict == "slower" or .verdict == "faster")] | length' "$dir/cmp-$arm$i.json" 2>/dev/null || true)
    called=$((called + ${c:-0}))
    exits="$exits$st"
    # A pair whose baseline had fewer than 2 earlier runs (the first of a
    # fresh history) cannot tell a state of the host from a change.
    e=$(jq '.earlier_runs' "$dir/cmp-$arm$i.json" 2>/dev/null || true)
    [ "${e:-0}" -lt 2 ] 2>/dev/null && blind="$blind pair $i (${e:-?} earlier)"
  done
  echo "gate exits over pairs (0 pass, 1 fail, 3 undecided): $exits; lines called slower or faster: $called"
  [ -z "$blind" ] || echo "  without the machine's states (fewer than 2 earlier runs):$blind"
done
