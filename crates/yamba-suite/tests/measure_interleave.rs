//! Known work through the interleaved chain timer. A test binary of its
//! own: beside the library's other unit tests (run in parallel on a
//! 2-CPU machine) a 2 µs spin measured 2.64 µs in a CI run.

use std::time::Duration;
use yamba_core::{Clock, Plan};
use yamba_suite::shared::interleave::time_interleaved;

/// Known work: a run of 2n blocks of a spin lasting a known time takes
/// twice as long as n, and every run gets its own observations.
#[test]
fn interleaved_runs_time_known_work() {
    let clock = Clock::detect(20);
    let mut plan = Plan::quick();
    plan.budget = Duration::from_millis(40);
    let (c1, c2) = (clock.clone(), clock.clone());
    let mut one = |n: u64| {
        for _ in 0..n {
            c1.spin_ns(2_000.0);
        }
    };
    let mut two = |n: u64| {
        for _ in 0..n {
            c2.spin_ns(4_000.0);
        }
    };
    let t = time_interleaved(&clock, &plan, &mut [&mut one, &mut two]);
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].ns_per_block.len(), t[1].ns_per_block.len());
    let ratio = t[1].median() / t[0].median();
    assert!(
        (1.8..2.2).contains(&ratio),
        "4 µs / 2 µs spins measured {ratio}"
    );
    assert!(
        (1_900.0..2_600.0).contains(&t[0].median()),
        "{}",
        t[0].median()
    );
}
