//! Known work through the interleaved chain timer: spins of a known time
//! by CLOCK_MONOTONIC (std::time::Instant), timed by yamba's clock — so a
//! mis-calibrated clock shows, which a spin made with the clock under test
//! could not. Measurement checks only (docs/testing.md; beside the
//! library's parallel unit tests a 2 µs spin once measured 2.64 µs).

use std::time::{Duration, Instant};
use yamba_core::{Clock, Plan};
use yamba_suite::shared::interleave::time_interleaved;
use yamba_testkit::{alone, check, Accept};

/// Spins `ns` of CLOCK_MONOTONIC.
fn spin(ns: u64) {
    let t0 = Instant::now();
    let d = Duration::from_nanos(ns);
    while t0.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Interleaved runs of 2 µs and 4 µs spins (every run gets its own
/// observations). Rules, each on the median over attempts: the 4 µs / 2 µs
/// ratio is 2 within 5%, and the 2 µs spin reads 2 µs by yamba's clock,
/// −2.5% to +10% (a spin ends only after its time, by one clock read or so).
#[test]
fn interleaved_runs_time_known_work() {
    let _alone = alone();
    let clock = Clock::detect(20);
    let mut plan = Plan::quick();
    plan.budget = Duration::from_millis(40);
    let measure = || {
        let mut one = |n: u64| {
            for _ in 0..n {
                spin(2_000);
            }
        };
        let mut two = |n: u64| {
            for _ in 0..n {
                spin(4_000);
            }
        };
        let t = time_interleaved(&clock, &plan, &mut [&mut one, &mut two]);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].ns_per_block.len(), t[1].ns_per_block.len());
        (t[0].median(), t[1].median())
    };
    check!("4 µs / 2 µs spins", Accept::within(2.0, 0.05)).run(|| {
        let (a, b) = measure();
        b / a
    });
    check!(
        "a 2 µs spin by yamba's clock, ns",
        Accept::between(1950.0, 2200.0)
    )
    .run(|| measure().0);
}
