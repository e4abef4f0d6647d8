//! A stress run as yamba results (one per churned kind, per invariant, per
//! error-tested primitive, per measurement: BenchResult entries with their
//! evidence), and the text printed after the table: what was found, and
//! the command that reproduces each finding.
//!
//! Memory is machine-wide: other processes allocate and free meanwhile (a
//! compiler starting on a shared machine takes hundreds of MiB). Both
//! memory invariants are therefore netted of what every live process holds
//! (its anonymous memory, page tables and kernel stacks, from
//! /proc/*/status), which is what others change; what no live process
//! holds — a leaked kernel object, a file left on tmpfs — stays. Tolerances:
//! - unreclaimable kernel memory (slab, kernel stacks, page tables) must
//!   come back within max(16 MiB, 4 × the spread of the baseline readings:
//!   seven, 100 ms apart, the highest and the lowest left out).
//!   16 MiB: the kernel keeps freed objects in per-CPU slab caches and
//!   partly used slabs after heavy churn, and this stress's objects weigh
//!   ~4–40 KiB each in kernel memory (the `space` area's numbers), so a leak
//!   of a few hundred processes or a few thousand pipes still shows.
//! - memory in use that no live process holds (MemTotal − MemAvailable −
//!   what live processes hold; MemTotal because a VM's balloon driver moves
//!   it by hundreds of MiB a minute on a shared host) must come back within
//!   max(64 MiB, 4 × its spread): 64 MiB is well above the page cache and
//!   kernel memory this run can leave behind legitimately, and below the
//!   memory its workers may use.

use crate::churn::{Churned, Kind, WorkerReport};
use crate::cost;
use crate::errors::{table::Case, Finding, FindingKind};
use crate::supervise::Supervision;
use crate::sys::ProcInfo;
use crate::Memory;
use std::collections::BTreeMap;
use std::time::Duration;
use yamba_core::{BenchResult, Mode, Series, Session, Status, Unit};
use yamba_results::units::format_sig;

pub const KERNEL_FLOOR_BYTES: f64 = 16.0 * 1048576.0;
pub const AVAILABLE_FLOOR_BYTES: f64 = 64.0 * 1048576.0;
const ADAPTER: &str = "linux-procfs";

pub fn kernel_tolerance(b: &Memory) -> f64 {
    KERNEL_FLOOR_BYTES.max(4.0 * b.kernel_spread)
}

pub fn unowned_tolerance(b: &Memory) -> f64 {
    AVAILABLE_FLOOR_BYTES.max(4.0 * b.unowned_spread)
}

pub fn kernel_within(b: &Memory, a: &Memory) -> bool {
    a.kernel - b.kernel <= kernel_tolerance(b)
}

pub fn unowned_within(b: &Memory, a: &Memory) -> bool {
    a.unowned - b.unowned <= unowned_tolerance(b)
}

/// What the results rest on.
pub struct Context<'a> {
    pub seed: u64,
    pub session: &'a Session,
    pub sup: &'a Supervision,
    pub before: Option<Memory>,
    pub after: Option<Memory>,
    /// Processes still in the run's groups after it ended.
    pub left: Vec<ProcInfo>,
    pub cases: Vec<&'static Case>,
    pub idle: Vec<Vec<BenchResult>>,
    pub stressed: Vec<Vec<BenchResult>>,
    pub reproduce: String,
    pub deadline: Option<Duration>,
}

/// The run in a few numbers, for the text after the table.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub elapsed_s: f64,
    pub workers: usize,
    pub ops: u64,
    pub error_calls: u64,
    /// (invariant, held, what was seen).
    pub invariants: Vec<(String, bool, String)>,
    /// Worker violations: (invariant, worker, op, detail).
    pub violations: Vec<(String, usize, u64, String)>,
    pub costs: Vec<String>,
    pub notes: Vec<String>,
}

/// Whether a stress result (not a measurement) failed.
pub fn any_failed(results: &[BenchResult]) -> bool {
    results.iter().any(|r| {
        r.area == "stress"
            && !r.id.starts_with("stress.cost")
            && matches!(r.status, Status::Failed | Status::Withheld)
    })
}

fn result(id: &str, unit: Unit, description: String) -> BenchResult {
    let mut r = BenchResult::new(
        format!("stress.{id}"),
        format!("stress.{}", id.split('.').next().unwrap_or(id)),
        "stress",
        unit,
        Mode::Hot,
        ADAPTER,
    );
    r.description = description;
    r
}

/// Fails `r` (status Failed, the failed checks as the reason) when any of
/// its gating checks failed.
fn settle_status(r: &mut BenchResult) {
    let failed: Vec<String> = r
        .evidence
        .iter()
        .filter(|e| e.gating && !e.ok)
        .map(|e| format!("{}: {}", e.check, e.observed))
        .collect();
    if !failed.is_empty() && r.status == Status::Ok {
        r.status = Status::Failed;
        r.reason = Some(failed.join("; "));
    }
}

fn mib(b: f64) -> String {
    format!("{:+.1} MiB", b / 1048576.0)
}

pub fn results(ctx: &Context) -> (Vec<BenchResult>, Summary) {
    let sup = ctx.sup;
    let mut out = Vec::new();
    let mut sum = Summary {
        elapsed_s: sup.elapsed.as_secs_f64(),
        workers: sup.reports.len(),
        ops: sup.reports.iter().map(|r| r.ops).sum(),
        error_calls: sup.error_calls,
        ..Summary::default()
    };
    for r in &sup.reports {
        for v in &r.violations {
            sum.violations
                .push((v.invariant.clone(), r.index, v.op, v.detail.clone()));
        }
    }
    if !sup.reports.is_empty() {
        churn_results(ctx, &mut out);
        worker_invariants(ctx, &mut out, &mut sum);
    }
    machine_invariants(ctx, &mut out, &mut sum);
    if !ctx.cases.is_empty() && (sup.error_calls > 0 || !sup.findings.is_empty()) {
        error_results(ctx, &mut out);
    }
    cost_results(ctx, &mut out, &mut sum);
    (out, sum)
}

fn churn_results(ctx: &Context, out: &mut Vec<BenchResult>) {
    let reports = &ctx.sup.reports;
    let mut kinds: Vec<Kind> = reports
        .iter()
        .flat_map(|r| r.kinds.keys().copied())
        .collect();
    kinds.sort();
    kinds.dedup();
    let total: Vec<f64> = reports
        .iter()
        .filter(|r| r.elapsed_s > 0.0)
        .map(|r| r.ops as f64 / r.elapsed_s)
        .collect();
    let mut all = result(
        "churn",
        Unit::PerSecond,
        "operations per second per worker (creations, uses, destructions of every kind)".into(),
    );
    all.set_observations(total);
    all.param("workers", reports.len())
        .param("operations", reports.iter().map(|r| r.ops).sum::<u64>())
        .param("seed", ctx.seed)
        .param("reproduce", &ctx.reproduce);
    all.extra.insert(
        "per_worker".into(),
        serde_json::json!(reports
            .iter()
            .map(|r| serde_json::json!({
                "worker": r.index, "cpu": r.cpu, "ops": r.ops, "elapsed_s": r.elapsed_s,
                "checks": r.checks, "peak_objects": r.peak_objects, "peak_fds": r.peak_fds,
                "limits_not_set": r.limits_failed,
                "cpu_s": r.cpu_s.0 + r.cpu_s.1,
                "children_cpu_s": r.children_cpu_s.0 + r.children_cpu_s.1,
                "cpu_share": if r.elapsed_s > 0.0 {
                    (r.cpu_s.0 + r.cpu_s.1 + r.children_cpu_s.0 + r.children_cpu_s.1) / r.elapsed_s
                } else { 0.0 },
                "max_rss_kib": r.max_rss_kib,
            }))
            .collect::<Vec<_>>()),
    );
    out.push(all);
    for k in kinds {
        let mut r = result(
            &format!("churn.{}", k.name()),
            Unit::PerSecond,
            format!(
                "{} operations per second per worker (create, use, destroy)",
                k.name()
            ),
        );
        let stats: Vec<(&WorkerReport, &crate::churn::KindStats)> = reports
            .iter()
            .filter_map(|w| w.kinds.get(&k).map(|s| (w, s)))
            .collect();
        r.set_observations(
            stats
                .iter()
                .filter(|(w, _)| w.elapsed_s > 0.0)
                .map(|(w, s)| (s.created + s.destroyed + s.used) as f64 / w.elapsed_s)
                .collect(),
        );
        let (c, d, u) = stats.iter().fold((0, 0, 0), |a, (_, s)| {
            (a.0 + s.created, a.1 + s.destroyed, a.2 + s.used)
        });
        let mut failed: BTreeMap<String, u64> = BTreeMap::new();
        for (_, s) in &stats {
            for (e, n) in &s.failed {
                *failed.entry(e.clone()).or_default() += n;
            }
        }
        r.param("created", c).param("destroyed", d).param("used", u);
        if k.pooled() {
            r.add_note_evidence(
                format!("every {} created was destroyed", k.name()),
                "created = destroyed",
                format!("created {c}, destroyed {d}"),
                c == d,
            );
        }
        r.add_note_evidence(
            "creations refused by the kernel (limits reached under load)",
            "none",
            if failed.is_empty() {
                "none".to_string()
            } else {
                failed
                    .iter()
                    .map(|(e, n)| format!("{e} ×{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            failed.is_empty(),
        );
        out.push(r);
    }
}

/// The invariants each worker checked, one result per invariant.
fn worker_invariants(ctx: &Context, out: &mut Vec<BenchResult>, sum: &mut Summary) {
    let reports = &ctx.sup.reports;
    let specs: [(&str, &str, &str); 8] = [
        (
            "fds",
            "the worker's fd table (/proc/self/fd) is its baseline plus the fds its objects hold, at every check and at the end",
            "no fd leaked, none closed behind its back",
        ),
        (
            "threads",
            "the worker's threads (/proc/self/status) are its pool's",
            "main thread + pooled threads",
        ),
        (
            "processes",
            "the worker's children (zombies included) are its pool's; none left at the end",
            "children = pooled processes",
        ),
        (
            "mappings",
            "/proc/self/maps at the end as at the start (heap and stack aside); every munmap'd range gone",
            "no mapping left",
        ),
        (
            "files",
            "the worker's scratch directory holds only its live files; empty at the end",
            "no file left",
        ),
        (
            "signals",
            "every queued signal sent (to itself, to its children) was handled",
            "sent = handled",
        ),
        (
            "data",
            "what went through each object came back intact (bytes, counts, pages, file contents, timer expirations)",
            "no corruption",
        ),
        (
            "workers",
            "every worker ended by itself, sending its report (no crash, no hang)",
            "no crash, no hang",
        ),
    ];
    for (name, check, expected) in specs {
        let mut r = result(
            &format!("invariant.{name}"),
            Unit::Count,
            format!("violations of: {check}"),
        );
        let matches = |inv: &str| match name {
            "workers" => inv == "crash" || inv == "hang" || inv == "setup",
            _ => inv == name,
        };
        let per_worker: Vec<Vec<&crate::churn::Violation>> = reports
            .iter()
            .map(|w| {
                w.violations
                    .iter()
                    .filter(|v| matches(&v.invariant))
                    .collect()
            })
            .collect();
        r.set_observations(per_worker.iter().map(|v| v.len() as f64).collect());
        for (w, v) in reports.iter().zip(&per_worker) {
            let observed = if v.is_empty() {
                match name {
                    "fds" => format!(
                        "held over {} checks (largest gap 0; {} fds at start, {} at end, peak {})",
                        w.checks, w.baseline_fds, w.end_fds, w.peak_fds
                    ),
                    "signals" => format!(
                        "sent itself {} / handled {}; sent children {} / handled {}",
                        w.signals.self_sent,
                        w.signals.self_handled,
                        w.signals.child_sent,
                        w.signals.child_handled
                    ),
                    _ => format!("held over {} checks", w.checks),
                }
            } else {
                v.iter()
                    .take(4)
                    .map(|x| format!("at operation #{}: {}", x.op, x.detail))
                    .collect::<Vec<_>>()
                    .join("; ")
                    + &if v.len() > 4 {
                        format!("; and {} more", v.len() - 4)
                    } else {
                        String::new()
                    }
            };
            r.add_evidence(
                format!("worker {}: {check}", w.index),
                expected,
                observed,
                v.is_empty(),
            );
        }
        if name == "processes" {
            let zombies = &ctx.sup.lingering_zombies;
            r.add_evidence(
                "no zombie lingered in the run's process groups (checked every 250 ms)",
                "none",
                if zombies.is_empty() {
                    "none".into()
                } else {
                    zombies.join("; ")
                },
                zombies.is_empty(),
            );
        }
        if name == "signals" {
            let (s, h): (u64, u64) = reports.iter().fold((0, 0), |a, w| {
                (
                    a.0 + w.signals.self_sent + w.signals.child_sent,
                    a.1 + w.signals.self_handled + w.signals.child_handled,
                )
            });
            r.param("sent", s).param("handled", h);
        }
        settle_status(&mut r);
        let held = r.status == Status::Ok;
        let seen = if held {
            match name {
                "signals" => format!("sent {} handled {}", r.params["sent"], r.params["handled"]),
                _ => "held".into(),
            }
        } else {
            r.reason.clone().unwrap_or_default()
        };
        sum.invariants.push((name.to_string(), held, seen));
        out.push(r);
    }
}

/// Kernel memory, free memory, and what is left of the run.
fn machine_invariants(ctx: &Context, out: &mut Vec<BenchResult>, sum: &mut Summary) {
    cleanup_invariant(ctx, out, sum);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let refreshed = std::fs::metadata("/proc/sys/vm/stat_refresh").is_ok() && root;
    for (name, unit_desc) in [
        (
            "kernel_memory",
            "unreclaimable kernel memory (slab, kernel stacks, page tables) above its baseline",
        ),
        (
            "free_memory",
            "memory in use that no live process holds (MemTotal − MemAvailable, netted) above its baseline",
        ),
    ] {
        let mut r = result(&format!("invariant.{name}"), Unit::Bytes, unit_desc.into());
        let (Some(b), Some(a)) = (ctx.before, ctx.after) else {
            r.status = Status::Skipped;
            r.reason = Some("cannot read /proc/meminfo".into());
            out.push(r);
            continue;
        };
        let kernel = name == "kernel_memory";
        memory_timeline(ctx, &mut r, kernel, &b, unit_desc);
        let change = MemoryChange::of(kernel, &b, &a);
        judge_memory(&mut r, kernel, &b, &a, &change, refreshed);
        settle_status(&mut r);
        sum.invariants.push((
            name.to_string(),
            r.status == Status::Ok,
            format!(
                "{} (tolerance {})",
                mib(change.after_minus_baseline),
                mib(change.tolerance).trim_start_matches('+')
            ),
        ));
        out.push(r);
    }
}

/// invariant.cleanup: no process left in the run's process groups.
fn cleanup_invariant(ctx: &Context, out: &mut Vec<BenchResult>, sum: &mut Summary) {
    let sup = ctx.sup;
    let mut left = result(
        "invariant.cleanup",
        Unit::Count,
        "processes left in the run's process groups after it ended".into(),
    );
    left.set_observations(vec![ctx.left.len() as f64]);
    left.add_evidence(
        "nothing the run started is left (every process group it made is empty)",
        "0 processes",
        if ctx.left.is_empty() {
            format!("0 processes in {} groups", sup.groups.len())
        } else {
            ctx.left
                .iter()
                .map(|p| format!("pid {} ({}) in group {}", p.pid, p.state, p.pgrp))
                .collect::<Vec<_>>()
                .join(", ")
        },
        ctx.left.is_empty(),
    );
    settle_status(&mut left);
    sum.invariants.push((
        "cleanup".into(),
        left.status == Status::Ok,
        format!("{} left", ctx.left.len()),
    ));
    out.push(left);
}

/// The observations and the plotted series of a memory invariant: its
/// deviation from the baseline `b` at each sample of the stress.
fn memory_timeline(ctx: &Context, r: &mut BenchResult, kernel: bool, b: &Memory, unit_desc: &str) {
    let timeline = &ctx.sup.timeline;
    let t0 = timeline.first().map_or(0.0, |s| s.t_s);
    let spt = b.stack_per_thread;
    let dev = |s: &crate::supervise::Sample| match s.memory {
        Some(m) if kernel => m.kernel_net(spt) - b.kernel,
        Some(m) => m.unowned(spt) - b.unowned,
        None => f64::NAN,
    };
    let obs: Vec<f64> = timeline.iter().map(dev).filter(|v| v.is_finite()).collect();
    r.set_observations(obs);
    r.series = Some(Series {
        x_label: "time".into(),
        x_unit: "s".into(),
        y_label: unit_desc.into(),
        y_unit: "B".into(),
        log_x: false,
        log_y: false,
        points: timeline
            .iter()
            .map(|s| [s.t_s - t0, dev(s)])
            .filter(|p| p[1].is_finite())
            .collect(),
    });
    r.param(
        "timeline",
        "a reading every 250 ms during the stress, without /proc/sys/vm/stat_refresh (it can wait seconds for a kernel worker then): off by up to the CPUs' unfolded counter deltas; the baseline and the after reading are refreshed",
    );
}

/// A memory invariant's reading after the run against its baseline.
struct MemoryChange {
    after_minus_baseline: f64,
    tolerance: f64,
    within: bool,
    baseline_spread: f64,
}

impl MemoryChange {
    fn of(kernel: bool, b: &Memory, a: &Memory) -> MemoryChange {
        if kernel {
            MemoryChange {
                after_minus_baseline: a.kernel - b.kernel,
                tolerance: kernel_tolerance(b),
                within: kernel_within(b, a),
                baseline_spread: b.kernel_spread,
            }
        } else {
            MemoryChange {
                after_minus_baseline: a.unowned - b.unowned,
                tolerance: unowned_tolerance(b),
                within: unowned_within(b, a),
                baseline_spread: b.unowned_spread,
            }
        }
    }
}

/// A memory invariant's numbers, netting and evidence: back within its
/// tolerance of the baseline `b` after the run (`a`).
fn judge_memory(
    r: &mut BenchResult,
    kernel: bool,
    b: &Memory,
    a: &Memory,
    change: &MemoryChange,
    refreshed: bool,
) {
    let (final_dev, tol, spread) = (
        change.after_minus_baseline,
        change.tolerance,
        change.baseline_spread,
    );
    r.extra.insert(
        "baseline_bytes".into(),
        (if kernel { b.kernel } else { b.unowned }).into(),
    );
    r.extra.insert(
        "after_bytes".into(),
        (if kernel { a.kernel } else { a.unowned }).into(),
    );
    r.extra
        .insert("after_minus_baseline_bytes".into(), final_dev.into());
    r.extra.insert("tolerance_bytes".into(), tol.into());
    r.extra
        .insert("baseline_spread_bytes".into(), spread.into());
    r.extra.insert(
        "raw".into(),
        serde_json::json!({"before": b.raw, "after": a.raw, "stack_per_thread": b.stack_per_thread}),
    );
    r.param(
        "netting",
        if kernel {
            "SUnreclaim + KernelStack + PageTables − Σ VmPTE − Σ threads × stack per thread, over every process"
        } else {
            "MemTotal − MemAvailable − Σ RssAnon − Σ VmPTE − Σ threads × stack per thread, over every process"
        },
    );
    let floor = if kernel {
        KERNEL_FLOOR_BYTES
    } else {
        AVAILABLE_FLOOR_BYTES
    };
    r.add_evidence(
        format!(
            "back to its baseline after every object was destroyed (tolerance: the larger of {:.0} MiB and 4 × the spread of the baseline's readings)",
            floor / 1048576.0
        ),
        format!("≤ {} above", mib(tol)),
        format!("{} ({} baseline spread)", mib(final_dev), mib(spread)),
        change.within,
    );
    if !kernel {
        r.add_note_evidence(
            "MemTotal change (a VM's balloon driver returning memory to the host or taking it back): netted out",
            "any",
            mib(a.raw.total - b.raw.total),
            true,
        );
    }
    if kernel {
        r.add_note_evidence(
            "reclaimable slab (dentries and inodes of deleted files: a cache, not a leak)",
            "any",
            mib(a.reclaimable - b.reclaimable),
            true,
        );
        yamba_suite::space::measure::refresh_evidence(r, refreshed);
    }
}

/// One result per error-tested primitive, one check per case.
fn error_results(ctx: &Context, out: &mut Vec<BenchResult>) {
    let sup = ctx.sup;
    let mut prims: Vec<&str> = ctx.cases.iter().map(|c| c.primitive).collect();
    prims.dedup();
    let mut seen = std::collections::BTreeSet::new();
    prims.retain(|p| seen.insert(*p));
    for prim in prims {
        let mut r = result(
            &format!("errors.{prim}"),
            Unit::Count,
            format!("error tests of {prim}: calls with invalid (and valid) arguments against the documented outcome"),
        );
        let mut calls_total = 0u64;
        for (i, case) in ctx
            .cases
            .iter()
            .enumerate()
            .filter(|(_, c)| c.primitive == prim)
        {
            let (calls, passed, skipped) = sup.case_counts.get(i).copied().unwrap_or_default();
            calls_total += calls;
            let found: Vec<&Finding> = sup
                .findings
                .iter()
                .filter(|f| f.case == case.name)
                .collect();
            let expected = if case.expect.is_empty() {
                "success".to_string()
            } else {
                case.expect
                    .iter()
                    .map(|&e| crate::sys::errno_name(e))
                    .collect::<Vec<_>>()
                    .join(" or ")
            };
            let observed = if !found.is_empty() {
                found
                    .iter()
                    .map(|f| {
                        format!(
                            "{}: {} → {} ×{} (call #{}; {})",
                            f.kind.name(),
                            f.syscall,
                            f.got,
                            f.occurrences,
                            f.call,
                            f.replay_one()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            } else if skipped > 0 && skipped == calls {
                format!("{calls} calls skipped: not available here")
            } else {
                format!("{passed} of {} calls as documented", calls - skipped)
            };
            r.add_evidence(
                format!("{}: {}", case.name, case.doc),
                expected,
                observed,
                found.is_empty(),
            );
        }
        r.set_observations(vec![calls_total as f64]);
        r.param("calls", calls_total).param("seed", ctx.seed);
        settle_status(&mut r);
        out.push(r);
    }
    let leaks: Vec<&Finding> = sup
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::Leak)
        .collect();
    let between: Vec<&Finding> = sup
        .findings
        .iter()
        .filter(|f| f.case == "between calls")
        .collect();
    let mut r = result(
        "errors.census",
        Unit::Count,
        "what the error-test calls left behind (fds, children, mappings, files), checked every 256 calls".into(),
    );
    r.set_observations(vec![leaks.len() as f64]);
    r.add_evidence(
        "nothing left behind by a call or its failure (the kernel frees what a failed call created)",
        "nothing",
        if leaks.is_empty() {
            "nothing".into()
        } else {
            leaks
                .iter()
                .map(|f| format!("after {}: {} ({})", f.syscall, f.got, f.replay_sequence()))
                .collect::<Vec<_>>()
                .join("; ")
        },
        leaks.is_empty(),
    );
    if !between.is_empty() {
        r.add_evidence(
            "the error-test process ran between calls without dying",
            "no crash",
            between
                .iter()
                .map(|f| f.got.clone())
                .collect::<Vec<_>>()
                .join("; "),
            false,
        );
    }
    settle_status(&mut r);
    out.push(r);
}

fn cost_results(ctx: &Context, out: &mut Vec<BenchResult>, sum: &mut Summary) {
    let sup = ctx.sup;
    let covered = match sup.measured {
        None => (
            false,
            "the measurement under stress did not run".to_string(),
        ),
        Some((from, to)) => {
            let first_end = sup.worker_end.iter().flatten().min().copied();
            let ok = sup.reports.is_empty() || first_end.is_none_or(|e| e >= to);
            (
                ok,
                format!(
                    "measured {:.1}–{:.1} s into the run; first worker ended at {}",
                    from.as_secs_f64(),
                    to.as_secs_f64(),
                    first_end.map_or("-".into(), |e| format!("{:.1} s", e.as_secs_f64()))
                ),
            )
        }
    };
    for (i, idle) in ctx.idle.iter().enumerate() {
        let stressed = ctx.stressed.get(i).cloned().unwrap_or_default();
        for a in idle {
            out.push(a.clone());
            let base = a.id.trim_end_matches(".idle");
            let Some(b) = stressed
                .iter()
                .find(|b| b.id.trim_end_matches(".stressed") == base && b.mode == a.mode)
            else {
                let why = if sup.measured.is_none() {
                    "the stress ended before the measurement under stress could start"
                } else {
                    "the measurement under stress gave no such result"
                };
                let c = cost::not_measured(a, why);
                sum.costs.push(format!(
                    "{base} ({}): {}",
                    a.mode.as_str(),
                    c.reason.as_deref().unwrap_or("")
                ));
                out.push(c);
                continue;
            };
            out.push(b.clone());
            let c = cost::compare(a, b, covered.clone());
            if let (Some(x), Some(y)) = (&a.summary, &b.summary) {
                let (div, sym) = a.unit.scale_for(x.median);
                let f = |v: f64| format!("{} {sym}", format_sig(v / div));
                let extra = &c.extra.get("best_vs_worst");
                // The interval belongs to the Hodges–Lehmann ratio (the
                // median of pairwise ratios), not to the ratio of medians:
                // say both, so a skewed distribution puts no point outside
                // its own interval.
                let ci = extra
                    .and_then(|e| {
                        Some((
                            e["hodges_lehmann_ratio"].as_f64()?,
                            e["ratio_ci95"].as_array()?.clone(),
                        ))
                    })
                    .map(|(hl, v)| {
                        format!(
                            " (ratio of medians; Hodges–Lehmann ×{}, 95% CI ×{}–×{})",
                            format_sig(hl),
                            format_sig(v[0].as_f64().unwrap_or(f64::NAN)),
                            format_sig(v[1].as_f64().unwrap_or(f64::NAN))
                        )
                    })
                    .unwrap_or_default();
                let p = extra
                    .and_then(|e| e["mann_whitney_p"].as_f64())
                    .map(|p| format!(", Mann-Whitney p {p:.2e}"))
                    .unwrap_or_default();
                sum.costs.push(format!(
                    "{base} ({}): idle median {} [min {}, p99 {}] → under stress {} [min {}, p99 {}]: ×{}{ci}{p}{}",
                    a.mode.as_str(),
                    f(x.median),
                    f(x.min),
                    f(x.p99),
                    f(y.median),
                    f(y.min),
                    f(y.p99),
                    format_sig(y.median / x.median),
                    if c.status == Status::Ok {
                        String::new()
                    } else {
                        format!(" — {:?}: {}", c.status, c.reason.as_deref().unwrap_or(""))
                    }
                ));
            }
            out.push(c);
        }
        for b in stressed.iter().filter(|b| {
            !idle
                .iter()
                .any(|a| a.id.trim_end_matches(".idle") == b.id.trim_end_matches(".stressed"))
        }) {
            out.push(b.clone());
        }
    }
}

/// The text after the table.
pub fn text(o: &crate::StressOutcome) -> String {
    let s = &o.summary;
    let mut t = String::new();
    t.push_str(&format!(
        "\nstress: seed {}, {:.1} s, {} worker(s), {} operations, {} error-test calls\n",
        o.seed, s.elapsed_s, s.workers, s.ops, s.error_calls
    ));
    let problems = s.violations.len() + o.findings.len();
    if problems == 0 {
        t.push_str("found nothing: every invariant held and every error-test call returned what its documentation says\n");
    } else {
        t.push_str(&format!("FOUND {problems} problem(s):\n"));
        for (inv, w, op, d) in &s.violations {
            t.push_str(&format!("  [{inv}] worker {w}, operation #{op}: {d}\n"));
            t.push_str(&format!(
                "      reproduce: {} --ops {}\n",
                o.reproduce,
                op + 1
            ));
        }
        for f in &o.findings {
            t.push_str(&format!(
                "  [{}] {} {}: {} → {} (expected {}), call #{} of seed {}, seen {} time(s)\n",
                f.kind.name(),
                f.primitive,
                f.case,
                f.syscall,
                f.got,
                f.expected,
                f.call,
                f.seed,
                f.occurrences
            ));
            if !f.raw.is_empty() {
                t.push_str(&format!("      raw: {}\n", f.raw));
            }
            if f.kind == FindingKind::Leak {
                t.push_str(&format!("      replay: {}\n", f.replay_sequence()));
            } else {
                t.push_str(&format!(
                    "      replay: {}   (the sequence: {})\n",
                    f.replay_one(),
                    f.replay_sequence()
                ));
            }
        }
    }
    if !s.invariants.is_empty() {
        t.push_str("invariants: ");
        t.push_str(
            &s.invariants
                .iter()
                .map(|(n, ok, seen)| {
                    if *ok {
                        format!("{n} ok ({seen})")
                    } else {
                        format!("{n} FAILED")
                    }
                })
                .collect::<Vec<_>>()
                .join(" · "),
        );
        t.push('\n');
    }
    if !s.costs.is_empty() {
        t.push_str("cost under stress:\n");
        for c in &s.costs {
            t.push_str(&format!("  {c}\n"));
        }
    }
    for n in &o.notes {
        t.push_str(&format!("note: {n}\n"));
    }
    t
}
