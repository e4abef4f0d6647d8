//! The `proc` area's deterministic checks: children reaped == created,
//! every child and thread ran, a heavy fork keeps its heap resident, and a
//! failed check withholds the number. Its times against ground truth are
//! measurement checks (measure_proc.rs).

mod support;

use support::{assert_ok_with as assert_ok, run_logged as run};
use yamba_core::BenchResult;
use yamba_core::{Mode, Session, Status};
use yamba_suite::proc::{check, check::Tally, exec, fork, thread};

/// One session for the file; tests run one at a time so that forking
/// benchmarks do not time each other. SCHED_FIFO (children inherit it; the
/// runner warns when it is refused): on this shared 2-CPU machine a woken child otherwise waits
/// behind other engineers' compilers, which the spin ground truth would
/// measure instead of the spin.
fn session() -> (&'static Session, std::sync::MutexGuard<'static, ()>) {
    support::quick_session(true)
}

#[test]
fn light_fork_reaps_every_child_and_reports_its_tail() {
    let (s, _g) = session();
    let r = &run(s, &fork::LIGHT, Mode::Hot)[0];
    assert_ok(
        r,
        &["every child created was reaped", "every child really ran"],
    );
    let sum = r.summary.as_ref().unwrap();
    // What the quick plan guarantees, whatever its time budget gives on top.
    let least = yamba_core::Plan::quick().min_observations;
    assert!(
        sum.n >= least,
        "{} observations, at least {least} planned",
        sum.n
    );
    for k in ["median_ns", "p99_ns", "max_ns"] {
        assert!(r.extra.contains_key(k), "missing {k}");
    }
    assert!(sum.p99 >= sum.median && sum.max >= sum.p99);
    let anon = r.params["parent_rss_anon_bytes"].as_u64().unwrap();
    let rss = r.params["parent_vm_rss_bytes"].as_u64().unwrap();
    assert!(anon > 0 && anon <= rss, "RssAnon {anon} of VmRSS {rss}");
    assert_not_placed(r);
}

/// A benchmark that forks keeps its code where the build put it, saying
/// why: code placement's window would be part of every address space fork
/// copies (check::FORK_COPIES_PLACEMENT).
fn assert_not_placed(r: &BenchResult) {
    let p = r.method.as_ref().unwrap().placement.as_ref().unwrap();
    assert!(!p.placed, "{} placed its code: {p:?}", r.id);
    assert_eq!(
        p.why_not.as_deref(),
        Some(check::FORK_COPIES_PLACEMENT),
        "{}",
        r.id
    );
    assert!(
        r.evidence
            .iter()
            .any(|e| e.check.contains("placements drawn at random") && e.ok),
        "{}: a placement chosen by design is not a failed one: {:?}",
        r.id,
        r.evidence
    );
}

#[test]
fn heavy_fork_keeps_its_heap_resident() {
    let (s, _g) = session();
    let r = &run(s, &fork::HEAVY, Mode::Hot)[0];
    assert_ok(r, &["heap was resident", "every child created was reaped"]);
    assert_eq!(r.params["heap_mib"], 64);
    // The heap is anonymous memory, resident: what fork copies the page
    // table entries of.
    let anon = r.params["parent_rss_anon_bytes"].as_u64().unwrap();
    assert!(anon >= 64 << 20, "RssAnon {anon} bytes with a 64 MiB heap");
    assert_not_placed(r);
    assert!(r.extra["p99_ns"].as_f64().unwrap() >= r.median().unwrap());
}

#[test]
fn vfork_spawn_exec_and_threads_all_ran() {
    let (s, _g) = session();
    let vfork = &run(s, &exec::VFORK, Mode::Hot)[0];
    assert_ok(vfork, &["every child really ran"]);
    let spawn = &run(s, &exec::SPAWN, Mode::Hot)[0];
    assert_ok(spawn, &["every child really ran"]);
    assert_eq!(spawn.params["program"], "/bin/true");
    // posix_spawn copies no address space: its code is placed where
    // placement works here.
    let placement = spawn.method.as_ref().unwrap().placement.as_ref().unwrap();
    if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        assert!(placement.placed, "{placement:?}");
    }
    let fexec = &run(s, &exec::FORK_EXEC, Mode::Hot)[0];
    assert_ok(fexec, &["every child really ran"]);
    assert_not_placed(fexec);
    let vfork_cold = &run(s, &exec::VFORK, Mode::Cold)[0];
    assert_ok(vfork_cold, &["every child really ran"]);
    for mode in [Mode::Hot, Mode::Cold] {
        let t = &run(s, &thread::THREAD, mode)[0];
        assert_ok(t, &["every thread created ran and was joined"]);
    }
}

#[test]
fn a_failed_child_check_withholds_the_number() {
    let (s, _g) = session();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = s.context(&fork::LIGHT, Mode::Hot, dir.path());
    let mut r = ctx.result(None);
    r.set_observations(vec![1.0, 2.0, 3.0]);
    let mut t = Tally {
        created: 3,
        ..Tally::default()
    };
    t.record(Ok(yamba_suite::proc::adapter::Exit::Code(7)), 7);
    t.record(Ok(yamba_suite::proc::adapter::Exit::Signal(9)), 7);
    t.add_evidence(&mut r, 7, "test");
    ctx.push(r);
    let r = &ctx.into_results()[0];
    assert_eq!(r.status, Status::Withheld);
    let why = r.reason.as_deref().unwrap();
    assert!(
        why.contains("reaped") && why.contains("really ran"),
        "{why}"
    );
}
