#!/usr/bin/env bash
# Runs bench/pagefault-groups.c (Figure 2's grouping of page faults, in
# plain C) pinned to one CPU on an ext4 on a fresh zram device (root), or
# on DIR if given: page reads in memory, in the faulting thread, as
# crates/yamba-lang/tests/measure_pagefault.rs does.
#
#   sudo bash bench/pagefault-groups.sh [ROUNDS] [DIR]
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-9}
dir=${2:-}
out=$(mktemp -d)
trap 'cd /; [ -n "${mnt:-}" ] && umount "$mnt"; [ -n "${zram:-}" ] && echo "$zram" >/sys/class/zram-control/hot_remove; rm -rf "$out"' EXIT
gcc -O2 -o "$out/pagefault-groups" pagefault-groups.c
if [ -z "$dir" ]; then
  zram=$(cat /sys/class/zram-control/hot_add)
  echo 64M >/sys/block/zram$zram/disksize
  mkfs.ext4 -q /dev/zram$zram
  mnt=$out/mnt && mkdir -p "$mnt" && mount /dev/zram$zram "$mnt"
  dir=$mnt
fi
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r), srso: $(cat /sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow 2>/dev/null || echo '?')"
taskset -c "$(($(nproc) - 1))" "$out/pagefault-groups" "$dir" "$rounds"
