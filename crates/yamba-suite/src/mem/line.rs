//! `mem.line`: the cache line size from a stride sweep (lmbench's `line`).
//!
//! P = one load of a chase that visits 512-byte blocks in random order
//! and, in each block, two words `s` bytes apart: the first load misses
//! the L1 (the blocks span 8× the L1, within the L2), the second hits the
//! line the first just brought in when `s` is less than a line, and misses
//! too when it is not. The latency per load steps up at s = the line size:
//! the line is the smallest stride whose latency, and the next stride's,
//! are both at least [`MIN_STEP`] times the cheapest smaller stride's.
//! Only that first step is read: past it the cost moves with prefetchers
//! and the pages' cache sets (on an AMD EPYC guest, 2026-11-29, the 128-byte
//! stride cost 0.97× to 1.3× the 64-byte one from process to process,
//! which put the old rule's midpoint to the largest stride's latency at
//! 64 or 128 by turns).
//! A first sweep is run and discarded: the first strides of a process's
//! first sweep cost up to 1.6× the later sweeps' (warm-up). Each later
//! sweep gives one observation; sysfs's coherency_line_size is the
//! reference.

use super::adapter::{self, Anon, Pages};
use super::chase::{rng, Chain};
use rand::seq::SliceRandom;
use serde_json::json;
use std::time::Duration;
use yamba_core::harness::Plan;
use yamba_core::{Benchmark, Cold, Ctx, Series, Unit};
use yamba_stats::Summary;

pub static LINE: Benchmark = Benchmark {
    id: "mem.line",
    area: "mem",
    unit: Unit::Bytes,
    description: "cache line size from a stride sweep: pairs of loads s bytes apart miss together once s reaches a line (lmbench's line)",
    adapter: adapter::NAME,
    run,
    cold: Cold::NotMeaningful(
        "the strides are the experiment: a line size is found from which loads miss together, cold by construction",
    ),
    ..Benchmark::TEMPLATE
};

/// Strides tried, in bytes: a line is a power of two from 16 to 256.
pub const STRIDES: [usize; 6] = [8, 16, 32, 64, 128, 256];
const BLOCK: usize = 512;
/// Turns per stride in a sweep.
const ROUNDS: usize = 5;
/// At most this many times the sweeps asked for run.
const MAX_SWEEPS: usize = 3;

/// The blocks of a chase in the random order it visits them.
fn block_order(blocks: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..blocks).collect();
    order.shuffle(&mut rng(seed));
    order
}

/// Offsets of a chase visiting the blocks in `order`, two words `s` apart
/// in each.
fn pair_offsets(order: &[usize], s: usize) -> Vec<usize> {
    order
        .iter()
        .flat_map(|&b| [b * BLOCK, b * BLOCK + s])
        .collect()
}

/// The line size one sweep's (stride, ns) points show: the smallest stride
/// whose latency and the next stride's (if any) are both at least
/// [`MIN_STEP`] times the cheapest smaller stride's, or None when no
/// stride steps up so. Requiring the next stride too keeps one slow
/// point (an interrupt in its measurement) from being read as the line.
pub fn line_of(points: &[(usize, f64)]) -> Option<usize> {
    (1..points.len()).find_map(|i| {
        let below = points[..i]
            .iter()
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min);
        let steps = |p: &(usize, f64)| p.1 >= below * MIN_STEP;
        (steps(&points[i]) && points.get(i + 1).is_none_or(steps)).then_some(points[i].0)
    })
}

/// A stride whose loads miss together costs at least this many times a
/// stride whose second load hits: with L2 hits at ~3× an L1 hit (x86 and
/// Arm cores alike) the step is (L2 + L2) / (L2 + L1) ≈ 1.5.
pub const MIN_STEP: f64 = 1.2;

fn run(ctx: &mut Ctx) -> Result<(), String> {
    let m = ctx.machine();
    let l1 = m.cache_bytes(1).unwrap_or(32 << 10) as usize;
    let l2 = m.cache_bytes(2).unwrap_or(1 << 20) as usize;
    let bytes = (8 * l1).min(l2 / 2).max(64 << 10);
    // Sweeps (one observation each) and a stride's budget are amounts. A
    // sweep measures every stride in ROUNDS short turns and takes each
    // stride's median turn: the host's bursts of noise (on a KVM guest,
    // states of tens of milliseconds in which an L2 hit costs ~1 ns more)
    // then fall on all strides of a sweep alike, or on too few turns to
    // move a median, where five straight milliseconds per stride put a
    // burst on some strides only and a false step in the sweep.
    let sweeps = ctx.scaled(5);
    let mut plan: Plan = ctx.plan();
    plan.budget = ctx.scaled_time(Duration::from_millis(1));
    plan.min_observations = 5;
    plan.warmup_ns = 2e5;
    // Every stride chases the same blocks in the same order through one
    // mapping, relinked before each is measured: the strides then differ
    // in where the second load falls, not in their physical pages (with a
    // mapping each, a stride's cost moved with its pages' L2 sets: the
    // 16-byte stride cost 1.2× its neighbours in every sweep of one
    // process).
    let blocks = (bytes / BLOCK).max(4);
    let order = block_order(blocks, 0x11E);
    let mut chain = Chain::from_offsets(
        Anon::new(blocks * BLOCK, Pages::Base, true)?,
        &pair_offsets(&order, STRIDES[0]),
    )?;
    let mut turn_rng = rng(0x11E5);
    let started = std::time::Instant::now();
    let mut found = Vec::new();
    let mut curves: Vec<Vec<(usize, f64)>> = Vec::new();
    // Sweeps interleave the strides, so drift moves them all alike; the
    // first is warm-up, discarded. A sweep a burst of noise flattened
    // shows no step: sweeps go on until `sweeps` have shown one, or
    // MAX_SWEEPS times as many have run. Which line a sweep shows is not
    // looked at, so the extra sweeps cannot favour an answer; the
    // sweeps' agreement is evidence below.
    let most = MAX_SWEEPS * sweeps;
    for sweep in 0..=most {
        if found.len() == sweeps {
            break;
        }
        let mut turns: Vec<Vec<f64>> = vec![Vec::new(); STRIDES.len()];
        for _ in 0..ROUNDS {
            // In a new order each round: noise that recurs with the
            // period of a round (seen: every round's second turn slow)
            // would otherwise fall on the same strides every time.
            let mut ks: Vec<usize> = (0..STRIDES.len()).collect();
            ks.shuffle(&mut turn_rng);
            for k in ks {
                let s = STRIDES[k];
                chain.relink(&pair_offsets(&order, s))?;
                if let Some(x) = chain.measure(ctx.clock(), &plan).summary() {
                    turns[k].push(x.median);
                }
            }
        }
        let pts: Vec<(usize, f64)> = STRIDES
            .iter()
            .zip(turns)
            .filter_map(|(&s, t)| Summary::of(&t).map(|x| (s, x.median)))
            .collect();
        if sweep == 0 {
            continue;
        }
        if let Some(l) = line_of(&pts) {
            found.push(l as f64);
        }
        curves.push(pts);
    }
    // Every sweep after the warm-up left its curve.
    let ran = curves.len();
    let mut r = ctx.result(None);
    r.set_observations(found.clone());
    r.method = Some(ctx.direct_method(1, started, format!("{ran} sweeps")));
    r.param("working_set_bytes", bytes)
        .param("block_bytes", BLOCK)
        .param("strides", STRIDES);
    // The median sweep's latencies, for the curve.
    let median_at = |i: usize| {
        let mut v: Vec<f64> = curves
            .iter()
            .filter_map(|c| c.get(i).map(|p| p.1))
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let pts: Vec<[f64; 2]> = (0..STRIDES.len())
        .map(|i| [STRIDES[i] as f64, median_at(i)])
        .collect();
    r.series = Some(Series {
        x_label: "distance between the two loads of a pair".into(),
        x_unit: "B".into(),
        y_label: "latency per load".into(),
        y_unit: "ns".into(),
        log_x: true,
        log_y: false,
        points: pts.clone(),
    });
    r.extra.insert("sweeps".into(), json!(curves));
    r.add_evidence(
        "sweeps showed the step (a stride and the next ≥ 1.2× the cheapest smaller stride's latency)",
        format!("{sweeps} within {most} sweeps"),
        format!("{} of {ran}", found.len()),
        found.len() == sweeps,
    );
    let line = r.median();
    let agree = found.iter().filter(|&&l| Some(l) == line).count();
    r.add_evidence(
        "the sweeps agree on one line size (at least 4 in 5)",
        format!("≥ {} of {}", (4 * found.len()).div_ceil(5), found.len()),
        format!("{agree} at {line:?}"),
        !found.is_empty() && 5 * agree >= 4 * found.len(),
    );
    let sysfs = m.caches.first().and_then(|c| c.line_bytes);
    if let (Some(l), Some(s)) = (line, sysfs) {
        r.add_note_evidence(
            "the line size agrees with sysfs coherency_line_size",
            format!("{s} bytes"),
            format!("{l:.0} bytes"),
            l as u64 == s,
        );
    }
    ctx.push(r);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_where_the_latency_steps() {
        let p = [
            (8, 2.9),
            (16, 3.0),
            (32, 2.9),
            (64, 4.5),
            (128, 4.6),
            (256, 4.5),
        ];
        assert_eq!(line_of(&p), Some(64));
        let flat = [(8, 2.9), (16, 3.0), (256, 3.1)];
        assert_eq!(line_of(&flat), None);
    }

    /// Sweeps seen on an AMD EPYC guest: past the line the cost falls back
    /// a little (128) or rises further (128, 256); the line is still the
    /// first step.
    #[test]
    fn only_the_first_step_is_the_line() {
        let dips = [
            (8, 3.17),
            (16, 3.19),
            (32, 3.16),
            (64, 4.23),
            (128, 4.10),
            (256, 4.16),
        ];
        assert_eq!(line_of(&dips), Some(64));
        let rises = [
            (8, 3.72),
            (16, 3.82),
            (32, 3.83),
            (64, 4.71),
            (128, 4.79),
            (256, 5.28),
        ];
        assert_eq!(line_of(&rises), Some(64));
        // A slow first point does not hide the step after it.
        let slow_start = [(8, 5.0), (16, 3.7), (32, 3.13), (64, 4.52), (128, 5.1)];
        assert_eq!(line_of(&slow_start), Some(64));
    }

    /// One slow point below the line is not read as the line, and a step
    /// at the largest stride needs no next one.
    #[test]
    fn a_lone_slow_point_is_not_a_step() {
        let spike = [(8, 2.9), (16, 3.8), (32, 2.9), (64, 4.5), (128, 4.6)];
        assert_eq!(line_of(&spike), Some(64));
        let last = [(8, 2.9), (16, 3.0), (32, 2.9), (64, 2.9), (128, 4.6)];
        assert_eq!(line_of(&last), Some(128));
    }

    #[test]
    fn each_block_holds_two_loads_s_apart() {
        let blocks = (64 << 10) / BLOCK;
        let order = block_order(blocks, 1);
        let mem = Anon::new(blocks * BLOCK, Pages::Base, true).unwrap();
        let mut c = Chain::from_offsets(mem, &pair_offsets(&order, 8)).unwrap();
        c.relink(&pair_offsets(&order, 64)).unwrap();
        assert_eq!(c.elements, 2 * blocks);
        let a = c.start();
        // SAFETY: the chain's elements hold addresses of elements.
        let b = unsafe { std::ptr::read_volatile(a as *const usize) };
        assert_eq!(b - a, 64);
        assert_eq!(c.follow(c.elements), c.start());
    }
}
