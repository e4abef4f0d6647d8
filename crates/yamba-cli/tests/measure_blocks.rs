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
//! Both judge in core cycles (`certainty.cycles`): the host moves the
//! core clock between runs (docs/certainty.md, "The core clock"), and a
//! time in nanoseconds moves with it. On a busy AMD EPYC (Zen 3) guest
//! 12 runs of `testing.work` in a row read 626–673 ns at core clocks of
//! 2956–3217 MHz, and 2000–2012 cycles; judged in nanoseconds, the
//! two-stage check covered the truth in 22 of 30 runs and failed CI while
//! the truth, measured three times, stayed within 1% (and 60 runs covered
//! it in 72% in nanoseconds, 98% in cycles: docs/certainty.md).
//!
//! Measurement checks (docs/testing.md), each holding
//! yamba_testkit::alone() throughout. They decide on coverage counts with
//! a rate check, not with a median `Check`: see
//! [`covers_as_often_as_it_says`].

use std::path::Path;
use std::process::Command;
use yamba_testkit::{alone, rate_check, Claim, Outcome};

/// One precise run of `testing.*` with `args`: the first result's
/// (estimate, interval low, interval high, blocks), in core cycles.
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
    let cy = &c["cycles"];
    let f = |x: &serde_json::Value| x.as_f64().unwrap_or_else(|| panic!("no cycles: {c}"));
    (
        f(&cy["estimate"]),
        f(&cy["ci"]["lo"]),
        f(&cy["ci"]["hi"]),
        c["medians"].as_array().unwrap().len(),
    )
}

/// The rule: a rate check (docs/testing.md, "A rate over trials") that
/// the runs' 95% intervals cover the truth at their nominal rate, at least
/// 95%: 10 runs, and 20 more where 10 cannot tell (two looks; a false
/// failure at most 0.1%). At 10 runs 8 covering pass and 5 fail; at 30,
/// 26 pass and 22 fail.
///
/// The truth (`truth`, a measurement) is taken before the runs and after
/// each stage, and the runs are judged against the mean of all: the
/// interval's promise is about one state of the machine, and a host whose
/// state moved meanwhile cannot judge it. A spread of more than 1% makes
/// the premise unmet (recorded, listed by CI, not passed) and returns
/// `None`; else the truth. The same truth decides
/// whether to go on and the verdict: a rule that chose to stop on the
/// cost before the runs and judged on the mean with the cost after them
/// failed CI on an Intel Xeon guest (9 of 10 against one, 8 against the
/// other, and no second stage).
fn covers_as_often_as_it_says(
    name: &str,
    mut truth: impl FnMut() -> f64,
    mut interval: impl FnMut() -> (f64, f64),
) -> Option<f64> {
    const LOOKS: usize = 2;
    let check = rate_check!(
        format!("{name}: runs whose 95% interval covers the truth"),
        Claim::AtLeast(0.95)
    )
    .looks(LOOKS);
    let mut truths = vec![truth()];
    let mut seen: Vec<(f64, f64)> = Vec::new();
    for (look, runs) in [10, 20].into_iter().enumerate() {
        seen.extend((0..runs).map(|_| interval()));
        truths.push(truth());
        let lowest = truths.iter().copied().fold(f64::INFINITY, f64::min);
        let highest = truths.iter().copied().fold(0.0, f64::max);
        let spread = (highest / lowest - 1.0) * 100.0;
        if spread > 1.0 {
            yamba_testkit::premise_unmet(
                &yamba_testkit::this_test!(),
                &format!(
                    "{name}: the truth moved {spread:.2}% ({truths:.1?} cycles) while the coverage was measured"
                ),
            );
            return None;
        }
        let t = truths.iter().sum::<f64>() / truths.len() as f64;
        let hits = seen.iter().filter(|(lo, hi)| *lo <= t && t <= *hi).count();
        if look + 1 < LOOKS && check.judge(hits, seen.len()).outcome == Outcome::Undecided {
            continue;
        }
        check.run(
            hits,
            seen.len(),
            &format!("truth {t:.1} cycles (measured {truths:.1?}); intervals {seen:.1?}"),
        );
        return Some(t);
    }
    unreachable!("the last look decides or is undecided, and returns")
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
    let covered = covers_as_often_as_it_says(
        "placement random",
        || {
            let (at, mean) = positions();
            eprintln!(
                "testing.placed: each position {at:.1?} cycles; mean over placements {mean:.1} cycles"
            );
            // The construction holds: each position 100 steps dearer.
            for w in at.windows(2) {
                assert!(w[1] > w[0] * 1.05, "{at:?}");
            }
            mean
        },
        || {
            let (v, lo, hi, b) = run(d, &["testing.placed"]);
            eprintln!("placement random: {v:.1} cycles [{lo:.1}, {hi:.1}], {b} processes");
            (lo, hi)
        },
    );
    let Some(truth) = covered else { return };
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

/// The work's cost without the spread is the truth, measured before the
/// runs and after each stage ([`covers_as_often_as_it_says`]). Within 1%,
/// their mean is within 0.5% of the cost at any of them, 0.43 of a 3-process interval's standard error at a
/// 2% spread, which costs at most ~1.5 points of coverage there. (Two
/// measurements of the cost on a quiet machine differed by 0.52%.) In a
/// fresh-clone CI run on a busy AMD EPYC guest (4 other checks undecided),
/// the test with one measurement of the cost, before the runs, covered
/// 24 of 30 and failed; judged in nanoseconds with three, it covered 22
/// of 30 and failed again (the core clock, module docs).
#[test]
fn the_two_stage_rule_keeps_the_coverage_on_real_timings() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut blocks = std::collections::BTreeMap::<usize, usize>::new();
    covers_as_often_as_it_says(
        "two-stage, 2% between processes",
        || run(d, &["testing.work", "--repeat", "6"]).0,
        || {
            let (_, lo, hi, b) = run(
                d,
                &["testing.work", "--set", "testing.work.process_spread_pct=2"],
            );
            *blocks.entry(b).or_default() += 1;
            (lo, hi)
        },
    );
    eprintln!("two-stage: processes per run {blocks:?}");
}
