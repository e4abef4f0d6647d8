#!/usr/bin/env bash
# Where yamba and lmbench disagree by 10–25% in single rounds on a shared
# host (issue 26; docs/lmbench.md), is there a difference at all? One round
# of each decides little there: the same program's figure moved by a third
# within minutes (lat_ctx at 8 processes: 3.3 to 5.9 µs). So this runs
# ROUNDS rounds (default 20), each tool once a round in an order that
# rotates through all orders, all pinned to one CPU, and reports for every
# row the median over rounds of each round's ratio with its
# distribution-free 95% interval (order statistics of the binomial): a
# ratio whose interval holds 1 is not shown to differ, one whose interval
# lies within 0.9–1.1 is shown to agree within 10%. Rounds pair the tools
# in time, so the host's slow minutes fall on all of a round's tools.
#
# Sections:
#   ctx    yamba's `ipc.ctxsw.sweep.0k`, lmbench's `lat_ctx -s 0` and a C
#          ring of lmbench's shape (bench/ctx-witness.c), all in
#          SCHED_BATCH, at 8, 16 and 96 processes (lmbench with
#          ENOUGH=20000, as bench/lmbench-list.sh runs it: unset, it
#          measures its own, and one `-N 3` run took 5–46 s here); and
#          yamba's `.64k` against `lat_ctx -s 64` at 2 and 96 (no C ring)
#   lmdd   yamba's `fs.write.seq.buffered{,.fsync}` (a quick run) and
#          lmdd overwriting 8 MiB in 16 KiB writes, without and with
#          fsync, as bench/lmbench-list.sh runs it: one lmdd run each on
#          a file dd has just written and cat has read, in /var/tmp
#   syscall  lat_syscall null, read, write, fstat, open against
#          cpu.syscall.{getppid,read_devzero}.libc, .write_devnull,
#          .fstat, .open (the same small file)
#   select lat_select -n 100 / 250 file against cpu.syscall.select.file.N
#   pipe   lat_pipe against ipc.rtt.pipe.same_cpu
#   usleep lat_usleep -u nanosleep 10 / 100 with its timer slack at 1 ns
#          (as yamba's), and -u itimer 10 as inherited, against
#          sched.wakeup.*'s D + median lateness
#   bw     bw_mem 64m rd (the read curve's 64 MiB point), bw_mem 128m
#          rdwr (lmbench's bytes ×2), stream -M 384m's copy and scale
#          (three 128 MiB arrays) against mem.bandwidth.* at 128 MiB, and
#          lmbench's scalar scale and copy loops in C on 128 MiB arrays
#          (bench/stream-witness.c) as the third witness; row
#          scale128m_pass is yamba's scale as one pass's figure (its
#          observations' harmonic mean) against the others' same figures;
#          rows rdwr128m and rdwr128m_y: the same yamba and lmbench
#          figures against lmbench's rdwr loop in C and against yamba's
#   net    lat_tcp and lat_udp (server on the same CPU) and
#          lat_unix_connect (server on the other CPU) against net.tcp.rtt
#          and net.udp.rtt with their peer on the same CPU, and
#          net.unix.connect_close (its median, and as unix_connect_mean
#          its observations' mean: lmbench's statistic)
#   reread bw_file_rd 64m io_only against fs.reread.read, one cached
#          64 MiB file written in 1 MiB writes (yamba its own, alike);
#          bench/file-rd-witness.c takes their summing code apart
# Sections but ctx and lmdd run every lmbench program as
# bench/lmbench-list.sh does (`-N 3`, ENOUGH=20000) and yamba as a quick
# run of the section's benchmarks, so each round pairs one of each.
#
# Usage: bench/paired-rounds.sh SECTION [ROUNDS]   CPU=N pins (default:
#   the last CPU); KEEP=DIR keeps every round's rows (rounds.tsv) and
#   the last round's yamba results file (y.json)
set -euo pipefail
me=bench/paired-rounds.sh
section=${1:-}
sections="ctx lmdd syscall select pipe usleep bw net reread"
[[ " $sections " == *" $section "* && -n $section ]] || { echo "$me: SECTION must be one of: $sections (got '$section')" >&2; exit 2; }
rounds=${2:-20}
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 6 ]] || { echo "$me: ROUNDS must be a whole number ≥ 6 (got '$rounds'): fewer rounds give no 95% interval of a median" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
lmb=${LMBENCH_DIR:-/tmp/lmbench}
if [ ! -x "$lmb/bin/x86/lat_ctx" ] || [ ! -x "$lmb/bin/x86/lmdd" ]; then
  for d in "$repo/../shared/peers" /work/shared/peers; do
    [ -x "$d/build-lmbench.sh" ] && { "$d/build-lmbench.sh" "$lmb" >/dev/null; break; }
  done
fi
[ -x "$lmb/bin/x86/lat_ctx" ] && [ -x "$lmb/bin/x86/lmdd" ] ||
  { echo "$me: no lmbench at $lmb (set LMBENCH_DIR, or build it with shared/peers/build-lmbench.sh)" >&2; exit 1; }
for t in jq cc python3 chrt taskset; do command -v $t >/dev/null || { echo "$me: $t not found" >&2; exit 1; }; done
(cd "$repo" && cargo build --release -q -p yamba-cli)
yamba=$repo/target/release/yamba
cpu=${CPU:-$(($(nproc) - 1))}
out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
scratch=""
cleanup() {
  [ -z "$scratch" ] || rm -rf "$scratch"
  [ -n "${KEEP:-}" ] || rm -rf "$out"
}
trap cleanup EXIT
pin() { taskset -c "$cpu" "$@"; }
# value FILE ID: a yamba result's headline (hot, ok), or nothing.
value() { jq -r --arg id "$2" '.results[] | select(.id == $id and .mode == "hot" and .status == "ok") | .certainty.estimate // .summary.median' "$1"; }
# yrow FILE ROW ID SCALE [PARAM]: "ROW value×SCALE" of a yamba result (its
# headline, or its parameter PARAM), or nothing when it was not measured ok.
yrow() {
  local v
  if [ -n "${5:-}" ]; then
    v=$(jq -r --arg id "$3" --arg k "$5" '.results[] | select(.id == $id and .mode == "hot" and .status == "ok") | .params[$k] // empty' "$1")
  else
    v=$(value "$1" "$3")
  fi
  [ -z "$v" ] || awk -v r="$2" -v v="$v" -v k="$4" 'BEGIN { print r, v * k }'
}
# lmrow ROW FILTER CMD...: "ROW value" of an lmbench program, its value
# what the pipeline FILTER prints of its output (stderr), as
# bench/lmbench-list.sh runs it: -N 3 is in CMD, and ENOUGH=20000.
lmrow() {
  local row=$1 filter=$2 v
  shift 2
  v=$(ENOUGH=20000 pin "$@" 2>&1 >/dev/null | eval "$filter" | head -1) || true
  [ -z "$v" ] || echo "$row $v"
}
# yquick ARGS...: a quick yamba run of ARGS, its results in $out/y.json.
yquick() { "$yamba" run --no-history --quick --cpu "$cpu" --out "$out/y.json" "$@" >/dev/null 2>&1; }
LB=$lmb/bin/x86

# Each tool_NAME prints rows "ROW VALUE", one per row of the section; a
# tool that failed prints nothing, and its rounds are left out.
case $section in
  ctx)
    cc -O2 -o "$out/ctx-witness" "$repo/bench/ctx-witness.c"
    counts=(8 16 96)
    tools=(yamba lmbench C)
    pairs=("yamba C" "lmbench C" "yamba lmbench")
    unit="µs per hop"
    tool_lmbench() {
      ENOUGH=20000 pin chrt --batch 0 "$LB/lat_ctx" -N 3 -s 0 "${counts[@]}" 2>&1 >/dev/null | awk 'NF == 2 && $1 ~ /^[0-9]+$/ { print $1 "p", $2 }'
      ENOUGH=20000 pin chrt --batch 0 "$LB/lat_ctx" -N 3 -s 64 2 96 2>&1 >/dev/null | awk 'NF == 2 && $1 ~ /^[0-9]+$/ { print $1 "p_64k", $2 }'
    }
    tool_C() { pin chrt --batch 0 "$out/ctx-witness" "${counts[@]}" | awk -F'\t' '{ split($1, w, " "); sub(",", "", w[3]); print w[3] "p", $2 }'; }
    tool_yamba() {
      # yamba pins itself (--cpu) and runs its ring in SCHED_BATCH.
      yquick ipc.ctxsw.sweep || return 0
      jq -r '.results[] | select(.id == "ipc.ctxsw.sweep.0k" and .status == "ok") | .series.points[] | select(.[0] == 8 or .[0] == 16 or .[0] == 96) | "\(.[0])p \(.[1] / 1000)"' "$out/y.json"
      jq -r '.results[] | select(.id == "ipc.ctxsw.sweep.64k" and .status == "ok") | .series.points[] | select(.[0] == 2 or .[0] == 96) | "\(.[0])p_64k \(.[1] / 1000)"' "$out/y.json"
    }
    ;;
  lmdd)
    scratch=$(mktemp -d /var/tmp/yamba-rounds.XXXXXX)
    tools=(yamba lmdd)
    pairs=("yamba lmdd")
    unit="MB/s"
    tool_lmdd() {
      # As bench/lmbench-list.sh: a file dd has just written, read into the cache.
      head -c "$((8 << 20))" /dev/zero | dd of="$scratch/lmdd.dat" bs=1M iflag=fullblock status=none
      cat "$scratch/lmdd.dat" >/dev/null
      local f arg
      for f in nofsync fsync; do
        arg=()
        [ $f = fsync ] && arg=(fsync=1)
        pin "$LB/lmdd" if=internal of="$scratch/lmdd.dat" move=8m bs=16k notrunc=1 print=3 "${arg[@]}" 2>&1 |
          awk -v r=$f '$2 == "KB/sec" { print r, $1 / 1000 }'
      done
    }
    tool_yamba() {
      yquick --scratch "$scratch" fs.write.seq || return 0
      yrow "$out/y.json" nofsync fs.write.seq.buffered 1000
      yrow "$out/y.json" fsync fs.write.seq.buffered.fsync 1000
    }
    ;;
  syscall)
    small=$out/small.txt
    head -c 4096 /dev/zero | tr '\0' x >"$small"
    tools=(yamba lmbench)
    pairs=("yamba lmbench")
    unit="µs"
    tool_yamba() {
      yquick cpu.syscall.getppid cpu.syscall.read_devzero cpu.syscall.write_devnull cpu.syscall.fstat cpu.syscall.open \
        --set "cpu.syscall.path=$small" || return 0
      yrow "$out/y.json" null cpu.syscall.getppid.libc 0.001
      yrow "$out/y.json" read cpu.syscall.read_devzero.libc 0.001
      yrow "$out/y.json" write cpu.syscall.write_devnull 0.001
      yrow "$out/y.json" fstat cpu.syscall.fstat 0.001
      yrow "$out/y.json" open cpu.syscall.open 0.001
    }
    tool_lmbench() {
      lmrow null "sed -n 's/^Simple syscall: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" -N 3 null
      lmrow read "sed -n 's/^Simple read: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" -N 3 read
      lmrow write "sed -n 's/^Simple write: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" -N 3 write
      lmrow fstat "sed -n 's/^Simple fstat: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" -N 3 fstat "$small"
      lmrow open "sed -n 's/^Simple open\/close: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" -N 3 open "$small"
    }
    ;;
  select)
    tools=(yamba lmbench)
    pairs=("yamba lmbench")
    unit="µs"
    tool_yamba() {
      yquick cpu.syscall.select || return 0
      yrow "$out/y.json" file100 cpu.syscall.select.file.100 0.001
      yrow "$out/y.json" file250 cpu.syscall.select.file.250 0.001
    }
    tool_lmbench() {
      # lat_select's file descriptors are of a file it makes in its directory.
      local n
      for n in 100 250; do
        (cd "$out" && lmrow "file$n" "sed -n 's/^Select on $n fd.s: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_select" -N 3 -n "$n" file)
      done
    }
    ;;
  pipe)
    tools=(yamba lmbench)
    pairs=("yamba lmbench")
    unit="µs"
    tool_yamba() { yquick ipc.rtt --set ipc.transports=pipe && yrow "$out/y.json" pipe ipc.rtt.pipe.same_cpu 0.001; }
    tool_lmbench() { lmrow pipe "sed -n 's/^Pipe latency: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_pipe" -N 3; }
    ;;
  usleep)
    tools=(yamba lmbench)
    pairs=("yamba lmbench")
    unit="µs"
    # lmbench with its timer slack at 1 ns, as yamba sets its own (prctl
    # PR_SET_TIMERSLACK before exec; the slack is inherited).
    slack1=(python3 -c 'import ctypes, os, sys; ctypes.CDLL(None).prctl(29, 1, 0, 0, 0); os.execv(sys.argv[1], sys.argv[1:])')
    tool_yamba() {
      yquick sched.wakeup.nanosleep sched.wakeup.itimer || return 0
      yrow "$out/y.json" ns10_slack1 sched.wakeup.nanosleep.10us 0.001 period_plus_median_lateness_ns
      yrow "$out/y.json" ns100_slack1 sched.wakeup.nanosleep.100us 0.001 period_plus_median_lateness_ns
      yrow "$out/y.json" itimer10 sched.wakeup.itimer.10us 0.001 period_plus_median_lateness_ns
    }
    tool_lmbench() {
      lmrow ns10_slack1 "sed -n 's/^nanosleep 10 microseconds: \([0-9.]*\) microseconds/\1/p'" "${slack1[@]}" "$LB/lat_usleep" -N 3 -u nanosleep 10
      lmrow ns100_slack1 "sed -n 's/^nanosleep 100 microseconds: \([0-9.]*\) microseconds/\1/p'" "${slack1[@]}" "$LB/lat_usleep" -N 3 -u nanosleep 100
      lmrow itimer10 "sed -n 's/^itimer 10 microseconds: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_usleep" -N 3 -u itimer 10
    }
    ;;
  net)
    tools=(yamba lmbench)
    pairs=("yamba lmbench")
    unit="µs"
    other=$(( cpu == 0 ? 1 : 0 ))
    tool_yamba() {
      # The round trips with the peer on the same CPU, as lmbench's server
      # is pinned here (by default yamba's peer is on another CPU: on a
      # KVM guest each wake-up of an idle vCPU makes that ~4× longer).
      yquick net.tcp.rtt net.udp.rtt --set net.peer_cpu=same || return 0
      yrow "$out/y.json" tcp net.tcp.rtt 0.001
      yrow "$out/y.json" udp net.udp.rtt 0.001
      yquick net.unix.connect_close || return 0
      yrow "$out/y.json" unix_connect net.unix.connect_close 0.001
      # Row unix_connect_mean: the observations' mean, lmbench's statistic
      # (its figure is the time of all connections over their count).
      jq -r '.results[] | select(.id == "net.unix.connect_close" and .mode == "hot" and .status == "ok") | "unix_connect_mean \(.summary.mean / 1000)"' "$out/y.json"
    }
    tool_lmbench() {
      # As bench/lmbench-list.sh: the TCP and UDP servers on the client's
      # CPU (yamba's peer is a thread on its CPU), lat_unix_connect's on
      # the other CPU (yamba's accepting peer is on the other CPU too).
      local proto
      for proto in tcp udp; do
        pin "$LB/lat_$proto" -s >/dev/null 2>&1 || true
        sleep 0.3
        lmrow "$proto" "sed -n 's/^${proto^^} latency using 127.0.0.1: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_$proto" -N 3 127.0.0.1
        "$LB/lat_$proto" -S 127.0.0.1 >/dev/null 2>&1 || true
      done
      rm -f /tmp/af_unix
      taskset -c "$other" "$LB/lat_unix_connect" -s >/dev/null 2>&1 || true
      sleep 0.3
      local s
      s=$(lmrow unix_connect "sed -n 's/^UNIX connection cost: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_unix_connect" -N 3)
      [ -z "$s" ] || printf '%s\n%s\n' "$s" "${s/#unix_connect /unix_connect_mean }"
      "$LB/lat_unix_connect" -S >/dev/null 2>&1 || true
    }
    ;;
  reread)
    tools=(yamba lmbench)
    pairs=("yamba lmbench")
    unit="MB/s"
    # One cached 64 MiB file of random bytes written in 1 MiB writes, as
    # bench/lmbench-list.sh makes it (the page cache keeps a file in folios
    # as large as the writes that made it); yamba makes its own the same way.
    scratch=$(mktemp -d /var/tmp/yamba-rounds.XXXXXX)
    head -c "$((64 << 20))" /dev/urandom | dd of="$scratch/reread.dat" bs=1M iflag=fullblock status=none
    tool_yamba() {
      yquick fs.reread --set fs.reread_size=64M || return 0
      yrow "$out/y.json" file_rd64m fs.reread.read 1000
    }
    tool_lmbench() {
      cat "$scratch/reread.dat" >/dev/null
      lmrow file_rd64m "awk '{ print \$2 }'" "$LB/bw_file_rd" -N 3 64m io_only "$scratch/reread.dat"
    }
    ;;
  bw)
    cc -O3 -o "$out/stream-witness" "$repo/bench/stream-witness.c"
    tools=(yamba lmbench C)
    pairs=("yamba lmbench" "yamba C" "lmbench C")
    unit="MB/s"
    # The C loops of bench/stream-witness.c: lmbench's scalar scale and
    # copy (rows scale128m, copy128m).
    tool_C() {
      pin "$out/stream-witness" | awk -F'\t' '/^scale, scalar \(/ { print "scale128m", $2; print "scale128m_pass", $2 } /^copy, scalar/ { print "copy128m", $2 }
        /^rdwr, lmbench/ { print "rdwr128m", $2 } /^rdwr, yamba/ { print "rdwr128m_y", $2 }'
    }
    tool_yamba() {
      # As bench/lmbench-list.sh: the read curve up to 64 MiB, the other
      # kernels on 128 MiB arrays (lmbench's stream -M is all three arrays).
      # The curve's 64 MiB point, withheld or not: yamba withholds the
      # curve's memory figure when its largest set is under 4x the
      # last-level cache's measured capacity (on the AMD EPYC guest, 32 MiB
      # of L3, ~17-23 MB effective: 7 of 12 quick runs), but the point is
      # the same 64 MiB pass that lmbench's 64m rd times, with no such check.
      yquick mem.bandwidth.read.curve --set mem.bw_size=67108864 &&
        jq -r '.results[] | select(.id == "mem.bandwidth.read.curve" and .mode == "hot" and (.status == "ok" or .status == "withheld")) | .series.points[] | select(.[0] == 67108864) | "rd64m \(.[1] * 1000)"' "$out/y.json"
      yquick mem.bandwidth.rdwr mem.bandwidth.scale mem.bandwidth.copy --set mem.bw_size=128M || return 0
      yrow "$out/y.json" rdwr128m mem.bandwidth.rdwr 1000
      yrow "$out/y.json" rdwr128m_y mem.bandwidth.rdwr 1000
      yrow "$out/y.json" scale128m mem.bandwidth.scale 1000
      # Row scale128m_pass: the same observations as one pass's figure
      # (their harmonic mean: all bytes over all time), not their median.
      jq -r '.results[] | select(.id == "mem.bandwidth.scale" and .mode == "hot" and .status == "ok") | .observations | select(length > 0) | "scale128m_pass \(1000 * length / (map(1 / .) | add))"' "$out/y.json"
      yrow "$out/y.json" copy128m mem.bandwidth.copy 1000
    }
    tool_lmbench() {
      lmrow rd64m "awk '{ print \$2 }'" "$LB/bw_mem" -N 3 64m rd
      # lmbench counts rdwr's bytes once; yamba (STREAM) read + written.
      local s
      s=$(lmrow rdwr128m "awk '{ print 2 * \$2 }'" "$LB/bw_mem" -N 3 128m rdwr)
      [ -z "$s" ] || printf '%s\n%s\n' "$s" "${s/#rdwr128m /rdwr128m_y }"
      s=$(ENOUGH=20000 pin "$LB/stream" -N 3 -M 384m 2>&1 >/dev/null)
      sed -n 's/^STREAM scale bandwidth: \([0-9.]*\) MB\/sec/scale128m \1\nscale128m_pass \1/p' <<<"$s"
      sed -n 's/^STREAM copy bandwidth: \([0-9.]*\) MB\/sec/copy128m \1/p' <<<"$s"
    }
    ;;
esac

# Every order of the tools (6 of three, 2 of two), one a round in turn.
if [ ${#tools[@]} = 3 ]; then
  a=${tools[0]} b=${tools[1]} c=${tools[2]}
  orders=("$a $b $c" "$a $c $b" "$b $a $c" "$b $c $a" "$c $a $b" "$c $b $a")
else
  orders=("${tools[0]} ${tools[1]}" "${tools[1]} ${tools[0]}")
fi
: >"$out/rounds.tsv"
for r in $(seq 1 "$rounds"); do
  for t in ${orders[$(((r - 1) % ${#orders[@]}))]}; do
    { "tool_$t" || echo "$me: $t failed in round $r; its rows are left out" >&2; } | sed "s/^/$r $t /" >>"$out/rounds.tsv"
  done
  echo "round $r of $rounds done" >&2
done

python3 - "$out/rounds.tsv" "$section" "$unit" "${tools[*]}" "${pairs[@]}" <<'PY'
import math, sys
path, section, unit = sys.argv[1], sys.argv[2], sys.argv[3]
tools, pairs = sys.argv[4].split(), [p.split() for p in sys.argv[5:]]
v, rows = {}, []
for line in open(path):
    r, tool, row, x = line.split()
    v[(int(r), tool, row)] = float(x)
    if row not in rows:
        rows.append(row)
rounds = sorted({k[0] for k in v})


def median_ci(xs, level=0.95):
    """The median and its distribution-free interval: order statistics
    x_(l), x_(n+1-l) with the largest l whose binomial coverage ≥ level."""
    xs = sorted(xs)
    n = len(xs)
    med = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    best = None
    for l in range(1, n // 2 + 1):
        if 1 - 2 * sum(math.comb(n, i) for i in range(l)) / 2**n >= level:
            best = (xs[l - 1], xs[n - l])
    return med, best


print(f"{section}: {len(rounds)} rounds, one CPU; each tool once a round, orders rotating; ranges in {unit}")
head = [f"{t} range" for t in tools] + [f"{a}/{b}" for a, b in pairs]
print(f"{'row':>8}  " + "  ".join(f"{h:>22}" for h in head))
for row in rows:
    cols = []
    for t in tools:
        xs = [v[(r, t, row)] for r in rounds if (r, t, row) in v]
        cols.append(f"{min(xs):.4g}–{max(xs):.4g}" if xs else "n/a")
    for a, b in pairs:
        xs = [v[(r, a, row)] / v[(r, b, row)] for r in rounds if (r, a, row) in v and (r, b, row) in v]
        if not xs:
            cols.append("n/a")
            continue
        med, ci = median_ci(xs)
        cols.append(f"{med:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] n={len(xs)}" if ci else f"{med:.3f} n={len(xs)}")
    print(f"{row:>8}  " + "  ".join(f"{c:>22}" for c in cols))
print("ratio: median over rounds of the round's ratio [its 95% distribution-free interval], n rounds with both tools' rows")
PY
