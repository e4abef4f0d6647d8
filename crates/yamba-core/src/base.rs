//! BASE: the cost of measuring nothing (the seed's devbench benchmark).
//!
//! Two consecutive timestamps, many times. The minimum is the estimate of
//! the measurement's own cost and is subtracted wherever a single operation
//! is timed; how many observations fall near it says how much the clock can
//! be trusted for short intervals.

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
    Base {
        base_ns: clock.ticks_to_ns(base_ticks),
        base_ticks,
        share_within_2x_min: within as f64 / n as f64,
        summary: Summary::of(&observations).expect("non-empty"),
        observations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_is_small_and_mostly_narrow() {
        let clock = Clock::detect(20);
        let b = measure_base(&clock, 10_000);
        assert_eq!(b.observations.len(), 10_000);
        assert!(b.base_ns > 0.0 && b.base_ns < 5_000.0, "{}", b.base_ns);
        assert_eq!(b.summary.min, b.base_ns);
        assert!(b.share_within_2x_min > 0.5, "{}", b.share_within_2x_min);
    }
}
