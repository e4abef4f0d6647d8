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
//! or frees meanwhile is noise in these numbers. Each step counts only
//! the change across its own creation; the change over an idle window of
//! the same length estimates what the machine added to it, and a cycle
//! where that exceeds 10% of the cost is measured again (gating evidence
//! when the disturbance outlasts the retries: a CI run's exits elsewhere
//! once made a thread look 12–15 KB instead of ~27 KB, silently). The
//! spread across cycles is reported, and a first (warm-up) cycle is
//! discarded because it also pays one-time growth (the fd table, slab
//! caches) that later cycles reuse.

use super::adapter::{self, Batch, Kernel, Kind};
use yamba_core::settings::Setting;
use yamba_core::{BenchResult, Ctx, Series};
use yamba_stats::{linear_fit, Summary};

/// Children whose smaps_rollup is read per cycle (their mean stands for all).
const CHILD_SAMPLE: usize = 64;

/// Interval between the reads that decide the counters have settled
/// before a cycle.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(30);

/// Settled: the kernel total moved less than this over one [`SETTLE`].
const SETTLED: f64 = 64.0 * 1024.0;

/// Longest wait for the counters to settle before a cycle.
const SETTLE_MAX: std::time::Duration = std::time::Duration::from_millis(500);

/// A cycle is disturbed when the background's estimated share of the
/// kernel cost per object exceeds this; it is measured again.
const DISTURBED: f64 = 0.10;

/// Cycles tried per primitive, as a multiple of the cycles wanted.
const ATTEMPTS: usize = 3;

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
    /// Kernel bytes per object that the machine's background (its change
    /// between steps, per second, times the creation time) may have
    /// added to or taken from the steps over the fitted half.
    background_per_object: f64,
    /// (objects, kernel bytes above the baseline) after each step.
    curve: Vec<[f64; 2]>,
    alive: u64,
    left_behind: i64,
    /// Objects of the census's kind that appeared while the cycle ran
    /// and are not ours (counted only where the census knows identities).
    others_appeared: i64,
}

impl Cycle {
    fn kernel(&self) -> f64 {
        self.s_reclaimable + self.s_unreclaim + self.kernel_stack + self.page_tables
    }
    fn user(&self) -> f64 {
        self.rss + self.children_private
    }
    /// The background's estimated share of the kernel cost.
    fn disturbance(&self) -> f64 {
        self.background_per_object.abs() / self.kernel().abs().max(1.0)
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
    default: "3, quick or precise (a precise run's cycles are of its larger n)",
    help: "create-and-release cycles per primitive",
    aliases: &[],
};

/// Cycles per primitive: an amount. A quick pass makes 3 cycles of the
/// quick `n`; a block at a higher effort creates that many times the
/// objects, in cycles of this run's `n` (a size: 5× or 2.5× the quick
/// one in a precise run) — at least 3, for a median and a spread, and
/// at most 3 per quick pass.
fn default_repeats(ctx: &Ctx, kind: Kind, n: usize) -> usize {
    ctx.scaled(3 * default_n(kind, true))
        .div_ceil(n.max(1))
        .clamp(3, ctx.scaled(3).max(3))
}

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

/// Counters at one instant: kernel, VmRSS, when read.
#[derive(Clone, Copy)]
struct Reading {
    kernel: Kernel,
    rss: f64,
    at: std::time::Instant,
}

fn read_counters() -> Result<Reading, String> {
    adapter::refresh_counters();
    let kernel = adapter::kernel().ok_or("cannot read /proc/meminfo")?;
    let rss = adapter::own_rss().ok_or("cannot read VmRSS from /proc/self/status")?;
    Ok(Reading {
        kernel,
        rss: rss as f64,
        at: std::time::Instant::now(),
    })
}

fn total(k: &Kernel) -> f64 {
    k.s_reclaimable + k.s_unreclaim + k.kernel_stack + k.page_tables
}

fn minus(a: &Kernel, b: &Kernel) -> Kernel {
    Kernel {
        s_reclaimable: a.s_reclaimable - b.s_reclaimable,
        s_unreclaim: a.s_unreclaim - b.s_unreclaim,
        kernel_stack: a.kernel_stack - b.kernel_stack,
        page_tables: a.page_tables - b.page_tables,
    }
}

fn plus(a: &Kernel, b: &Kernel) -> Kernel {
    Kernel {
        s_reclaimable: a.s_reclaimable + b.s_reclaimable,
        s_unreclaim: a.s_unreclaim + b.s_unreclaim,
        kernel_stack: a.kernel_stack + b.kernel_stack,
        page_tables: a.page_tables + b.page_tables,
    }
}

/// Waits (up to [`SETTLE_MAX`]) until the kernel total moves by less than
/// [`SETTLED`] between two reads [`SETTLE`] apart: objects the previous
/// cycle freed after an RCU grace period, or another program's burst,
/// are then no longer changing the baseline.
fn settle() -> Result<(), String> {
    let deadline = std::time::Instant::now() + SETTLE_MAX;
    let mut last = total(&read_counters()?.kernel);
    loop {
        std::thread::sleep(SETTLE);
        let now = total(&read_counters()?.kernel);
        if (now - last).abs() < SETTLED || std::time::Instant::now() > deadline {
            return Ok(());
        }
        last = now;
    }
}

/// One cycle: each step's batch is created between two reads of the
/// counters, so what the step adds is `after − before`, and what the
/// machine did between steps (reading /proc, the census) is left out.
/// Over the fitted half, each step is preceded by an idle window as long
/// as the previous creation: the counters' change over it, per second,
/// is the background (other programs, a previous test's frees), and
/// times the creation time it estimates how much of `after − before` was
/// not ours.
///
/// What no counter shows: another program freeing objects into the slab
/// caches these objects use leaves room they fill without a new page.
fn cycle(kind: Kind, n: usize, page: usize) -> Result<Cycle, String> {
    settle()?;
    let census = || adapter::census(kind).ok_or("cannot count objects in /proc/self");
    let c0 = census()?;
    let mut last = read_counters()?;
    let mut own = Kernel::default();
    let mut own_rss = 0.0;
    // (objects, own kernel so far, own VmRSS so far) after each step.
    let mut points = vec![(0.0, own, own_rss)];
    let mut batches = Vec::with_capacity(STEPS);
    let (mut background, mut between_s, mut creating_s) = (0.0, 0.0, 0.0);
    let mut creating = std::time::Duration::ZERO;
    for s in 1..=STEPS {
        let m = n * s / STEPS - n * (s - 1) / STEPS;
        if s > STEPS / 2 {
            // An idle window as long as the last creation: the machine's
            // own change over it is the background's rate.
            std::thread::sleep(creating.max(std::time::Duration::from_millis(1)));
        }
        let before = read_counters()?;
        batches.push(Batch::create(kind, m, page)?);
        let after = read_counters()?;
        creating = after.at - before.at;
        own = plus(&own, &minus(&after.kernel, &before.kernel));
        own_rss += after.rss - before.rss;
        points.push(((n * s / STEPS) as f64, own, own_rss));
        if s > STEPS / 2 {
            background += total(&before.kernel) - total(&last.kernel);
            between_s += (before.at - last.at).as_secs_f64();
            creating_s += (after.at - before.at).as_secs_f64();
        }
        last = after;
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
    let pages: Vec<usize> = batches
        .iter()
        .flat_map(|b| b.pages().iter().copied())
        .collect();
    let alive = if kind == Kind::MmapAnon {
        adapter::still_mapped(&pages).ok_or("cannot read /proc/self/maps")?
    } else {
        c1.saturating_sub(c0)
    };
    // Newest first: a batch never depends on a later one.
    while let Some(b) = batches.pop() {
        drop(b);
    }
    let c2 = census()?;
    // Mappings are counted by identity (alive above, left here): a
    // one-page mapping another part of this process made meanwhile (a CI
    // run saw one appear in one cycle of every run) is not one of ours.
    let (left_behind, others_appeared) = if kind == Kind::MmapAnon {
        let ours = adapter::still_mapped(&pages).ok_or("cannot read /proc/self/maps")?;
        (ours as i64, c2 as i64 - c0 as i64 - ours as i64)
    } else {
        (c2 as i64 - c0 as i64, 0)
    };
    let half = &points[STEPS / 2..];
    let x: Vec<f64> = half.iter().map(|p| p.0).collect();
    let slope = |f: &dyn Fn(&(f64, Kernel, f64)) -> f64| -> (f64, Option<f64>) {
        let y: Vec<f64> = half.iter().map(f).collect();
        linear_fit(&x, &y).map_or((f64::NAN, None), |l| (l.slope, l.r_squared))
    };
    let (_, kernel_r2) = slope(&|p| total(&p.1));
    let fitted_objects = half[half.len() - 1].0 - half[0].0;
    let background_rate = if between_s > 0.0 {
        background / between_s
    } else {
        0.0
    };
    Ok(Cycle {
        s_reclaimable: slope(&|p| p.1.s_reclaimable).0,
        s_unreclaim: slope(&|p| p.1.s_unreclaim).0,
        kernel_stack: slope(&|p| p.1.kernel_stack).0,
        page_tables: slope(&|p| p.1.page_tables).0,
        rss: slope(&|p| p.2).0,
        children_private,
        kernel_average: total(&own) / n as f64,
        kernel_r2,
        curve: points.iter().map(|p| [p.0, total(&p.1)]).collect(),
        background_per_object: background_rate * creating_s / fitted_objects.max(1.0),
        alive,
        left_behind,
        others_appeared,
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
    let repeats = ctx.integer(REPEATS.key)?.map(|r| r as usize);
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
    let repeats = repeats.unwrap_or_else(|| default_repeats(ctx, kind, n));
    let started = std::time::Instant::now();
    let refreshed = adapter::refresh_counters();
    let first = cycle(kind, n, page)?;
    let (cycles, disturbed) = calm_cycles(repeats, || cycle(kind, n, page))?;
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
        if suffix == "kernel" {
            background_evidence(&mut r, &cycles, disturbed);
        }
        for w in &warnings {
            r.warn(w.clone());
        }
        ctx.push(r);
    }
    Ok(())
}

/// Runs cycles until `wanted` are calm (the background's share at most
/// [`DISTURBED`]) or [`ATTEMPTS`] × `wanted` were tried; then the calm
/// ones, topped up with the least disturbed (which fail the evidence).
/// Returns them in the order measured, and how many were left out.
fn calm_cycles(
    wanted: usize,
    mut run: impl FnMut() -> Result<Cycle, String>,
) -> Result<(Vec<Cycle>, usize), String> {
    let mut tried = Vec::new();
    while tried.len() < ATTEMPTS * wanted
        && tried
            .iter()
            .filter(|c: &&Cycle| c.disturbance() <= DISTURBED)
            .count()
            < wanted
    {
        tried.push(run()?);
    }
    let (calm, mut rough): (Vec<usize>, Vec<usize>) =
        (0..tried.len()).partition(|&i| tried[i].disturbance() <= DISTURBED);
    rough.sort_by(|&a, &b| tried[a].disturbance().total_cmp(&tried[b].disturbance()));
    let mut keep: Vec<usize> = calm.into_iter().chain(rough).take(wanted).collect();
    keep.sort_unstable();
    let left_out = tried.len() - keep.len();
    let mut slots: Vec<Option<Cycle>> = tried.into_iter().map(Some).collect();
    Ok((
        keep.iter().filter_map(|&i| slots[i].take()).collect(),
        left_out,
    ))
}

/// Gating evidence: the machine's own kernel allocations and frees, while
/// the steps ran, were small beside the objects' cost.
fn background_evidence(r: &mut BenchResult, cycles: &[Cycle], left_out: usize) {
    let worst = cycles.iter().map(Cycle::disturbance).fold(0.0, f64::max);
    r.extra.insert(
        "background_per_object".into(),
        component(cycles, |c| c.background_per_object),
    );
    r.extra
        .insert("disturbed_cycles_left_out".into(), left_out.into());
    r.add_evidence(
        "the machine's other kernel allocations were small beside the objects' (change between steps per second × creation time)",
        format!("≤ {:.0}% of the cost per object in every cycle kept", DISTURBED * 100.0),
        format!(
            "worst {:.1}%; {left_out} disturbed cycle{} measured again",
            worst * 100.0,
            if left_out == 1 { "" } else { "s" }
        ),
        worst <= DISTURBED,
    );
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
    if kind == Kind::MmapAnon {
        let others: Vec<i64> = cycles.iter().map(|c| c.others_appeared).collect();
        r.add_note_evidence(
            "one-page mappings others in this process made while a cycle ran (not counted as ours)",
            "any",
            format!("{others:?}"),
            true,
        );
    }
    refresh_evidence(r, refreshed);
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
/// Whether the kernel's per-CPU counter deltas were folded into its
/// totals before each read (`vm.stat_refresh` needs root; without it a
/// total may lag by the CPUs' unfolded deltas). A note, not a check.
pub fn refresh_evidence(r: &mut BenchResult, refreshed: bool) {
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
}

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
        Kind::MmapAnon => "our pages, by address, inside the anonymous mappings of /proc/self/maps",
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
        Kind::MmapAnon => "mapped region (one touched anonymous page, its own VMA)",
        // The stress's own kinds, which no space benchmark measures.
        Kind::MmapFile | Kind::File | Kind::Signal | Kind::Cpu => kind.name(),
    }
}

fn method(ctx: &Ctx, repeats: usize, elapsed_s: f64) -> yamba_results::results::Method {
    yamba_results::results::Method::direct(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A cycle costing 1000 B per object whose background share is `share`.
    fn cycle_with(share: f64) -> Cycle {
        Cycle {
            s_unreclaim: 1000.0,
            background_per_object: -1000.0 * share,
            ..Cycle::default()
        }
    }

    fn run_of(shares: &[f64]) -> impl FnMut() -> Result<Cycle, String> + '_ {
        let mut next = shares.iter();
        move || Ok(cycle_with(*next.next().expect("asked for too many cycles")))
    }

    fn shares(cycles: &[Cycle]) -> Vec<f64> {
        cycles.iter().map(Cycle::disturbance).collect()
    }

    #[test]
    fn calm_cycles_stop_at_the_wanted_count() {
        let (kept, left) = calm_cycles(3, run_of(&[0.01, 0.02, 0.03])).unwrap();
        assert_eq!(shares(&kept), [0.01, 0.02, 0.03]);
        assert_eq!(left, 0);
    }

    #[test]
    fn disturbed_cycles_are_measured_again_and_left_out() {
        let (kept, left) = calm_cycles(3, run_of(&[0.5, 0.01, 0.3, 0.02, 0.03])).unwrap();
        assert_eq!(shares(&kept), [0.01, 0.02, 0.03]);
        assert_eq!(left, 2);
    }

    #[test]
    fn a_lasting_disturbance_keeps_the_least_disturbed_and_fails_the_evidence() {
        let tried = [0.5, 0.2, 0.9, 0.05, 0.4, 0.3, 0.7, 0.6, 0.8];
        let (kept, left) = calm_cycles(3, run_of(&tried)).unwrap();
        assert_eq!(shares(&kept), [0.2, 0.05, 0.3]);
        assert_eq!(left, 6);
        let mut r = BenchResult::new(
            "space.test.kernel",
            "space.test",
            "space",
            yamba_core::Unit::Bytes,
            yamba_core::Mode::Hot,
            "test",
        );
        background_evidence(&mut r, &kept, left);
        let e = r.evidence.last().unwrap();
        assert!(!e.ok && e.gating, "{e:?}");
        assert!(e.observed.contains("worst 30.0%"), "{}", e.observed);
    }
}
