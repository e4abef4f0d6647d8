//! Cold mode, deterministically: each benchmark given a cold case by
//! issue 26 runs cold and gives a result of cold single operations, every
//! one of them after an eviction (the process's eviction count rises by at
//! least the observations' count), with its correctness checks passed.
//! That cold costs more than hot is a measurement check (measure_fs.rs).

mod support;

use support::serial;
use yamba_core::runner::run_one;
use yamba_core::{cold, Benchmark, Mode, RunConfig, Session, Status};
use yamba_suite::{cpu, fs, mem, net, proc};

/// The benchmarks that gained a cold mode, with the checks each cold
/// result must pass (besides "every … succeeded"-style ones they share).
fn gained() -> Vec<(&'static Benchmark, &'static [&'static str])> {
    vec![
        (&fs::meta::STAT, &["every stat succeeded"]),
        (&fs::meta::OPEN_CLOSE, &["every open succeeded"]),
        (
            &fs::meta::CREATE,
            &["every call succeeded", "the directory held exactly"],
        ),
        (
            &fs::meta::UNLINK,
            &["every call succeeded", "the directory held exactly"],
        ),
        (&fs::meta::FSYNC, &["every fsync followed a 4 KiB write"]),
        (&cpu::select::SELECT, &["every call reported all"]),
        (&cpu::select::POLL, &["every call reported all"]),
        (&proc::exec::SPAWN, &["every child really ran"]),
        (&mem::mmap::MMAP, &[]),
        (&net::rtt::TCP_RTT, &["every reply matched"]),
        (&net::rtt::UDP_RTT, &["every reply matched"]),
        (&net::connect::TCP_CONNECT, &["every connection was set up"]),
        (&net::connect_close::CONNECT_CLOSE, &[]),
        (&net::connect_close::UNIX_CONNECT_CLOSE, &[]),
    ]
}

/// Run in this process (not isolated), so that its evictions are counted
/// here; one benchmark at a time.
fn session() -> Session {
    Session::prepare(RunConfig {
        isolate: false,
        ..RunConfig::quick()
    })
}

#[test]
fn every_gained_cold_mode_evicts_before_each_single_operation() {
    let _serial = serial();
    let s = session();
    for (b, checks) in gained() {
        assert!(b.supports(Mode::Cold), "{} has no cold mode", b.id);
        let dir = tempfile::tempdir().unwrap();
        let before = cold::evictions();
        let rs = run_one(&s, b, Mode::Cold, dir.path());
        let evicted = cold::evictions() - before;
        let mut observed = 0;
        for r in &rs {
            assert_eq!(r.mode, Mode::Cold, "{}", r.id);
            assert!(
                matches!(r.status, Status::Ok | Status::Withheld),
                "{}: {:?} {:?}",
                r.id,
                r.status,
                r.reason
            );
            let failed: Vec<_> = r
                .evidence
                .iter()
                .filter(|e| !e.ok && e.gating && !e.check.contains("clock quanta"))
                .collect();
            assert!(failed.is_empty(), "{}: {failed:?}", r.id);
            for want in checks {
                assert!(
                    r.evidence.iter().any(|e| e.check.contains(want) && e.ok),
                    "{}: no passed check '{want}' in {:?}",
                    r.id,
                    r.evidence
                );
            }
            let m = r.method.as_ref().expect("a method");
            assert_eq!(m.iterations, 1, "{}: one operation per observation", r.id);
            assert!(!r.observations.is_empty(), "{}", r.id);
            observed += r.observations.len() as u64;
        }
        assert!(
            evicted >= observed,
            "{}: {evicted} evictions for {observed} cold observations",
            b.id
        );
        eprintln!("{}: {observed} observations, {evicted} evictions", b.id);
    }
}

/// A benchmark without a cold case is skipped in cold mode, with its
/// stated reason; it never runs.
#[test]
fn cold_run_of_a_hot_only_benchmark_says_why_not() {
    let _serial = serial();
    let s = session();
    let b = &mem::latency::LATENCY;
    let why = b.no_cold().expect("mem.latency has no cold mode");
    let dir = tempfile::tempdir().unwrap();
    let rs = run_one(&s, b, Mode::Cold, dir.path());
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].status, Status::Skipped);
    assert_eq!(
        rs[0].reason.as_deref(),
        Some(format!("has no cold mode: {why}").as_str())
    );
}
