//! P = fork + child `_exit` + parent `wait`: creating and destroying a
//! process, light (the benchmark process as it is) and heavy (with a large
//! touched heap whose page tables fork must copy). The 9front study found
//! the heavy fork's mean unremarkable but its tail long, so the tail (p99,
//! max) is reported beside the median, sampling for the whole budget.
//!
//! Cold mode is offered by vfork and thread creation, not by fork: the
//! eviction buffer would be part of what fork copies.
//!
//! `proc.fork.phases` splits the same operation at the child's first
//! instruction and its last: fork→child running, and exit→reaped.

use super::adapter::{self, SharedPage, TouchedHeap};
use super::check::{add_tail, forking_plan, tail_plan, Tally};
use crate::shared::CpuWait;
use std::sync::atomic::Ordering;
use yamba_core::cold::Evictor;
use yamba_core::harness::measure_single;
use yamba_core::settings::{Kind, Setting};
use yamba_core::{Benchmark, Cold, Ctx, Measured, Mode, Unit};

/// Exit status of every measured child: only a child that ran returns it.
const CHILD_STATUS: i32 = 7;

/// `--set proc.child_spin_us`: CPU time each child spends before exiting.
pub const CHILD_SPIN_US: Setting = Setting {
    key: "proc.child_spin_us",
    kind: Kind::Number { min: 0.0, max: 1e6 },
    default: "0",
    help: "µs each child spins before _exit (ground-truth tests)",
    aliases: &[],
};

/// `--set proc.heavy_mib`: the heavy fork's touched heap.
pub const HEAVY_MIB: Setting = Setting {
    key: "proc.heavy_mib",
    kind: Kind::Integer {
        min: 1,
        max: 1 << 20,
    },
    default: "256 (64 with --quick)",
    help: "MiB of touched heap the parent of proc.fork.heavy has",
    aliases: &[],
};

pub static LIGHT: Benchmark = Benchmark {
    id: "proc.fork.light",
    area: "proc",
    unit: Unit::Nanoseconds,
    description: "fork + _exit + wait of a small process (median and tail)",
    adapter: adapter::NAME,
    run: run_light,
    settings: &[CHILD_SPIN_US],
    cold: Cold::NotMeaningful(
        "the evictor's sweep buffer (2× the last-level cache, written) would be in the forked address space and make every light fork heavy",
    ),
    ..Benchmark::TEMPLATE
};

pub static HEAVY: Benchmark = Benchmark {
    id: "proc.fork.heavy",
    area: "proc",
    unit: Unit::Nanoseconds,
    description:
        "fork + _exit + wait of a process with a large touched heap (256 MiB; 64 MiB quick)",
    adapter: adapter::NAME,
    run: run_heavy,
    settings: &[HEAVY_MIB],
    cold: Cold::NotMeaningful(
        "the evictor's sweep buffer (2× the last-level cache, written) would be forked with the heap, changing the size being measured",
    ),
    ..Benchmark::TEMPLATE
};

pub static PHASES: Benchmark = Benchmark {
    id: "proc.fork.phases",
    area: "proc",
    unit: Unit::Nanoseconds,
    description:
        "fork split in two: fork→child running (.create), child exit→reaped by wait (.exit_reap)",
    adapter: adapter::NAME,
    run: run_phases,
    cold: Cold::NotMeaningful(
        "fork's halves: the evictor's sweep buffer (2× the last-level cache, written) would be copied by every fork, as in proc.fork.light",
    ),
    ..Benchmark::TEMPLATE
};

/// Times fork + `_exit(7)` + wait, one at a time over the whole budget.
/// The child busy-waits `spin_ns` first (0 normally; the ground-truth test
/// sets `proc.child_spin_us`).
fn measure_fork_wait(ctx: &mut Ctx, spin_ns: f64) -> (Measured, Tally) {
    let clock = ctx.clock();
    let mut evictor = (ctx.mode == Mode::Cold).then(|| Evictor::new(ctx.machine()));
    let mut tally = Tally::default();
    let m = measure_single(
        clock,
        ctx.base_ns(),
        &forking_plan(ctx),
        evictor.as_mut(),
        || {},
        || {
            tally.created += 1;
            let pid = adapter::fork(|| {
                if spin_ns > 0.0 {
                    clock.spin_ns(spin_ns);
                }
                CHILD_STATUS
            });
            match pid {
                Ok(pid) => tally.record(adapter::wait(pid), CHILD_STATUS),
                Err(e) => tally.fail(e),
            }
        },
    );
    (m, tally)
}

fn run_light(ctx: &mut Ctx) -> Result<(), String> {
    let spin_us = ctx.number(CHILD_SPIN_US.key)?.unwrap_or(0.0);
    let (rss, anon) = (adapter::vm_rss_bytes(), adapter::rss_anon_bytes());
    let wait = CpuWait::start();
    let (m, tally) = measure_fork_wait(ctx, spin_us * 1e3);
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    r.param("parent_vm_rss_bytes", rss);
    r.param("parent_rss_anon_bytes", anon);
    if spin_us > 0.0 {
        r.param("child_spin_us", spin_us);
    }
    tally.add_evidence(&mut r, CHILD_STATUS, "exit status only the child returns");
    add_tail(&mut r);
    ctx.push(r);
    Ok(())
}

fn run_heavy(ctx: &mut Ctx) -> Result<(), String> {
    let default_mib = if ctx.quick() { 64 } else { 256 };
    let mib = ctx.integer(HEAVY_MIB.key)?.unwrap_or(default_mib) as usize;
    let page = ctx.machine().page_size as usize;
    let rss_before = adapter::vm_rss_bytes().unwrap_or(0);
    let heap = TouchedHeap::new(mib << 20, page)?;
    let rss = adapter::vm_rss_bytes().unwrap_or(0);
    let anon = adapter::rss_anon_bytes();
    let wait = CpuWait::start();
    let (m, tally) = measure_fork_wait(ctx, 0.0);
    drop(heap);
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    r.param("heap_mib", mib);
    r.param("heap_pages", (mib << 20) / page);
    r.param(
        "huge_pages",
        "off (MADV_NOHUGEPAGE): one PTE per base page to copy",
    );
    r.param("parent_vm_rss_bytes", rss);
    r.param("parent_rss_anon_bytes", anon);
    let grew = rss.saturating_sub(rss_before);
    r.add_evidence(
        "the heap was resident while forking (every page touched)",
        format!("VmRSS grew by ≥ {} MiB", mib),
        format!("grew by {:.1} MiB", grew as f64 / (1u64 << 20) as f64),
        grew as f64 >= 0.98 * (mib << 20) as f64,
    );
    tally.add_evidence(&mut r, CHILD_STATUS, "exit status only the child returns");
    add_tail(&mut r);
    if let Some(s) = r.summary.clone() {
        r.add_note_evidence(
            "the heavy fork has a long tail (as in the 9front study)",
            "p99 > 1.5 × median",
            format!("p99/median = {:.2}", s.p99 / s.median),
            s.p99 > 1.5 * s.median,
        );
    }
    ctx.push(r);
    Ok(())
}

/// Timestamps per fork: parent before fork (t0), child's first (s0) and
/// last (s1) reads, parent after wait (t1). Children are pinned where the
/// parent is, so the counter is read on one CPU.
fn run_phases(ctx: &mut Ctx) -> Result<(), String> {
    let clock = ctx.clock();
    let shared = SharedPage::new()?;
    let plan = tail_plan(ctx);
    let started = std::time::Instant::now();
    let wait = CpuWait::start();
    let (mut create, mut reap, mut total) = (Vec::new(), Vec::new(), Vec::new());
    let mut tally = Tally::default();
    let mut disordered = 0u64;
    let mut k = 0;
    // One untimed warm-up, then sample for the budget.
    while k <= plan.min_observations || started.elapsed() < plan.budget {
        shared.slot(0).store(0, Ordering::SeqCst);
        shared.slot(1).store(0, Ordering::SeqCst);
        tally.created += 1;
        let t0 = clock.start();
        let pid = adapter::fork(|| {
            shared.slot(0).store(clock.stop(), Ordering::SeqCst);
            shared.slot(1).store(clock.start(), Ordering::SeqCst);
            CHILD_STATUS
        });
        let pid = match pid {
            Ok(p) => p,
            Err(e) => {
                tally.fail(e);
                break;
            }
        };
        let exit = adapter::wait(pid);
        let t1 = clock.stop();
        tally.record(exit, CHILD_STATUS);
        let (s0, s1) = (
            shared.slot(0).load(Ordering::SeqCst),
            shared.slot(1).load(Ordering::SeqCst),
        );
        if !(t0 <= s0 && s0 <= s1 && s1 <= t1) {
            disordered += 1;
        } else if k > 0 {
            create.push(clock.ticks_to_ns(s0 - t0) - ctx.base_ns());
            reap.push(clock.ticks_to_ns(t1 - s1) - ctx.base_ns());
            total.push(clock.ticks_to_ns(t1 - t0) - ctx.base_ns());
        }
        k += 1;
    }
    let total_median = yamba_stats::Summary::of(&total).map(|s| s.median);
    for (suffix, obs, what) in [
        (
            "create",
            create,
            "fork called → child's first instruction (includes the switch to it)",
        ),
        (
            "exit_reap",
            reap,
            "child calls _exit → parent returns from wait (teardown, SIGCHLD, wakeup)",
        ),
    ] {
        let mut r = ctx.result(Some(suffix));
        r.description = format!("fork phase: {what}");
        r.set_observations(obs);
        r.method = Some(direct_method(
            &plan,
            ctx.base_ns(),
            started.elapsed().as_secs_f64(),
        ));
        r.param(
            "child_stamps",
            "shared page written by the child at its first and last instruction",
        );
        if let Some(t) = total_median {
            r.extra.insert("whole_fork_wait_median_ns".into(), t.into());
        }
        tally.add_evidence(
            &mut r,
            CHILD_STATUS,
            "it stamped the shared page and exited with 7",
        );
        wait.record(&mut r);
        r.add_evidence(
            "the child's timestamps fall between the parent's (one consistent counter)",
            "t0 ≤ child first ≤ child last ≤ t1 for every fork",
            format!("{disordered} out of order"),
            disordered == 0,
        );
        add_tail(&mut r);
        ctx.push(r);
    }
    Ok(())
}

/// How a benchmark that times its own intervals took its observations.
pub(crate) fn direct_method(
    plan: &yamba_core::harness::Plan,
    base_ns: f64,
    elapsed_s: f64,
) -> yamba_results::results::Method {
    yamba_results::results::Method {
        base_subtracted_ns: Some(base_ns),
        ..yamba_results::results::Method::direct(
            1,
            plan.target_precision,
            plan.budget.as_secs_f64(),
            elapsed_s,
            "budget spent",
        )
    }
}
