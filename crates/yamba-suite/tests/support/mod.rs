//! Helpers the suite's test files share: one lock to run a file's tests one
//! at a time, running a benchmark in a quick session, finding a result by
//! id, asserting a result ok with named checks, and retrying a statistical
//! check. Each test file compiles this module on its own and uses only some
//! of it, hence `dead_code` is allowed.
#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard, OnceLock};
use yamba_core::runner::run_one;
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Session, Status};

/// The tests of a file measure: they run one at a time (holding this lock
/// throughout), or they time each other. A test that panicked while holding
/// it does not block the others.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// One quick session for the whole file (SCHED_FIFO when `realtime`; the
/// runner warns when it is refused), with the [`serial`] lock held.
/// Every call in one file must ask for the same `realtime`.
pub fn quick_session(realtime: bool) -> (&'static Session, MutexGuard<'static, ()>) {
    static S: OnceLock<(bool, Session)> = OnceLock::new();
    let guard = serial();
    let (rt, s) = S.get_or_init(|| {
        (
            realtime,
            Session::prepare(RunConfig {
                realtime,
                ..RunConfig::quick()
            }),
        )
    });
    assert_eq!(*rt, realtime, "one session configuration per test file");
    (s, guard)
}

/// Runs `b` in a fresh session made from `config`, in a temporary directory.
pub fn run_config(config: RunConfig, b: &'static Benchmark, mode: Mode) -> Vec<BenchResult> {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::prepare(config);
    run_one(&session, b, mode, dir.path())
}

/// Runs `b` in session `s`, in a temporary directory, and prints each
/// result's headline for a failing test's log.
pub fn run_logged(s: &Session, b: &'static Benchmark, mode: Mode) -> Vec<BenchResult> {
    let dir = tempfile::tempdir().unwrap();
    let rs = run_one(s, b, mode, dir.path());
    for r in &rs {
        eprintln!(
            "{} {:?}: {:?} median {:?} p99 {:?} n {:?} {:?} extra {:?}",
            r.id,
            r.mode,
            r.status,
            r.median(),
            r.summary.as_ref().map(|s| s.p99),
            r.summary.as_ref().map(|s| s.n),
            r.reason,
            r.extra
        );
    }
    rs
}

/// The result with this id; the panic lists what there is instead.
pub fn find<'a>(rs: &'a [BenchResult], id: &str) -> &'a BenchResult {
    rs.iter().find(|r| r.id == id).unwrap_or_else(|| {
        panic!(
            "no result {id} in {:?}",
            rs.iter()
                .map(|r| (&r.id, r.status, &r.reason))
                .collect::<Vec<_>>()
        )
    })
}

/// Ok, every check named is among its passing gating checks, and its
/// median is positive.
pub fn assert_ok_with(r: &BenchResult, checks: &[&str]) {
    assert_eq!(
        r.status,
        Status::Ok,
        "{}: {:?} {:?}",
        r.id,
        r.reason,
        r.evidence
    );
    for c in checks {
        assert!(
            r.evidence
                .iter()
                .any(|e| e.check.contains(c) && e.ok && e.gating),
            "{}: no passing check '{c}' in {:?}",
            r.id,
            r.evidence
        );
    }
    assert!(r.median().unwrap() > 0.0, "{}", r.id);
}

/// Up to three attempts of a statistical check; the last failure is reported.
pub fn attempts<T>(mut f: impl FnMut() -> Result<T, String>) -> T {
    let mut last = String::new();
    for i in 1..=3 {
        match f() {
            Ok(t) => return t,
            Err(e) => {
                eprintln!("attempt {i}: {e}");
                last = e;
            }
        }
    }
    panic!("failed 3 attempts: {last}");
}
