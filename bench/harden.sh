#!/usr/bin/env bash
# Issue 13's numbers, from the attack tests themselves (each bounded in
# count and time, on loopback), run ROUNDS times with the machine's load:
#  1. a client with the token under slowloris + connect flood + the
#     same-address lock-out: worst connect+auth+64 KiB read of 10 tries
#     (the issue's bound: under 1 s every try);
#  2. SIGKILL of `yamba run`: how long its __bench child outlives it
#     (before: alive 11 s later);
#  3. hostile peers: the client's peak RSS after 40 random-byte agents
#     and 4 GiB lengths (before: 3.2 GB).
# Then issue 27's seven attacks and the fuzzing, once each: a second table.
# Usage: bash bench/harden.sh [ROUNDS]   (from the repository root)
set -euo pipefail
rounds=${1:-3}
cargo test --release -q -p yamba-suite --test agent_attacks --test client_attacks --no-run 2>/dev/null
cargo test --release -q -p yamba-cli --test hardening --no-run 2>/dev/null
load() { cut -d' ' -f1-3 /proc/loadavg; }

printf '%-6s %-16s %-34s %-22s %-14s\n' round load "client tries under attack (ms)" "bench child after kill" "client peak RSS"
for i in $(seq 1 "$rounds"); do
  l=$(load)
  a=$(cargo test --release -q -p yamba-suite --test agent_attacks slowloris -- --nocapture 2>&1 |
      sed -n 's/.*client tries took \[\(.*\)\]/\1/p' |
      python3 -c 'import sys,re
v=[]
for t in sys.stdin.read().split(","):
    m=re.match(r"\s*([\d.]+)(ms|µs|s|ns)",t)
    if m: v.append(float(m.group(1))*{"s":1e3,"ms":1,"µs":1e-3,"ns":1e-6}[m.group(2)])
print(f"median {sorted(v)[len(v)//2]:.1f} max {max(v):.1f}" if v else "n/a")')
  k=$(cargo test --release -q -p yamba-cli --test hardening sigkill -- --nocapture 2>&1 |
      sed -n 's/benchmark process gone \(.*\) after the run/\1/p')
  r=$(cargo test --release -q -p yamba-suite --test client_attacks random_bytes -- --nocapture 2>&1 |
      sed -n 's/client peak RSS \(.*\)/\1/p')
  printf '%-6s %-16s %-34s %-22s %-14s\n' "$i" "$l" "$a" "${k:-n/a}" "${r:-n/a}"
done

# Issue 27's seven attacks, each once (every test bounded in attempts and
# time, on loopback), with what they cost: attempts, what leaked or broke,
# and the peak RSS of the process under attack (the agent runs inside the
# test process; the readers are `yamba` itself, polled through VmHWM).
cargo test --release -q -p yamba-suite --test agent_channel --no-run 2>/dev/null
cargo test --release -q -p yamba-cli --test security --test report_browser --test fuzz_results --no-run 2>/dev/null
t() { cargo test --release -q -p "$1" --test "$2" "$3" -- --nocapture --test-threads 1 2>&1; }
echo
printf '%-44s %-34s %-30s %s\n' attack attempts "leaks / failures" "peak RSS"
row() { printf '%-44s %-34s %-30s %s\n' "$1" "$2" "$3" "$4"; }
for walk in symlink_swapped the_component_walk; do
  o=$(t yamba-suite agent_channel $walk | grep 'long-path swap race')
  row "1. long-path symlink swap ($(sed -n 's/.*race (\([^)]*\)).*/\1/p' <<<"$o"))" \
      "$(sed -n 's/.*: \([0-9]*\) requests.*, \([0-9]*\) swaps.*/\1 reads, \2 swaps/p' <<<"$o")" \
      "$(sed -n 's/.* \([0-9]*\) leaks.*/\1 served from outside/p' <<<"$o")" \
      "agent $(sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1 MiB/p' <<<"$o")"
done
o=$(t yamba-cli security out_never | grep 'writes over')
row "2. --out over device/FIFO/socket/dir" "$(sed -n 's/^\([0-9]*\) writes.*/\1 writes (select, export, report, plot)/p' <<<"$o")" "$(sed -n 's/.*: \([0-9]*\) replaced/\1 nodes replaced/p' <<<"$o")" "-"
o=$(t yamba-cli report_browser hostile)
row "3. hostile strings in the report" "$(sed -n 's/^\([0-9]*\) strings made hostile/\1 strings, 2 runs/p' <<<"$o")" \
    "$(sed -n 's/.*"handlers":\([0-9]*\).*"pwned":\([a-z0-9]*\).*"scripts":\([0-9]*\).*/\2 pwned, \1 handlers, \3 script/p' <<<"$o")" "-"
o=$(t yamba-cli security zstd_bomb)
row "4a. zstd bomb (175 KB → 1 GiB)" "summary, report; 256M cap and default" \
    "$(grep -c 'exit Some(2)' <<<"$o") refused in one line" \
    "readers $(grep -o 'peak RSS [0-9]* MiB' <<<"$o" | sed 's/peak RSS //' | tr '\n' ' ')"
o=$(t yamba-cli security claiming_many)
row "4b. 2×10⁷ observations in 7 KB .zst" "capped and default limit" \
    "$(grep -c 'exit Some(2)' <<<"$o") refused under the cap" \
    "reader $(sed -n 's/.*default cap.*peak RSS \([0-9]*\) MiB = \([0-9.]*\)×.*/\1 MiB = \2× decompressed (whole process)/p' <<<"$o")"
o=$(t yamba-cli security reading_memory)
row "4c. plain file ×1, ×8, ×32 (0.7–21 MB)" "summary" "-" \
    "reader $(sed -n 's/marginal RSS per byte of file: \(.*\)/\1 bytes per byte/p' <<<"$o")"
o=$(t yamba-suite agent_channel wrong_guesses_from)
row "5a. guesses from the client's address" "12 at once, then 4/s" "$(grep -o 'Err(' <<<"$o" | wc -l) of 4 client tries failed" "-"
o=$(t yamba-suite agent_channel spread_over)
row "5b. guesses spread over 127/8" "$(sed -n 's/^.*200 guesses over 127\/8 in \([0-9.]*\) s: \([0-9]*\) checked.*/200 in \1 s/p' <<<"$o")" \
    "$(sed -n 's/.*: \([0-9]*\) checked, \([0-9]*\) turned away.*/\1 checked, \2 turned away/p' <<<"$o")" "-"
o=$(t yamba-suite agent_channel flood_from)
row "5c. flood from the client's address" "$(grep -o '[0-9]* flood connections' <<<"$o" | sed 's/ flood//')" \
    "$(sed -n 's/.*; \([0-9]*\) of 30 handshakes failed.*/\1 of 30 handshakes failed/p' <<<"$o")" \
    "agent $(sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1 MiB/p' <<<"$o")"
o=$(t yamba-suite agent_channel relay_cannot)
row "6. relay injects READ + STAT" "2 injected requests" "$(sed -n 's/.*came back: \([0-9]*\) bytes.*//p;s/.*STAT: \([0-9]*\) bytes came back.*/\1 bytes answered/p' <<<"$o")" "-"
o=$(t yamba-cli security deep_nesting)
row "7. 10 000-deep nesting (6 shapes)" "lang check" "$(grep -c 'exit Some(1) signal None' <<<"$o") of 6 located errors, $(grep -c 'signal Some' <<<"$o") crashes" "-"
o=$(t yamba-cli fuzz_results mutated_files | grep -E 'runs|seed')
row "fuzz: reader + report (seed, cases)" "$(sed -n 's/^fuzz seed \(0x[0-9a-f]*\), \([0-9]*\) cases/seed \1, \2 cases/p' <<<"$o")" \
    "$(sed -n 's/.*: \([0-9]*\) read, \([0-9]*\) refused.*/\1 read, \2 refused in one line, 0 panics/p' <<<"$o")" \
    "$(sed -n 's/.*worst memory above the base for inputs over 1 MiB: \([0-9.]*\)×.*/≤ \1× decompressed/p' <<<"$o")"
