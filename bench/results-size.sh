#!/usr/bin/env bash
# The results file's size (issue 14): the default suite's file must be at
# most 15 MB with every observation kept. yamba writes it as zstd-compressed
# compact JSON (results/yamba-TIME.json.zst); this prints that size beside the plain
# JSON's, and checks the limit.
#
#   bench/results-size.sh            a --quick run, projected to the default
#                                    suite by its observation count (below)
#   bench/results-size.sh --full     the default suite itself (long)
#   bench/results-size.sh FILE...    existing results files, rewritten by yamba
#
# Exit status 1 when the (projected) default-suite file exceeds the limit.
# Sizes, not times: the machine's load does not change them much.
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT=$((15 * 1000 * 1000))
# Observations in one default-suite results file, measured here on
# 2026-11-23 (2-vCPU KVM guest, yamba at issue 14's start: 6 process blocks
# per benchmark). Used only to project a --quick run.
DEFAULT_SUITE_OBSERVATIONS=${DEFAULT_SUITE_OBSERVATIONS:-0}

cargo build --release -q -p yamba-cli
yamba=$PWD/target/release/yamba
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

observations() { # FILE (plain JSON) -> observations in it, BASE's included
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(len(r.get("observations", [])) for r in d["results"]) + len(d["base"].get("observations", [])))
' "$1"
}

row() { # label compressed plain observations
  printf '%-28s %12s %12s %8s %12s %10s\n' "$1" "$2" "$3" \
    "$(awk -v a="$3" -v b="$2" 'BEGIN{printf "%.1f", a/b}')" "$4" \
    "$(awk -v b="$2" -v n="$4" 'BEGIN{printf "%.2f", b/n}')"
}

encodings() { # FILE (plain JSON as yamba writes it) -> the other encodings weighed
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
open(sys.argv[2], "w").write(json.dumps(d, separators=(",", ":")))
' "$1" "$tmp/compact.json"
  local pretty compact
  pretty=$(stat -c %s "$1"); compact=$(stat -c %s "$tmp/compact.json")
  size_z() { zstd -q -c "-$2" ${3:-} "$1" | wc -c; }
  printf '  %-44s %12s\n' "encoding" "bytes"
  printf '  %-44s %12s\n' "indented JSON (before)" "$pretty"
  printf '  %-44s %12s\n' "compact JSON" "$compact"
  printf '  %-44s %12s\n' "indented JSON, zstd -3" "$(size_z "$1" 3)"
  printf '  %-44s %12s\n' "compact JSON, zstd -3 (yamba's .json.zst)" "$(size_z "$tmp/compact.json" 3)"
  printf '  %-44s %12s\n' "indented JSON, zstd -19" "$(size_z "$1" 19)"
  printf '  %-44s %12s\n' "indented JSON, zstd -19 --long" "$(size_z "$1" 19 --long=27)"
  local t0 t1
  t0=$(date +%s.%N); zstd -q -c -3 "$tmp/compact.json" >/dev/null; t1=$(date +%s.%N)
  printf '  %-44s %12s\n' "zstd -3 time, s (one rewrite; under load)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')"
  t0=$(date +%s.%N); zstd -q -c -19 "$tmp/compact.json" >/dev/null; t1=$(date +%s.%N)
  printf '  %-44s %12s\n' "zstd -19 time, s" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')"
}

header() {
  printf '%-28s %12s %12s %8s %12s %10s\n' "file" ".json.zst B" ".json B" "ratio" "observations" "B/obs(zst)"
}

status=0
check() { # label bytes
  if [ "$2" -gt "$LIMIT" ]; then
    echo "FAIL: $1: $2 bytes > limit $LIMIT"
    status=1
  else
    echo "ok: $1: $2 bytes <= limit $LIMIT"
  fi
}

areas_of() { # results FILE (plain or .zst) -> its areas
  python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(dict.fromkeys(r["area"] for r in d["results"])))' < <(case "$1" in *.zst) zstd -q -d -c "$1";; *) cat "$1";; esac)
}

as_written() { # FILE -> $tmp/x.json.zst and $tmp/x.json as yamba writes them now (compressed, and plain indented as before)
  "$yamba" select "$1" $(areas_of "$1") --out "$tmp/x.json.zst"
  "$yamba" select "$1" $(areas_of "$1") --out "$tmp/x.json"
  Z=$(stat -c %s "$tmp/x.json.zst"); P=$(stat -c %s "$tmp/x.json"); N=$(observations "$tmp/x.json")
}

measure_run() { # label, yamba run args...
  local label=$1; shift
  mkdir -p "$tmp/$label"
  (cd "$tmp/$label" && "$yamba" run --no-history --results-dir . "$@" >/dev/null 2>"$tmp/$label.err") || true
  as_written "$(ls "$tmp/$label"/yamba-*.json.zst)"
}

header
if [ "${1:-}" = "--full" ]; then
  measure_run default
  row "default suite" "$Z" "$P" "$N"
  check "default suite" "$Z"
  encodings "$tmp/x.json"
elif [ $# -gt 0 ]; then
  for f in "$@"; do
    as_written "$f"
    row "$(basename "$f")" "$Z" "$P" "$N"
    check "$(basename "$f") as written by yamba" "$Z"
    encodings "$tmp/x.json"
  done
else
  measure_run quick --quick
  row "default suite --quick" "$Z" "$P" "$N"
  encodings "$tmp/x.json"
  if [ "$DEFAULT_SUITE_OBSERVATIONS" -gt 0 ]; then
    projected=$(awk -v z="$Z" -v n="$N" -v m="$DEFAULT_SUITE_OBSERVATIONS" 'BEGIN{printf "%d", z / n * m}')
    echo "projected default suite ($DEFAULT_SUITE_OBSERVATIONS observations at the quick run's bytes per observation): $projected bytes"
    check "projected default suite" "$projected"
  fi
fi
exit $status
