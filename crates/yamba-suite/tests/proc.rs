//! Ground truth for the `proc` area: children reaped == created, a child
//! that spins a known time lengthens fork + wait by that time, heavy forks
//! cost more than light ones, and a failed check withholds the number.

mod support;

use support::{assert_ok_with as assert_ok, run_logged as run};
use yamba_core::{Mode, Session, Status};
use yamba_suite::proc::{check::Tally, exec, fork, thread};

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
    assert!(sum.n >= 30, "{} observations", sum.n);
    for k in ["median_ns", "p99_ns", "max_ns"] {
        assert!(r.extra.contains_key(k), "missing {k}");
    }
    assert!(sum.p99 >= sum.median && sum.max >= sum.p99);
}

/// A child that busy-waits X before _exit makes fork + wait longer by X.
#[test]
fn child_spinning_x_lengthens_fork_wait_by_x() {
    let (s, _g) = session();
    let x_us = 4000.0;
    let mut spun = s.clone();
    spun.config
        .settings
        .insert("proc.child_spin_us".into(), x_us.to_string());
    let mut last = String::new();
    for _attempt in 0..3 {
        let plain = run(s, &fork::LIGHT, Mode::Hot)[0].median().unwrap();
        let r = &run(&spun, &fork::LIGHT, Mode::Hot)[0];
        assert_ok(r, &["every child really ran"]);
        let diff_us = (r.median().unwrap() - plain) / 1e3;
        last = format!("plain {plain:.0} ns, difference {diff_us:.1} µs for a {x_us} µs spin");
        eprintln!("{last}");
        if (diff_us / x_us - 1.0).abs() < 0.05 {
            return;
        }
    }
    panic!("fork + wait did not grow by the child's spin: {last}");
}

#[test]
fn heavy_fork_costs_more_than_light_and_keeps_its_heap_resident() {
    let (s, _g) = session();
    let light = run(s, &fork::LIGHT, Mode::Hot)[0].median().unwrap();
    let r = &run(s, &fork::HEAVY, Mode::Hot)[0];
    assert_ok(r, &["heap was resident", "every child created was reaped"]);
    assert_eq!(r.params["heap_mib"], 64);
    // 16 Ki PTEs to copy and to zap: clearly more than a small fork.
    assert!(
        r.median().unwrap() > 1.5 * light,
        "heavy {:?} vs light {light}",
        r.median()
    );
    assert!(r.extra["p99_ns"].as_f64().unwrap() >= r.median().unwrap());
}

/// 2× the heap ⇒ 2× the page-table work: what heavy fork adds to a light
/// one doubles from 32 to 64 MiB.
#[test]
fn heavy_fork_extra_cost_doubles_with_the_heap() {
    let (s, _g) = session();
    let heap = |mib: &str| {
        let mut h = s.clone();
        h.config
            .settings
            .insert("proc.heavy_mib".into(), mib.into());
        h
    };
    let (h32, h64) = (heap("32"), heap("64"));
    let mut last = String::new();
    for _attempt in 0..3 {
        let light = run(s, &fork::LIGHT, Mode::Hot)[0].median().unwrap();
        let a = run(&h32, &fork::HEAVY, Mode::Hot)[0].median().unwrap() - light;
        let b = run(&h64, &fork::HEAVY, Mode::Hot)[0].median().unwrap() - light;
        last = format!("extra over light: 32 MiB {a:.0} ns, 64 MiB {b:.0} ns");
        eprintln!("{last}");
        if (b / a - 2.0).abs() < 0.5 {
            return;
        }
    }
    panic!("heavy fork's extra cost did not double with the heap: {last}");
}

#[test]
fn phases_split_fork_and_add_up_to_at_most_the_whole() {
    let (s, _g) = session();
    let rs = run(s, &fork::PHASES, Mode::Hot);
    assert_eq!(rs.len(), 2);
    for r in &rs {
        assert_ok(
            r,
            &["timestamps fall between", "every child created was reaped"],
        );
    }
    let whole = rs[0].extra["whole_fork_wait_median_ns"].as_f64().unwrap();
    let parts = rs[0].median().unwrap() + rs[1].median().unwrap();
    assert!(
        parts <= whole * 1.05,
        "create + exit_reap {parts} > whole {whole}"
    );
    assert!(
        parts >= whole * 0.3,
        "phases {parts} cover too little of {whole}"
    );
}

#[test]
fn vfork_spawn_exec_and_threads_all_ran() {
    let (s, _g) = session();
    let vfork = &run(s, &exec::VFORK, Mode::Hot)[0];
    assert_ok(vfork, &["every child really ran"]);
    let spawn = &run(s, &exec::SPAWN, Mode::Hot)[0];
    assert_ok(spawn, &["every child really ran"]);
    assert_eq!(spawn.params["program"], "/bin/true");
    let fexec = &run(s, &exec::FORK_EXEC, Mode::Hot)[0];
    assert_ok(fexec, &["every child really ran"]);
    // Running a dynamically linked program costs more than creating a
    // process that only exits.
    assert!(fexec.median().unwrap() > vfork.median().unwrap());
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
