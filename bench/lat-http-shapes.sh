#!/usr/bin/env bash
# Why lat_http and net.http.get differ (docs/lmbench.md, lat_http): the
# same client (lmbench's lat_http) against three servers — lmbench's
# lmhttp as shipped, lmhttp reading its file with read(2) instead of
# mapping it per request, and that with its head corked into the body's
# first segment (MSG_MORE) as yamba's server writes it — with the server
# on the client's CPU and on another, interleaved with yamba's
# net.http.get (peer thread on the same and on the other CPU). Prints
# ms per 1000 requests (= µs per request, lmbench's mean) and yamba's
# median and mean, per round.
#
#   bash bench/lat-http-shapes.sh [ROUNDS]      (default 3; needs 2 CPUs)
#   LMBENCH=DIR  where lmbench is built (default /tmp/lmbench)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
LMBENCH=${LMBENCH:-/tmp/lmbench}
port=${HTTP_PORT:-8008}
cpu=$(($(nproc) - 1))
other=$((cpu == 0 ? 1 : 0))
for p in "$repo/../shared/peers" /work/shared/peers; do
  [ -f "$p/build-lmbench.sh" ] && PEERS=$p && break
done
: "${PEERS:?cannot find shared/peers/build-lmbench.sh}"
[ "$(nproc)" -ge 2 ] || { echo "bench/lat-http-shapes.sh: needs 2 CPUs" >&2; exit 2; }

work=$(mktemp -d)
trap '"$LB/lat_http" -S 127.0.0.1 "$port" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
bash "$PEERS/build-lmbench.sh" "$LMBENCH" >/dev/null
LB=$LMBENCH/bin/x86
flags=(-O2 -I/usr/include/tirpc -DHAVE_uint=1 -DHAVE_int64_t=1 -DHAVE_DRAND48 -DHAVE_SCHED_SETAFFINITY=1)
(cd "$LMBENCH/src" && make -s O=../bin/x86 CFLAGS="${flags[*]}" LDLIBS="-ltirpc -lm" \
  ../bin/x86/lat_http ../bin/x86/lmhttp >/dev/null 2>&1)
# The two variants: each a one-line change of lmhttp.c, checked to apply.
src=$LMBENCH/src/lmhttp.c
sed 's/^#define[[:space:]]*MMAPS_BETTER.*/#define MMAPS_BETTER (1 << 30)/' "$src" >"$work/read.c"
sed 's/if (write(sock, hbuf, n) != n) {/if (send(sock, hbuf, n, MSG_MORE) != n) {/' "$work/read.c" >"$work/corked.c"
! cmp -s "$src" "$work/read.c" && ! cmp -s "$work/read.c" "$work/corked.c" ||
  { echo "bench/lat-http-shapes.sh: lmhttp.c is not the one these changes were written for" >&2; exit 1; }
for v in read corked; do
  gcc "${flags[@]}" -I"$LMBENCH/src" -include sys/socket.h -o "$work/lmhttp-$v" "$work/$v.c" \
    "$LB/lmbench.a" -ltirpc -lm 2>/dev/null
done
(cd "$repo" && cargo build --release -q -p yamba-cli)
Y=$repo/target/release/yamba

mkdir -p "$work/docs"
for s in 1k 64k 1m; do
  case $s in 1k) b=1024 ;; 64k) b=65536 ;; 1m) b=1048576 ;; esac
  head -c $b /dev/urandom >"$work/docs/f$s"
  yes "f$s" | head -n 1000 >"$work/urls-$s" || true
done

echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r); client on CPU $cpu; load $(cut -d' ' -f1 /proc/loadavg)"
echo "# round server where size µs-per-request (yamba: median mean)"
for r in $(seq "$rounds"); do
  for where in same other; do
    scpu=$([ $where = same ] && echo "$cpu" || echo "$other")
    for srv in "$LB/lmhttp" "$work/lmhttp-read" "$work/lmhttp-corked"; do
      (cd "$work/docs" && DOCROOT=$work/docs taskset -c "$scpu" "$srv" "$port" >/dev/null 2>&1 &)
      sleep 0.3
      for s in 1k 64k 1m; do
        ms=$(taskset -c "$cpu" "$LB/lat_http" 127.0.0.1 "$port" <"$work/urls-$s" 2>&1 >/dev/null |
          sed -n 's/.* in \([0-9.]*\) millisec.*/\1/p')
        echo "$r $(basename "$srv") $where $s $ms"
      done
      "$LB/lat_http" -S 127.0.0.1 "$port" >/dev/null 2>&1 || true
      sleep 0.2
    done
    "$Y" run --quick --no-history --cpu "$cpu" net.http.get --set net.peer_cpu=$where \
      --scratch "$work" --out "$work/y.json" >/dev/null 2>&1 || true
    for s in 1k 64k 1m; do
      echo "$r yamba $where $s $(jq -r --arg id "net.http.get.$s" \
        '[.results[] | select(.id == $id)][0] | "\(.summary.median / 1000) \(.summary.mean / 1000)"' "$work/y.json")"
    done
  done
done
