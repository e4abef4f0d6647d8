#!/usr/bin/env bash
# The Yamba language's numbers, side by side, in one run each:
#  1. imul r64 vs add r64 dependent chains through `yamba asm` (ratio should be 3.0)
#  2. unroll linearity: add chain unrolled 2048 vs 4096 (per-call ratio should be 2.0)
#  3. Figures 2+3 (x86-64, Linux page-out adapter) vs the built-in mem.pagefault.major
# Usage: bash bench/lang.sh   (from the repository root; builds yamba first)
set -euo pipefail
cargo build --release -q -p yamba-cli
Y=target/release/yamba
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }

$Y asm 'imul rax, rax' 'add rax, rax' --repeat 5 --out "$tmp/lat.json" >/dev/null 2>&1
$Y asm 'add rax, rax' --unroll 2048 --repeat 5 --out "$tmp/u1.json" >/dev/null 2>&1
$Y asm 'add rax, rax' --unroll 4096 --repeat 5 --out "$tmp/u2.json" >/dev/null 2>&1
echo "load before the page faults: $(load)"
$Y lang run examples/pagefault_linux.yamba --class Y_pagefault_x86_64_Linux --repeat 3 --out "$tmp/pf.json" >/dev/null 2>&1 || true
$Y run mem.pagefault.major --set fault_pages=2048 --repeat 3 --out "$tmp/major.json" >/dev/null 2>&1 || true

python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def res(f, i=None, rid=None):
    rs = json.load(open(f"{d}/{f}"))["results"]
    if rid: rs = [r for r in rs if r["id"] == rid]
    return rs[i or 0]
med = lambda r: r["summary"]["median"] if r.get("summary") else float("nan")
imul, add = res("lat.json", 0), res("lat.json", 1)
u1, u2 = res("u1.json"), res("u2.json")
pf, mj = res("pf.json"), res("major.json", rid="mem.pagefault.major")
print(f"{'quantity':<48}{'value':>12}  expected")
print(f"{'imul r64 chain, ns per instruction':<48}{med(imul):>12.4f}")
print(f"{'add r64 chain, ns per instruction':<48}{med(add):>12.4f}")
print(f"{'imul / add':<48}{med(imul)/med(add):>12.3f}  3.0 ± 0.15")
print(f"{'add chain per call, unroll 4096 / unroll 2048':<48}{med(u2)*4096/(med(u1)*2048):>12.3f}  2.0 ± 3%")
print(f"{'Yamba Figures 2+3 (Linux), µs per major fault':<48}{med(pf)/1e3:>12.1f}  [{pf['status']}]")
print(f"{'mem.pagefault.major (k=1, readahead off), µs':<48}{med(mj)/1e3:>12.1f}  [{mj['status']}]")
print(f"{'Yamba / built-in':<48}{med(pf)/med(mj):>12.3f}  1.0 ± 10%")
PY
echo "load after: $(load)"
