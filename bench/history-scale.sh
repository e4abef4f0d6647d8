#!/usr/bin/env bash
# The history store at fleet scale (issue 29 §4): fills an SQLite store and
# a private PostgreSQL server's database with RUNS runs (default 10 000)
# derived from a real results file over 50 machines, then times
# `yamba history`, `yamba history trend ID` and `yamba history fleet` on
# each (hyperfine when installed, else the median of 7 runs). Goal: each
# under 1 s. Also checks the fleet view flags exactly the two planted
# machines (m-07: fork 15% slower; m-11: new kernel, syscalls 20% slower).
#
#   bench/history-scale.sh [RUNS] [BASE.json]
#
# YAMBA=path/to/yamba times another build (e.g. the one before a change)
# against the same stores; KEEP=DIR keeps the stores (and reuses them).
# Times, not tests: run it on a quiet machine and repeat.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-10000}
BASE=${2:-crates/yamba-report/tests/data/quick-both.json}
MACHINES=50
TREND=${TREND:-cpu.syscall.getppid@hot}

cargo build --release -q -p yamba-cli
cargo build --release -q -p yamba-history --example history_scale
target=${CARGO_TARGET_DIR:-target}
yamba=${YAMBA:-$target/release/yamba}
scale=$target/release/examples/history_scale

if [[ -n ${KEEP:-} ]]; then
  dir=$KEEP
  mkdir -p "$dir"
else
  dir=$(mktemp -d)
fi
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
as_pg=()
[[ $(id -u) == 0 ]] && as_pg=(runuser -u postgres --)
stop_pg() {
  [[ -n $pg_bin && -d $dir/pg ]] && "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$dir/pg" -m fast -w stop >/dev/null 2>&1 || true
  [[ -z ${KEEP:-} ]] && rm -rf "$dir"
}
trap stop_pg EXIT

stores=("$dir/history.sqlite")
if [[ -n $pg_bin ]]; then
  [[ $(id -u) == 0 ]] && chown postgres:postgres "$dir"
  if [[ ! -d $dir/pg ]]; then
    "${as_pg[@]}" "$pg_bin/initdb" -D "$dir/pg" -A trust -U yamba --no-sync >/dev/null
  fi
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$dir/pg" -l "$dir/pg.log" -w \
    -o "-p 5433 -k $dir -c listen_addresses='' -c fsync=off" start >/dev/null
  url="postgres:///postgres?host=$dir&port=5433&user=yamba"
  stores+=("$url")
else
  echo "PostgreSQL's server is not installed: timing SQLite only" >&2
fi

for store in "${stores[@]}"; do
  have=$("$yamba" history --store "$store" -n 1 2>/dev/null | sed -n 's/.*of \([0-9]*\) runs shown.*/\1/p' || true)
  if [[ ${have:-0} -lt $RUNS ]]; then
    echo "filling $store with $RUNS runs of $BASE over $MACHINES machines" >&2
    "$scale" fill "$store" "$BASE" "$RUNS" "$MACHINES"
  fi
done

# The planted machines, and only they, are flagged.
for store in "${stores[@]}"; do
  flagged=$("$yamba" history --store "$store" fleet --format json |
    python3 -c 'import json,sys; print(" ".join(sorted({f["host"] for f in json.load(sys.stdin)["flags"]})))')
  [[ $flagged == "m-07 m-11" ]] || { echo "fleet view flags [$flagged], not [m-07 m-11]" >&2; exit 1; }
done

median_time() { # command... -> median wall time of 7 runs, in seconds
  local t=()
  for _ in 1 2 3 4 5 6 7; do
    local s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t+=("$(echo "$(date +%s.%N) - $s" | bc)")
  done
  printf '%s\n' "${t[@]}" | sort -g | sed -n 4p
}

for store in "${stores[@]}"; do
  kind=sqlite
  [[ $store == postgres* ]] && kind=postgres
  for what in "history" "history trend $TREND" "history fleet"; do
    # shellcheck disable=SC2086
    cmd=("$yamba" $what --store "$store")
    if command -v hyperfine >/dev/null; then
      hyperfine -N -w 2 -r 10 --export-json "$dir/t.json" "${cmd[*]}" >/dev/null 2>&1
      t=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.3f" % r["median"])' "$dir/t.json")
    else
      t=$(median_time "${cmd[@]}")
    fi
    printf '%-9s %-40s %8s s (median)\n' "$kind" "yamba $what" "$t"
  done
done
