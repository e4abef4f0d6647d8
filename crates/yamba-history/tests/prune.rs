//! Retention (`History::prune`) on planted runs, in SQLite and in a private
//! PostgreSQL server: exactly the expected runs remain, a dry run removes
//! nothing and names exactly those that would go, no rule is refused, and
//! the bytes reported are the removed runs' stored bytes, recomputed here
//! from the files themselves.

mod common;

use common::pg::PgServer;
use std::collections::BTreeSet;
use yamba_history::codec;
use yamba_history::{History, Origin, OriginKind, Prune, StoreSpec};
use yamba_results::ResultsFile;

/// Planted runs: host `a` 5 runs (days 1–5), `b` 3 (days 2–4), `c` 1 (day 6),
/// each at 09:00 UTC of November 2026.
const PLANTED: [(&str, u32); 9] = [
    ("a", 1),
    ("a", 2),
    ("a", 3),
    ("a", 4),
    ("a", 5),
    ("b", 2),
    ("b", 3),
    ("b", 4),
    ("c", 6),
];

fn file(host: &str, day: u32) -> ResultsFile {
    let mut f = common::fleet::base();
    f.machine.hostname = host.to_string();
    f.started = format!("2026-11-{day:02}T09:00:00Z");
    f
}

/// The bytes a run is stored as: its header and each result, as JSON,
/// zstd-packed (as the store packs them; nothing read back from it).
fn stored_bytes(f: &ResultsFile) -> u64 {
    let mut header = f.clone();
    header.results.clear();
    let pack = |json: String| codec::pack(json.as_bytes()).unwrap().len() as u64;
    pack(serde_json::to_string(&header).unwrap())
        + f.results
            .iter()
            .map(|r| pack(serde_json::to_string(r).unwrap()))
            .sum::<u64>()
}

/// The runs left, as (host, day).
fn remaining(h: &mut History) -> BTreeSet<(String, u32)> {
    h.list(None)
        .unwrap()
        .iter()
        .map(|r| (r.hostname.clone(), r.started[8..10].parse().unwrap()))
        .collect()
}

fn set(v: &[(&str, u32)]) -> BTreeSet<(String, u32)> {
    v.iter().map(|(h, d)| (h.to_string(), *d)).collect()
}

/// A fresh store from `fresh()` holding the planted runs.
fn planted(fresh: &mut dyn FnMut() -> StoreSpec) -> History {
    let mut h = History::open(&fresh()).unwrap();
    let origin = Origin {
        kind: OriginKind::Import,
        suite: None,
        source: None,
    };
    for (host, day) in PLANTED {
        h.save(&file(host, day), &origin).unwrap();
    }
    h
}

fn check_prune(fresh: &mut dyn FnMut() -> StoreSpec) {
    let all = set(&PLANTED);

    // No rule: refused, nothing removed.
    let mut h = planted(fresh);
    let e = h.prune(&Prune::default(), false).unwrap_err().to_string();
    assert!(e.contains("--keep") && e.contains("--before"), "{e}");
    let e = h
        .prune(
            &Prune {
                keep: None,
                before: Some("last week".into()),
            },
            false,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("YYYY-MM-DD"), "{e}");
    assert_eq!(remaining(&mut h), all);

    // --keep 2 --dry-run: names a's three oldest and b's oldest; removes none.
    let keep2 = Prune {
        keep: Some(2),
        before: None,
    };
    let gone = [("a", 1), ("a", 2), ("a", 3), ("b", 2)];
    let dry = h.prune(&keep2, true).unwrap();
    assert!(dry.dry_run);
    let named: BTreeSet<(String, u32)> = dry
        .runs
        .iter()
        .map(|r| (r.hostname.clone(), r.started[8..10].parse().unwrap()))
        .collect();
    assert_eq!(named, set(&gone));
    let want_bytes: u64 = gone.iter().map(|(h, d)| stored_bytes(&file(h, *d))).sum();
    assert_eq!(dry.bytes, want_bytes);
    assert_eq!(dry.file_bytes, None);
    assert_eq!(remaining(&mut h), all);

    // --keep 2: exactly those go.
    let done = h.prune(&keep2, false).unwrap();
    assert_eq!(done.runs.len(), 4);
    assert_eq!(done.bytes, want_bytes);
    assert_eq!(
        remaining(&mut h),
        set(&[("a", 4), ("a", 5), ("b", 3), ("b", 4), ("c", 6)])
    );
    // What remains reads back whole, results and all.
    for r in h.list(None).unwrap() {
        assert_eq!(
            h.load(r.id).unwrap().results.len(),
            file("a", 1).results.len()
        );
    }
    // Again: nothing more to remove.
    assert!(h.prune(&keep2, false).unwrap().runs.is_empty());
    drop(h);

    // --before 2026-11-04: days 1–3 go, day 4 (09:00) stays.
    let mut h = planted(fresh);
    let before = Prune {
        keep: None,
        before: Some("2026-11-04".into()),
    };
    assert_eq!(h.prune(&before, false).unwrap().runs.len(), 5);
    assert_eq!(
        remaining(&mut h),
        set(&[("a", 4), ("a", 5), ("b", 4), ("c", 6)])
    );
    drop(h);

    // A time: before 09:00 of day 4 keeps day 4, after it removes it.
    let mut h = planted(fresh);
    let at = |t: &str| Prune {
        keep: None,
        before: Some(t.into()),
    };
    assert_eq!(
        h.prune(&at("2026-11-04T09:00:00Z"), true)
            .unwrap()
            .runs
            .len(),
        5
    );
    assert_eq!(
        h.prune(&at("2026-11-04T09:00:01Z"), true)
            .unwrap()
            .runs
            .len(),
        7
    );
    assert_eq!(remaining(&mut h), all);

    // Both rules: a run goes when either selects it.
    let both = Prune {
        keep: Some(1),
        before: Some("2026-11-06".into()),
    };
    h.prune(&both, false).unwrap();
    assert_eq!(remaining(&mut h), set(&[("c", 6)]));
}

#[test]
fn pruning_sqlite_leaves_exactly_the_expected_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    check_prune(&mut || {
        n += 1;
        StoreSpec::Sqlite(dir.path().join(format!("h{n}.sqlite")))
    });
}

#[test]
fn pruning_sqlite_gives_the_space_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let mut h = History::open(&StoreSpec::Sqlite(path.clone())).unwrap();
    // 40 runs of a real quick run, observations and all, on one machine.
    let base = common::files::real_run();
    let origin = Origin {
        kind: OriginKind::Import,
        suite: None,
        source: None,
    };
    for i in 0..40 {
        let mut f = base.clone();
        f.started = format!("2026-11-{:02}T{:02}:00:00Z", 1 + i / 24, i % 24);
        h.save(&f, &origin).unwrap();
    }
    let done = h
        .prune(
            &Prune {
                keep: Some(4),
                before: None,
            },
            false,
        )
        .unwrap();
    assert_eq!(done.runs.len(), 36);
    let (before, after) = done.file_bytes.expect("an SQLite file is vacuumed");
    let on_disk = std::fs::metadata(&path).unwrap().len();
    assert_eq!(after, on_disk);
    // 36 of 40 runs gone: the file keeps well under half of what it was
    // (a fixed part stays: the schema's pages).
    assert!(
        after * 2 < before && before - after >= done.bytes,
        "{before} → {after}, {} stored bytes removed",
        done.bytes
    );
}

#[test]
fn pruning_postgres_leaves_exactly_the_expected_runs() {
    let server = match PgServer::start() {
        Ok(s) => s,
        Err(why) => yamba_testkit::skip!("{why}"),
    };
    let mut c = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    let mut n = 0;
    check_prune(&mut || {
        n += 1;
        c.batch_execute(&format!("CREATE DATABASE prune{n}"))
            .unwrap();
        StoreSpec::Postgres(server.url_for(&format!("prune{n}")))
    });
}
