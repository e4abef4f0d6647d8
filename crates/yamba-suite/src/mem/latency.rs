//! P = one load of a dependent pointer chase (see `chase.rs`), measured at
//! working-set sizes from 4 KiB to at least 8× the last-level cache
//! (`curve.rs`); the curve's plateaus (`plateau.rs`) give each cache
//! level's size and latency, compared with what sysfs says.
//!
//! `mem.latency` uses base pages (MADV_NOHUGEPAGE), so beyond the TLB's
//! reach every load also walks the page tables; `mem.latency.huge` asks for
//! 2 MiB pages (MADV_HUGEPAGE) and checks AnonHugePages that it got them:
//! the difference between the two curves is the TLB's share.
//!
//! Settings: `mem.stride`, `mem.order`, `mem.max_size` (declared below;
//! `yamba list --settings`).

use super::adapter::{self, Pages};
use super::chase::Order;
use super::curve::{measure_curve, Curve, CurveConfig};
use super::llc::Sizing;
use super::plateau::{capacity, detect, Plateau};
use serde_json::json;
use std::time::Duration;
use yamba_core::settings::{Kind, Setting};
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Machine, Replication, Series, Unit};

pub static LATENCY: Benchmark = Benchmark {
    id: "mem.latency",
    replication: Replication::OneProcess {
        why: "a curve of working-set sizes to past the last-level cache: costly to repeat",
    },
    area: "mem",
    unit: Unit::Nanoseconds,
    description: "load-to-use latency by working-set size: dependent pointer chase over a random cycle, base pages",
    adapter: adapter::NAME,
    timeout_s: 600,
    run: |ctx| run(ctx, Pages::Base),
    settings: SETTINGS,
    cold: Cold::NotMeaningful(
        "the working-set sizes are the experiment: each size is its own cache case, the largest the uncached one",
    ),
    ..Benchmark::TEMPLATE
};

pub static LATENCY_HUGE: Benchmark = Benchmark {
    id: "mem.latency.huge",
    replication: Replication::OneProcess {
        why: "a curve of working-set sizes to past the last-level cache: costly to repeat",
    },
    area: "mem",
    unit: Unit::Nanoseconds,
    description: "load-to-use latency by working-set size on 2 MiB transparent huge pages (TLB misses removed)",
    adapter: adapter::NAME,
    timeout_s: 600,
    requires: |m, _| match adapter::thp_unavailable(m.transparent_hugepages.as_deref()) {
        Some(why) => Err(why),
        None => Ok(()),
    },
    run: |ctx| run(ctx, Pages::Huge),
    settings: SETTINGS,
    cold: Cold::NotMeaningful(
        "the working-set sizes are the experiment: each size is its own cache case, the largest the uncached one",
    ),
    ..Benchmark::TEMPLATE
};

/// `--set mem.stride`: bytes between the chain's elements.
pub const STRIDE: Setting = Setting {
    key: "mem.stride",
    kind: Kind::Bytes {
        min: 8,
        max: 1 << 30,
    },
    default: "the cache line",
    help: "bytes between the chain's elements (a multiple of 8)",
    aliases: &["stride"],
};

/// `--set mem.order`: the order the chain visits its elements.
pub const ORDER: Setting = Setting {
    key: "mem.order",
    kind: Kind::Choice(&["random", "page", "sequential"]),
    default: "random",
    help: "the chain's order: random, page by page (random within), or sequential",
    aliases: &["order"],
};

/// `--set mem.max_size`: the curve's largest working set.
pub const MAX_SIZE: Setting = Setting {
    key: "mem.max_size",
    kind: Kind::Bytes {
        min: 8192,
        max: 1 << 40,
    },
    default: "8× the effective last-level cache, at least 256 MiB (4×, at least 64 MiB, with --quick), at most MemAvailable/4",
    help: "largest working set of the curve",
    aliases: &["max_size"],
};

const SETTINGS: &[Setting] = &[STRIDE, ORDER, MAX_SIZE];

/// The curve's configuration from the run's mode and settings, its sizes
/// scaled from the effective last-level cache (`sizing`), up to
/// `max_bytes` ([`largest_working_set`]).
pub fn config(
    ctx: &Ctx,
    pages: Pages,
    sizing: &Sizing,
    max_bytes: usize,
) -> Result<CurveConfig, String> {
    let m = ctx.machine();
    let line = m.caches.first().and_then(|c| c.line_bytes).unwrap_or(64) as usize;
    let stride = ctx.bytes(STRIDE.key)?.map_or(line, |b| b as usize);
    if stride & 7 != 0 {
        return Err(format!(
            "--set mem.stride={stride}: must be a multiple of 8 bytes"
        ));
    }
    let order = ctx
        .choice(ORDER.key)?
        .map(Order::parse)
        .transpose()?
        .unwrap_or(Order::Random);
    // Sizes (the range, points per octave) follow the mode; a point's
    // budget, observations and warm-up are amounts: a quick pass's, at
    // this block's effort.
    let mut plan = ctx.plan();
    plan.min_observation_ns = 50_000.0;
    plan.budget = ctx.scaled_time(Duration::from_millis(10));
    plan.min_observations = ctx.scaled(5);
    Ok(CurveConfig {
        min_bytes: 4096,
        max_bytes,
        points_per_octave: if ctx.quick() { 2 } else { 4 },
        stride,
        order,
        pages,
        plan,
        // A guard for a slow machine, not an amount: it cuts the range
        // (what is measured) when reached, so it follows the sizes.
        total_budget: Duration::from_secs_f64(if ctx.quick() { 2.0 } else { 60.0 }),
        mandatory_bytes: sizing.bounded(2, 0, MEMORY_SHARE_OF_AVAILABLE),
        max_warmup_ns: 10e6 * ctx.effort(),
    })
}

/// The most of MemAvailable one chain may take.
pub const MEMORY_SHARE_OF_AVAILABLE: f64 = 0.25;

/// The largest working set a run asked for — `--set mem.max_size`,
/// checked to fit in memory, or [`max_bytes`] — and the rule that chose
/// it, as a result's params say it.
pub fn largest_working_set(
    ctx: &Ctx,
    sizing: &Sizing,
) -> Result<(usize, serde_json::Value), String> {
    Ok(match ctx.bytes(MAX_SIZE.key)? {
        Some(b) => {
            crate::shared::memory::check_fits(MAX_SIZE.key, &b.to_string(), b, 1)?;
            (b as usize, sizing.describe("mem.max_size setting"))
        }
        None if ctx.quick() => (
            max_bytes(true, sizing),
            sizing.describe("4 × the LLC, at least 64 MiB, at most MemAvailable/4 (quick)"),
        ),
        None => (
            max_bytes(false, sizing),
            sizing.describe("8 × the LLC, at least 256 MiB, at most MemAvailable/4"),
        ),
    })
}

/// The curve's default largest working set: 8× the effective LLC (4× in
/// quick mode), at least 256 MiB (64 MiB) so the base-page curve shows the
/// TLB's reach, at most a quarter of MemAvailable.
pub fn max_bytes(quick: bool, sizing: &Sizing) -> usize {
    if quick {
        sizing.bounded(4, 64 << 20, MEMORY_SHARE_OF_AVAILABLE)
    } else {
        sizing.bounded(8, 256 << 20, MEMORY_SHARE_OF_AVAILABLE)
    }
}

fn run(ctx: &mut Ctx, pages: Pages) -> Result<(), String> {
    let sizing = Sizing::for_run(ctx);
    // Chosen (and checked to fit) once, before measuring: a second check
    // after the curve could fail and lose it.
    let (max_bytes, rule) = largest_working_set(ctx, &sizing)?;
    let cfg = config(ctx, pages, &sizing, max_bytes)?;
    let curve = measure_curve(ctx.clock(), &cfg)?;
    let plateaus = merge_within_sysfs(ctx.machine(), detect(&curve.xy()));
    let levels = name_levels(ctx.machine(), &curve, &plateaus);
    let mut r = curve_result(ctx, &cfg, &curve, &plateaus, &levels);
    r.param("max_bytes_rule", rule);
    ctx.push(r);
    for l in &levels {
        let p = &curve.points[l.point];
        let mut lr = ctx.measured_result(Some(&l.name), p.measured.clone());
        lr.description = match l.plateau {
            Some(_) => format!(
                "{} load-to-use latency (middle of its plateau on the curve)",
                l.name
            ),
            None => "memory load-to-use latency (largest working set of the curve)".to_string(),
        };
        lr.param("working_set_bytes", p.bytes)
            .param("effective_capacity_bytes", l.capacity_bytes)
            .param("fully_effective_up_to_bytes", l.flat_to_bytes)
            .param("sysfs_bytes", l.sysfs_bytes)
            .param("stride", cfg.stride)
            .param("order", cfg.order.as_str())
            .param("pages", pages_name(pages));
        add_huge_evidence(&mut lr, pages, &curve.points[l.point..=l.point]);
        ctx.push(lr);
    }
    Ok(())
}

fn pages_name(p: Pages) -> &'static str {
    match p {
        Pages::Base => "base (MADV_NOHUGEPAGE)",
        Pages::Huge => "2 MiB transparent huge pages (MADV_HUGEPAGE)",
    }
}

/// A cache level found on the curve, or main memory.
#[derive(Debug, Clone)]
pub struct Level {
    pub name: String,
    /// The point whose observations represent the level (middle of its
    /// plateau; for memory, the largest working set).
    pub point: usize,
    pub plateau: Option<usize>,
    /// Where the curve crosses the midpoint between this level's plateau
    /// and the next level's ([`super::plateau::capacity`]).
    pub capacity_bytes: Option<f64>,
    /// Where this level's plateau ends: fully effective up to here.
    pub flat_to_bytes: Option<f64>,
    pub sysfs_bytes: Option<u64>,
}

/// A detected capacity agrees with sysfs's from this share of it…
pub const CAPACITY_BELOW: f64 = 0.75;
/// … to this multiple. The midpoint crossing of a pointer chase over a
/// random cycle lies at the capacity C itself under true LRU (every line
/// is evicted before its turn comes back) and at 2C under random
/// replacement (a hit rate of C/W, half at W = 2C); real replacement lies
/// between, so the crossing sits above sysfs's figure by design; 1.5 is
/// halfway. On the AMD EPYC (Zen 3) guest the L2's (512 KiB) read
/// 1.12–1.33 × sysfs, base and huge pages alike, and a symmetric ±25%
/// warned "larger than sysfs says" on healthy curves above 1.25. Below C,
/// loads missed that should have hit.
pub const CAPACITY_ABOVE: f64 = 1.5;

/// How far a capacity / sysfs `ratio` is from 1, scaled so 1 is the edge
/// of agreement ([`CAPACITY_BELOW`], [`CAPACITY_ABOVE`]) on its side.
pub fn capacity_misfit(ratio: f64) -> f64 {
    if ratio < 1.0 {
        (1.0 - ratio) / (1.0 - CAPACITY_BELOW)
    } else {
        (ratio - 1.0) / (CAPACITY_ABOVE - 1.0)
    }
}

/// A plateau at half the memory latency or more is memory (seen with
/// fewer TLB misses), not a cache.
pub const MEMORY_SHARE: f64 = 0.5;

/// How many data (or unified) cache levels sysfs lists; 0 when none.
pub fn sysfs_levels(machine: &Machine) -> usize {
    let mut levels: Vec<u32> = machine
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels.len()
}

/// Names the cache plateaus L1, L2, … in order, never more of them than
/// sysfs lists data-cache levels: plateaus beyond are memory, with the page
/// walk's cost stepping as the working set outgrows the TLB's reach. A
/// plateau the curve went far past (8× its end, or 2× sysfs's LLC) at
/// [`MEMORY_SHARE`] of the largest working set's latency or more is memory
/// too. `memory` is the largest working set, when the curve went past
/// twice the last cache's capacity.
pub fn name_levels(machine: &Machine, curve: &Curve, plateaus: &[Plateau]) -> Vec<Level> {
    let last = curve.points.len() - 1;
    let (last_bytes, last_ns) = (
        curve.points[last].bytes as f64,
        curve.points[last].median_ns,
    );
    let sysfs_llc = machine.llc_bytes() as f64;
    let far_past = |p: &Plateau| last_bytes >= (8.0 * p.last_bytes).min(2.0 * sysfs_llc);
    let limit = match sysfs_levels(machine) {
        0 => plateaus.len(),
        n => n.min(plateaus.len()),
    };
    let caches = plateaus[..limit]
        .iter()
        .take_while(|p| !(far_past(p) && p.latency_ns >= MEMORY_SHARE * last_ns))
        .count();
    let xy = curve.xy();
    let mut levels: Vec<Level> = plateaus[..caches]
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // The next level: the next plateau, or memory past the caches.
            let next_ns = match plateaus.get(i + 1) {
                Some(next) => Some(next.latency_ns),
                None if far_past(p) => Some(last_ns),
                None => None,
            };
            let end = *p.points.last().unwrap();
            Level {
                name: format!("L{}", i + 1),
                point: p.points[p.points.len() / 2],
                plateau: Some(i),
                capacity_bytes: next_ns.and_then(|n| capacity(&xy, end, p.latency_ns, n)),
                flat_to_bytes: Some(p.last_bytes),
                sysfs_bytes: machine.cache_bytes(i as u32 + 1),
            }
        })
        .collect();
    let llc = levels
        .last()
        .and_then(|l| l.capacity_bytes)
        .unwrap_or(sysfs_llc);
    if last_bytes >= 2.0 * llc || caches < plateaus.len() {
        levels.push(Level {
            name: "memory".into(),
            point: last,
            plateau: None,
            capacity_bytes: None,
            flat_to_bytes: None,
            sysfs_bytes: None,
        });
    }
    levels
}

/// A plateau that ends within the size sysfs gives the level before it is
/// that level seen at a lower hit rate (a 2 MiB L2 steps from 4.2 to 5.4 ns
/// past 512 KiB as set conflicts set in), not a level of its own: it is
/// merged into the plateau before. Without sysfs sizes nothing is merged.
pub fn merge_within_sysfs(machine: &Machine, plateaus: Vec<Plateau>) -> Vec<Plateau> {
    let mut out: Vec<Plateau> = Vec::new();
    for p in plateaus {
        let within = out.last().is_some_and(|prev| {
            machine.cache_bytes(out.len() as u32).is_some_and(|size| {
                p.last_bytes <= size as f64 && p.latency_ns < 2.0 * prev.latency_ns
            })
        });
        match out.last_mut() {
            // Fully effective still ends where the first part did; the
            // capacity is searched for after the merged points.
            Some(prev) if within => prev.points.extend(p.points),
            _ => out.push(p),
        }
    }
    out
}

/// The effective capacity is far below sysfs's figure below this ratio.
pub const FAR_BELOW: f64 = 0.25;

fn add_huge_evidence(r: &mut BenchResult, pages: Pages, points: &[super::curve::Point]) {
    let got: Vec<(usize, Option<u64>)> = points
        .iter()
        .map(|p| (p.mapped_bytes, p.huge_bytes))
        .collect();
    let observed = |ok: &dyn Fn(usize, u64) -> bool| {
        got.iter()
            .filter(|(m, h)| h.is_some_and(|h| ok(*m, h)))
            .count()
    };
    match pages {
        Pages::Huge => {
            let n = observed(&|m, h| h >= m as u64);
            r.add_evidence(
                "every chain lay on huge pages (AnonHugePages grew by its whole mapping)",
                format!("{} of {} chains", got.len(), got.len()),
                format!("{n} of {} chains", got.len()),
                n == got.len(),
            );
        }
        Pages::Base => {
            let n = observed(&|_, h| h == 0);
            r.add_note_evidence(
                "no chain lay on huge pages (AnonHugePages did not grow)",
                format!("{} of {} chains", got.len(), got.len()),
                format!("{n} of {} chains", got.len()),
                n == got.len(),
            );
        }
    }
}

fn curve_result(
    ctx: &Ctx,
    cfg: &CurveConfig,
    curve: &Curve,
    plateaus: &[Plateau],
    levels: &[Level],
) -> BenchResult {
    let last = curve.points.last().unwrap();
    let mut r = ctx.measured_result(None, last.measured.clone());
    r.param("stride", cfg.stride)
        .param("order", cfg.order.as_str())
        .param("pages", pages_name(cfg.pages))
        .param("min_bytes", curve.points[0].bytes)
        .param("max_bytes", last.bytes)
        .param("headline", "latency at the largest working set");
    r.series = Some(Series {
        x_label: "working set".into(),
        x_unit: "B".into(),
        y_label: "load-to-use latency".into(),
        y_unit: "ns".into(),
        log_x: true,
        log_y: true,
        points: curve.xy(),
    });
    add_cycle_evidence(&mut r, curve);
    add_reach_evidence(ctx, &mut r, curve, levels);
    if let Some(why) = &curve.stopped_early {
        r.warn(format!("curve cut short: {why}"));
    }
    add_huge_evidence(&mut r, cfg.pages, &curve.points);
    let table = levels_table(ctx, &mut r, curve, plateaus, levels);
    r.extra.insert("levels".into(), json!(table));
    r.extra.insert("plateaus".into(), json!(plateaus));
    r.extra.insert("curve".into(), curve_json(curve));
    r
}

/// Every checked chain was one cycle over its whole working set.
fn add_cycle_evidence(r: &mut BenchResult, curve: &Curve) {
    let cycles_ok = curve
        .points
        .iter()
        .filter(|p| p.one_cycle == Some(true))
        .count();
    let cycles_checked = curve
        .points
        .iter()
        .filter(|p| p.one_cycle.is_some())
        .count();
    r.add_evidence(
        "each chain is one cycle over its whole working set (followed `elements` steps back to its start)",
        format!("{cycles_checked} of {cycles_checked} checked chains"),
        format!("{cycles_ok} of {cycles_checked}"),
        cycles_ok == cycles_checked && cycles_checked > 0,
    );
}

/// The curve reaches memory: past twice the last-level cache it found
/// (sysfs's when it found none), with a warning short of the reach wanted.
fn add_reach_evidence(ctx: &Ctx, r: &mut BenchResult, curve: &Curve, levels: &[Level]) {
    let last = curve.points.last().unwrap();
    let llc = ctx.machine().llc_bytes();
    // The LLC the curve itself found (its capacity where half the loads
    // still hit), or sysfs's when it found none.
    let (llc_eff, basis) = match levels
        .iter()
        .rfind(|l| l.plateau.is_some())
        .and_then(|l| l.capacity_bytes.map(|c| (c, &l.name)))
    {
        Some((c, name)) => (c, format!("{name}'s effective capacity on this curve")),
        None => (
            llc as f64,
            "sysfs's LLC (the curve found no capacity)".to_string(),
        ),
    };
    r.add_evidence(
        "the curve reaches past the last-level cache (≥ 2× its effective capacity), so its last point is memory",
        format!("≥ {:.0} bytes (2 × {basis})", 2.0 * llc_eff),
        format!("{} bytes", last.bytes),
        last.bytes as f64 >= 2.0 * llc_eff,
    );
    let wanted = if ctx.quick() { 4.0 } else { 8.0 };
    if (last.bytes as f64) < wanted * llc_eff && (last.bytes as f64) < 256.0 * 1048576.0 {
        r.warn(format!(
            "curve ends at {:.1}× the last-level cache's effective capacity (wanted {wanted}×)",
            last.bytes as f64 / llc_eff
        ));
    }
    if let Some(why) = &curve.stopped_early {
        r.warn(format!("curve cut short: {why}"));
    }
}

/// A row per cache level (its latency, capacity, and whether sysfs
/// agrees), then the plateaus past the caches (memory's TLB-reach steps).
fn levels_table(
    ctx: &Ctx,
    r: &mut BenchResult,
    curve: &Curve,
    plateaus: &[Plateau],
    levels: &[Level],
) -> Vec<serde_json::Value> {
    let mut table = Vec::new();
    for l in levels {
        let (latency, first) = match l.plateau {
            Some(i) => (plateaus[i].latency_ns, Some(plateaus[i].first_bytes)),
            None => (curve.points[l.point].median_ns, None),
        };
        let agree = match (l.capacity_bytes, l.sysfs_bytes) {
            (Some(d), Some(s)) => Some(capacity_agrees(r, l, d, s)),
            _ => None,
        };
        table.push(json!({
            "level": l.name, "latency_ns": latency,
            "first_bytes": first,
            "capacity_bytes": l.capacity_bytes,
            "capacity_is": "effective: the working set where half the loads still hit (midpoint crossing on this curve), a measurement, not the hardware's size",
            "fully_effective_up_to_bytes": l.flat_to_bytes,
            "sysfs_bytes": l.sysfs_bytes, "agrees_with_sysfs": agree,
        }));
    }
    // Plateaus past the caches: memory, its page walks stepping with the
    // TLB's reach.
    let cache_plateaus = levels.iter().filter(|l| l.plateau.is_some()).count();
    for p in &plateaus[cache_plateaus.min(plateaus.len())..] {
        table.push(json!({
            "level": "memory (a TLB-reach step, not a cache)",
            "latency_ns": p.latency_ns,
            "first_bytes": p.first_bytes,
            "fully_effective_up_to_bytes": p.last_bytes,
        }));
    }
    let sysfs_levels = sysfs_levels(ctx.machine());
    if cache_plateaus < sysfs_levels {
        r.warn(format!(
            "{cache_plateaus} cache plateaus found on the curve, sysfs lists {sysfs_levels} data cache levels"
        ));
    }
    table
}

/// Whether the capacity the curve found (`d` bytes) agrees with sysfs's
/// (`s`): a note, and a warning when far below or outside agreement.
fn capacity_agrees(r: &mut BenchResult, l: &Level, d: f64, s: u64) -> bool {
    let ratio = d / s as f64;
    let ok = capacity_misfit(ratio) <= 1.0;
    r.add_note_evidence(
        format!(
            "{} capacity (midpoint crossing) agrees with sysfs: {CAPACITY_BELOW}–{CAPACITY_ABOVE} × its size",
            l.name,
        ),
        format!("{s} bytes (sysfs)"),
        format!("{d:.0} bytes (ratio {ratio:.2})"),
        ok,
    );
    if ratio < FAR_BELOW {
        r.warn(format!(
            "{}: this process got far less of it than sysfs says: half the loads still hit at {} KiB (the curve's effective capacity), sysfs says {} KiB; shared with other cores or tenants, or sysfs describes the host's cache — the effective figure is a measurement here, not the hardware's size",
            l.name,
            (d / 1024.0).round(),
            s / 1024
        ));
    } else if !ok {
        let what = if ratio < 1.0 {
            "effectively smaller than sysfs says (shared with other cores or tenants, or not all of it reachable)"
        } else {
            "larger than sysfs says (the next level's latency is close to this one's)"
        };
        r.warn(format!(
            "{}: {what}: the curve says {} KiB, sysfs says {} KiB",
            l.name,
            (d / 1024.0).round(),
            s / 1024
        ));
    }
    ok
}

/// Each point of the curve: size, median, its interval, observations,
/// unroll and huge-page bytes.
fn curve_json(curve: &Curve) -> serde_json::Value {
    json!(curve
        .points
        .iter()
        .map(|p| {
            let s = p.measured.summary();
            json!({
                "bytes": p.bytes, "median_ns": p.median_ns,
                "ci95": s.as_ref().and_then(|s| s.median_ci).map(|c| [c.lo, c.hi]),
                "observations": p.measured.observations.len(),
                "unroll": p.measured.method.unroll,
                "huge_bytes": p.huge_bytes,
            })
        })
        .collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::curve::Point;
    use yamba_core::harness::Measured;
    use yamba_core::machine::{CacheLevel, Describe};
    use yamba_results::results::Method;

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

    fn curve(xy: &[[f64; 2]]) -> Curve {
        Curve {
            points: xy
                .iter()
                .map(|&[b, ns]| Point {
                    bytes: b as usize,
                    measured: Measured {
                        observations: vec![ns],
                        method: Method::direct(1, 0.01, 1.0, 1.0, "test"),
                    },
                    median_ns: ns,
                    huge_bytes: None,
                    mapped_bytes: b as usize,
                    one_cycle: None,
                })
                .collect(),
            stopped_early: None,
        }
    }

    /// The Intel VM's base-page curve: L1 48K, L2 2M with a step at 512K,
    /// an effective L3 near 12M (sysfs: 480M), then memory with a TLB step.
    fn vm_curve() -> Vec<[f64; 2]> {
        let k = 1024.0;
        let m = 1048576.0;
        vec![
            [4.0 * k, 1.4],
            [8.0 * k, 1.4],
            [16.0 * k, 1.4],
            [32.0 * k, 1.4],
            [64.0 * k, 4.2],
            [128.0 * k, 4.3],
            [256.0 * k, 4.2],
            [512.0 * k, 4.3],
            [724.0 * k, 5.4],
            [1024.0 * k, 5.4],
            [1448.0 * k, 5.6],
            [2.0 * m, 16.6],
            [2.9 * m, 33.0],
            [4.0 * m, 35.0],
            [5.8 * m, 36.0],
            [8.0 * m, 40.0],
            [11.6 * m, 90.0],
            [16.0 * m, 150.0],
            [23.0 * m, 155.0],
            [32.0 * m, 158.0],
            [64.0 * m, 162.0],
            [128.0 * m, 210.0],
            [181.0 * m, 215.0],
            [256.0 * m, 218.0],
        ]
    }

    #[test]
    fn no_level_beyond_sysfs_and_no_cache_named_from_a_ramp() {
        let m = machine(&[48 << 10, 2 << 20, 480 << 20]);
        let c = curve(&vm_curve());
        let p = merge_within_sysfs(&m, detect(&c.xy()));
        let levels = name_levels(&m, &c, &p);
        let names: Vec<&str> = levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["L1", "L2", "L3", "memory"], "{levels:#?}");
        // The L2's 5.4 ns step is the L2 at a lower hit rate, not the L3.
        let l3 = &levels[2];
        assert!(
            c.points[l3.point].median_ns > 30.0,
            "{:?}",
            c.points[l3.point]
        );
        // The L3's capacity is the curve's, far below sysfs's.
        let cap = l3.capacity_bytes.unwrap();
        assert!(cap > 8.0 * 1048576.0 && cap < 16.0 * 1048576.0, "{cap}");
        assert!(cap / (480.0 * 1048576.0) < FAR_BELOW);
        // Without the sysfs limit the memory plateaus would be L4 and L5.
        assert!(p.len() > 3, "{p:#?}");
    }

    /// Agreement is 0.75–1.5 × sysfs, 1 at either edge; a modelled curve
    /// of a cache with random replacement (hit rate C/W past C) crosses
    /// the midpoint at 2C, one with true LRU at C.
    #[test]
    fn a_capacity_agrees_from_three_quarters_to_one_and_a_half() {
        assert_eq!(capacity_misfit(1.0), 0.0);
        assert!((capacity_misfit(CAPACITY_BELOW) - 1.0).abs() < 1e-12);
        assert!((capacity_misfit(CAPACITY_ABOVE) - 1.0).abs() < 1e-12);
        assert!(capacity_misfit(1.33) < 1.0 && capacity_misfit(0.7) > 1.0);
        let c = 512.0 * 1024.0;
        let (hit, miss) = (4.0, 40.0);
        let sizes: Vec<f64> = (0..40)
            .map(|i| 32.0 * 1024.0 * 2f64.powf(i as f64 / 6.0))
            .collect();
        let crossing = |hit_rate: &dyn Fn(f64) -> f64| {
            let xy: Vec<[f64; 2]> = sizes
                .iter()
                .map(|&w| [w, hit + (miss - hit) * (1.0 - hit_rate(w))])
                .collect();
            super::super::plateau::capacity(&xy, 0, hit, miss).unwrap() / c
        };
        let random = crossing(&|w| (c / w).min(1.0));
        assert!((random - 2.0).abs() < 0.05, "{random}");
        let lru = crossing(&|w| if w <= c { 1.0 } else { 0.0 });
        assert!((1.0..1.13).contains(&lru), "{lru}");
        assert!(capacity_misfit(lru) < 1.0 && capacity_misfit(random) > 1.0);
    }

    #[test]
    fn without_sysfs_nothing_is_merged_or_capped() {
        let m = machine(&[]);
        let c = curve(&vm_curve());
        let p = merge_within_sysfs(&m, detect(&c.xy()));
        assert_eq!(p.len(), detect(&c.xy()).len());
    }
}
