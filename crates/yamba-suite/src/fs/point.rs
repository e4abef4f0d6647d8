//! One point of a file-read curve: a file of one size read in blocks of
//! one size, sequentially or at random, through or around the page cache,
//! timed pass by pass, with what the kernel says about where the bytes
//! came from (page cache residency, bytes fetched from storage).

use super::adapter;
use super::files::{random_pass, seq_pass, AlignedBuf, Caching, Tally};
use std::fs::File;
use std::time::{Duration, Instant};
use yamba_core::Clock;

/// Sequential or random block order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Seq,
    Random,
}

/// What to measure and for how long.
pub struct Spec<'a> {
    pub file: &'a File,
    pub size: u64,
    pub block: usize,
    pub pattern: Pattern,
    pub caching: Caching,
    /// Random: block offsets of one pass.
    pub offsets: &'a [u64],
    /// Shortest observation, in ns (passes are repeated to reach it).
    pub target_ns: f64,
    pub min_obs: usize,
    pub max_obs: usize,
    pub budget: Duration,
}

/// Observations of one point and the evidence gathered while taking them.
#[derive(Debug, Clone, Default)]
pub struct Point {
    /// Bandwidth of each observation, GB/s.
    pub gbps: Vec<f64>,
    /// Mean time per read call of each observation, ns.
    pub ns_per_block: Vec<f64>,
    /// Passes per observation.
    pub passes: u64,
    /// Everything the timed passes read.
    pub tally: Tally,
    /// What one pass must read.
    pub pass_bytes: u64,
    /// Bytes fetched from storage during the timed passes, where known.
    pub storage_bytes: Option<u64>,
    /// Cached: share of the file resident before timing. Evicted: the
    /// largest share resident at the start of any pass. Direct: share
    /// resident after all passes.
    pub resident: f64,
}

fn one_pass(s: &Spec, buf: &mut AlignedBuf) -> std::io::Result<Tally> {
    match s.pattern {
        Pattern::Seq => seq_pass(s.file, s.size, s.block, buf),
        Pattern::Random => random_pass(s.file, s.size, s.block, s.offsets, buf),
    }
}

/// Times passes over the file until `min_obs` observations and the budget
/// are reached (or `max_obs`). Errors are I/O errors or short reads.
pub fn measure(clock: &Clock, base_ns: f64, s: &Spec) -> Result<Point, String> {
    let io = |e: std::io::Error| format!("reading a {}-byte file: {e}", s.size);
    let mut buf = AlignedBuf::new(s.block);
    let mut p = Point::default();
    match s.caching {
        Caching::Cached => {
            one_pass(s, &mut buf).map_err(io)?;
            if s.pattern == Pattern::Random {
                // Random passes may not touch every block: load them all.
                seq_pass(
                    s.file,
                    s.size,
                    s.block.max(4096),
                    &mut AlignedBuf::new(s.block.max(4096)),
                )
                .map_err(io)?;
            }
            p.resident = super::files::resident_fraction(s.file, s.size).map_err(io)?;
        }
        Caching::Direct | Caching::Evicted => {
            adapter::evict(s.file).map_err(io)?;
        }
    }
    // Passes per observation: one when each must be preceded by an eviction,
    // else enough to last target_ns (first pass calibrates, untimed for Direct
    // as it may include first-touch costs).
    p.passes = if s.caching == Caching::Evicted {
        1
    } else {
        let t0 = clock.start();
        one_pass(s, &mut buf).map_err(io)?;
        let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0)).max(1.0);
        ((s.target_ns / ns).ceil() as u64).clamp(1, 1 << 20)
    };
    let storage0 = adapter::storage_read_bytes();
    let started = Instant::now();
    while p.gbps.len() < s.max_obs && (p.gbps.len() < s.min_obs || started.elapsed() < s.budget) {
        if s.caching == Caching::Evicted {
            adapter::evict(s.file).map_err(io)?;
            let r = super::files::resident_fraction(s.file, s.size).map_err(io)?;
            p.resident = p.resident.max(r);
        }
        let mut t = Tally::default();
        let t0 = clock.start();
        for _ in 0..p.passes {
            let one = one_pass(s, &mut buf).map_err(io)?;
            t.bytes += one.bytes;
            t.calls += one.calls;
        }
        let ns = (clock.ticks_to_ns(clock.stop().wrapping_sub(t0)) - base_ns).max(1.0);
        p.pass_bytes = t.bytes / p.passes;
        p.tally.bytes += t.bytes;
        p.tally.calls += t.calls;
        p.gbps.push(t.bytes as f64 / ns);
        p.ns_per_block.push(ns / t.calls.max(1) as f64);
    }
    p.storage_bytes = match (storage0, adapter::storage_read_bytes()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    if s.caching == Caching::Direct {
        p.resident = super::files::resident_fraction(s.file, s.size).map_err(io)?;
    }
    Ok(p)
}

/// Median of a non-empty slice (NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Coefficient of variation (sample std / mean), NaN with fewer than 2 values.
pub fn cv(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return f64::NAN;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    var.sqrt() / mean
}
