//! `mem.bandwidth.read.curve`: read bandwidth by working-set size (lmbench's
//! bw_mem rd over sizes, likwid-bench's sweeps). P = one pass of the read
//! kernel (`kernels.rs`: a sum of 64-bit words) over a block of up to 64
//! KiB of the first `size` bytes of one array (whole pages, the blocks
//! tiling the size exactly: `block_words`); F the
//! same loop without the reads (`bandwidth::over`). Sizes from 8 KiB to
//! the bytes `mem.bandwidth.read` uses (8× the effective LLC, at least 32
//! MiB; `--set mem.bw_size` sets both), two per octave (one with --quick),
//! on one array faulted in once: each size is a prefix of it.
//!
//! Where sysfs gives the cache sizes, the points are named by level: L*k*
//! is the sizes from twice level *k*−1's size to half level *k*'s (the
//! last level's size being the effective LLC, `llc::Sizing`, when smaller:
//! a VM's sysfs may describe its host), memory the sizes from 4× the LLC.
//! Each level's result is its middle point. Evidence: every pass read
//! every word (the sum of what the passes returned equals the sum of the
//! known pattern over the words read), and the largest size is ≥ 4× the
//! LLC. The largest point is measured as `mem.bandwidth.read` measures
//! (the same plan and size), so the two agree within noise.
//!
//! The kernel is the x86-64 baseline's 16-byte loads, two a cycle: 32
//! bytes a cycle, which L1, L2 and (on Zen 4) L3 all sustain, so there the
//! curve is flat from L1 to the LLC and steps down only to memory
//! (docs/lmbench.md has a Zen 4 curve beside lmbench's `bw_mem rd`).

use super::adapter;
use super::bandwidth::{array_bytes, over, Outcome};
use super::curve::sizes;
use super::kernels::{pattern, Arrays, Kernel};
use serde_json::json;
use std::time::Duration;
use yamba_core::{Benchmark, Cold, Ctx, Machine, Replication, Series, Unit};

pub static READ_CURVE: Benchmark = Benchmark {
    id: "mem.bandwidth.read.curve",
    area: "mem",
    unit: Unit::GigabytesPerSecond,
    description: "read bandwidth by working-set size, 8 KiB to ≫ the last-level cache (sum of 64-bit words); plateaus named by cache level; GB/s with GB = 10^9 bytes",
    adapter: adapter::NAME,
    replication: Replication::OneProcess {
        why: "a curve of working-set sizes to past the last-level cache: costly to repeat",
    },
    run,
    settings: &[super::bandwidth::SIZE],
    cold: Cold::NotMeaningful(
        "the working-set sizes are the experiment: each size is its own cache case, the largest the uncached one",
    ),
    ..Benchmark::TEMPLATE
};

/// A cache level (or memory) as a window of working-set sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub name: String,
    /// Sizes in [lo, hi] belong to it.
    pub lo_bytes: usize,
    pub hi_bytes: usize,
    /// The cache's size as sysfs gives it (None for memory).
    pub sysfs_bytes: Option<u64>,
}

/// The windows of sizes that measure each data-cache level and memory:
/// level k from twice level k−1's size (the smallest size for L1) to half
/// level k's, the last level's size being `effective_llc` when smaller;
/// memory from 4× that. Empty without sysfs sizes.
pub fn level_windows(machine: &Machine, effective_llc: usize) -> Vec<Level> {
    let mut levels: Vec<u32> = machine
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let Some(&last) = levels.last() else {
        return vec![];
    };
    let mut out = Vec::new();
    let mut below = 0usize;
    for &l in &levels {
        let Some(sysfs) = machine.cache_bytes(l) else {
            return vec![];
        };
        let size = if l == last {
            (sysfs as usize).min(effective_llc.max(1))
        } else {
            sysfs as usize
        };
        out.push(Level {
            name: format!("L{l}"),
            lo_bytes: 2 * below,
            hi_bytes: size / 2,
            sysfs_bytes: Some(sysfs),
        });
        below = size;
    }
    out.push(Level {
        name: "memory".into(),
        lo_bytes: 4 * below,
        hi_bytes: usize::MAX,
        sysfs_bytes: None,
    });
    out
}

/// The indices of `xs` (ascending sizes) inside each window; windows with
/// no size are left out.
pub fn assign(levels: &[Level], xs: &[usize]) -> Vec<(Level, Vec<usize>)> {
    levels
        .iter()
        .filter_map(|l| {
            let pts: Vec<usize> = (0..xs.len())
                .filter(|&i| xs[i] >= l.lo_bytes && xs[i] <= l.hi_bytes)
                .collect();
            (!pts.is_empty()).then(|| (l.clone(), pts))
        })
        .collect()
}

/// The sum the read kernel returns over words [0, n) of the pattern.
fn pattern_sum(n: usize) -> u64 {
    (0..n).fold(0u64, |s, i| s.wrapping_add(pattern(i)))
}

/// What `blocks_done` passes over blocks of `bw` words, in order from the
/// first and wrapping after `blocks`, must have summed to.
pub fn expected_sink(bw: usize, blocks: usize, blocks_done: u64) -> u64 {
    let (full, part) = (blocks_done / blocks as u64, blocks_done % blocks as u64);
    pattern_sum(bw * blocks)
        .wrapping_mul(full)
        .wrapping_add(pattern_sum(bw * part as usize))
}

/// Words per block for a size of `words` (a multiple of 512, whole 4 KiB
/// pages): the largest divisor of it up to 8192 words (64 KiB, as
/// `mem.bandwidth.read`) that is whole pages, so every word of the size is
/// read once per pass.
pub fn block_words(words: usize) -> usize {
    let pages = (words / 512).max(1);
    (1..=16)
        .rev()
        .find(|d| pages.is_multiple_of(*d))
        .unwrap_or(1)
        * 512
}

/// One measured size.
struct Point {
    bytes: usize,
    outcome: Outcome,
    median: f64,
    summed_right: bool,
}

fn run(ctx: &mut Ctx) -> Result<(), String> {
    let (max_bytes, llc, rule) = array_bytes(ctx, Kernel::Read)?;
    let mut arr = Arrays::new(Kernel::Read, max_bytes)?;
    // The largest point as mem.bandwidth.read measures its arrays.
    let mut big = ctx.plan();
    big.min_observation_ns = 1e6;
    big.warmup_ns = big.warmup_ns.max(20e6);
    // The others: short, many blocks per observation even in L1.
    let mut small = ctx.plan();
    small.min_observation_ns = 100_000.0;
    small.budget = ctx.scaled_time(Duration::from_millis(20));
    small.min_observations = ctx.scaled(5);
    small.warmup_ns = 2e6;
    let per_octave = if ctx.quick() { 1 } else { 2 };
    let xs = sizes(8192, arr.words * 8, per_octave, 4096);
    let mut points = Vec::new();
    for (k, &bytes) in xs.iter().enumerate() {
        let words = bytes / 8;
        let plan = if k + 1 == xs.len() { &big } else { &small };
        let bw = block_words(words);
        let (outcome, sink) = over(ctx.clock(), plan, &mut arr, words, bw);
        let summed_right =
            outcome.blocks_done > 0 && sink == expected_sink(bw, words / bw, outcome.blocks_done);
        let median = yamba_stats::Summary::of(&outcome.gbps)
            .map(|s| s.median)
            .ok_or_else(|| format!("no observation at {bytes} bytes"))?;
        points.push(Point {
            bytes,
            outcome,
            median,
            summed_right,
        });
    }
    let xy: Vec<[f64; 2]> = points.iter().map(|p| [p.bytes as f64, p.median]).collect();
    let sized: Vec<usize> = points.iter().map(|p| p.bytes).collect();
    let levels = assign(&level_windows(ctx.machine(), llc), &sized);

    let last = points.last().unwrap();
    let mut r = ctx.result(None);
    r.set_observations(last.outcome.gbps.clone());
    r.method = Some(last.outcome.method.clone());
    r.param("kernel", "read")
        .param("min_bytes", points[0].bytes)
        .param("max_bytes", last.bytes)
        .param("points_per_octave", per_octave)
        .param("llc_bytes", llc)
        .param("max_bytes_rule", &rule)
        .param("gb", "10^9 bytes")
        .param("headline", "bandwidth at the largest working set");
    r.series = Some(Series {
        x_label: "working set".into(),
        x_unit: "B".into(),
        y_label: "read bandwidth".into(),
        y_unit: "GB/s".into(),
        log_x: true,
        log_y: true,
        points: xy,
    });
    let right = points.iter().filter(|p| p.summed_right).count();
    r.add_evidence(
        "every pass read every word of its block (the passes' sums equal the known pattern's)",
        format!("{0} of {0} sizes", points.len()),
        format!("{right} of {}", points.len()),
        right == points.len(),
    );
    r.add_evidence(
        "the largest working set is far larger than the last-level cache (≥ 4× its effective capacity)",
        format!("≥ {} bytes", 4 * llc),
        format!("{} bytes", last.bytes),
        last.bytes >= 4 * llc,
    );
    if levels.is_empty() {
        r.warn("sysfs gives no cache sizes: the curve's points are not named by level");
    }
    let table: Vec<serde_json::Value> = levels
        .iter()
        .map(|(l, pts)| {
            json!({
                "level": l.name, "first_bytes": points[pts[0]].bytes,
                "last_bytes": points[*pts.last().unwrap()].bytes,
                "gbps": points[pts[pts.len() / 2]].median,
                "sysfs_bytes": l.sysfs_bytes,
            })
        })
        .collect();
    r.extra.insert("levels".into(), json!(table));
    r.extra.insert(
        "curve".into(),
        json!(points
            .iter()
            .map(|p| json!({
                "bytes": p.bytes, "median_gbps": p.median,
                "observations": p.outcome.gbps.len(),
                "blocks_done": p.outcome.blocks_done,
                "summed_right": p.summed_right,
            }))
            .collect::<Vec<_>>()),
    );
    let all_right = right == points.len();
    ctx.push(r);
    for (l, pts) in &levels {
        // Memory: the largest size; a cache: the middle of its window.
        let i = if l.sysfs_bytes.is_none() {
            *pts.last().unwrap()
        } else {
            pts[pts.len() / 2]
        };
        let p = &points[i];
        let mut lr = ctx.result(Some(&l.name));
        lr.description = match l.sysfs_bytes {
            Some(_) => format!(
                "{} read bandwidth (middle of its sizes on the curve)",
                l.name
            ),
            None => "memory read bandwidth (largest working set of the curve)".into(),
        };
        lr.set_observations(p.outcome.gbps.clone());
        lr.method = Some(p.outcome.method.clone());
        lr.param("working_set_bytes", p.bytes)
            .param(
                "window_bytes",
                json!([l.lo_bytes, l.hi_bytes.min(last.bytes)]),
            )
            .param("sysfs_bytes", l.sysfs_bytes)
            .param("llc_bytes", llc)
            .param("gb", "10^9 bytes");
        lr.add_evidence(
            "every pass read every word of its block (the passes' sums equal the known pattern's)",
            "every size of the curve",
            if all_right {
                "every size"
            } else {
                "a size summed wrong"
            },
            all_right,
        );
        ctx.push(lr);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use yamba_core::machine::{CacheLevel, Describe};

    fn machine(sizes: &[u64]) -> Machine {
        let mut m = Machine::describe();
        m.caches = sizes
            .iter()
            .enumerate()
            .map(|(i, &size_bytes)| CacheLevel {
                level: i as u32 + 1,
                kind: if i == 0 { "Data" } else { "Unified" }.into(),
                size_bytes,
                line_bytes: Some(64),
                ways: None,
                shared_by_cpus: None,
            })
            .collect();
        m
    }

    /// Zen 4 (32 KiB L1d, 1 MiB L2, 32 MiB L3 of which a tenant gets 8):
    /// L1 up to 16 KiB, L2 from 64 KiB to 512 KiB, L3 from 2 MiB to the
    /// effective LLC's half, memory from 4× it.
    #[test]
    fn windows_follow_sysfs_and_the_effective_llc() {
        let m = machine(&[32 << 10, 1 << 20, 32 << 20]);
        let w = level_windows(&m, 8 << 20);
        let got: Vec<(&str, usize, usize)> = w
            .iter()
            .map(|l| (l.name.as_str(), l.lo_bytes, l.hi_bytes))
            .collect();
        assert_eq!(
            got,
            [
                ("L1", 0, 16 << 10),
                ("L2", 64 << 10, 512 << 10),
                ("L3", 2 << 20, 4 << 20),
                ("memory", 32 << 20, usize::MAX),
            ]
        );
        assert_eq!(w[2].sysfs_bytes, Some(32 << 20));
        let xs = sizes(4096, 64 << 20, 1, 64);
        let named: Vec<(String, Vec<usize>)> = assign(&w, &xs)
            .into_iter()
            .map(|(l, p)| (l.name, p.iter().map(|&i| xs[i] >> 10).collect()))
            .collect();
        assert_eq!(
            named,
            [
                ("L1".to_string(), vec![4, 8, 16]),
                ("L2".to_string(), vec![64, 128, 256, 512]),
                ("L3".to_string(), vec![2048, 4096]),
                ("memory".to_string(), vec![32768, 65536]),
            ]
        );
        // Blocks tile every size exactly, 4 to 64 KiB each.
        for &x in &sizes(4096, 256 << 20, 2, 4096) {
            let (w, bw) = (x / 8, block_words(x / 8));
            assert!(
                w.is_multiple_of(bw) && (512..=8192).contains(&bw),
                "{x}: {bw}"
            );
        }
        assert_eq!(block_words(12 << 10 >> 3), 1536);
        // No sysfs sizes: nothing named.
        assert!(level_windows(&machine(&[]), 8 << 20).is_empty());
    }

    /// The expected checksum is the read kernel's: reading the blocks
    /// in order, wrapping, sums to it; one block more or less does not.
    #[test]
    fn expected_sink_is_what_the_kernel_sums() {
        let mut arr = Arrays::new(Kernel::Read, 64 << 10).unwrap();
        let (bw, blocks) = (1024, 4);
        let mut sink = 0u64;
        for done in 1..=11u64 {
            let i = ((done - 1) % blocks as u64) as usize;
            sink = sink.wrapping_add(arr.block(i * bw, (i + 1) * bw));
            assert_eq!(sink, expected_sink(bw, blocks, done), "{done}");
            assert_ne!(sink, expected_sink(bw, blocks, done + 1), "{done}");
        }
    }
}
