//! Ground truth for the `signal` area: the handler ran exactly once per
//! signal sent and per fault triggered, and a count mismatch withholds the
//! number. How the costs order and what a peer's delay adds are
//! measurement checks (measure_signal.rs).

mod support;

use support::{assert_ok_with as assert_ok, run_logged as run};
use yamba_core::{Mode, Session, Status};
use yamba_suite::signal::{check, deliver, fault, install, roundtrip};

/// One session; tests one at a time; SCHED_FIFO (the peer inherits it) so
/// a woken process does not wait behind other work on this shared machine.
fn session() -> (&'static Session, std::sync::MutexGuard<'static, ()>) {
    support::quick_session(true)
}

#[test]
fn sigaction_installs_a_working_handler() {
    let (s, _g) = session();
    for mode in [Mode::Hot, Mode::Cold] {
        let r = &run(s, &install::SIGACTION, mode)[0];
        assert_ok(r, &["installed (read back)", "ran the handler once"]);
    }
}

#[test]
fn self_signal_runs_the_handler_once_per_signal_hot_and_cold() {
    let (s, _g) = session();
    let hot = run(s, &deliver::SELF, Mode::Hot).remove(0);
    let cold = run(s, &deliver::SELF, Mode::Cold).remove(0);
    for r in [&hot, &cold] {
        assert_ok(r, &["the handler ran once per signal sent"]);
    }
}

#[test]
fn round_trip_runs_both_handlers_once_per_trip() {
    let (s, _g) = session();
    let rs = run(s, &roundtrip::ROUNDTRIP, Mode::Hot);
    assert_eq!(rs.len(), 2, "same_cpu and other_cpu on a 2-CPU machine");
    for r in &rs {
        assert_ok(
            r,
            &[
                "peer's handler ran once per round trip",
                "our handler ran once",
            ],
        );
        let one_way = r.extra["one_way_ns"].as_f64().unwrap();
        assert!((one_way * 2.0 - r.median().unwrap()).abs() < 1e-6);
    }
    assert!(rs.iter().any(|r| r.id.ends_with(".same_cpu")));
    assert!(rs.iter().any(|r| r.id.ends_with(".other_cpu")));
    let cold = run(s, &roundtrip::ROUNDTRIP, Mode::Cold);
    for r in &cold {
        assert_ok(r, &["peer's handler ran once per round trip"]);
    }
}

#[test]
fn every_protection_fault_is_handled_exactly_once() {
    let (s, _g) = session();
    for mode in [Mode::Hot, Mode::Cold] {
        let r = &run(s, &fault::FAULT, mode)[0];
        assert_ok(r, &["one handled fault per touch", "every store completed"]);
        assert!(r.extra["handler_mprotect_ns"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn a_count_mismatch_withholds_the_number() {
    let (s, _g) = session();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = s.context(&deliver::SELF, Mode::Hot, dir.path());
    let mut r = ctx.result(None);
    r.set_observations(vec![1.0, 2.0]);
    check::exact_count(&mut r, "handler ran once per signal", 5, 4);
    ctx.push(r);
    let mut ok = ctx.result(Some("ok"));
    ok.set_observations(vec![1.0]);
    check::exact_count(&mut ok, "handler ran once per signal", 5, 5);
    ctx.push(ok);
    let rs = ctx.into_results();
    assert_eq!(rs[0].status, Status::Withheld);
    assert!(rs[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("handler ran once per signal"));
    assert_eq!(rs[1].status, Status::Ok);
}
