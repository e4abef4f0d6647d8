//! Coverage of the reported interval, with ground truth: `testing.offset`
//! reports a known value plus a random offset drawn once per process (the
//! between-run variation a user sees), measured in 6 fresh processes per
//! run as a precise run does. The 95% interval from the process medians
//! must cover the known value in 90–98% of runs; the interval from one
//! process's observations alone would almost never cover it.

use yamba_core::runner::{merge_blocks, merge_repetitions, run_benchmarks, Quiet};
use yamba_core::{RunConfig, Session};
use yamba_suite::testing::{OFFSET, OFFSET_TRUE};

#[test]
fn the_interval_covers_the_true_value_as_often_as_it_says() {
    let mut config = RunConfig {
        repetitions: 6,
        ..RunConfig::quick()
    };
    config
        .settings
        .insert("testing.offset.sigma".into(), "10".into());
    let session = Session::prepare(config.clone());
    let one = Session::prepare(RunConfig {
        repetitions: 1,
        ..config
    });
    let runs = 600;
    let (mut covered, mut covered_one) = (0, 0);
    for _ in 0..runs {
        let rs = merge_repetitions(&run_benchmarks(&session, &[&OFFSET], &mut Quiet));
        let c = rs[0].certainty.as_ref().expect("certainty");
        assert!(c.between_processes(), "{c:?}");
        assert_eq!(c.medians.len(), 6);
        let ci = c.estimate.ci.unwrap();
        covered += usize::from(ci.lo <= OFFSET_TRUE && OFFSET_TRUE <= ci.hi);
        // The within-process interval of a single process, for contrast.
        let rs = run_benchmarks(&one, &[&OFFSET], &mut Quiet);
        let ci = rs[0].certainty.as_ref().unwrap().estimate.ci.unwrap();
        covered_one += usize::from(ci.lo <= OFFSET_TRUE && OFFSET_TRUE <= ci.hi);
    }
    let share = covered as f64 / runs as f64;
    let share_one = covered_one as f64 / runs as f64;
    eprintln!(
        "95% interval from 6 processes covered the true value in {:.1}% of {runs} runs; from one process's batches in {:.1}%",
        100.0 * share,
        100.0 * share_one
    );
    assert!((0.90..=0.98).contains(&share), "coverage {share}");
    assert!(
        share_one < 0.5,
        "one process's interval covered {share_one}"
    );
}

/// The two-stage rule (docs/certainty.md, "How many blocks"): a precise
/// run starts with 3 blocks and adds blocks where the pilot's spread asks
/// for them. Its interval must keep its 95% coverage whatever count the
/// rule chose — stopping as soon as an interval looks narrow would not —
/// and a quantity with no spread between processes must stop at the pilot.
///
/// Rates: with true coverage 95–96%, 600 runs fall outside [93%, 98.5%]
/// with probability < 0.3% (binomial).
#[test]
fn blocks_added_by_the_two_stage_rule_keep_the_coverage() {
    // σ = 5 on 1000 (0.5%): the pilot asks for ~5 blocks (t(2) = 4.3),
    // often more, up to the maximum of 10; time does not limit them here.
    let precise = |sigma: &str| {
        let mut config = RunConfig {
            extra_share: 1e6,
            ..RunConfig::default()
        };
        config
            .settings
            .insert("testing.offset.sigma".into(), sigma.into());
        Session::prepare(config)
    };
    let session = precise("5");
    let runs = 600;
    let mut covered = 0;
    let mut unmeasured = 0;
    let mut counts = std::collections::BTreeMap::<usize, usize>::new();
    for _ in 0..runs {
        let results = run_benchmarks(&session, &[&OFFSET], &mut Quiet);
        let rs = merge_blocks(&results, Some(3));
        // A run whose blocks did not measure (a process that could not
        // start on a machine loaded by the tests beside this one) makes
        // no statement of the rule: counted, shown, and at most 1%.
        let Some(c) = rs[0].certainty.as_ref() else {
            unmeasured += 1;
            eprintln!(
                "a run without an interval: {:?}",
                results
                    .iter()
                    .map(|r| (r.status, r.reason.clone()))
                    .collect::<Vec<_>>()
            );
            continue;
        };
        *counts.entry(c.medians.len()).or_default() += 1;
        let ci = c.estimate.ci.unwrap();
        covered += usize::from(ci.lo <= OFFSET_TRUE && OFFSET_TRUE <= ci.hi);
    }
    assert!(
        unmeasured * 100 <= runs,
        "{unmeasured} of {runs} runs without an interval"
    );
    let share = covered as f64 / (runs - unmeasured) as f64;
    eprintln!(
        "two-stage: 95% interval covered the true value in {:.1}% of {runs} runs; blocks per run {counts:?}",
        100.0 * share
    );
    assert!((0.93..=0.985).contains(&share), "coverage {share}");
    assert!(
        counts.keys().any(|&k| k > 3),
        "the rule never added a block: {counts:?}"
    );
    // No spread between processes: the pilot's 3 blocks are enough.
    let flat = precise("0");
    for _ in 0..20 {
        let rs = merge_blocks(&run_benchmarks(&flat, &[&OFFSET], &mut Quiet), Some(3));
        assert_eq!(rs[0].certainty.as_ref().unwrap().medians.len(), 3);
    }
}
