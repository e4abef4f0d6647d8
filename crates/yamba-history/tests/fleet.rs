//! The fleet view flags exactly the planted machines: 50 simulated
//! machines in 3 hardware groups, 8 runs each (`common/fleet.rs`): one 15%
//! slower in fork, one whose new kernel moved its system calls 20% in its
//! newest run, one that moved 15% three runs before the newest and stayed,
//! one with a single noisy previous run (not flagged) — from SQLite, from a
//! private PostgreSQL server, and for each planted machine's own history.

mod common;

use common::fleet::{
    check, check_move, files, store, two_newest_moves, FORK_SLOW, KERNEL_MOVED, NEW_KERNEL, NOISY,
    NOISY_RESULT, RUNS, STEP, STEPPED, STEP_KERNEL,
};
use common::pg::PgServer;
use yamba_history::{FlagKind, History, StoreSpec};

#[test]
fn the_fleet_view_flags_exactly_the_planted_machines_from_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&StoreSpec::Sqlite(dir.path().join("fleet.sqlite"))).unwrap();
    let runs = store(&mut h, &files());
    assert_eq!(runs.len(), 50 * RUNS);
    let fleet = h.fleet().unwrap();
    check(&fleet, &runs);
    // Side by side: every group has the headline primitives the run has,
    // a value for each machine.
    for g in &fleet.groups {
        assert!(g.primitives.len() >= 10, "{}", fleet.text());
        assert!(g
            .primitives
            .iter()
            .all(|p| p.values.len() == g.machines.len()));
    }
    let json = serde_json::to_value(&fleet).unwrap();
    assert_eq!(json["flags"].as_array().unwrap().len(), 5);
    assert_eq!(json["history_runs"], RUNS);
    // The rule this one replaced, on the same store: it misses the machine
    // that moved three runs ago and flags the single noisy run.
    let old = two_newest_moves(&mut h, &fleet);
    let old: Vec<(&str, &str)> = old.iter().map(|(h, r)| (h.as_str(), r.as_str())).collect();
    assert_eq!(
        old,
        vec![
            (NOISY, NOISY_RESULT),
            (KERNEL_MOVED, "cpu.syscall.getppid@hot")
        ]
    );
}

#[test]
fn each_planted_machines_own_history_in_sqlite() {
    for (host, moved) in [
        (KERNEL_MOVED, Some((0.20, RUNS - 1, NEW_KERNEL))),
        (STEPPED, Some((0.15, STEP, STEP_KERNEL))),
        (NOISY, None),
        (FORK_SLOW, None),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&StoreSpec::Sqlite(dir.path().join("one.sqlite"))).unwrap();
        let one: Vec<_> = files().into_iter().filter(|(h, _)| h == host).collect();
        let runs = store(&mut h, &one);
        assert_eq!(runs.len(), RUNS);
        let fleet = h.fleet().unwrap();
        assert_eq!(fleet.groups.len(), 1);
        // One machine: no group to be outside of; moves judged by the floor.
        assert!(fleet.groups[0].primitives.iter().all(|p| p.bound.is_none()));
        let Some((change, step, kernel)) = moved else {
            assert!(fleet.flags.is_empty(), "{}", fleet.text());
            continue;
        };
        assert_eq!(fleet.flags.len(), 1, "{}", fleet.text());
        assert_eq!(fleet.flags[0].kind, FlagKind::Moved);
        assert_eq!(fleet.flags[0].bound, yamba_history::fleet::FLOOR);
        check_move(&fleet.flags[0], &runs, change, step, kernel);
    }
}

#[test]
fn the_fleet_view_flags_exactly_the_planted_machines_from_postgres() {
    let server = match PgServer::start() {
        Ok(s) => s,
        Err(why) => yamba_testkit::skip!("{why}"),
    };
    let mut c = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    c.batch_execute("CREATE DATABASE fleet").unwrap();
    let spec = StoreSpec::Postgres(server.url_for("fleet"));
    let mut h = History::open(&spec).unwrap();
    let runs = store(&mut h, &files());
    assert_eq!(runs.len(), 50 * RUNS);
    drop(h);
    // Read as `yamba history fleet --store postgres://…` reads it.
    let mut r = yamba_history::Resolver::new(Some(&server.url_for("fleet")));
    let fleet = r.history().unwrap().fleet().unwrap();
    assert!(
        fleet.store.starts_with("postgres:///fleet"),
        "{}",
        fleet.store
    );
    check(&fleet, &runs);
}
