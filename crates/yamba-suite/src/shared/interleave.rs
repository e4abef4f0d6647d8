//! Timing latency-bound chains as a whole, several in turns: the dependent
//! add chain of `cpu.mhz`, the operation chains of `cpu.ops`, the pointer
//! chases of `mem.parallelism`.
//!
//! The loop method subtracts the dummy loop F on the assumption that a
//! loop's own cost adds to its body's. For a chain of dependent operations
//! it does not: the loop's counter and branch run beside the chain, in
//! the cycles the chain leaves idle, so subtracting F would count them
//! twice (a 100-add block unrolled 8 times would read ~0.6% fast). Here a
//! run is `n` blocks of a long chain, timed whole, and nothing is
//! subtracted; the loop adds one counter update per block.
//!
//! Several chains measured for one result (one chain, two, a multiply
//! chain; or 1 to 16 independent chains) are sampled in turns, so a drift
//! of the machine's speed affects all of them alike and their ratios hold.

use std::time::{Duration, Instant};
use yamba_core::{Clock, Plan};
use yamba_results::results::Method;
use yamba_stats::Summary;

/// Shortest observation, in ns: long enough that the clock's reads are
/// negligible, short enough that few contain a timer interrupt.
const MIN_OBSERVATION_NS: f64 = 50_000.0;

/// What one chain measured.
#[derive(Debug, Clone)]
pub struct Timed {
    /// ns per block, one per observation, in the order taken.
    pub ns_per_block: Vec<f64>,
    pub method: Method,
}

impl Timed {
    pub fn median(&self) -> f64 {
        Summary::of(&self.ns_per_block).map_or(f64::NAN, |s| s.median)
    }
}

/// Times each of `runs` — `run(n)` executes n blocks — in turns until each
/// has at least `plan.min_observations` observations and every median is
/// within the plan's precision, or the budget is spent.
pub fn time_interleaved(
    clock: &Clock,
    plan: &Plan,
    runs: &mut [&mut dyn FnMut(u64)],
) -> Vec<Timed> {
    let started = Instant::now();
    let target_ns = plan
        .min_observation_ns
        .max(MIN_OBSERVATION_NS)
        .max(1000.0 * clock.info().resolution_ns);
    let time = |run: &mut dyn FnMut(u64), n: u64| -> f64 {
        let t0 = clock.start();
        run(n);
        clock.ticks_to_ns(clock.stop().wrapping_sub(t0))
    };
    // Blocks per observation: double until a run is long enough to read
    // well (the fastest of three, so one interruption cannot stop it early).
    let blocks: Vec<u64> = runs
        .iter_mut()
        .map(|run| {
            let mut n = 1u64;
            loop {
                let t = (0..3).map(|_| time(*run, n)).fold(f64::MAX, f64::min);
                if t >= target_ns / 4.0 || n >= 1 << 40 {
                    return ((target_ns / (t / n as f64).max(1e-3)).ceil() as u64).max(1);
                }
                n *= 2;
            }
        })
        .collect();
    let warm = Instant::now();
    let warmup = Duration::from_nanos(plan.warmup_ns as u64);
    while warm.elapsed() < warmup {
        for (run, &n) in runs.iter_mut().zip(&blocks) {
            time(*run, n);
        }
    }
    let sampling = Instant::now();
    let mut obs: Vec<Vec<f64>> = vec![Vec::new(); runs.len()];
    let stopped = loop {
        for ((run, &n), o) in runs.iter_mut().zip(&blocks).zip(obs.iter_mut()) {
            o.push(time(*run, n) / n as f64);
        }
        let k = obs[0].len();
        if k >= plan.max_observations {
            break "max observations".to_string();
        }
        if k >= plan.min_observations
            && k.is_multiple_of(8)
            && sampling.elapsed() >= plan.min_sampling.min(plan.budget)
        {
            let worst = obs
                .iter()
                .map(|o| {
                    Summary::of(o)
                        .and_then(|s| s.median_relative_precision())
                        .unwrap_or(f64::INFINITY)
                })
                .fold(0.0, f64::max);
            if worst <= plan.target_precision {
                break format!("precision reached ({:.2}%)", worst * 100.0);
            }
        }
        if sampling.elapsed() >= plan.budget && k >= plan.min_observations.min(3) {
            break "budget spent".to_string();
        }
    };
    obs.into_iter()
        .zip(blocks)
        .map(|(o, n)| {
            let mut method = Method::direct(
                n,
                plan.target_precision,
                plan.budget.as_secs_f64(),
                started.elapsed().as_secs_f64(),
                stopped.clone(),
            );
            // Direct: n blocks of a dependent chain timed whole; no dummy
            // loop subtracted (the loop runs beside the chain).
            method.warmup_ns = sampling.duration_since(warm).as_nanos() as f64;
            Timed {
                ns_per_block: o,
                method,
            }
        })
        .collect()
}

/// A plan for one of many chain measurements that share a benchmark's
/// budget: `share` of it each, and no minimum sampling time longer than that.
pub fn shared_plan(plan: &Plan, share: f64) -> Plan {
    let mut p = plan.clone();
    p.budget = plan.budget.mul_f64(share.clamp(0.0, 1.0));
    p.min_sampling = plan.min_sampling.min(p.budget);
    p.warmup_ns = plan.warmup_ns.min(p.budget.as_nanos() as f64 / 4.0);
    p
}
