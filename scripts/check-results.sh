#!/usr/bin/env bash
# Checks the results files of a smoke run (`yamba run --quick ...`):
# every result is ok, withheld with a reason, or skipped with a reason —
# never failed (a crash, a hang past its timeout, an error) — and every
# run completed. Prints ok/withheld/skipped/failed counts per area, then
# each problem on a line of its own; exits 1 on any problem.
#
#   scripts/check-results.sh [--no-adapter] FILE...
#
# --no-adapter: the files come from a build without platform adapters
# (`--features yamba-suite/no-adapters`): every result whose adapter is
# "none" must also be skipped with "no adapter for this platform (…)".
set -euo pipefail

no_adapter=false
if [ "${1:-}" = "--no-adapter" ]; then
  no_adapter=true
  shift
fi
[ $# -gt 0 ] || { echo "usage: $0 [--no-adapter] FILE..." >&2; exit 2; }
command -v jq >/dev/null || { echo "$0: jq is needed (apt-get install -y jq)" >&2; exit 2; }

problems=0
counts=$(mktemp)
trap 'rm -f "$counts"' EXIT
for f in "$@"; do
  if ! jq -e . "$f" >/dev/null 2>&1; then
    echo "PROBLEM $f: missing or not JSON (the run died before writing it?)"
    problems=$((problems + 1))
    continue
  fi
  jq -r '.results[] | [.area, .status] | @tsv' "$f" >>"$counts"
  # One line per problem.
  out=$(jq -r --argjson na "$no_adapter" --arg f "$f" '
    (if (.complete != true) or (.interrupted == true)
     then "PROBLEM \($f): the run did not complete (complete=\(.complete), interrupted=\(.interrupted))"
     else empty end),
    (if (.results | length) == 0 then "PROBLEM \($f): no results" else empty end),
    (.results[]
     | (.reason // "") as $why
     | if .status == "failed" then "PROBLEM \(.id) [\(.mode)]: failed: \($why)"
       elif (.status == "withheld" or .status == "skipped") and ($why | length) == 0
         then "PROBLEM \(.id) [\(.mode)]: \(.status) without a reason"
       elif ($na and .adapter == "none"
             and (.status != "skipped" or ($why | startswith("no adapter for this platform (") | not)))
         then "PROBLEM \(.id) [\(.mode)]: adapter none but \(.status): \($why)"
       else empty end)' "$f")
  if [ -n "$out" ]; then
    echo "$out"
    problems=$((problems + $(printf '%s\n' "$out" | wc -l)))
  fi
done

printf '%-10s %4s %9s %8s %7s\n' area ok withheld skipped failed
awk -F'\t' '{ n[$1, $2]++; areas[$1] = 1 }
  END { for (a in areas) printf "%-10s %4d %9d %8d %7d\n", a, n[a, "ok"], n[a, "withheld"], n[a, "skipped"], n[a, "failed"] }' \
  "$counts" | sort
awk -F'\t' '{ n[$2]++ } END { printf "%-10s %4d %9d %8d %7d\n", "all", n["ok"], n["withheld"], n["skipped"], n["failed"] }' "$counts"

if [ "$problems" -gt 0 ]; then
  echo "check-results: $problems problem(s)" >&2
  exit 1
fi
echo "check-results: every result ok, or withheld or skipped with its reason"
