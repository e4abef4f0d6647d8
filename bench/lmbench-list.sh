#!/usr/bin/env bash
# yamba vs lmbench 3, side by side in one run, for every benchmark that
# completes lmbench's list (issue 11 §3). Both are pinned to the same CPU
# with taskset; for each pair yamba runs first, then lmbench REPS times,
# each with -N LMN repetitions (the median of the REPS runs is printed). Prints one table: both medians, in lmbench's
# units, and yamba / lmbench; '*' marks a difference over 10%.
#
# Usage: bench/lmbench-list.sh            (from the repository's root or anywhere)
#   CPU=N        CPU to pin both to (default: the last one)
#   REPS=N       lmbench runs per pair (default 3)
#   LMN=N        lmbench's own repetitions per run, -N (default 3; lmbench's is 11)
#   BUDGET=S     yamba's sampling budget per quantity, seconds (default 1)
#   BW_MB=N      bytes per array for the bandwidth pairs, MiB (default: 4 × the LLC)
#   PAR_MB=N     working set for par_mem / mem.parallelism, MiB (default: 2 × the LLC, a power of 2)
#   PAR_ENOUGH=U lmbench's ENOUGH for par_mem, mhz and lat_fs's (ENOUGH) rows, µs per timing (default 20000)
#   RR_MB=N      size of the file bw_file_rd / bw_mmap_rd and fs.reread read, MiB (default 64)
#   LMBENCH=DIR  where lmbench is built (default /tmp/lmbench)
#   ENOUGH=U     exported to every lmbench program, as lmbench's own runner does (µs per
#                timing; bench/lmbench-enough.sh finds it). Unset, each program finds its
#                own: 1 s a timing on a busy host, where the whole list then takes hours
#   RT=1         run both in SCHED_FIFO (root): on a machine others load, neither is
#                then preempted by their tasks (lmbench times long intervals, which
#                otherwise include other tasks' time slices)
#   HTTP_PORT=N  port for lmbench's lmhttp (default 8008, as lmbench's own scripts)
#   HTTP_N=N     requests in lat_http's file list per size (default 1000)
#   KEEP=1       keep the work directory (yamba's results files, lmbench's raw output)
#
# Needs: jq, taskset, make and cc (lmbench is built from the peers' tarball).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
CPU=${CPU:-$(( $(nproc) - 1 ))}
REPS=${REPS:-3}
LMN=${LMN:-3}
BUDGET=${BUDGET:-1}
LMBENCH=${LMBENCH:-/tmp/lmbench}
HTTP_PORT=${HTTP_PORT:-8008}
HTTP_N=${HTTP_N:-1000}
for p in "$repo/../shared/peers" /work/shared/peers; do
  [ -f "$p/build-lmbench.sh" ] && PEERS=$p && break
done
: "${PEERS:?cannot find shared/peers/build-lmbench.sh}"
for tool in jq taskset make cc; do
  command -v $tool >/dev/null || { echo "bench/lmbench-list.sh: needs $tool (apt-get install ${tool/cc/gcc})" >&2; exit 2; }
done

llc_bytes() {
  local best=0 f s
  for f in /sys/devices/system/cpu/cpu0/cache/index*/size; do
    s=$(cat "$f"); case $s in *K) s=$(( ${s%K} * 1024 ));; *M) s=$(( ${s%M} * 1048576 ));; esac
    [ "$s" -gt "$best" ] && best=$s
  done
  echo "$best"
}
llc_mb=$(( $(llc_bytes) / 1048576 )); [ "$llc_mb" -gt 0 ] || llc_mb=32
BW_MB=${BW_MB:-$(( 4 * llc_mb ))}
if [ -z "${PAR_MB:-}" ]; then PAR_MB=64; while [ $PAR_MB -lt $(( 2 * llc_mb )) ]; do PAR_MB=$(( PAR_MB * 2 )); done; fi

work=$(mktemp -d /var/tmp/yamba-lmlist.XXXXXX)
lmserver=0
httpserver=0
cleanup() {
  [ "$lmserver" = 1 ] && "$LMBENCH/bin/x86/lat_connect" -S 127.0.0.1 >/dev/null 2>&1 || true
  [ "$httpserver" = 1 ] && "$LMBENCH/bin/x86/lat_http" -S 127.0.0.1 "$HTTP_PORT" >/dev/null 2>&1 || true
  bash "$repo/bench/lmbench-reap.sh" "$LMBENCH/bin/x86"
  [ "${KEEP:-0}" = 1 ] && echo "work directory kept: $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

echo "building lmbench ($LMBENCH) and yamba ..." >&2
bash "$repo/bench/lmbench-build.sh" "$LMBENCH"
cp "$LMBENCH/bin/x86/hello" /tmp/hello   # lat_proc exec and shell run /tmp/hello
(cd "$repo" && cargo build --release -q -p yamba-cli)
Y="$repo/target/release/yamba"
LB="$LMBENCH/bin/x86"
if [ "${RT:-0}" = 1 ]; then rt=(chrt -f 1); yrt=(--realtime); else rt=(); yrt=(); fi
pin() { taskset -c "$CPU" "${rt[@]}" "$@"; }
N=(-N "$LMN")

# Files both sides use: a 32 MiB file written a page at a time (lat_mmap,
# mem.mmap), and one small file for fstat and open.
dd if=/dev/urandom of="$work/mmap.dat" bs=4k count=8192 status=none
cat "$work/mmap.dat" >/dev/null
mkdir -p "$work/usr/include/linux" "$work/lmfs" "$work/yscratch"
head -c 1000 /dev/zero >"$work/usr/include/linux/types.h"
small="$work/usr/include/linux/types.h"

# yamba ARGS...: one yamba run; its results file's name is printed. (Called
# in $(...), a subshell, where a counter would not survive the call: mktemp
# names the file.) Not under taskset: --cpu pins the benchmark, and a
# peer (a server thread, the other end of a cross-CPU pair) must be free
# to go to the other CPU, as lmbench's servers are put there below; under
# taskset every peer was held on the benchmark's CPU.
yamba() {
  local out
  out=$(mktemp --suffix=.json "$work/y-$1.XXXX")
  "${rt[@]}" "$Y" run --cpu "$CPU" --budget "$BUDGET" "${yrt[@]}" --scratch "${YSCRATCH:-$work/yscratch}" --out "$out" "$@" >"${out%.json}.txt" 2>&1 || true
  jq -r '.results[] | select((.params.peer // "") | test("no other CPU")) | "bench/lmbench-list.sh: \(.id): peer \(.params.peer)"' "$out" >&2 2>/dev/null || true
  echo "$out"
}
# ymed FILE ID [scale]: a result's value × scale — the one yamba reports (a
# precise run's estimate over its processes, which leaves out processes a
# shared core moved; a quick run's median), not the median of every
# observation pooled, where a shared process's many observations outweigh
# the rest — or n/a; after a colon its status when not ok, or "shared" when
# the value describes a shared core.
ymed() {
  jq -r --arg id "$2" --argjson k "${3:-1}" \
    '[.results[] | select(.id == $id)][0] | if . == null then "n/a" elif .summary == null then "n/a:\(.status)" else
       ((.certainty.estimate // .summary.median) * $k | tostring)
       + (if .status != "ok" then ":" + .status elif ((.certainty.note // "") | test("describes a shared core")) then ":shared" else "" end) end' "$1"
}
# yparam FILE ID KEY [scale]: a parameter of a result × scale, or n/a (its status after a colon when not ok).
yparam() {
  jq -r --arg id "$2" --arg k "$3" --argjson s "${4:-1}" \
    '[.results[] | select(.id == $id)][0] | if . == null or .params[$k] == null then "n/a" else (.params[$k] * $s | tostring) + (if .status == "ok" then "" else ":" + .status end) end' "$1"
}
# ypoint FILE ID X [scale]: the y of a result's series point at x. (A curve a
# precise run measures in its first process only — ipc.ctxsw.sweep — is
# that process's; its headline point is ymed's.)
ypoint() {
  jq -r --arg id "$2" --argjson x "$3" --argjson k "${4:-1}" \
    '[.results[] | select(.id == $id) | .series.points[] | select(.[0] == $x) | .[1] * $k][0] // "n/a"' "$1"
}
# lm EXTRACT CMD...: lmbench's median over REPS runs; EXTRACT is a
# pipeline from its (stderr) output to one number per run.
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2}'; }
lm() {
  local extract=$1; shift
  for _ in $(seq "$REPS"); do pin "$@" 2>&1 >/dev/null | eval "$extract" || true; done | { grep -E '^[0-9.e+-]+$' || true; } | median
}

rows=()
# row PAIR YAMBA_ID YAMBA_VALUE LMBENCH_VALUE UNIT NOTE
row() {
  local y=${3%%:*} flag
  rows+=("$(awk -v p="$1" -v id="$2" -v y="$3" -v yv="$y" -v l="$4" -v u="$5" -v note="$6" 'BEGIN {
    r = "n/a"; f = " ";
    if (yv ~ /^[0-9.e+-]+$/ && l ~ /^[0-9.e+-]+$/ && l + 0 != 0) { r = sprintf("%.2f", yv / l); if (yv / l > 1.1 || yv / l < 1 / 1.1) f = "*" }
    yy = (yv ~ /^[0-9.e+-]+$/) ? sprintf("%.4g", yv) : yv; if (y != yv) yy = yy " (" substr(y, length(yv) + 2) ")";
    ll = (l ~ /^[0-9.e+-]+$/) ? sprintf("%.4g", l) : l;
    printf "%-22s %-36s %16s %12s %-7s %6s %s  %s", p, id, yy, ll, u, r, f, note }')")
  echo "${rows[-1]}" >&2
}

echo "load before: $(cat /proc/loadavg) (other engineers' builds share this machine)" >&2
started=$(date +%s)

# --- bw_pipe ----------------------------------------------------------------
f=$(yamba ipc.bw.pipe)
row bw_pipe ipc.bw.pipe.same_cpu "$(ymed "$f" ipc.bw.pipe.same_cpu 1000)" \
  "$(lm "sed -n 's/^Pipe bandwidth: \([0-9.]*\) MB\/sec/\1/p'" "$LB/bw_pipe" "${N[@]}")" MB/s "64 KiB writes; writer on the reader's CPU"

# --- lmbench's summary primitives: null call, read, signals, local round trips --
# Peers on the benchmark's CPU, as lmbench's (its forked servers inherit the pin).
f=$(yamba cpu.syscall.getppid cpu.syscall.read_devzero signal.sigaction signal.self signal.fault ipc.rtt net.tcp.rtt net.udp.rtt \
      --set net.peer_cpu=same --set net.msg_bytes=8 --set ipc.transports=pipe,unix_stream)
row "lat_syscall null" cpu.syscall.getppid.libc "$(ymed "$f" cpu.syscall.getppid.libc 0.001)" \
  "$(lm "sed -n 's/^Simple syscall: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" "${N[@]}" null)" µs "libc's getppid"
row "lat_syscall read" cpu.syscall.read_devzero.libc "$(ymed "$f" cpu.syscall.read_devzero.libc 0.001)" \
  "$(lm "sed -n 's/^Simple read: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" "${N[@]}" read)" µs "1 byte from /dev/zero, libc's read"
row "lat_sig install" signal.sigaction "$(ymed "$f" signal.sigaction 0.001)" \
  "$(lm "sed -n 's/^Signal handler installation: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_sig" "${N[@]}" install)" µs "lmbench also reads the old action back (bench/sigaction-witness.c)"
row "lat_sig catch (ref)" signal.self "$(ymed "$f" signal.self 0.001)" \
  "$(lm "sed -n 's/^Signal handler overhead: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_sig" "${N[@]}" catch)" µs "yamba: send + catch; lmbench subtracts the send"
row "lat_sig prot (ref)" signal.fault "$(ymed "$f" signal.fault 0.001)" \
  "$(lm "sed -n 's/^Protection fault: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_sig" "${N[@]}" prot "$work/mmap.dat")" µs "yamba's handler mprotects the page; lmbench's returns to fault again"
row lat_pipe ipc.rtt.pipe.same_cpu "$(ymed "$f" ipc.rtt.pipe.same_cpu 0.001)" \
  "$(lm "sed -n 's/^Pipe latency: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_pipe" "${N[@]}")" µs "1 byte each way, peer process"
row lat_unix ipc.rtt.unix_stream.same_cpu "$(ymed "$f" ipc.rtt.unix_stream.same_cpu 0.001)" \
  "$(lm "sed -n 's/^AF_UNIX sock stream latency: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_unix" "${N[@]}")" µs "1 byte each way, socketpair, peer process"
for proto in tcp udp; do
  pin "$LB/lat_$proto" -s >/dev/null 2>&1 || true
  sleep 0.3
  row "lat_$proto" "net.$proto.rtt" "$(ymed "$f" "net.$proto.rtt" 0.001)" \
    "$(lm "sed -n 's/^${proto^^} latency using 127.0.0.1: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_$proto" "${N[@]}" 127.0.0.1)" µs \
    "$([ $proto = tcp ] && echo "yamba 8 B, lmbench 1" || echo "yamba 8 B, lmbench 4"); yamba's peer a thread, lmbench's a process (bench/tcp-rtt-witness.c)"
  "$LB/lat_$proto" -S 127.0.0.1 >/dev/null 2>&1 || true
done

# --- lat_mmap ---------------------------------------------------------------
f=$(yamba mem.mmap)
for s in 512k 4m 32m; do
  row "lat_mmap $s" "mem.mmap.$s" "$(ymed "$f" "mem.mmap.$s" 0.001)" \
    "$(lm "awk '{print \$2}'" "$LB/lat_mmap" "${N[@]}" "$s" "$work/mmap.dat")" µs "map + 1 byte written per 16 KiB of the first tenth + unmap"
done

# --- bw_mem rd over sizes: the read curve's points --------------------------------
# The curve reaches 64 MiB (mem.bw_size); its points at powers of two are the sizes.
f=$(yamba mem.bandwidth.read.curve --set mem.bw_size=67108864)
for s in 16k 256k 4m 64m; do
  case $s in *k) unit=1024 ;; *m) unit=1048576 ;; esac
  b=$(( ${s%?} * unit ))
  row "bw_mem $s rd" "mem.bandwidth.read.curve @$s" "$(ypoint "$f" mem.bandwidth.read.curve "$b" 1000)" \
    "$(lm "awk '{print \$2}'" "$LB/bw_mem" "${N[@]}" "$s" rd)" MB/s "lmbench loads one int per 16 bytes and counts 16; yamba loads every word"
done

# --- lat_mem_rd SIZE 128: the summary's "Main mem" -----------------------------
# A chase through ascending addresses 128 bytes apart (prefetchers follow it),
# at yamba's working set; lat_mem_rd prints every size up to SIZE MiB, the
# last line is SIZE's.
f=$(yamba mem.latency.sequential)
ws=$(yparam "$f" mem.latency.sequential working_set_bytes)
if [[ $ws =~ ^[0-9]+$ ]]; then
  mb=$(( ws / 1048576 ))
  row "lat_mem_rd ${mb}m 128" mem.latency.sequential "$(ymed "$f" mem.latency.sequential)" \
    "$(lm "awk 'NF == 2 && \$1 ~ /^[0-9.]+\$/ {v = \$2} END {if (v != \"\") print v}'" "$LB/lat_mem_rd" "${N[@]}" "$mb" 128)" ns \
    "summary's Main mem: ascending, 128 bytes apart, base pages; yamba a dependent chase timed alone"
else
  row "lat_mem_rd 128" mem.latency.sequential "$(ymed "$f" mem.latency.sequential)" n/a ns "yamba gave no working set to pair lmbench's with"
fi

# --- bw_mem bzero, bcopy, rdwr; STREAM add, scale ------------------------------
f=$(yamba mem.bandwidth.bzero mem.bandwidth.bcopy mem.bandwidth.rdwr mem.bandwidth.add mem.bandwidth.scale --set "mem.bw_size=${BW_MB}M")
row "bw_mem bzero" mem.bandwidth.bzero "$(ymed "$f" mem.bandwidth.bzero 1000)" \
  "$(lm "awk '{print \$2}'" "$LB/bw_mem" "${N[@]}" "${BW_MB}m" bzero)" MB/s "${BW_MB} MiB"
row "bw_mem bcopy" mem.bandwidth.bcopy "$(ymed "$f" mem.bandwidth.bcopy 1000)" \
  "$(lm "awk '{print 2 * \$2}'" "$LB/bw_mem" "${N[@]}" "${BW_MB}m" bcopy)" MB/s "lmbench ×2: it counts a copy's bytes once, yamba (STREAM) read + written"
row "bw_mem rdwr" mem.bandwidth.rdwr "$(ymed "$f" mem.bandwidth.rdwr 1000)" \
  "$(lm "awk '{print 2 * \$2}'" "$LB/bw_mem" "${N[@]}" "${BW_MB}m" rdwr)" MB/s "lmbench ×2 (read + written, as STREAM counts)"
stream_out="$work/stream.txt"
for _ in $(seq "$REPS"); do pin "$LB/stream" "${N[@]}" -M "$((3 * BW_MB))m" 2>>"$stream_out" >/dev/null || true; done
row "stream add" mem.bandwidth.add "$(ymed "$f" mem.bandwidth.add 1000)" \
  "$(sed -n 's/^STREAM add bandwidth: \([0-9.]*\) MB\/sec/\1/p' "$stream_out" | median)" MB/s "lmbench's 'add' runs its sum kernel (1 array read) and counts 3"
row "stream scale" mem.bandwidth.scale "$(ymed "$f" mem.bandwidth.scale 1000)" \
  "$(sed -n 's/^STREAM scale bandwidth: \([0-9.]*\) MB\/sec/\1/p' "$stream_out" | median)" MB/s "3 × ${BW_MB} MiB for lmbench's -M"

# --- lat_ctx -s 0/16/64 -------------------------------------------------------
f=$(yamba ipc.ctxsw.sweep)
for s in 0 16 64; do
  ctx_out="$work/ctx$s.txt"
  for _ in $(seq "$REPS"); do pin "$LB/lat_ctx" "${N[@]}" -s "$s" 2 8 16 96 2>>"$ctx_out" >/dev/null || true; done
  for p in 2 8 16 96; do
    row "lat_ctx -s $s ${p}p" "ipc.ctxsw.sweep.${s}k @${p}" "$(if [ "$p" = 2 ]; then ymed "$f" "ipc.ctxsw.sweep.${s}k" 0.001; else ypoint "$f" "ipc.ctxsw.sweep.${s}k" "$p" 0.001; fi)" \
      "$(awk -v p="$p" '$1 == p && NF == 2 {print $2}' "$ctx_out" | median)" µs "ring of pipes; yamba in SCHED_BATCH"
  done
done
# The same ring with lmbench in SCHED_BATCH too (chrt --batch; its forked
# ring inherits the policy): with wake-up preemption off, a hop is one
# switch for both, and the rows above differ only by the policy
# (docs/lmbench.md, lat_ctx). Not with RT=1: both then run in SCHED_FIFO.
if [ "${RT:-0}" != 1 ]; then
  ctx_out="$work/ctx0-batch.txt"
  for _ in $(seq "$REPS"); do pin chrt --batch 0 "$LB/lat_ctx" "${N[@]}" -s 0 2 8 16 96 2>>"$ctx_out" >/dev/null || true; done
  for p in 2 8 16 96; do
    row "lat_ctx -s 0 ${p}p batch" "ipc.ctxsw.sweep.0k @${p}" "$(if [ "$p" = 2 ]; then ymed "$f" ipc.ctxsw.sweep.0k 0.001; else ypoint "$f" ipc.ctxsw.sweep.0k "$p" 0.001; fi)" \
      "$(awk -v p="$p" '$1 == p && NF == 2 {print $2}' "$ctx_out" | median)" µs "both in SCHED_BATCH: one switch per hop"
  done
fi

# --- lat_proc fork, shell (and exec, for reference) ---------------------------
f=$(yamba proc.fork.light proc.shell proc.fork_exec)
row "lat_proc fork" proc.fork.light "$(ymed "$f" proc.fork.light 0.001)" \
  "$(lm "sed -n 's/^Process fork+exit: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_proc" "${N[@]}" fork)" µs "child: yamba _exit; lmbench exit() (stdio, atexit)"
row "lat_proc shell" proc.shell "$(ymed "$f" proc.shell 0.001)" \
  "$(lm "sed -n 's/^Process fork+\/bin\/sh -c: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_proc" "${N[@]}" shell)" µs "yamba: sh -c 'exit 7'; lmbench: sh -c /tmp/hello"
row "lat_proc exec (ref)" proc.fork_exec "$(ymed "$f" proc.fork_exec 0.001)" \
  "$(lm "sed -n 's/^Process fork+execve: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_proc" "${N[@]}" exec)" µs "yamba: /bin/true; lmbench: /tmp/hello"

# --- lat_syscall write, fstat, open -------------------------------------------
f=$(yamba cpu.syscall.write_devnull cpu.syscall.fstat cpu.syscall.open --set "cpu.syscall.path=$small")
row "lat_syscall write" cpu.syscall.write_devnull "$(ymed "$f" cpu.syscall.write_devnull 0.001)" \
  "$(lm "sed -n 's/^Simple write: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" "${N[@]}" write)" µs "1 byte to /dev/null"
row "lat_syscall fstat" cpu.syscall.fstat "$(ymed "$f" cpu.syscall.fstat 0.001)" \
  "$(lm "sed -n 's/^Simple fstat: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" "${N[@]}" fstat "$small")" µs "same file"
row "lat_syscall open" cpu.syscall.open "$(ymed "$f" cpu.syscall.open 0.001)" \
  "$(lm "sed -n 's/^Simple open\/close: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_syscall" "${N[@]}" open "$small")" µs "open + close, same path"

# --- lat_select file, tcp ------------------------------------------------------
f=$(yamba cpu.syscall.select)
for n in 10 100 250; do
  row "lat_select -n $n file" "cpu.syscall.select.file.$n" "$(ymed "$f" "cpu.syscall.select.file.$n" 0.001)" \
    "$(cd "$work" && lm "sed -n 's/^Select on $n fd.s: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_select" "${N[@]}" -n "$n" file)" µs "one regular file's descriptors, writability, zero timeout"
  row "lat_select -n $n tcp" "cpu.syscall.select.tcp.$n" "$(ymed "$f" "cpu.syscall.select.tcp.$n" 0.001)" \
    "$(lm "sed -n 's/^Select on $n tcp fd.s: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_select" "${N[@]}" -n "$n" tcp)" µs "connected loopback sockets"
done

# --- lat_fs -------------------------------------------------------------------
f=$(yamba fs.create_delete)
fs_out="$work/lat_fs.txt"
for _ in $(seq "$REPS"); do pin "$LB/lat_fs" "${N[@]}" "$work/lmfs" 2>>"$fs_out" >/dev/null || true; done
for s in 0 1 4 10; do
  row "lat_fs ${s}k create" "fs.create_delete.${s}k.create" "$(ymed "$f" "fs.create_delete.${s}k.create")" \
    "$(awk -v s="${s}k" '$1 == s {print $3}' "$fs_out" | median)" /s "files per second, same filesystem"
  row "lat_fs ${s}k delete" "fs.create_delete.${s}k.delete" "$(ymed "$f" "fs.create_delete.${s}k.delete")" \
    "$(awk -v s="${s}k" '$1 == s {print $4}' "$fs_out" | median)" /s ""
done
# The same on tmpfs: on an ext4 without a journal, a create's cost grows
# with the inodes deleted in the last minutes (ext4 skips recently deleted
# inodes when it allocates one), so there the rows above depend on what
# ran before each tool, builds included (docs/lmbench.md, lat_fs).
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
  shm=$(mktemp -d /dev/shm/yamba-lmlist.XXXXXX)
  mkdir -p "$shm/lm" "$shm/y"
  f=$(YSCRATCH=$shm/y yamba fs.create_delete)
  fs_out="$work/lat_fs_tmpfs.txt"
  for _ in $(seq "$REPS"); do pin "$LB/lat_fs" "${N[@]}" "$shm/lm" 2>>"$fs_out" >/dev/null || true; done
  # lat_fs creates as many files per timing as fill its interval, ENOUGH,
  # which it measures itself when unset: 1 s on a busy Intel Xeon guest,
  # 250 000–365 000 files in thousands of directories, where deletes run
  # slower than in small batches (docs/lmbench.md, lat_fs). The (ENOUGH)
  # rows give it PAR_ENOUGH, as for par_mem.
  fse_out="$work/lat_fs_tmpfs_enough.txt"
  for _ in $(seq "$REPS"); do ENOUGH=${PAR_ENOUGH:-20000} pin "$LB/lat_fs" "${N[@]}" "$shm/lm" 2>>"$fse_out" >/dev/null || true; done
  for s in 0 10; do
    row "lat_fs ${s}k create tmpfs" "fs.create_delete.${s}k.create" "$(ymed "$f" "fs.create_delete.${s}k.create")" \
      "$(awk -v s="${s}k" '$1 == s {print $3}' "$fs_out" | median)" /s "files per second, both in /dev/shm; lmbench's files per timing: $(awk -v s="${s}k" '$1 == s {print $2}' "$fs_out" | median)"
    row "lat_fs ${s}k delete tmpfs" "fs.create_delete.${s}k.delete" "$(ymed "$f" "fs.create_delete.${s}k.delete")" \
      "$(awk -v s="${s}k" '$1 == s {print $4}' "$fs_out" | median)" /s ""
    row "  (ENOUGH) create" "fs.create_delete.${s}k.create" "$(ymed "$f" "fs.create_delete.${s}k.create")" \
      "$(awk -v s="${s}k" '$1 == s {print $3}' "$fse_out" | median)" /s "lmbench with ENOUGH=${PAR_ENOUGH:-20000}: $(awk -v s="${s}k" '$1 == s {print $2}' "$fse_out" | median) files per timing"
    row "  (ENOUGH) delete" "fs.create_delete.${s}k.delete" "$(ymed "$f" "fs.create_delete.${s}k.delete")" \
      "$(awk -v s="${s}k" '$1 == s {print $4}' "$fse_out" | median)" /s ""
  done
  rm -rf "$shm"
fi

# --- lat_connect: with its server, then with none listening --------------------
f=$(yamba net.tcp.connect_close net.tcp.connect_refused_naive net.tcp.connect)
# lmbench's server on the other CPU, where yamba's peer is by default: pinned
# beside the client it is not scheduled while the client connects, its
# backlog of 100 fills, and the next SYN waits out a 1 s retransmission.
other=$(( CPU == 0 ? 1 : 0 ))
taskset -c "$other" "$LB/lat_connect" -s >/dev/null 2>&1 && lmserver=1
sleep 0.5
with=$(lm "sed -n 's/^TCP\/IP connection cost to 127.0.0.1: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_connect" "${N[@]}" 127.0.0.1)
"$LB/lat_connect" -S 127.0.0.1 >/dev/null 2>&1 || true; lmserver=0
sleep 0.5
without=$(lm "sed -n 's/^TCP\/IP connection cost to 127.0.0.1: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_connect" "${N[@]}" 127.0.0.1)
row "lat_connect" net.tcp.connect_close "$(ymed "$f" net.tcp.connect_close 0.001)" "$with" µs "socket + connect + close; server accepts"
row "lat_connect (ref)" net.tcp.connect "$(ymed "$f" net.tcp.connect 0.001)" "$with" µs "yamba also waits for the server's accept + close"
row "lat_connect no server" net.tcp.connect_refused_naive "$(ymed "$f" net.tcp.connect_refused_naive 0.001)" "$without" µs "refused connects: lmbench reports them, yamba withholds"

# --- lat_unix_connect, lat_fifo ---------------------------------------------------
f=$(yamba net.unix.connect_close)
# lmbench's server binds /tmp/af_unix; on the other CPU, as yamba's peer.
rm -f /tmp/af_unix
taskset -c "$other" "$LB/lat_unix_connect" -s >/dev/null 2>&1 || true
sleep 0.5
ux=$(lm "sed -n 's/^UNIX connection cost: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_unix_connect" "${N[@]}")
"$LB/lat_unix_connect" -S >/dev/null 2>&1 || true
row lat_unix_connect net.unix.connect_close "$(ymed "$f" net.unix.connect_close 0.001)" "$ux" µs "socket + connect + close to a path; server accepts"
# --- lat_http (with lmhttp) ------------------------------------------------------
# lmbench's scripts start lmhttp in a directory of files and feed lat_http
# a list of names; lat_http prints the whole list's time. One list per
# size, one name HTTP_N times: per request = the time / HTTP_N. lmhttp on
# the other CPU, as yamba's server thread; both serve the same files.
f=$(yamba net.http.get)
mkdir -p "$work/http"
for s in 1k 64k 1m; do
  case $s in 1k) b=1024;; 64k) b=65536;; 1m) b=1048576;; esac
  head -c "$b" /dev/urandom >"$work/http/f$s"
  yes "f$s" | head -n "$HTTP_N" >"$work/http-urls-$s" || true
done
(cd "$work/http" && DOCROOT="$work/http" taskset -c "$other" "$LB/lmhttp" "$HTTP_PORT" >/dev/null 2>&1 &) && httpserver=1
sleep 0.5
for s in 1k 64k 1m; do
  ms=$(for _ in $(seq "$REPS"); do pin "$LB/lat_http" 127.0.0.1 "$HTTP_PORT" <"$work/http-urls-$s" 2>&1 >/dev/null \
         | sed -n 's/.* in \([0-9.]*\) millisec.*/\1/p' || true; done | median)
  row "lat_http $s" "net.http.get.$s" "$(ymed "$f" "net.http.get.$s" 0.001)" \
    "$(echo "$ms" | awk -v n="$HTTP_N" '/^[0-9.]+$/ {print $1 * 1000 / n; next} {print "n/a"}')" µs "GET of one $s file, HTTP_N times; lmbench: list time / HTTP_N"
done
"$LB/lat_http" -S 127.0.0.1 "$HTTP_PORT" >/dev/null 2>&1 || true; httpserver=0

f=$(yamba ipc.rtt --set ipc.transports=fifo)
# lat_fifo's writer never exits (it spins on end-of-file, holding our
# output open): its output goes to a file, and the writer is killed.
fifo_out="$work/lat_fifo.txt"
for _ in $(seq "$REPS"); do
  timeout -s KILL 120 taskset -c "$CPU" "${rt[@]}" "$LB/lat_fifo" "${N[@]}" >>"$fifo_out" 2>&1 || true
  pkill -KILL -x lat_fifo || true
done
row lat_fifo ipc.rtt.fifo.same_cpu "$(ymed "$f" ipc.rtt.fifo.same_cpu 0.001)" \
  "$(sed -n 's/^Fifo latency: \([0-9.]*\) microseconds/\1/p' "$fifo_out" | median)" µs "two FIFOs, 1 byte each way, peer on the same CPU"

# --- bw_file_rd, bw_mmap_rd (io_only / mmap_only and open2close) ---------------
# One cached file both read (lmbench's runner rereads one file of its largest
# size; getsummary's "File reread" and "Mmap reread" are those lines). Written
# in 1 MiB writes, as yamba writes its own: the page cache keeps a file in
# folios as large as the writes that made it, and 4 KiB folios halve
# bw_file_rd (5.1 against 9.3 GB/s here) and cut bw_mmap_rd open2close
# fourfold (5.6 against 23.5) — a comparison of how the files were made.
RR_MB=${RR_MB:-64}
head -c "$((RR_MB << 20))" /dev/urandom | dd of="$work/reread.dat" bs=1M iflag=fullblock status=none
cat "$work/reread.dat" >/dev/null
f=$(yamba fs.reread --set "fs.reread_size=${RR_MB}M")
for pair in "bw_file_rd io_only:read" "bw_file_rd open2close:read.open2close" \
            "bw_mmap_rd mmap_only:mmap" "bw_mmap_rd open2close:mmap.open2close"; do
  name=${pair%%:*}; res=${pair#*:}
  row "$name" "fs.reread.$res" "$(ymed "$f" "fs.reread.$res" 1000)" \
    "$(lm "awk '{print \$2}'" "$LB/${name%% *}" "${N[@]}" "${RR_MB}m" "${name#* }" "$work/reread.dat")" MB/s "${RR_MB} MiB cached, words summed; read: 64 KiB blocks"
done

# --- lmdd: overwrite a cached 8 MiB file in 16 KiB blocks, with and without fsync ----
# (lmbench's runner writes a new file, fsync=1; notrunc=1 overwrites as yamba does.
# lmdd has no O_DIRECT switch: direct=/odirect= are not in its argument list.
# With fsync, lmdd's 3 runs on a file dd has just written meet the device at
# the start of a streak, yamba's passes in its steady state: on a busy
# virtual disk the two differ by 1.1-1.9, bench/lmdd-witness.c and
# docs/lmbench.md say why.)
f=$(yamba fs.write.seq)
head -c "$((8 << 20))" /dev/zero | dd of="$work/lmdd.dat" bs=1M iflag=fullblock status=none
cat "$work/lmdd.dat" >/dev/null
row "lmdd fsync=1" fs.write.seq.buffered.fsync "$(ymed "$f" fs.write.seq.buffered.fsync 1000)" \
  "$(lm "sed -n 's/^\([0-9.]*\) KB\/sec/\1/p' | awk '{print \$1 / 1000}'" "$LB/lmdd" if=internal of="$work/lmdd.dat" move=8m bs=16k fsync=1 notrunc=1 print=3)" MB/s "8 MiB, 16 KiB writes, fsync timed"
row "lmdd (no fsync)" fs.write.seq.buffered "$(ymed "$f" fs.write.seq.buffered 1000)" \
  "$(lm "sed -n 's/^\([0-9.]*\) KB\/sec/\1/p' | awk '{print \$1 / 1000}'" "$LB/lmdd" if=internal of="$work/lmdd.dat" move=8m bs=16k notrunc=1 print=3)" MB/s "8 MiB, 16 KiB writes into the page cache"

# --- lat_sem, lat_usleep ---------------------------------------------------------
f=$(yamba ipc.sem.sysv)
# lmbench prints the time per hand-off (its loop's time / 2n): half yamba's round trip.
row lat_sem ipc.sem.sysv.same_cpu "$(ymed "$f" ipc.sem.sysv.same_cpu 0.0005)" \
  "$(lm "sed -n 's/^Semaphore latency: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_sem" "${N[@]}")" µs "per hand-off (round trip / 2); peer process on the same CPU"
f=$(yamba sched.wakeup.nanosleep sched.wakeup.itimer)
# lat_usleep prints the time per sleep, D + lateness; yamba the lateness
# (its D + median lateness here). lmbench runs with the timer slack it
# inherits (50 µs by default), yamba lowers its own to 1 ns: the (slack 1 ns)
# rows run lmbench with its slack set so too (prctl before exec, inherited).
slack1=(python3 -c 'import ctypes, os, sys; ctypes.CDLL(None).prctl(29, 1, 0, 0, 0); os.execv(sys.argv[1], sys.argv[1:])')
for pair in "10:10us" "100:100us" "1000:1ms"; do
  us=${pair%%:*}; sfx=${pair#*:}
  for how in nanosleep itimer; do
    row "lat_usleep -u $how $us" "sched.wakeup.$how.$sfx" "$(yparam "$f" "sched.wakeup.$how.$sfx" period_plus_median_lateness_ns 0.001)" \
      "$(lm "sed -n 's/^$how $us microseconds: \([0-9.]*\) microseconds/\1/p'" "$LB/lat_usleep" "${N[@]}" -u "$how" "$us")" µs "D + median lateness; lmbench: mean time per relative sleep, its slack as inherited"
    row "  (slack 1 ns)" "sched.wakeup.$how.$sfx" "$(yparam "$f" "sched.wakeup.$how.$sfx" period_plus_median_lateness_ns 0.001)" \
      "$(lm "sed -n 's/^$how $us microseconds: \([0-9.]*\) microseconds/\1/p'" "${slack1[@]}" "$LB/lat_usleep" "${N[@]}" -u "$how" "$us")" µs "lmbench with its timer slack at 1 ns, as yamba's"
  done
done

# --- mhz ----------------------------------------------------------------------
f=$(yamba cpu.mhz)
# mhz, like par_mem below, times each test for lmbench's ENOUGH, which it
# measures itself when unset: 1 s on a busy Intel Xeon guest, so each run
# said "should take approximately 297 seconds" and one was still going
# after 5 min. ENOUGH as for par_mem, and each run bounded.
mhz=$(for _ in $(seq "$REPS"); do ENOUGH=${PAR_ENOUGH:-20000} timeout -s KILL 360 taskset -c "$CPU" "${rt[@]}" "$LB/mhz" 2>&1 || true; done)
row mhz cpu.mhz "$(ymed "$f" cpu.mhz 0.000001)" \
  "$(echo "$mhz" | sed -n 's/^\([0-9]*\) MHz.*/\1/p' | median)" MHz "lmbench said: $(echo "$mhz" | sort | uniq -c | sort -rn | head -1 | sed 's/^ *//')"

# --- par_mem --------------------------------------------------------------------
f=$(yamba mem.parallelism --set "mem.parallelism.size=${PAR_MB}M" --set mem.parallelism.pages=base)
g=$(yamba mem.parallelism --set "mem.parallelism.size=${PAR_MB}M")
par_out="$work/par_mem.txt"
# lmbench's own runner (scripts/config-run) exports ENOUGH, the time one
# timing must last, measured once. Unset, par_mem computes it itself: here
# that gave 1 s (bin/enough said 1000000 under load), so a 32 MiB sweep
# (16 sizes x 16 chain counts) printed nothing in 4 min. PAR_ENOUGH sets it.
for _ in $(seq "$REPS"); do
  ENOUGH=${PAR_ENOUGH:-20000} pin "$LB/par_mem" "${N[@]}" -M "${PAR_MB}m" 2>&1 >/dev/null | tail -1 >>"$par_out" || true
done
row par_mem "mem.parallelism (4 KiB pages)" "$(ymed "$f" mem.parallelism)" "$(awk '{print $2}' "$par_out" | median)" ratio "${PAR_MB} MiB; lmbench's largest size"
row "par_mem (ref)" "mem.parallelism (huge pages)" "$(ymed "$g" mem.parallelism)" "$(awk '{print $2}' "$par_out" | median)" ratio "yamba's default: no TLB misses"

# --- lat_ops, par_ops -------------------------------------------------------------
f=$(yamba cpu.ops cpu.ops.parallel)
ops_out="$work/lat_ops.txt"; pops_out="$work/par_ops.txt"
for _ in $(seq "$REPS"); do pin "$LB/lat_ops" "${N[@]}" 2>>"$ops_out" >/dev/null || true; pin "$LB/par_ops" "${N[@]}" 2>>"$pops_out" >/dev/null || true; done
for pair in "integer bit:i32.bit" "integer add:i32.add" "integer mul:i32.mul" "integer div:i32.div" "integer mod:i32.mod" \
            "int64 bit:i64.bit" "int64 add:i64.add" "int64 mul:i64.mul" "int64 div:i64.div" "int64 mod:i64.mod" \
            "float add:f32.add" "float mul:f32.mul" "float div:f32.div" "double add:f64.add" "double mul:f64.mul" "double div:f64.div"; do
  name=${pair%%:*}; op=${pair#*:}
  row "lat_ops $name" "cpu.ops.$op" "$(ymed "$f" "cpu.ops.$op")" \
    "$(awk -v n="$name:" 'index($0, n) == 1 {print $(NF-1)}' "$ops_out" | median)" ns ""
  row "par_ops $name" "cpu.ops.parallel.$op" "$(ymed "$f" "cpu.ops.parallel.$op")" \
    "$(awk -v n="$name parallelism:" 'index($0, n) == 1 {print $NF}' "$pops_out" | median)" ratio ""
done

echo
echo "yamba vs lmbench 3, both pinned to CPU $CPU$([ "${RT:-0}" = 1 ] && echo ", SCHED_FIFO"); lmbench: median of $REPS runs of -N $LMN, ENOUGH ${ENOUGH:-found by each program}; yamba: --budget $BUDGET"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, LLC $llc_mb MiB, kernel $(uname -r)"
echo "load: $(cat /proc/loadavg) at the end; took $(( $(date +%s) - started )) s"
printf "%-22s %-36s %16s %12s %-7s %6s %s  %s\n" "pair" "yamba" "yamba" "lmbench" "unit" "ratio" " " "note"
for r in "${rows[@]}"; do echo "$r"; done
echo "ratio = yamba / lmbench; * = differs by more than 10%; (withheld) = yamba withheld its number, shown for comparison"
