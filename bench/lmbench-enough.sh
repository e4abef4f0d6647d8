#!/usr/bin/env bash
# Prints lmbench's timing interval, ENOUGH (µs), found as lmbench's suite
# finds it (scripts/config-run: bin/$OS/enough, run once, exported to
# every program), or $ENOUGH when set. Run alone, each lmbench program
# finds it again; where timings are not linear within 0.25% at 5, 10, 50
# and 100 ms, as on a busy host, it is 1 s a timing instead of 5 ms
# (docs/certainty.md: `lat_syscall null` 42.3 s alone, 35.6 s with
# ENOUGH=1000000, 0.26 s with 5000, on a Zen 5 guest).
#
# Usage: bench/lmbench-enough.sh LMBENCH_DIR CPU   (lmbench built there)
set -euo pipefail
if [ -n "${ENOUGH:-}" ]; then
  echo "$ENOUGH"
  exit 0
fi
lmb=$1 cpu=$2
exe=$(mktemp)
trap 'rm -f "$exe"' EXIT
cc -O2 -I"$lmb/src" -DHAVE_uint=1 -DHAVE_int64_t=1 -DHAVE_DRAND48 \
  -o "$exe" "$lmb/src/enough.c" "$lmb/bin/x86/lmbench.a" -lm
taskset -c "$cpu" "$exe"
