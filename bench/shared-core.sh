#!/bin/bash
# Runs bench/shared-core.c in N processes (default 150) and tabulates, per
# process, the medians of getppid, read, the multiply chain and the adds,
# each relative to the fastest process: a process whose system calls are
# slow while its adds are slow too and its chain is not ran on a shared
# core (docs/certainty.md, "A shared core").
set -euo pipefail
n=${1:-150}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/shared-core" "$here/shared-core.c"
for i in $(seq 1 "$n"); do
  "$tmp/shared-core" 800 > "$tmp/p$i"
done
python3 - "$tmp" "$n" <<'PY'
import statistics as st, sys
tmp, n = sys.argv[1], int(sys.argv[2])
rows = []
for i in range(1, n + 1):
    r = [list(map(int, l.split())) for l in open(f"{tmp}/p{i}")]
    rows.append([st.median(x[j] for x in r) for j in (1, 2, 3, 4)])
best = [min(r[j] for r in rows) for j in range(4)]
slow = lambda r: r[0] > 1.12 * best[0] or r[1] > 1.12 * best[1]
shared = lambda r: r[3] > 1.05 * best[3]
print(f"{n} processes: {sum(map(slow, rows))} with a slow system call, "
      f"{sum(map(shared, rows))} with slow adds, {sum(1 for r in rows if slow(r) and shared(r))} both")
print("process  getppid  read   chain  adds   (each / the fastest process's)")
for i, r in enumerate(rows):
    if slow(r) or shared(r):
        print(f"{i+1:7}  {r[0]/best[0]:7.2f}  {r[1]/best[1]:5.2f}  {r[2]/best[2]:5.3f}  {r[3]/best[3]:5.2f}")
PY
