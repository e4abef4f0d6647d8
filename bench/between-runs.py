#!/usr/bin/env python3
"""Between-run honesty of yamba's intervals, from N results files of
identical runs (e.g. part 3 of bench/certainty-vs-lmbench.sh with KEEP=DIR).

For every result measured ok in all runs, with process blocks:
  - the CV of the runs' estimates (what a user sees on running again),
  - the median half-width of one run's 95% interval, relative,
  - leave-one-out: in how many runs the interval held the median of the
    other runs' estimates (an honest between-run interval holds it in
    about 95% of runs, a little less with few runs),
  - the same for the estimate in core cycles, where recorded, and the
    CV of the runs' cycles (below the time's where the clock reading
    tracks the host's turbo bins),
  - the same for the interval for the runs (certainty.between_runs, which
    `yamba run` gives a result from 6 earlier runs of its configuration in
    the history on; the run's own interval where it has none), the
    interval the table shows where it is the wider,
  - leave-one-out among the runs whose value stands on processes that had
    their core alone (not those whose note says half or more shared it,
    so that "the value describes a shared core"): does such a run's
    interval hold the median of the other such runs'? On a host whose
    other hardware thread is busy part of the time the runs' values come
    in two states, and an interval speaks for its own.
Summary lines give the share held over all results, and for the ones
whose runs' spread exceeds their intervals most.

Usage: bench/between-runs.py [--all-blocks] [--replay] RESULTS.json...
  --all-blocks: results whose interval comes from one process too (a
  quick run's batches or placements), not only from process blocks.
  --replay: the interval shown is recomputed as `yamba run` makes it
  today (yamba_analysis::between::runs_interval: the smallest interval
  holding the run's own and the order statistics that bracket the earlier
  files' median at 95%, from 6 earlier files on), the files taken in the
  order they started, each with the ones before it as its history — for
  files written before that rule, or by an earlier version of it.
"""
import json
import math
import statistics as st
import sys


ALL_BLOCKS = False
REPLAY = False
STARTED = {}


def load(path):
    with open(path) as f:
        doc = json.load(f)
    STARTED[path] = doc.get("started", "")
    out = {}
    for r in doc.get("results", []):
        c = r.get("certainty") or {}
        if r.get("status") != "ok" or "ci" not in c or not c["ci"]:
            continue
        if c.get("block") != "process" and not ALL_BLOCKS:
            continue
        cyc = c.get("cycles") or {}
        runs = (c.get("between_runs") or {}).get("ci") or c["ci"]
        out[f"{r['id']}@{r['mode']}"] = (
            c["estimate"], c["ci"]["lo"], c["ci"]["hi"],
            cyc.get("estimate"), (cyc.get("ci") or {}).get("lo"), (cyc.get("ci") or {}).get("hi"),
            "describes a shared core" in (c.get("note") or ""),
            runs["lo"], runs["hi"], "between_runs" in c,
        )
    return out


def median_ranks(n):
    """0-based order statistics bracketing a median with >= 95%, or None."""
    best = None
    for j in range((n - 1) // 2 + 1):
        if 2 * sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n <= 0.05:
            best = j
    return None if best is None else (best, n - 1 - best)


def replay(runs, starts):
    """Each run's shown interval as runs_interval makes it, in start order."""
    order = sorted(range(len(runs)), key=lambda i: starts[i])
    for pos, i in enumerate(order):
        for k, t in runs[i].items():
            earlier = sorted(runs[e][k][0] for e in order[:pos] if k in runs[e])
            ranks = median_ranks(len(earlier))
            lo, hi = t[1], t[2]
            if ranks is not None:
                lo = min(lo, t[0], earlier[ranks[0]])
                hi = max(hi, t[0], earlier[ranks[1]])
            runs[i][k] = t[:7] + (lo, hi, ranks is not None)


def held(vals):
    """Runs whose interval held the median of the others', of the runs."""
    n = 0
    for i, (_, lo, hi) in enumerate(vals):
        others = [v for j, (v, _, _) in enumerate(vals) if j != i]
        if lo <= st.median(others) <= hi:
            n += 1
    return n


def main(paths):
    if len(paths) < 3:
        sys.exit("between-runs: give at least 3 results files of identical runs")
    runs = [load(p) for p in paths]
    if REPLAY:
        replay(runs, [STARTED[p] for p in paths])
    keys = sorted(set.intersection(*(set(r) for r in runs)))
    if not keys:
        sys.exit("between-runs: no result was ok with process blocks in every file")
    rows, tot, tot_c, n_c = [], 0, 0, 0
    tot_a, n_a = 0, 0
    tot_r, n_r = 0, 0
    for k in keys:
        t = [(r[k][0], r[k][1], r[k][2]) for r in runs]
        est = [v for v, _, _ in t]
        mean = st.mean(est)
        if mean == 0:
            continue
        cv = st.stdev(est) / abs(mean) * 100
        hw = st.median([(hi - lo) / 2 / abs(v) * 100 for v, lo, hi in t if v])
        h = held(t)
        tot += h
        cyc = [(r[k][3], r[k][4], r[k][5]) for r in runs]
        hc, cvc = None, None
        if all(c[0] is not None and c[1] is not None for c in cyc):
            hc = held(cyc)
            tot_c += hc
            n_c += 1
            ce = [c[0] for c in cyc]
            cvc = st.stdev(ce) / abs(st.mean(ce)) * 100
        alone = [x for x, r in zip(t, runs) if not r[k][6]]
        ha = held(alone) if len(alone) >= 4 else None
        if ha is not None:
            tot_a += ha
            n_a += len(alone)
        tr = [(r[k][0], r[k][7], r[k][8]) for r in runs]
        hr = held(tr)
        tot_r += hr
        n_r += sum(r[k][9] for r in runs)
        hwr = st.median([(hi - lo) / 2 / abs(v) * 100 for v, lo, hi in tr if v])
        rows.append((k, mean, cv, hw, h, hc, cvc, ha, len(alone), hr, hwr))
    n = len(paths)
    print(f"{len(rows)} results ok in all {n} runs; leave-one-out: does run i's 95% interval hold the others' median?\n")
    print(f"{'result':48} {'mean':>11} {'CV runs':>8} {'±CI/2':>7} {'held':>7} {'cycles':>7} {'CV cyc':>7} {'alone':>7} {'±runs/2':>8} {'runs':>7}")
    for k, mean, cv, hw, h, hc, cvc, ha, na, hr, hwr in sorted(rows, key=lambda r: r[4]):
        cyc = '-' if hc is None else f'{hc}/{n}'
        cvs = '-' if cvc is None else f'{cvc:.2f}%'
        al = '-' if ha is None else f'{ha}/{na}'
        print(f"{k:48} {mean:11.4g} {cv:7.2f}% {hw:6.2f}% {h:3}/{n:<3} {cyc:>7} {cvs:>7} {al:>7} {hwr:7.2f}% {hr:3}/{n:<3}")
    print(f"\nheld, all results: {tot}/{len(rows) * n} = {100 * tot / (len(rows) * n):.1f}%")
    if n_r:
        print(f"held, the interval the table shows (for the runs where {n_r} of {len(rows) * n} results had one, "
              f"else the run's own): {tot_r}/{len(rows) * n} = {100 * tot_r / (len(rows) * n):.1f}%")
    if n_a:
        print(f"held among runs whose value stands on processes alone (against those runs' median; "
              f"results with 4 or more such runs): {tot_a}/{n_a} = {100 * tot_a / n_a:.1f}%")
    if n_c:
        print(f"held in core cycles, where recorded: {tot_c}/{n_c * n} = {100 * tot_c / (n_c * n):.1f}%")


if __name__ == "__main__":
    args = sys.argv[1:]
    while args[:1] in (["--all-blocks"], ["--replay"]):
        if args[0] == "--all-blocks":
            ALL_BLOCKS = True
        else:
            REPLAY = True
        args = args[1:]
    main(args)
