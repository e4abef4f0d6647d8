#!/usr/bin/env bash
# Builds lmbench 3 in DIR (default /tmp/lmbench) from the peers' tarball
# (shared/peers/build-lmbench.sh builds its summary programs), then the
# programs that build leaves out and bench/lmbench-list.sh and
# bench/lmbench-witness.sh compare against: lat_select, lat_fifo,
# lat_unix_connect, bw_mmap_rd, lmdd, lat_sem, lat_usleep, lat_http and
# the rest below.
#
# Usage: bench/lmbench-build.sh [DIR]
set -euo pipefail
dir=${1:-/tmp/lmbench}
repo=$(cd "$(dirname "$0")/.." && pwd)
peers=
for p in "$repo/../shared/peers" /work/shared/peers; do
  [ -f "$p/build-lmbench.sh" ] && peers=$p && break
done
[ -n "$peers" ] || { echo "bench/lmbench-build.sh: cannot find shared/peers/build-lmbench.sh" >&2; exit 1; }
bash "$peers/build-lmbench.sh" "$dir" >/dev/null
(cd "$dir/src" && make -s O=../bin/x86 CFLAGS="-O2 -I/usr/include/tirpc -DHAVE_uint=1 -DHAVE_int64_t=1 -DHAVE_DRAND48 -DHAVE_SCHED_SETAFFINITY=1" \
  LDLIBS="-ltirpc -lm" ../bin/x86/stream ../bin/x86/hello ../bin/x86/lat_fifo ../bin/x86/lat_unix_connect ../bin/x86/lat_select \
  ../bin/x86/bw_file_rd ../bin/x86/bw_mmap_rd ../bin/x86/lmdd ../bin/x86/lat_sem ../bin/x86/lat_usleep \
  ../bin/x86/lat_http ../bin/x86/lmhttp >/dev/null 2>&1)
