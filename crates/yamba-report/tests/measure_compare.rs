//! compare's cost on large processes (BASE keeps 20 000 observations):
//! a measurement check (docs/testing.md); what it computes is checked in
//! compare.rs.

mod support;

use yamba_report::compare::compare;
use yamba_results::units::Unit;
use yamba_results::Mode;
use yamba_testkit::{alone, check, Accept};

/// Two runs of 6 × 20 000 observations compare in bounded time: the
/// median over attempts at most 5 s (natively well under a second; a
/// quadratic step would take minutes).
#[test]
fn large_samples_compare_quickly() {
    let _alone = alone();
    let run = |seed: u64, median: f64| {
        support::file(vec![support::blocked(
            "cpu.base",
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(seed, 6, 20_000, median, 0.005, 0.05),
        )])
    };
    let (a, b) = (run(5, 100.0), run(6, 110.0));
    check!(
        "seconds to compare 2 x 120 000 observations",
        Accept::at_most(5.0)
    )
    .run(|| {
        let t = std::time::Instant::now();
        let r = compare(&a, &b, 0.95);
        assert_eq!(r.rows.len(), 1);
        t.elapsed().as_secs_f64()
    });
}
