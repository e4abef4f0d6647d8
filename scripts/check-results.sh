#!/usr/bin/env bash
# Checks the results files of a smoke run (`yamba run --quick ...`):
# every result is ok, withheld with a reason, or skipped with a reason —
# never failed (a crash, a hang past its timeout, an error) — every run
# completed, and every area has at least one result ok (an area whose
# every result is skipped or withheld tested nothing). Prints
# ok/withheld/skipped/failed counts per area, then each problem on a line
# of its own; exits 1 on any problem.
#
#   scripts/check-results.sh [--no-adapter] [--ok-list LIST] FILE...
#
# --no-adapter: the files come from a build without platform adapters
# (`--features yamba-suite/no-adapters`): every result whose adapter is
# "none" must also be skipped with "no adapter for this platform (…)"
# (there an area may have nothing ok).
# --ok-list LIST: every result id LIST names (one per line, `#` comments;
# `id@mode` for a mode other than hot) must be in the files and ok — what
# a smoke run gives on every machine of CI's kinds (.ci/smoke-ok).
set -euo pipefail

no_adapter=false
ok_list=
while [ $# -gt 0 ]; do
  case "$1" in
    --no-adapter) no_adapter=true; shift ;;
    --ok-list) ok_list=${2:?--ok-list needs a file}; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--no-adapter] [--ok-list LIST] FILE..." >&2; exit 2; }
[ -z "$ok_list" ] || [ -f "$ok_list" ] || { echo "$0: no list $ok_list" >&2; exit 2; }
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

# Every area tested something.
if ! $no_adapter; then
  out=$(awk -F'\t' '{ seen[$1] = 1; if ($2 == "ok") ok[$1]++ }
    END { for (a in seen) if (!ok[a]) printf "PROBLEM area %s: no result ok (every one skipped or withheld)\n", a }' "$counts" | sort)
  if [ -n "$out" ]; then
    echo "$out"
    problems=$((problems + $(printf '%s\n' "$out" | wc -l)))
  fi
fi

# Every result the list names is there and ok.
if [ -n "$ok_list" ]; then
  have=$(mktemp)
  jq -r '.results[] | "\(.id)@\(.mode)\t\(.status)\t\(.reason // "")"' "$@" 2>/dev/null >"$have" || true
  while read -r want _; do
    case "$want" in '' | '#'*) continue ;; esac
    [[ "$want" == *@* ]] || want="$want@hot"
    line=$(awk -F'\t' -v w="$want" '$1 == w' "$have" | head -1)
    if [ -z "$line" ]; then
      echo "PROBLEM $want (listed in $ok_list): not in the results"
      problems=$((problems + 1))
    elif [ "$(cut -f2 <<<"$line")" != ok ]; then
      echo "PROBLEM $want (listed in $ok_list): $(cut -f2 <<<"$line"): $(cut -f3 <<<"$line")"
      problems=$((problems + 1))
    fi
  done <"$ok_list"
  rm -f "$have"
fi

printf '%-10s %4s %9s %8s %7s\n' area ok withheld skipped failed
awk -F'\t' '{ n[$1, $2]++; areas[$1] = 1 }
  END { for (a in areas) printf "%-10s %4d %9d %8d %7d\n", a, n[a, "ok"], n[a, "withheld"], n[a, "skipped"], n[a, "failed"] }' \
  "$counts" | sort
awk -F'\t' '{ n[$2]++ } END { printf "%-10s %4d %9d %8d %7d\n", "all", n["ok"], n["withheld"], n["skipped"], n["failed"] }' "$counts"

if ! $no_adapter; then
  # What a reader of CI needs to judge a withheld or skipped result.
  jq -r '.results[] | select(.status == "withheld" or .status == "skipped")
    | "  \(.status) \(.id) [\(.mode)]: \(.reason // "")"' "$@" 2>/dev/null | sort || true
fi

if [ "$problems" -gt 0 ]; then
  echo "check-results: $problems problem(s)" >&2
  exit 1
fi
echo "check-results: every result ok, or withheld or skipped with its reason"
