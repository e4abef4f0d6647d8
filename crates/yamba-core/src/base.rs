//! BASE: the cost of measuring nothing (the seed's devbench benchmark).
//!
//! Two consecutive timestamps, many times. On a clock that steps in quanta
//! (10–16 ns on these virtual machines) each reading is the true cost
//! rounded to a neighbouring quantum, with odds set by where the interval
//! fell between ticks: the *mean* of the readings is the unbiased estimate
//! of the cost, the minimum is low by up to a quantum. So the mean of the
//! central mass (readings up to twice the median: interruptions left out)
//! is what is subtracted wherever a single operation is timed; the whole
//! distribution is kept, and the quantum is recorded beside it so that a
//! single-operation result within a few quanta of zero can be labelled or
//! withheld. How many observations fall near the minimum says how much the
//! clock can be trusted for short intervals.

use crate::clock::Clock;
use yamba_stats::Summary;

pub use yamba_results::base::Base;

/// Measures BASE with `n` observations.
pub fn measure_base(clock: &Clock, n: usize) -> Base {
    let n = n.max(10);
    let mut ticks = Vec::with_capacity(n);
    // Warm the code path and the counter read first.
    for _ in 0..1000 {
        let t0 = clock.start();
        let t1 = clock.stop();
        std::hint::black_box(t1.wrapping_sub(t0));
    }
    for _ in 0..n {
        let t0 = clock.start();
        let t1 = clock.stop();
        ticks.push(t1.wrapping_sub(t0));
    }
    let base_ticks = *ticks.iter().min().unwrap();
    let observations: Vec<f64> = ticks.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    let limit = 2 * base_ticks.max(1);
    let within = ticks.iter().filter(|&&t| t <= limit).count();
    let mut sorted = ticks.clone();
    sorted.sort_unstable();
    let central_limit = 2 * sorted[n / 2];
    let central: Vec<u64> = sorted.into_iter().filter(|&t| t <= central_limit).collect();
    let mean_ticks = central.iter().sum::<u64>() as f64 / central.len() as f64;
    Base {
        base_ns: clock.ticks_to_ns(base_ticks),
        mean_ns: Some(mean_ticks * clock.info().tick_ns),
        quantum_ns: Some(clock.info().resolution_ns),
        base_ticks,
        share_within_2x_min: within as f64 / n as f64,
        summary: Summary::of(&observations).expect("non-empty"),
        observations,
    }
}
