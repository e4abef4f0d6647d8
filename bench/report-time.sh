#!/usr/bin/env bash
# How long `yamba report` takes on a results file (default: the newest
# under results/), and how large the page is. Run from the repository root
# after `cargo build --release`. Prints one table: wall, user and system
# time and max RSS of 5 runs, and the input and output sizes.
set -euo pipefail
yamba=${YAMBA:-target/release/yamba}
file=${1:-$(ls -t results/*.json results/*.json.zst 2>/dev/null | head -1)}
[ -n "$file" ] && [ -f "$file" ] || { echo "usage: $0 RESULTS.json (none found under results/)" >&2; exit 2; }
out=$(mktemp --suffix .html)
trap 'rm -f "$out"' EXIT
# Results counted by yamba (plain or compressed file): its CSV export, one row each.
count=$(( $("$yamba" export "$file" --format csv | wc -l) - 1 ))
printf 'input %s: %s results, %.1f MB\n' "$file" "$count" "$(echo "$(stat -c %s "$file") / 1000000" | bc -l)"
printf '%-4s %8s %8s %8s %10s\n' run wall_s user_s sys_s maxrss_MiB
for i in 1 2 3 4 5; do
  /usr/bin/time -f '%e %U %S %M' -o /tmp/report-time.$$ "$yamba" report "$file" -o "$out" 2>/dev/null
  read -r e u s m < /tmp/report-time.$$
  printf '%-4s %8s %8s %8s %10.0f\n' "$i" "$e" "$u" "$s" "$(echo "$m / 1024" | bc -l)"
done
rm -f /tmp/report-time.$$
printf 'page: %.0f KiB; load average: %s\n' "$(echo "$(stat -c %s "$out") / 1024" | bc -l)" "$(cut -d' ' -f1-3 /proc/loadavg)"
