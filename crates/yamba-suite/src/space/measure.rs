//! The generic template: create N of a primitive in 8 equal steps,
//! reading what the kernel and the process account after each step;
//! destroy them; repeat. Each cycle gives one observation of bytes per
//! object: the least-squares slope over the second half of the steps.
//!
//! Why a slope, not (after − before) / N: slab caches hold free room in
//! partly used slabs, which the first new objects fill without any new
//! page being counted; on this machine that hid ~250 KB of pipes, making
//! 600 pipes look 2.7× as costly as 300. Once the first half has used that
//! room up, each further object costs its full size. The plain average is
//! kept in `extra` for comparison, and the last cycle's curve in `series`.
//!
//! - `.kernel`: SReclaimable + SUnreclaim + KernelStack + PageTables from
//!   /proc/meminfo (each component's slope in `extra`);
//! - `.user`: VmRSS of this process, plus for processes the children's
//!   own private memory (smaps_rollup of a sample of them).
//!
//! /proc/meminfo is machine-wide, so whatever else the machine allocates
//! meanwhile is noise in these numbers: the spread across cycles is
//! reported, and a first (warm-up) cycle is discarded because it also pays
//! one-time growth (the fd table, slab caches) that later cycles reuse.

use super::adapter::{self, Batch, Kernel, Kind};
use yamba_core::settings::Setting;
use yamba_core::{BenchResult, Ctx, Series};
use yamba_stats::{linear_fit, Summary};

/// Children whose smaps_rollup is read per cycle (their mean stands for all).
const CHILD_SAMPLE: usize = 64;

/// Pause before each cycle, so objects freed after an RCU grace period by
/// the previous cycle are gone before the baseline is read.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(30);

/// Creation steps per cycle; the slope is fitted over the last half.
const STEPS: usize = 8;

/// One cycle's per-object costs (slopes), in bytes.
#[derive(Debug, Clone, Default)]
struct Cycle {
    s_reclaimable: f64,
    s_unreclaim: f64,
    kernel_stack: f64,
    page_tables: f64,
    rss: f64,
    children_private: f64,
    /// (after − before) / N of the kernel total, free slab room included.
    kernel_average: f64,
    /// R² of the kernel total's fit.
    kernel_r2: Option<f64>,
    /// (objects, kernel bytes above the baseline) after each step.
    curve: Vec<[f64; 2]>,
    alive: u64,
    left_behind: i64,
}

impl Cycle {
    fn kernel(&self) -> f64 {
        self.s_reclaimable + self.s_unreclaim + self.kernel_stack + self.page_tables
    }
    fn user(&self) -> f64 {
        self.rss + self.children_private
    }
}

/// `--set space.n`: objects per cycle.
pub const N: Setting = Setting {
    key: "space.n",
    kind: yamba_core::settings::Kind::Integer {
        min: STEPS as u64,
        max: 1 << 20,
    },
    default: "by kind: 1000 processes or threads, 5000 others (fewer with --quick)",
    help: "objects created per cycle",
    aliases: &[],
};

/// `--set space.repeats`: cycles per primitive.
pub const REPEATS: Setting = Setting {
    key: "space.repeats",
    kind: yamba_core::settings::Kind::Integer { min: 1, max: 1000 },
    default: "7 (3 with --quick)",
    help: "create-and-release cycles per primitive",
    aliases: &[],
};

/// Objects per cycle: small objects need more for their slabs' pages to
/// add up to many times the counters' 4 KiB granularity and the slab
/// rounding at the end of the curve.
fn default_n(kind: Kind, quick: bool) -> usize {
    match (kind, quick) {
        (Kind::Process | Kind::Thread, true) => 200,
        (Kind::Process | Kind::Thread, false) => 1000,
        (_, true) => 2000,
        (_, false) => 5000,
    }
}

/// Counters after a step: (objects so far, kernel, VmRSS).
fn point(count: usize) -> Result<(f64, Kernel, f64), String> {
    adapter::refresh_counters();
    let k = adapter::kernel().ok_or("cannot read /proc/meminfo")?;
    let rss = adapter::own_rss().ok_or("cannot read VmRSS from /proc/self/status")?;
    Ok((count as f64, k, rss as f64))
}

fn total(k: &Kernel) -> f64 {
    k.s_reclaimable + k.s_unreclaim + k.kernel_stack + k.page_tables
}

fn cycle(kind: Kind, n: usize, page: usize) -> Result<Cycle, String> {
    std::thread::sleep(SETTLE);
    let census = || adapter::census(kind).ok_or("cannot count objects in /proc/self");
    let c0 = census()?;
    let mut points = vec![point(0)?];
    let mut batches = Vec::with_capacity(STEPS);
    for s in 1..=STEPS {
        let m = n * s / STEPS - n * (s - 1) / STEPS;
        batches.push(Batch::create(kind, m, page)?);
        points.push(point(n * s / STEPS)?);
    }
    let c1 = census()?;
    let sample: Vec<u64> = batches
        .iter()
        .flat_map(|b| b.children().iter().copied())
        .take(CHILD_SAMPLE)
        .filter_map(adapter::private_bytes)
        .collect();
    let children_private = if sample.is_empty() {
        0.0
    } else {
        sample.iter().sum::<u64>() as f64 / sample.len() as f64
    };
    // Newest first: a batch never depends on a later one.
    while let Some(b) = batches.pop() {
        drop(b);
    }
    let c2 = census()?;
    let half = &points[STEPS / 2..];
    let x: Vec<f64> = half.iter().map(|p| p.0).collect();
    let slope = |f: &dyn Fn(&(f64, Kernel, f64)) -> f64| -> (f64, Option<f64>) {
        let y: Vec<f64> = half.iter().map(f).collect();
        linear_fit(&x, &y).map_or((f64::NAN, None), |l| (l.slope, l.r_squared))
    };
    let base = total(&points[0].1);
    let (_, kernel_r2) = slope(&|p| total(&p.1));
    Ok(Cycle {
        s_reclaimable: slope(&|p| p.1.s_reclaimable).0,
        s_unreclaim: slope(&|p| p.1.s_unreclaim).0,
        kernel_stack: slope(&|p| p.1.kernel_stack).0,
        page_tables: slope(&|p| p.1.page_tables).0,
        rss: slope(&|p| p.2).0,
        children_private,
        kernel_average: (total(&points[STEPS].1) - base) / n as f64,
        kernel_r2,
        curve: points.iter().map(|p| [p.0, total(&p.1) - base]).collect(),
        alive: c1.saturating_sub(c0),
        left_behind: c2 as i64 - c0 as i64,
    })
}

/// Median, min and max of one component, per object.
fn component(cycles: &[Cycle], f: fn(&Cycle) -> f64) -> serde_json::Value {
    let v: Vec<f64> = cycles.iter().map(f).collect();
    match Summary::of(&v) {
        Some(s) => serde_json::json!({"median": s.median, "min": s.min, "max": s.max}),
        None => serde_json::Value::Null,
    }
}

/// Measures `kind` and pushes `<id>.kernel` and `<id>.user`.
pub fn run_space(ctx: &mut Ctx, kind: Kind) -> Result<(), String> {
    let mut n = ctx
        .integer(N.key)?
        .map_or(default_n(kind, ctx.quick()), |n| n as usize);
    let repeats = ctx
        .integer(REPEATS.key)?
        .map_or(if ctx.quick() { 3 } else { 7 }, |r| r as usize);
    let page = ctx.machine().page_size as usize;
    let mut warnings = Vec::new();
    if kind.fds() > 0 {
        let room = adapter::raise_nofile(n as u64 * kind.fds());
        let fit = (room.saturating_sub(8) / kind.fds()) as usize;
        if fit < n {
            warnings.push(format!(
                "RLIMIT_NOFILE could not be raised enough for {n} objects: measured {fit}"
            ));
            n = fit;
        }
    }
    if n < STEPS {
        return Err(format!("no room for {STEPS} objects (RLIMIT_NOFILE)"));
    }
    let started = std::time::Instant::now();
    let refreshed = adapter::refresh_counters();
    let first = cycle(kind, n, page)?;
    let cycles = (0..repeats)
        .map(|_| cycle(kind, n, page))
        .collect::<Result<Vec<_>, _>>()?;
    let expected_alive = n as u64 * if kind.fds() > 0 { kind.fds() } else { 1 };
    let left: Vec<i64> = cycles.iter().map(|c| c.left_behind).collect();

    for (suffix, value, what) in [
        (
            "kernel",
            Cycle::kernel as fn(&Cycle) -> f64,
            "kernel memory (slab + kernel stacks + page tables)",
        ),
        (
            "user",
            Cycle::user as fn(&Cycle) -> f64,
            "user memory (resident, private)",
        ),
    ] {
        let mut r = ctx.result(Some(suffix));
        r.description = format!("{what} per {}", describe(kind));
        r.set_observations(cycles.iter().map(value).collect());
        r.method = Some(method(ctx, repeats, started.elapsed().as_secs_f64()));
        r.param("objects_per_cycle", n);
        r.param("cycles", repeats);
        r.param(
            "counters",
            "/proc/meminfo (machine-wide), /proc/self/status VmRSS",
        );
        r.extra
            .insert("first_cycle_per_object".into(), value(&first).into());
        if suffix == "kernel" {
            r.extra.insert(
                "average_per_object".into(),
                component(&cycles, |c| c.kernel_average),
            );
            let r2: Vec<f64> = cycles.iter().filter_map(|c| c.kernel_r2).collect();
            let worst = r2.iter().copied().fold(f64::INFINITY, f64::min);
            r.add_note_evidence(
                "each further object costs the same (second-half fit is linear)",
                "R² > 0.9 in every cycle",
                format!("worst R² {worst:.3}"),
                r2.len() == cycles.len() && worst > 0.9,
            );
            r.series = cycles.last().map(|c| Series {
                x_label: "objects created".into(),
                x_unit: "count".into(),
                y_label: "kernel memory above baseline".into(),
                y_unit: "B".into(),
                log_x: false,
                log_y: false,
                points: c.curve.clone(),
            });
            r.extra.insert(
                "slab_reclaimable".into(),
                component(&cycles, |c| c.s_reclaimable),
            );
            r.extra.insert(
                "slab_unreclaimable".into(),
                component(&cycles, |c| c.s_unreclaim),
            );
            r.extra.insert(
                "kernel_stack".into(),
                component(&cycles, |c| c.kernel_stack),
            );
            r.extra
                .insert("page_tables".into(), component(&cycles, |c| c.page_tables));
        } else {
            r.extra
                .insert("process_rss".into(), component(&cycles, |c| c.rss));
            if kind == Kind::Process {
                r.extra.insert(
                    "child_private".into(),
                    component(&cycles, |c| c.children_private),
                );
                r.param("children_sampled", CHILD_SAMPLE.min(n));
            }
        }
        add_checks(&mut r, kind, expected_alive, &cycles, &left, refreshed);
        for w in &warnings {
            r.warn(w.clone());
        }
        ctx.push(r);
    }
    Ok(())
}

fn add_checks(
    r: &mut BenchResult,
    kind: Kind,
    expected: u64,
    cycles: &[Cycle],
    left: &[i64],
    refreshed: bool,
) {
    let seen: Vec<u64> = cycles.iter().map(|c| c.alive).collect();
    census_evidence(r, kind, expected, &seen, left);
    r.add_note_evidence(
        "per-CPU counter deltas folded before each read (vm.stat_refresh, root)",
        "folded",
        if refreshed {
            "folded"
        } else {
            "not permitted: counters may lag"
        },
        refreshed,
    );
    if let Some(s) = r.summary.clone() {
        let iqr = s.p75 - s.p25;
        r.add_note_evidence(
            "machine-wide counters: others' allocations are noise; spread across cycles is small",
            "IQR < 25% of |median| + 16 B",
            format!(
                "median {:.0} B, IQR {:.0} B, min {:.0}, max {:.0}",
                s.median, iqr, s.min, s.max
            ),
            iqr <= 0.25 * s.median.abs() + 16.0,
        );
    }
}

/// Gating evidence from the census: each cycle had `expected` more objects
/// while measured (`seen`), and none left after destroying (`left`).
pub fn census_evidence(r: &mut BenchResult, kind: Kind, expected: u64, seen: &[u64], left: &[i64]) {
    r.add_evidence(
        format!(
            "all objects existed while measured (census of {})",
            census_source(kind)
        ),
        format!("{expected} more per cycle"),
        format!("{seen:?}"),
        !seen.is_empty() && seen.iter().all(|&s| s == expected),
    );
    r.add_evidence(
        "everything created was destroyed (census back to its baseline)",
        "0 left per cycle",
        format!("{left:?}"),
        left.iter().all(|&l| l <= 0),
    );
}

fn census_source(kind: Kind) -> &'static str {
    match kind {
        Kind::Thread => "Threads in /proc/self/status",
        Kind::Process => "/proc/self/task/<tid>/children",
        Kind::Mapping => "one-page anonymous rw mappings in /proc/self/maps",
        _ => "entries of /proc/self/fd",
    }
}

fn describe(kind: Kind) -> &'static str {
    match kind {
        Kind::Process => "process (a forked child blocked in read)",
        Kind::Thread => "thread (pthread, default attributes, blocked in read)",
        Kind::Pipe => "pipe (both ends, empty)",
        Kind::Socketpair => "AF_UNIX stream socketpair (both ends)",
        Kind::Eventfd => "eventfd",
        Kind::Epoll => "epoll instance (no fds registered)",
        Kind::Timerfd => "timerfd (CLOCK_MONOTONIC, unarmed)",
        Kind::Mapping => "mapped region (one touched anonymous page, its own VMA)",
    }
}

fn method(ctx: &Ctx, repeats: usize, elapsed_s: f64) -> yamba_core::results::Method {
    yamba_core::results::Method::direct(
        1,
        ctx.plan().target_precision,
        ctx.plan().budget.as_secs_f64(),
        elapsed_s,
        format!(
            "{repeats} create/destroy cycles after one warm-up; slope over the last {} of {STEPS} steps",
            STEPS / 2 + 1
        ),
    )
}
