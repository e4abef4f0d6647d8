//! Coverage of the reported interval, with ground truth: `testing.offset`
//! reports a known value plus a random offset drawn once per process (the
//! between-run variation a user sees), measured in 6 fresh processes per
//! run as a precise run does. The 95% interval from the process medians
//! must cover the known value in 90–98% of runs; the interval from one
//! process's observations alone would almost never cover it.

use yamba_core::runner::{merge_repetitions, run_benchmarks, Quiet};
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
