//! Measurement checks of a precise run's interval, through the binary, on
//! benchmarks with ground truth (docs/certainty.md):
//!
//! - code placement: `testing.placed` costs 400 + 100·k dependent steps,
//!   k set by where its code sits (the KiB, mod 4). Each position's cost,
//!   measured with k forced, gives the mean over all placements. With
//!   placement a random factor the run's interval covers that mean; with
//!   `--fixed-placement` (one placement per process, as other tools
//!   measure) it cannot, whatever the number of processes.
//! - the two-stage rule: `testing.work` with a known spread between
//!   processes (2%, normal); the interval must cover the work's cost
//!   without the spread (measured in the same test) as often as it says.
//!
//! Measurement checks (docs/testing.md), each holding
//! yamba_testkit::alone() throughout. They decide on coverage counts, not
//! with a median `Check`: the rule and its false-failure rate are at
//! [`covers_as_often_as_it_says`].

use std::path::Path;
use std::process::Command;
use yamba_testkit::{alone, premise_unmet};

/// One precise run of `testing.*` with `args`: the first result's
/// (estimate, interval low, interval high, blocks).
fn run(dir: &Path, args: &[&str]) -> (f64, f64, f64, usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .current_dir(dir)
        .env("YAMBA_TEST_BENCHMARKS", "1")
        .args(["run", "--no-history", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["results"][0];
    assert_eq!(r["status"], "ok", "{r}");
    let c = &r["certainty"];
    let f = |x: &serde_json::Value| x.as_f64().unwrap();
    (
        f(&c["estimate"]),
        f(&c["ci"]["lo"]),
        f(&c["ci"]["hi"]),
        c["medians"].as_array().unwrap().len(),
    )
}

/// Rule: 10 runs; ≥ 9 covering passes, ≤ 6 fails; otherwise 20 more and
/// ≥ 25 of 30 pass. With a true coverage of 95% it fails with
/// probability ≈ 0.3% (binomial); with the fixed placement's coverage
/// near 0 it cannot pass.
fn covers_as_often_as_it_says(mut cover: impl FnMut() -> bool) -> (usize, usize) {
    let hits = (0..10).filter(|_| cover()).count();
    if hits >= 9 || hits <= 6 {
        return (hits, 10);
    }
    (hits + (0..20).filter(|_| cover()).count(), 30)
}

#[cfg(target_arch = "x86_64")]
#[test]
fn placement_as_a_random_factor_covers_the_all_placements_mean() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Each position's cost, and their mean: the mean over all placements.
    let positions = || -> (Vec<f64>, f64) {
        let p: Vec<f64> = (0..4)
            .map(|k| {
                let set = format!("testing.placed.position={k}");
                run(d, &["testing.placed", "--repeat", "6", "--set", &set]).0
            })
            .collect();
        let mean = p.iter().sum::<f64>() / 4.0;
        (p, mean)
    };
    let (at, before) = positions();
    eprintln!("testing.placed: each position {at:.1?} ns; mean over placements {before:.1} ns");
    // The construction holds: each position 100 steps dearer.
    for w in at.windows(2) {
        assert!(w[1] > w[0] * 1.05, "{at:?}");
    }
    let mut seen = Vec::new();
    let (_, runs) = covers_as_often_as_it_says(|| {
        let (v, lo, hi, b) = run(d, &["testing.placed"]);
        seen.push((v, lo, hi, b));
        // Whether to go on to 30 runs is decided against the mean before;
        // the verdict below against the mean on both sides.
        lo <= before && before <= hi
    });
    // As in the two-stage test below: the interval's promise is about one
    // state of the machine. On an Intel Xeon guest whose neighbour
    // flickered (2026-12-01) the runs centred 2.6% under a mean measured
    // once before them, and covered it in 21 of 30.
    let (at_after, after) = positions();
    let drift = (after / before - 1.0) * 100.0;
    eprintln!(
        "testing.placed after the runs: each position {at_after:.1?} ns; mean {after:.1} ns ({drift:+.2}%)"
    );
    if drift.abs() > 1.0 {
        premise_unmet!(
            "the all-placements mean moved {drift:+.2}% ({before:.1} → {after:.1} ns) while the coverage was measured"
        );
    }
    let truth = (before + after) / 2.0;
    let hits = seen
        .iter()
        .filter(|(_, lo, hi, _)| *lo <= truth && truth <= *hi)
        .count();
    eprintln!("placement random: covered {truth:.1} in {hits} of {runs}: {seen:.1?}");
    assert!(
        if runs == 10 { hits >= 9 } else { hits >= 25 },
        "placement random: {hits} of {runs} covered {truth:.1}: {seen:.1?}"
    );
    // One placement per process: the processes agree with each other, so
    // the interval is narrow, and it is about this build's placement.
    let fixed: Vec<(f64, f64, f64, usize)> = (0..10)
        .map(|_| run(d, &["testing.placed", "--fixed-placement"]))
        .collect();
    let fixed_hits = fixed
        .iter()
        .filter(|(_, lo, hi, _)| *lo <= truth && truth <= *hi)
        .count();
    eprintln!("placement fixed: covered in {fixed_hits} of 10: {fixed:.1?}");
    assert!(
        fixed_hits <= 5,
        "a fixed placement covered the all-placements mean in {fixed_hits} of 10"
    );
}

/// The work's cost without the spread is measured before and after the
/// runs, and the truth is their mean: the interval's promise is about one
/// state of the machine, and a host whose state moved meanwhile cannot
/// judge it. A move of more than 1% makes the premise unmet — counted and
/// listed by CI, not passed; within 1%, the mean is within 0.5% of the
/// cost at either end, 0.43 of a 3-process interval's standard error at a
/// 2% spread, which costs at most ~1.5 points of coverage there. (Two
/// measurements of the cost on a quiet machine differed by 0.52%.) In a
/// fresh-clone CI run on a busy AMD EPYC guest (4 other checks undecided),
/// the test with one measurement of the cost, before the runs, covered
/// 24 of 30 and failed.
#[test]
fn the_two_stage_rule_keeps_the_coverage_on_real_timings() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cost = || run(d, &["testing.work", "--repeat", "6"]).0;
    let before = cost();
    let mut blocks = std::collections::BTreeMap::<usize, usize>::new();
    let mut intervals = Vec::new();
    let (_, runs) = covers_as_often_as_it_says(|| {
        let (v, lo, hi, b) = run(
            d,
            &["testing.work", "--set", "testing.work.process_spread_pct=2"],
        );
        *blocks.entry(b).or_default() += 1;
        intervals.push((v, lo, hi));
        // Whether to go on to 30 runs is decided against the cost before;
        // the verdict below against the cost on both sides.
        lo <= before && before <= hi
    });
    let after = cost();
    let drift = (after / before - 1.0) * 100.0;
    eprintln!("two-stage, 2% between processes: the cost {before:.1} ns before, {after:.1} ns after ({drift:+.2}%); blocks {blocks:?}; runs {intervals:.1?}");
    if drift.abs() > 1.0 {
        premise_unmet!(
            "the work's cost moved {drift:+.2}% ({before:.1} → {after:.1} ns) while the coverage was measured"
        );
    }
    let truth = (before + after) / 2.0;
    let hits = intervals
        .iter()
        .filter(|(_, lo, hi)| *lo <= truth && truth <= *hi)
        .count();
    eprintln!("covered {truth:.1} ns in {hits} of {runs}");
    assert!(
        if runs == 10 { hits >= 9 } else { hits >= 25 },
        "{hits} of {runs}"
    );
}
