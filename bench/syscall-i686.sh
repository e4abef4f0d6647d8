#!/usr/bin/env bash
# yamba's 32-bit x86 (i686) getppid shapes next to their C witness
# (bench/syscall-i686.c, gcc -m32 -O2), in one run: ROUNDS rounds, each
# running both once, pinned to one CPU. Prints each figure's median over
# the rounds (ns per call), its spread, and yamba / witness:
#   cpu.syscall.getppid       int 0x80 inline    vs  witness.int80
#   cpu.syscall.getppid.vdso  __kernel_vsyscall  vs  witness.vsyscall
#   cpu.syscall.getppid.libc  glibc's getppid()  vs  witness.libc
#
# On an AMD EPYC guest (Firecracker, Linux 6.18), 5 rounds: int 0x80
# 4106 ns vs 4089 (1.004), __kernel_vsyscall 171.5 vs 171.4 (1.001),
# glibc's getppid 177.5 vs 177.7 (0.999). int 0x80 is that slow there, the
# witness agrees; the vDSO entry (syscall/sysenter) is the fast path. Why:
# int 0x80 costs one VM exit more (CPUID, which every hypervisor traps,
# witness.cpuid: 3527 ns; int 0x80 − vDSO: 3875): Linux ≥ 6.7 reads the
# local APIC's in-service register on every int 0x80 (int80_is_external,
# the CVE-2024-25744 fix), and this guest's hypervisor traps the read.
# yamba's result says so (cpu/syscall.rs, `Int80`).
#
# Usage: bench/syscall-i686.sh [ROUNDS]     (default 5)
# Needs: rustup target i686-unknown-linux-gnu, gcc-<version>-multilib, jq.
set -euo pipefail
rounds=${1:-5}
repo=$(cd "$(dirname "$0")/.." && pwd)
target=i686-unknown-linux-gnu
tdir=${CARGO_TARGET_DIR:-$repo/target}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Without Debian's gcc-multilib (it conflicts with gcc-aarch64-linux-gnu),
# the <asm/*> link it adds, for the build scripts' -m32 C (as .ci/i686).
if [ ! -e /usr/include/asm ] && [ -d /usr/include/x86_64-linux-gnu/asm ]; then
  mkdir -p "$out/include"
  ln -s /usr/include/x86_64-linux-gnu/asm "$out/include/asm"
  export CFLAGS_i686_unknown_linux_gnu="-idirafter $out/include"
fi
(cd "$repo" && cargo build --release -q --target $target -p yamba-cli)
yamba="$tdir/$target/release/yamba"
gcc -m32 -O2 -Wall -o "$out/witness" "$repo/bench/syscall-i686.c"
cpu=$(($(nproc) - 1))

for i in $(seq 1 "$rounds"); do
  (cd "$out" && "$yamba" run --no-history --cpu "$cpu" cpu.syscall.getppid --out "$out/y$i.json" >/dev/null 2>&1)
  jq -r '.results[] | select(.mode=="hot" and .status=="ok") | "\(.id) \(.summary.median)"' "$out/y$i.json" >>"$out/all"
  taskset -c "$cpu" "$out/witness" >>"$out/all"
done

median() { sort -g | awk '{v[NR]=$1} END{ if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2 }'; }
spread() { sort -g | awk '{v[NR]=$1} END{ if (NR) printf "%.1f%%", (v[NR]-v[1])/v[1]*100 }'; }
fig() { awk -v k="$1" '$1==k{print $2}' "$out/all"; }

printf '\n32-bit getppid: yamba (i686 build) vs its C witness (gcc -m32), %s rounds, CPU %s (ns per call)\n\n' "$rounds" "$cpu"
printf '%-28s %10s %8s   %-18s %10s %8s %8s\n' yamba median range witness median range ratio
row() {
  local a b
  a=$(fig "$1" | median)
  b=$(fig "$2" | median)
  if [ -z "$a" ] || [ -z "$b" ]; then
    printf '%-28s %10s %8s   %-18s %10s %8s %8s\n' "$1" "${a:--}" "" "$2" "${b:--}" "" "-"
    return
  fi
  printf '%-28s %10.1f %8s   %-18s %10.1f %8s %8.3f\n' "$1" "$a" "$(fig "$1" | spread)" \
    "$2" "$b" "$(fig "$2" | spread)" "$(awk -v a="$a" -v b="$b" 'BEGIN{print a/b}')"
}
row cpu.syscall.getppid witness.int80
row cpu.syscall.getppid.vdso witness.vsyscall
row cpu.syscall.getppid.libc witness.libc
printf '\n(ratio = yamba / witness; the witness times 1001 batches of ~20 us and reports the median batch, the cost of its clock reads taken out)\n'
