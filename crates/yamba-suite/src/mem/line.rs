//! `mem.line`: the cache line size from a stride sweep (lmbench's `line`).
//!
//! P = one load of a chase that visits 512-byte blocks in random order
//! and, in each block, two words `s` bytes apart: the first load misses
//! the L1 (the blocks span 8× the L1, within the L2), the second hits the
//! line the first just brought in when `s` is less than a line, and misses
//! too when it is not. The latency per load steps up at s = the line size;
//! the line is the smallest stride whose latency is past the midpoint
//! between the smallest stride's and the largest's. Each sweep gives one
//! observation; sysfs's coherency_line_size is the reference.

use super::adapter::{self, Anon, Pages};
use super::chase::{rng, Chain};
use rand::seq::SliceRandom;
use serde_json::json;
use std::time::Duration;
use yamba_core::harness::Plan;
use yamba_core::{Benchmark, Cold, Ctx, Series, Unit};

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

/// The chase for stride `s` over `bytes`: blocks in random order, two
/// words `s` apart in each.
pub fn pair_chain(bytes: usize, s: usize, seed: u64) -> Result<Chain, String> {
    let blocks = (bytes / BLOCK).max(4);
    let mut order: Vec<usize> = (0..blocks).collect();
    order.shuffle(&mut rng(seed));
    let offsets: Vec<usize> = order
        .iter()
        .flat_map(|&b| [b * BLOCK, b * BLOCK + s])
        .collect();
    Chain::from_offsets(Anon::new(blocks * BLOCK, Pages::Base, true)?, &offsets)
}

/// The line size one sweep's (stride, ns) points show: the smallest stride
/// past the midpoint between the first and last latency, or None when they
/// do not differ by [`MIN_STEP`].
pub fn line_of(points: &[(usize, f64)]) -> Option<usize> {
    let (lo, hi) = (points.first()?.1, points.last()?.1);
    if hi < lo * MIN_STEP {
        return None;
    }
    let mid = (lo + hi) / 2.0;
    points.iter().find(|(_, ns)| *ns > mid).map(|(s, _)| *s)
}

/// The largest stride's latency must be at least this many times the
/// smallest's for a sweep to show a line.
pub const MIN_STEP: f64 = 1.2;

fn run(ctx: &mut Ctx) -> Result<(), String> {
    let m = ctx.machine();
    let l1 = m.cache_bytes(1).unwrap_or(32 << 10) as usize;
    let l2 = m.cache_bytes(2).unwrap_or(1 << 20) as usize;
    let bytes = (8 * l1).min(l2 / 2).max(64 << 10);
    // Sweeps (one observation each) and a stride's budget are amounts.
    let sweeps = ctx.scaled(5);
    let mut plan: Plan = ctx.plan();
    plan.budget = ctx.scaled_time(Duration::from_millis(5));
    plan.min_observations = 5;
    plan.warmup_ns = 2e6;
    let chains: Vec<Chain> = STRIDES
        .iter()
        .map(|&s| pair_chain(bytes, s, 0x11E + s as u64))
        .collect::<Result<_, _>>()?;
    let started = std::time::Instant::now();
    let mut found = Vec::new();
    let mut curves: Vec<Vec<(usize, f64)>> = Vec::new();
    // Sweeps interleave the strides, so drift moves them all alike.
    for _ in 0..sweeps {
        let pts: Vec<(usize, f64)> = STRIDES
            .iter()
            .zip(&chains)
            .filter_map(|(&s, c)| {
                c.measure(ctx.clock(), &plan)
                    .summary()
                    .map(|x| (s, x.median))
            })
            .collect();
        if let Some(l) = line_of(&pts) {
            found.push(l as f64);
        }
        curves.push(pts);
    }
    let mut r = ctx.result(None);
    r.set_observations(found.clone());
    r.method = Some(ctx.direct_method(1, started, format!("{sweeps} sweeps")));
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
        "every sweep showed the step (largest stride ≥ 1.2× the smallest's latency)",
        format!("{sweeps} of {sweeps} sweeps"),
        format!("{} of {sweeps}", found.len()),
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

    #[test]
    fn each_block_holds_two_loads_s_apart() {
        let c = pair_chain(64 << 10, 64, 1).unwrap();
        assert_eq!(c.elements, 2 * (64 << 10) / BLOCK);
        let a = c.start();
        // SAFETY: the chain's elements hold addresses of elements.
        let b = unsafe { std::ptr::read_volatile(a as *const usize) };
        assert_eq!(b - a, 64);
        assert_eq!(c.follow(c.elements), c.start());
    }
}
