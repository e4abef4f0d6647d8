#!/usr/bin/env bash
# Who is right where yamba and lmbench disagree on fork, sigaction, the
# TCP round trip on one CPU, select over files and TCP sockets, the
# context-switch ring, file creation and deletion on tmpfs, mapping a
# file, overwriting a cached file (lmdd) and the itimer's period
# (lat_usleep -u itimer) (issue 26; docs/lmbench.md):
# yamba, lmbench and a witness that takes each difference between the two
# apart, in interleaved rounds, all pinned to one CPU.
#
# Usage: bench/lmbench-witness.sh [ROUNDS]      (default 3)
#   CPU=N        CPU to pin everything to (default: the last one)
#   LMBENCH=DIR  where lmbench is built (default /tmp/lmbench; built if absent)
#   ONLY="..."   the sections to run (default: fork sigaction tcp select ctx fs mmap lmdd itimer)
#   (ctx counts TLB flushes through tracefs: that needs root and tracefs
#   mounted — `mount -t tracefs nodev /sys/kernel/tracing`, not done here;
#   without them those rows read n/a)
#
# Prints each round's figures as they come, then per row the median over
# the rounds. The witnesses are bench/fork-witness.c, bench/sigaction-witness.c,
# bench/tcp-rtt-witness.c, bench/select-witness.c, bench/fs-witness.c,
# bench/ctx-witness.c, bench/mmap-witness.c, bench/lmdd-witness.c and
# bench/usleep-witness.c, each printing its own rows (read their heads).
# lat_ctx's witnesses are also lmbench itself in SCHED_BATCH, the policy
# yamba's ring runs in, and the pages each tool's ring processes touch;
# lat_fs's also lmbench with its timing interval (ENOUGH) set, so that its
# count of files is too.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
CPU=${CPU:-$(( $(nproc) - 1 ))}
LMBENCH=${LMBENCH:-/tmp/lmbench}
ONLY=${ONLY:-fork sigaction tcp select ctx fs mmap lmdd itimer}
for s in $ONLY; do
  case $s in fork | sigaction | tcp | select | ctx | fs | mmap | lmdd | itimer) ;; *) echo "bench/lmbench-witness.sh: unknown section '$s' in ONLY (fork sigaction tcp select ctx fs mmap lmdd itimer)" >&2; exit 2 ;; esac
done
want() { [[ " $ONLY " == *" $1 "* ]]; }
for tool in jq taskset cc chrt; do
  command -v $tool >/dev/null || { echo "bench/lmbench-witness.sh: needs $tool" >&2; exit 2; }
done
# Every lmbench program the sections run; an lmbench built without one of
# them (an older or partial build) is built again, and one still missing
# stops here rather than printing its rows empty.
needs=()
want fork && needs+=(lat_proc)
want sigaction && needs+=(lat_sig)
want tcp && needs+=(lat_tcp)
want select && needs+=(lat_select)
want ctx && needs+=(lat_ctx)
want fs && needs+=(lat_fs)
want mmap && needs+=(lat_mmap)
want lmdd && needs+=(lmdd)
want itimer && needs+=(lat_usleep)
missing() { for b in lat_tcp "${needs[@]}"; do [ -x "$LMBENCH/bin/x86/$b" ] || { echo "$b"; return 0; }; done; return 1; }
if missing >/dev/null; then
  bash "$repo/bench/lmbench-build.sh" "$LMBENCH"
fi
if b=$(missing); then
  echo "bench/lmbench-witness.sh: no $b in $LMBENCH/bin/x86 (build lmbench with shared/peers/build-lmbench.sh, or set LMBENCH)" >&2
  exit 2
fi
LB=$LMBENCH/bin/x86
work=$(mktemp -d /var/tmp/yamba-witness.XXXXXX)
shm=
trap '"$LB/lat_tcp" -S localhost >/dev/null 2>&1 || true; bash "$repo/bench/lmbench-reap.sh" "$LB"; rm -rf "$work" ${shm:+"$shm"}' EXIT
if want fs; then
  [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || { echo "bench/lmbench-witness.sh: the fs section needs /dev/shm on tmpfs" >&2; exit 2; }
  shm=$(mktemp -d /dev/shm/yamba-witness.XXXXXX)
  mkdir -p "$shm/lm" "$shm/y" "$shm/c"
fi
if want mmap; then
  # One 32 MiB file for lmbench and the witness, written 4 KiB at a time so
  # that the page cache holds base pages, as yamba's own (docs/lmbench.md,
  # lat_mmap); yamba's scratch file on the same file system.
  mkdir -p "$work/yscratch"
  dd if=/dev/urandom of="$work/mmap.dat" bs=4k count=8192 status=none
  cat "$work/mmap.dat" >/dev/null
fi
if want lmdd; then
  # lmdd and yamba overwrite their files on the disk /var/tmp is on; the
  # witness writes its own there too.
  mkdir -p "$work/ylmdd"
fi
for w in fork-witness sigaction-witness tcp-rtt-witness select-witness fs-witness ctx-witness mmap-witness lmdd-witness usleep-witness; do
  cc -O2 -pthread -o "$work/$w" "$repo/bench/$w.c"
done
(cd "$repo" && cargo build --release -q -p yamba-cli)
Y=$repo/target/release/yamba
pin() { taskset -c "$CPU" "$@"; }
# lmbench's figure: the number before "microseconds" on its last line (lat_tcp: before its unit too).
# n/a where it printed none (a failed run), never 0. lmk: the same × 1000.
lmnum() { awk 'NF{l=$0} END{n=split(l,f," "); v=f[n-1]; print (v ~ /^[0-9.]+$/) ? v : "n/a"}'; }
lmk() { lmnum | awk '{print ($1 == "n/a") ? $1 : $1 * 1000}'; }

out=$work/rows.txt
: >"$out"
# rec ROW VALUE: one round's value of a row.
rec() { printf '%s\t%s\n' "$1" "$2" >>"$out"; printf '  %-52s %s\n' "$1" "$2" >&2; }

# ym FILE ID SCALE: a hot result's value × SCALE — the one yamba reports (a
# precise run's estimate, without the processes a shared core moved; not the
# median of every observation pooled) — or n/a.
ym() { jq -r --arg id "$2" --argjson k "$3" '[.results[] | select(.id == $id and .mode == "hot")][0] | if . == null or .summary == null then "n/a" else (.certainty.estimate // .summary.median) * $k end' "$1"; }
# witness ROW UNIT COMMAND...: a witness's rows (name, a tab, the median
# and maybe its unit), pinned; a row takes the unit it prints ("us" read
# as µs), else UNIT; one that counts (its name ends in "(count)") none.
witness() {
  local row=$1 unit=$2 name rest value vunit; shift 2
  pin "$@" | while IFS=$'\t' read -r name rest; do
    name=${name%"${name##*[! ]}"}
    read -r value vunit _ <<<"$rest"
    [ "$vunit" = us ] && vunit=µs
    [[ $name == *"(count)" ]] || name="$name (${vunit:-$unit})"
    rec "$row: C $name" "$value"
  done
}
# ring_pages NAME MIN: while MIN or more processes named NAME run (a ring),
# the pages each touches: its accessed bits cleared, then after 0.1 s the
# kB its smaps call Referenced in its own program's mappings, anonymous
# memory and stack — libc's shared pages left out, whose referenced flag
# other processes set too. The median over the ring's processes, in pages;
# n/a if no such ring was seen within 60 s.
ring_pages() {
  local pids="" i p
  for i in $(seq 1200); do
    pids=$(pgrep -x "$1" || true)
    [ "$(wc -w <<<"$pids")" -ge "$2" ] && break
    pids=""; sleep 0.05
  done
  [ -n "$pids" ] || { echo n/a; return; }
  sleep 0.1
  # A process that has exited since is passed over; one whose bits cannot be cleared makes the count n/a.
  for p in $pids; do echo 1 >"/proc/$p/clear_refs" 2>/dev/null || [ ! -e "/proc/$p" ] || { echo n/a; return; }; done
  sleep 0.1
  for p in $pids; do
    awk '/^[0-9a-f]+-[0-9a-f]+ / { lib = ($6 ~ /\.so/) } /^Referenced:/ { if (!lib) kb += $2 } END { print kb / 4 }' "/proc/$p/smaps" 2>/dev/null || true
  done | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "n/a" }'
}

echo "load before: $(cat /proc/loadavg); CPU $CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" >&2
for i in $(seq "$rounds"); do
  echo "round $i/$rounds" >&2
  y=$work/y$i.json
  ids=()
  want fork && ids+=(proc.fork.light)
  want sigaction && ids+=(signal.sigaction)
  want tcp && ids+=(net.tcp.rtt)
  want select && ids+=(cpu.syscall.select)
  want ctx && ids+=(ipc.ctxsw.sweep)
  # No ids (the fs section alone runs its own): `yamba run` without ids runs the suite.
  [ ${#ids[@]} = 0 ] || "$Y" run --cpu "$CPU" --set net.peer_cpu=same "${ids[@]}" --out "$y" >/dev/null 2>&1 || true
  if want fork; then
    rec "fork: yamba proc.fork.light (µs)" "$(ym "$y" proc.fork.light 0.001)"
    rec "fork: yamba parent's anonymous memory (MiB)" "$(jq -r '[.results[] | select(.id == "proc.fork.light")][0].params.parent_rss_anon_bytes // "n/a" | if type == "number" then . / 1048576 else . end' "$y")"
    rec "fork: lmbench lat_proc fork (µs)" "$(pin "$LB/lat_proc" -N 3 fork 2>&1 | lmnum)"
    witness fork µs "$work/fork-witness"
  fi
  if want sigaction; then
    rec "sigaction: yamba signal.sigaction (ns)" "$(ym "$y" signal.sigaction 1)"
    rec "sigaction: lmbench lat_sig install (ns)" "$(pin "$LB/lat_sig" -N 3 install 2>&1 | lmk)"
    witness sigaction ns "$work/sigaction-witness"
  fi
  if want tcp; then
    "$Y" run --cpu "$CPU" --set net.peer_cpu=same --set net.msg_bytes=8 net.tcp.rtt --out "$work/y1b$i.json" >/dev/null 2>&1 || true
    rec "tcp: yamba net.tcp.rtt, 64 B (µs)" "$(ym "$y" net.tcp.rtt 0.001)"
    rec "tcp: yamba net.tcp.rtt, 8 B (µs)" "$(ym "$work/y1b$i.json" net.tcp.rtt 0.001)"
    pin "$LB/lat_tcp" -s >/dev/null 2>&1; sleep 0.2
    rec "tcp: lmbench lat_tcp (µs)" "$(pin "$LB/lat_tcp" -N 3 localhost 2>&1 | lmnum)"
    "$LB/lat_tcp" -S localhost >/dev/null 2>&1 || true
    witness tcp µs "$work/tcp-rtt-witness"
  fi
  if want select; then
    for n in 10 100 250; do
      rec "select: yamba cpu.syscall.select.file.$n (ns)" "$(ym "$y" "cpu.syscall.select.file.$n" 1)"
      # lat_select makes its file in the working directory.
      rec "select: lmbench lat_select -n $n file (ns)" "$(cd "$work" && pin "$LB/lat_select" -N 3 -n "$n" file 2>&1 | lmk)"
    done
    witness select ns "$work/select-witness"
    for n in 10 100 250; do
      rec "select: yamba cpu.syscall.select.tcp.$n (ns)" "$(ym "$y" "cpu.syscall.select.tcp.$n" 1)"
      rec "select: lmbench lat_select -n $n tcp (ns)" "$(pin "$LB/lat_select" -N 3 -n "$n" tcp 2>&1 | lmk)"
    done
    witness select ns "$work/select-witness" tcp
  fi
  if want ctx; then
    ctx=$work/ctx$i.txt ctxb=$work/ctxb$i.txt
    pin "$LB/lat_ctx" -N 3 -s 0 2 4 8 16 96 2>"$ctx" >/dev/null || true
    pin chrt --batch 0 "$LB/lat_ctx" -N 3 -s 0 2 4 8 16 96 2>"$ctxb" >/dev/null || true
    for p in 2 4 8 16 96; do
      # The headline (2 processes) over every process; the rest of the
      # curve is measured in a precise run's first process only.
      if [ "$p" = 2 ]; then
        rec "ctx: yamba ipc.ctxsw.sweep.0k at ${p}p, SCHED_BATCH (µs)" "$(ym "$y" ipc.ctxsw.sweep.0k 0.001)"
      else
        rec "ctx: yamba ipc.ctxsw.sweep.0k at ${p}p, SCHED_BATCH, its first process (µs)" "$(jq -r --argjson x "$p" '[.results[] | select(.id == "ipc.ctxsw.sweep.0k") | .series.points[] | select(.[0] == $x) | .[1] / 1000][0] // "n/a"' "$y")"
      fi
      rec "ctx: lmbench lat_ctx -s 0 at ${p}p, default policy (µs)" "$(awk -v p="$p" '$1 == p && NF == 2 {print $2}' "$ctx")"
      rec "ctx: lmbench lat_ctx -s 0 at ${p}p, SCHED_BATCH (µs)" "$(awk -v p="$p" '$1 == p && NF == 2 {print $2}' "$ctxb")"
    done
    # From 7 processes every hop flushes the TLB (bench/ctx-witness.c
    # counts it); the witness's ring with 8 more pages per hop, and the
    # pages each tool's ring processes touch, test whether refilling it
    # is what differs between the tools (docs/lmbench.md, lat_ctx).
    witness ctx µs chrt --batch 0 "$work/ctx-witness"
    (pin chrt --batch 0 "$LB/lat_ctx" -N 5 -s 0 16 >/dev/null 2>&1 &)
    rec "ctx: pages a lmbench ring process touches, 16p (own mappings)" "$(ring_pages lat_ctx 16)"
    (pin "$Y" run --cpu "$CPU" --quick --budget 8 ipc.ctxsw.sweep --out "$work/yp$i.json" >/dev/null 2>&1 &)
    rec "ctx: pages a yamba ring process touches, 16p+ (own mappings)" "$(ring_pages yamba 16)"
    while pgrep -x lat_ctx >/dev/null || pgrep -f "$work/yp$i.json" >/dev/null; do sleep 0.5; done
  fi
  if want mmap; then
    ymm=$work/ymm$i.json
    "$Y" run --cpu "$CPU" --scratch "$work/yscratch" mem.mmap --out "$ymm" >/dev/null 2>&1 || true
    for sz in 512k 4m 32m; do
      rec "mmap: yamba mem.mmap.$sz (µs)" "$(ym "$ymm" "mem.mmap.$sz" 0.001)"
      rec "mmap: yamba mem.mmap.$sz, mean of its operations (µs)" "$(jq -r --arg id "mem.mmap.$sz" '[.results[] | select(.id == $id and .mode == "hot")][0].summary.mean // "n/a" | if type == "number" then . / 1000 else . end' "$ymm")"
      # lat_mmap prints "SIZE_MB µs" with whole microseconds.
      rec "mmap: lmbench lat_mmap $sz (µs)" "$(pin "$LB/lat_mmap" -N 3 "$sz" "$work/mmap.dat" 2>&1 | awk 'NF {v = $2} END {print (v ~ /^[0-9.]+$/) ? v : "n/a"}')"
    done
    witness mmap µs "$work/mmap-witness" "$work/mmap.dat"
  fi
  if want lmdd; then
    # As bench/lmbench-list.sh runs them: yamba's precise run, then lmdd 3
    # times on a file dd has just written (the median), with fsync and
    # without.
    yl=$work/ylmdd$i.json
    "$Y" run --cpu "$CPU" --scratch "$work/ylmdd" fs.write.seq --out "$yl" >/dev/null 2>&1 || true
    head -c "$((8 << 20))" /dev/zero | dd of="$work/lmdd.dat" bs=1M iflag=fullblock status=none
    cat "$work/lmdd.dat" >/dev/null
    for how in fsync nofsync; do
      id=fs.write.seq.buffered; arg=()
      [ $how = fsync ] && { id=$id.fsync; arg=(fsync=1); }
      rec "lmdd: yamba $id (MB/s)" "$(ym "$yl" "$id" 1000)"
      rec "lmdd: lmbench lmdd move=8m bs=16k ${arg[*]:-(no fsync)}, median of 3 (MB/s)" "$(for _ in 1 2 3; do pin "$LB/lmdd" if=internal of="$work/lmdd.dat" move=8m bs=16k notrunc=1 print=3 "${arg[@]}" 2>&1 | awk '$2 == "KB/sec" {print $1 / 1000}'; done | sort -n | awk '{v[NR] = $1} END {print (NR == 3) ? v[2] : "n/a"}')"
    done
    witness lmdd MB/s "$work/lmdd-witness" "$work"
  fi
  if want itimer; then
    yi=$work/yit$i.json
    "$Y" run --cpu "$CPU" sched.wakeup.itimer --out "$yi" >/dev/null 2>&1 || true
    for pair in 10:10us 100:100us 1000:1ms; do
      us=${pair%%:*}
      rec "itimer: yamba sched.wakeup.itimer.${pair#*:}, D + median lateness (µs)" "$(jq -r --arg id "sched.wakeup.itimer.${pair#*:}" '[.results[] | select(.id == $id and .mode == "hot")][0].params.period_plus_median_lateness_ns // "n/a" | if type == "number" then . / 1000 else . end' "$yi")"
      rec "itimer: lmbench lat_usleep -u itimer $us (µs)" "$(pin "$LB/lat_usleep" -N 3 -u itimer "$us" 2>&1 | lmnum)"
    done
    # The witness counts the pinned CPU's timer interrupts.
    witness itimer µs "$work/usleep-witness" "$CPU"
  fi
  if want fs; then
    yf=$work/yfs$i.json
    "$Y" run --cpu "$CPU" --scratch "$shm/y" fs.create_delete.0k fs.create_delete.10k --out "$yf" >/dev/null 2>&1 || true
    pin "$LB/lat_fs" -N 3 "$shm/lm" 2>"$work/fs$i.txt" >/dev/null || true
    ENOUGH=20000 pin "$LB/lat_fs" -N 3 "$shm/lm" 2>"$work/fse$i.txt" >/dev/null || true
    for sz in 0 10; do
      for op in create:3 delete:4; do
        rec "fs: yamba fs.create_delete.${sz}k.${op%:*}, tmpfs (/s)" "$(ym "$yf" "fs.create_delete.${sz}k.${op%:*}" 1)"
        rec "fs: lmbench lat_fs ${sz}k ${op%:*}, ENOUGH as measured (/s)" "$(awk -v s="${sz}k" -v c="${op#*:}" '$1 == s {print $c}' "$work/fs$i.txt")"
        rec "fs: lmbench lat_fs ${sz}k ${op%:*}, ENOUGH=20000 (/s)" "$(awk -v s="${sz}k" -v c="${op#*:}" '$1 == s {print $c}' "$work/fse$i.txt")"
      done
      rec "fs: lmbench lat_fs ${sz}k files per timing, ENOUGH as measured" "$(awk -v s="${sz}k" '$1 == s {print $2}' "$work/fs$i.txt")"
      rec "fs: lmbench lat_fs ${sz}k files per timing, ENOUGH=20000" "$(awk -v s="${sz}k" '$1 == s {print $2}' "$work/fse$i.txt")"
    done
    witness fs /s "$work/fs-witness" "$shm/c"
  fi
done
echo
echo "median over $rounds rounds (CPU $CPU)"
awk -F'\t' '{ if (!($1 in n)) order[++k] = $1; v[$1, ++n[$1]] = $2 }
  END { for (j = 1; j <= k; j++) { r = order[j]; m = n[r]; s = "";
          for (a = 1; a <= m; a++) x[a] = v[r, a];
          for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (x[b] + 0 < x[a] + 0) { t = x[a]; x[a] = x[b]; x[b] = t }
          for (a = 1; a <= m; a++) s = s " " x[a];
          bad = 0; for (a = 1; a <= m; a++) if (x[a] !~ /^[0-9.eE+-]+$/) bad = 1;
          med = (m % 2) ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2;
          if (bad) printf "%-52s %10s   (%s )\n", r, "n/a", s;
          else printf "%-52s %10.4g   (%s )\n", r, med, s } }' "$out"
