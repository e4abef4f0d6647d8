//! The `space` area's deterministic check: a census mismatch withholds
//! the number. What objects cost in kernel and user memory is measured by
//! machine-wide counters: measurement checks (measure_space.rs).

mod support;

use yamba_core::{Mode, Session, Status};
use yamba_suite::space::{adapter::Kind, measure, primitives};

fn session() -> (&'static Session, std::sync::MutexGuard<'static, ()>) {
    support::quick_session(false)
}

#[test]
fn a_census_mismatch_withholds_the_number() {
    let (s, _g) = session();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = s.context(&primitives::PIPE, Mode::Hot, dir.path());
    let mut short = ctx.result(Some("kernel"));
    short.set_observations(vec![1000.0]);
    measure::census_evidence(&mut short, Kind::Pipe, 600, &[600, 598], &[0, 0]);
    ctx.push(short);
    let mut leak = ctx.result(Some("user"));
    leak.set_observations(vec![1000.0]);
    measure::census_evidence(&mut leak, Kind::Pipe, 600, &[600, 600], &[0, 2]);
    ctx.push(leak);
    let mut fine = ctx.result(Some("fine"));
    fine.set_observations(vec![1000.0]);
    measure::census_evidence(&mut fine, Kind::Pipe, 600, &[600, 600], &[0, 0]);
    ctx.push(fine);
    let rs = ctx.into_results();
    assert_eq!(rs[0].status, Status::Withheld);
    assert!(rs[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("all objects existed"));
    assert_eq!(rs[1].status, Status::Withheld);
    assert!(rs[1].reason.as_deref().unwrap().contains("destroyed"));
    assert_eq!(rs[2].status, Status::Ok);
}
