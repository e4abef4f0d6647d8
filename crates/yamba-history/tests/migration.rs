//! A store written by the previous yamba (schema version 1) opens and is
//! upgraded in place: its version becomes the current one, its indexes
//! become exactly a new store's, its runs read back exactly, and a trend
//! is then read from the trend index alone. SQLite: a file that yamba at
//! schema 1 wrote (`files/history-v1.sqlite`: `yamba history import` of the
//! results crate's real run). PostgreSQL: a store taken back to version 1's
//! indexes by the statements version 1 created them with.

mod common;

use common::files::{real_run, text};
use common::pg::PgServer;
use std::collections::BTreeSet;
use std::path::PathBuf;
use yamba_history::schema::SCHEMA_VERSION;
use yamba_history::{History, StoreSpec};

/// Version 1's indexes (besides those of primary keys and UNIQUE).
const V1_INDEXES: [&str; 3] = ["results_by_id", "results_by_key", "runs_by_start"];

fn sqlite_indexes(path: &std::path::Path) -> BTreeSet<String> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut s = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        .unwrap();
    let names = s.query_map([], |r| r.get::<_, String>(0)).unwrap();
    names.map(Result::unwrap).collect()
}

fn sqlite_version(path: &std::path::Path) -> String {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row(
        "SELECT value FROM yamba_meta WHERE name = 'schema_version'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn a_version_1_sqlite_store_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/files/history-v1.sqlite"),
        &path,
    )
    .unwrap();
    assert_eq!(sqlite_version(&path), "1");
    assert_eq!(sqlite_indexes(&path), V1_INDEXES.map(String::from).into());

    let mut h = History::open(&StoreSpec::Sqlite(path.clone())).unwrap();
    assert!(!h.created);
    assert_eq!(h.count().unwrap(), 1);
    assert_eq!(text(&h.load(1).unwrap()), text(&real_run()));
    let t = h.trend("cpu.syscall.getppid@hot").unwrap();
    assert_eq!(t.points.len(), 1);
    drop(h);

    assert_eq!(sqlite_version(&path), SCHEMA_VERSION.to_string());
    let fresh = dir.path().join("new.sqlite");
    drop(History::open(&StoreSpec::Sqlite(fresh.clone())).unwrap());
    assert_eq!(sqlite_indexes(&path), sqlite_indexes(&fresh));

    // A trend's two queries read indexes alone, not the rows holding the
    // headers and bodies.
    let c = rusqlite::Connection::open(&path).unwrap();
    let plan = |sql: &str| -> String {
        c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
            .join("; ")
    };
    let results = plan(
        "SELECT run_id, position, unit, status, headline, ci_lo, ci_hi, observations \
         FROM results WHERE result_key = 'x'",
    );
    assert!(
        results.contains("COVERING INDEX results_trend"),
        "{results}"
    );
    let runs =
        plan("SELECT id, started, machine, kernel, tool_version FROM runs ORDER BY started, id");
    assert!(runs.contains("COVERING INDEX runs_timeline"), "{runs}");
    drop(c);

    // Opening again changes nothing.
    let mut h = History::open(&StoreSpec::Sqlite(path.clone())).unwrap();
    assert_eq!(h.count().unwrap(), 1);
    drop(h);
    assert_eq!(sqlite_version(&path), SCHEMA_VERSION.to_string());
}

fn pg_indexes(c: &mut postgres::Client) -> BTreeSet<String> {
    c.query(
        "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' \
         AND indexdef NOT LIKE 'CREATE UNIQUE %'",
        &[],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

#[test]
fn a_version_1_postgres_store_is_upgraded_in_place() {
    let server = match PgServer::start() {
        Ok(s) => s,
        Err(why) => yamba_testkit::skip!("{why}"),
    };
    let mut admin = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    admin.batch_execute("CREATE DATABASE old").unwrap();
    admin.batch_execute("CREATE DATABASE new").unwrap();
    let spec = StoreSpec::Postgres(server.url_for("old"));
    let mut h = History::open(&spec).unwrap();
    let origin = yamba_history::Origin {
        kind: yamba_history::OriginKind::Import,
        suite: None,
        source: None,
    };
    let id = h.save(&real_run(), &origin).unwrap().id();
    drop(h);

    // Back to version 1: its indexes, as version 1 created them.
    let mut c = postgres::Client::connect(&server.url_for("old"), postgres::NoTls).unwrap();
    let now = pg_indexes(&mut c);
    for name in &now {
        c.batch_execute(&format!("DROP INDEX {name}")).unwrap();
    }
    c.batch_execute(
        "CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started, id);
         CREATE INDEX IF NOT EXISTS results_by_key ON results (result_key);
         CREATE INDEX IF NOT EXISTS results_by_id ON results (result_id);
         UPDATE yamba_meta SET value = '1' WHERE name = 'schema_version'",
    )
    .unwrap();
    assert_eq!(pg_indexes(&mut c), V1_INDEXES.map(String::from).into());

    let mut h = History::open(&spec).unwrap();
    assert!(!h.created);
    assert_eq!(text(&h.load(id).unwrap()), text(&real_run()));
    assert_eq!(h.trend("cpu.syscall.getppid@hot").unwrap().points.len(), 1);
    let e = h.trend("cpu.syscall.getppid").unwrap_err().to_string();
    assert!(e.contains("names 2 results"), "{e}");
    drop(h);
    let version: String = c
        .query_one(
            "SELECT value FROM yamba_meta WHERE name = 'schema_version'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(version, SCHEMA_VERSION.to_string());
    drop(History::open(&StoreSpec::Postgres(server.url_for("new"))).unwrap());
    let mut fresh = postgres::Client::connect(&server.url_for("new"), postgres::NoTls).unwrap();
    let upgraded = pg_indexes(&mut c);
    assert_eq!(upgraded, pg_indexes(&mut fresh));
    assert!(upgraded.contains("results_trend") && upgraded.contains("runs_by_host"));
}
