//! The `space` area's deterministic check: a census mismatch withholds
//! the number. What objects cost in kernel and user memory is measured by
//! machine-wide counters: measurement checks (measure_space.rs).

mod support;

use yamba_core::{Mode, Session, Status};
use yamba_suite::space::{adapter::Kind, create_destroy, measure, primitives};

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

/// Every `space.create_destroy.*` benchmark, in batches of 32: ok, with
/// both census checks held (each batch created K objects' worth and
/// came back to its start), three results each.
#[test]
fn create_destroy_counts_every_object_and_its_return() {
    let (s, _g) = session();
    let mut s = s.clone();
    s.config
        .settings
        .insert(create_destroy::BATCH.key.into(), "32".into());
    for b in yamba_suite::space::BENCHMARKS
        .iter()
        .filter(|b| b.id.starts_with("space.create_destroy."))
    {
        let rs = support::run_logged(&s, b, Mode::Hot);
        let ids: Vec<&str> = rs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                b.id.to_string(),
                format!("{}.create", b.id),
                format!("{}.destroy", b.id)
            ],
            "{rs:?}"
        );
        for r in &rs {
            support::assert_ok_with(r, &["every create succeeded", "every object was destroyed"]);
            assert_eq!(r.params["batch"], 32, "{}", r.id);
        }
        // The pair is the halves' sum, observation by observation.
        for ((p, c), d) in rs[0]
            .observations
            .iter()
            .zip(&rs[1].observations)
            .zip(&rs[2].observations)
        {
            assert!((p - (c + d)).abs() < 1e-6, "{}: {p} ≠ {c} + {d}", b.id);
        }
    }
}

/// A batch short of objects after its creates, or not back at its start
/// after its destroys, withholds the number.
#[test]
fn a_create_destroy_census_mismatch_withholds_the_number() {
    let (s, _g) = session();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = s.context(&create_destroy::PIPE, Mode::Hot, dir.path());
    let timings = |short, not_back| create_destroy::Timings {
        create: vec![1000.0; 10],
        destroy: vec![1000.0; 10],
        short_creates: short,
        not_back,
        first_census: Some((10, 74, 10)),
        batches: 10,
    };
    for (suffix, t) in [
        ("short", timings(1, 0)),
        ("leak", timings(0, 1)),
        ("fine", timings(0, 0)),
    ] {
        let mut r = ctx.result(Some(suffix));
        r.set_observations(t.pair());
        create_destroy::add_evidence(&mut r, Kind::Pipe, 32, &t);
        ctx.push(r);
    }
    let rs = ctx.into_results();
    assert_eq!(rs[0].status, Status::Withheld);
    assert!(rs[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("every create succeeded"));
    assert_eq!(rs[1].status, Status::Withheld);
    assert!(rs[1]
        .reason
        .as_deref()
        .unwrap()
        .contains("every object was destroyed"));
    assert_eq!(rs[2].status, Status::Ok, "{:?}", rs[2].reason);
}
