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
//! Settings: `stride=BYTES` (default: the cache line), `order=random|page|
//! sequential` (default random), `max_size=BYTES`.

use super::adapter::{self, Pages};
use super::chase::Order;
use super::curve::{measure_curve, Curve, CurveConfig};
use super::plateau::{capacity, detect, Plateau};
use serde_json::json;
use std::time::Duration;
use yamba_core::machine::parse_size;
use yamba_core::{BenchResult, Benchmark, Ctx, Machine, Mode, Replication, Series, Unit};

pub static LATENCY: Benchmark = Benchmark {
    id: "mem.latency",
    replication: Replication::OneProcess {
        why: "a curve of working-set sizes to past the last-level cache: costly to repeat",
    },
    area: "mem",
    unit: Unit::Nanoseconds,
    description: "load-to-use latency by working-set size: dependent pointer chase over a random cycle, base pages",
    modes: &[Mode::Hot],
    adapter: adapter::NAME,
    timeout_s: 600,
    run: |ctx| run(ctx, Pages::Base),
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
    modes: &[Mode::Hot],
    adapter: adapter::NAME,
    timeout_s: 600,
    requires: |m, _| match adapter::thp_unavailable(m.transparent_hugepages.as_deref()) {
        Some(why) => Err(why),
        None => Ok(()),
    },
    run: |ctx| run(ctx, Pages::Huge),
    ..Benchmark::TEMPLATE
};

fn bytes_setting(ctx: &Ctx, key: &str) -> Result<Option<usize>, String> {
    ctx.setting(key)
        .map(|s| {
            parse_size(s)
                .filter(|&v| v > 0)
                .map(|v| v as usize)
                .ok_or_else(|| {
                    format!("bad {key} '{s}': expected a size in bytes such as 64, 4K or 256M")
                })
        })
        .transpose()
}

/// The curve's configuration from the run's mode and settings.
pub fn config(ctx: &Ctx, pages: Pages) -> Result<CurveConfig, String> {
    let m = ctx.machine();
    let line = m.caches.first().and_then(|c| c.line_bytes).unwrap_or(64) as usize;
    let stride = bytes_setting(ctx, "stride")?.unwrap_or(line);
    if stride & 7 != 0 {
        return Err(format!(
            "bad stride '{stride}': must be a multiple of 8 bytes"
        ));
    }
    let order = ctx
        .setting("order")
        .map(Order::parse)
        .transpose()?
        .unwrap_or(Order::Random);
    let llc = m.llc_bytes() as usize;
    let default_max = if ctx.quick() {
        2 * llc
    } else {
        (8 * llc).max(256 << 20)
    };
    let mut plan = ctx.plan();
    plan.min_observation_ns = 50_000.0;
    plan.budget = Duration::from_millis(if ctx.quick() { 10 } else { 250 });
    plan.min_observations = if ctx.quick() { 5 } else { 15 };
    Ok(CurveConfig {
        min_bytes: 4096,
        max_bytes: match bytes_setting(ctx, "max_size")? {
            Some(b) => {
                let v = ctx.setting("max_size").unwrap_or_default();
                crate::shared::memory::check_fits("max_size", v, b as u64, 1)?;
                b
            }
            None => default_max,
        },
        points_per_octave: if ctx.quick() { 2 } else { 4 },
        stride,
        order,
        pages,
        plan,
        total_budget: Duration::from_secs_f64(if ctx.quick() { 2.0 } else { 60.0 }),
        mandatory_bytes: 2 * llc,
        max_warmup_ns: if ctx.quick() { 10e6 } else { 40e6 },
    })
}

fn run(ctx: &mut Ctx, pages: Pages) -> Result<(), String> {
    let cfg = config(ctx, pages)?;
    let curve = measure_curve(ctx.clock(), &cfg)?;
    let plateaus = detect(&curve.xy());
    let levels = name_levels(ctx.machine(), &curve, &plateaus);
    let mut r = curve_result(ctx, &cfg, &curve, &plateaus, &levels);
    if ctx.quick() && ctx.setting("max_size").is_none() {
        r.warn("quick mode: the curve stops at 2× the last-level cache, not 8×");
    }
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

/// A detected capacity within this share of sysfs's agrees with it.
pub const CAPACITY_TOLERANCE: f64 = 0.25;

/// A plateau at half the memory latency or more is memory (seen with
/// fewer TLB misses), not a cache.
pub const MEMORY_SHARE: f64 = 0.5;

/// Names the cache plateaus L1, L2, … in order. When the curve went past
/// 2× the last-level cache, the memory latency is the lowest seen at those
/// sizes, plateaus at [`MEMORY_SHARE`] of it or more are memory, not
/// caches, and `memory` is the largest working set.
pub fn name_levels(machine: &Machine, curve: &Curve, plateaus: &[Plateau]) -> Vec<Level> {
    let last = curve.points.len() - 1;
    let beyond = 2 * machine.llc_bytes();
    let past_llc = curve.points[last].bytes as u64 >= beyond;
    let mem_ns = curve
        .points
        .iter()
        .filter(|p| p.bytes as u64 >= beyond)
        .map(|p| p.median_ns)
        .fold(f64::INFINITY, f64::min);
    let caches = plateaus
        .iter()
        .take_while(|p| !(past_llc && p.latency_ns >= MEMORY_SHARE * mem_ns))
        .count();
    let xy = curve.xy();
    let mut levels: Vec<Level> = plateaus[..caches]
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // The next level: the next plateau, or memory past the caches.
            let next_ns = match plateaus.get(i + 1) {
                Some(next) => Some(next.latency_ns),
                None if past_llc => Some(curve.points[last].median_ns),
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
    if past_llc {
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
    let llc = ctx.machine().llc_bytes();
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
    r.add_evidence(
        "the curve reaches past the last-level cache (≥ 2× LLC), so its last point is memory",
        format!("≥ {} bytes", 2 * llc),
        format!("{} bytes", last.bytes),
        last.bytes as u64 >= 2 * llc,
    );
    if (last.bytes as u64) < 8 * llc {
        r.warn(format!(
            "curve ends at {:.1}× the last-level cache (wanted 8×)",
            last.bytes as f64 / llc as f64
        ));
    }
    if let Some(why) = &curve.stopped_early {
        r.warn(format!("curve cut short: {why}"));
    }
    add_huge_evidence(&mut r, cfg.pages, &curve.points);
    let mut table = Vec::new();
    for l in levels {
        let (latency, first) = match l.plateau {
            Some(i) => (plateaus[i].latency_ns, Some(plateaus[i].first_bytes)),
            None => (curve.points[l.point].median_ns, None),
        };
        let agree = match (l.capacity_bytes, l.sysfs_bytes) {
            (Some(d), Some(s)) => {
                let ratio = d / s as f64;
                let ok = (ratio - 1.0).abs() <= CAPACITY_TOLERANCE;
                r.add_note_evidence(
                    format!(
                        "{} capacity (midpoint crossing) agrees with sysfs within ±{:.0}%",
                        l.name,
                        CAPACITY_TOLERANCE * 100.0
                    ),
                    format!("{s} bytes (sysfs)"),
                    format!("{d:.0} bytes (ratio {ratio:.2})"),
                    ok,
                );
                if !ok {
                    let what = if ratio < 1.0 - CAPACITY_TOLERANCE {
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
                Some(ok)
            }
            _ => None,
        };
        table.push(json!({
            "level": l.name, "latency_ns": latency,
            "first_bytes": first,
            "capacity_bytes": l.capacity_bytes,
            "fully_effective_up_to_bytes": l.flat_to_bytes,
            "sysfs_bytes": l.sysfs_bytes, "agrees_with_sysfs": agree,
        }));
    }
    let sysfs_levels = ctx
        .machine()
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .count();
    let cache_plateaus = levels.iter().filter(|l| l.name != "memory").count();
    if cache_plateaus != sysfs_levels {
        r.warn(format!(
            "{cache_plateaus} cache plateaus found on the curve, sysfs lists {sysfs_levels} data cache levels"
        ));
    }
    r.extra.insert("levels".into(), json!(table));
    r.extra.insert("plateaus".into(), json!(plateaus));
    r.extra.insert(
        "curve".into(),
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
            .collect::<Vec<_>>()),
    );
    r
}
