//! The fleet view flags exactly the planted machines: 50 simulated
//! machines in 3 hardware groups (`common/fleet.rs`), one 15% slower in
//! fork, one whose new kernel moved its system calls 20% — from SQLite,
//! from a private PostgreSQL server, and for one machine's own history.

mod common;

use common::fleet::{check, files, store, KERNEL_MOVED, NEWEST, NEW_KERNEL, OLD_KERNEL};
use common::pg::PgServer;
use yamba_history::{FlagKind, History, StoreSpec};

#[test]
fn the_fleet_view_flags_exactly_the_planted_machines_from_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&StoreSpec::Sqlite(dir.path().join("fleet.sqlite"))).unwrap();
    assert_eq!(store(&mut h, &files()), 100);
    let fleet = h.fleet().unwrap();
    check(&fleet);
    // Side by side: every group has the headline primitives the run has,
    // a value for each machine.
    for g in &fleet.groups {
        assert!(g.primitives.len() >= 10, "{}", fleet.text());
        assert!(g
            .primitives
            .iter()
            .all(|p| p.values.len() == g.machines.len()));
        assert!(g.machines.iter().all(|m| m.previous.is_some()));
    }
    let json = serde_json::to_value(&fleet).unwrap();
    assert_eq!(json["flags"].as_array().unwrap().len(), 3);
}

#[test]
fn one_machines_history_in_sqlite_shows_its_move_and_the_kernel_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = History::open(&StoreSpec::Sqlite(dir.path().join("one.sqlite"))).unwrap();
    let one: Vec<_> = files()
        .into_iter()
        .filter(|(host, _)| host == KERNEL_MOVED)
        .collect();
    assert_eq!(store(&mut h, &one), 2);
    let fleet = h.fleet().unwrap();
    assert_eq!(fleet.groups.len(), 1);
    assert!(fleet.groups[0].primitives.iter().all(|p| p.bound.is_none()));
    assert_eq!(fleet.flags.len(), 1, "{}", fleet.text());
    let f = &fleet.flags[0];
    assert_eq!(
        (f.kind, f.result.as_str(), f.since.as_str()),
        (FlagKind::Moved, "cpu.syscall.getppid@hot", NEWEST)
    );
    assert_eq!(
        f.changes,
        vec![format!("kernel: {OLD_KERNEL} → {NEW_KERNEL}")]
    );
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
    assert_eq!(store(&mut h, &files()), 100);
    drop(h);
    // Read as `yamba history fleet --store postgres://…` reads it.
    let mut r = yamba_history::Resolver::new(Some(&server.url_for("fleet")));
    let fleet = r.history().unwrap().fleet().unwrap();
    assert!(
        fleet.store.starts_with("postgres:///fleet"),
        "{}",
        fleet.store
    );
    check(&fleet);
}
