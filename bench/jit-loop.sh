#!/usr/bin/env bash
# The Yamba language's compiled C against the same loop in Rust, every
# code generator and compiler in one run (issue 30's "within 5%"): the
# 4 KiB loop of crates/yamba-lang/examples/jit_loop.rs (h = (h ^ buf[i]) ·
# 0x100000001b3, volatile byte loads), pinned to one CPU, on x86-64
# (Cranelift, clang, gcc) and as an i686 build (clang, gcc; Cranelift has
# no x86-32 back end). Prints, per line, ns per iteration compiled and in
# Rust (each the median of 41 rounds, each round the best of 20 calls) and
# compiled / Rust; the example prints the interpreted reference too.
#
# On the AMD EPYC Zen 4 guest (Firecracker, Linux 6.18, 2026-11-28),
# compiled / Rust: x86-64 Cranelift 1.009, clang 14.0.6 1.009, gcc 12.2.0
# 1.007; i686 clang 0.980, gcc 1.229. gcc's i686 loop is its own code for
# that loop (the same C written by hand compiles to the same 17
# instructions; LLVM's has 10), so the C back end prefers clang
# (docs/language.md, "Which compiler").
#
# Usage: bench/jit-loop.sh        Needs: clang, gcc, rustup target
# i686-unknown-linux-gnu (the i686 lines are left out without it).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tdir=${CARGO_TARGET_DIR:-$repo/target}
target=i686-unknown-linux-gnu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cpu=$(($(nproc) - 1))
line() { # LABEL BINARY BACKEND [ENV...]
  local label=$1 bin=$2 backend=$3
  shift 3
  printf '%-28s %s\n' "$label" \
    "$(env "$@" taskset -c $cpu "$bin" "$backend" | awk '/^round 0:/ { print "compiled", $5, "ns, Rust", $8, "ns, ratio", $NF }')"
}
(cd "$repo" && cargo build --release -q -p yamba-lang --example jit_loop)
x64=$tdir/release/examples/jit_loop
line "x86-64 Cranelift" "$x64" cranelift
line "x86-64 cc, clang" "$x64" cc CC=clang
line "x86-64 cc, gcc" "$x64" cc CC=gcc
if rustup target list --installed 2>/dev/null | grep -qx $target; then
  # The <asm/*> link gcc-multilib would add, for the build scripts' -m32 C
  # (as .ci/i686).
  if [ ! -e /usr/include/asm ] && [ -d /usr/include/x86_64-linux-gnu/asm ]; then
    mkdir -p "$out/include"
    ln -s /usr/include/x86_64-linux-gnu/asm "$out/include/asm"
    export CFLAGS_i686_unknown_linux_gnu="-idirafter $out/include"
  fi
  (cd "$repo" && cargo build --release -q --target $target -p yamba-lang --example jit_loop)
  x86=$tdir/$target/release/examples/jit_loop
  line "i686 cc, clang" "$x86" cc CC=clang
  line "i686 cc, gcc" "$x86" cc CC=gcc
else
  echo "i686: no rustup target $target: left out"
fi
