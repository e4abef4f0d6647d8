#!/usr/bin/env bash
# Kills (SIGKILL) the lmbench programs a bench script started and left
# running: every process of the caller's process group whose command
# starts with DIR/ (lmbench's bin/x86). Called from the scripts' EXIT traps.
#
# lmbench's benchmp catches SIGTERM with a handler that only sets a flag its
# timing loops never read (lib_timing.c, benchmp_sigterm), and lat_ctx's
# ring processes inherit it: after a `kill`, a `timeout` or the end of the
# script that started them, a timing process and its ring keep running on
# the CPU they were pinned to and disturb whatever is measured there next
# (a 2-process ring read twice its time beside one; docs/lmbench.md,
# lat_ctx). Only SIGKILL stops them.
#
# Usage: bench/lmbench-reap.sh DIR   (from a script whose lmbench programs
#        ran in its own process group, as a script's children do)
set -uo pipefail
dir=${1:?usage: bench/lmbench-reap.sh LMBENCH_BIN_DIR}
dir=${dir%/}
pgid=$(ps -o pgid= -p $$ | tr -d ' ')
left=$(pgrep -g "$pgid" -f "^$dir/" | grep -vx $$ || true)
[ -n "$left" ] || exit 0
echo "bench: killing lmbench processes left running: $(echo $left)" >&2
kill -KILL $left 2>/dev/null || true
