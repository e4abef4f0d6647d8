//! The same history in PostgreSQL, against a real server this test starts
//! on a private socket and stops after (see `common/pg.rs`): a stored file
//! reads back exactly, a trend over three runs has three points, the same
//! file is not stored twice, writers at once lose nothing — the checks the
//! SQLite store passes, on the shared schema and code.

mod common;

use common::files::{observation_bits, real_run, text, variant};
use common::pg::PgServer;
use yamba_history::{History, Origin, OriginKind, Saved, StoreSpec};

fn origin() -> Origin {
    Origin {
        kind: OriginKind::Import,
        suite: None,
        source: None,
    }
}

/// A fresh database on the server, so each check starts empty.
fn database(server: &PgServer, name: &str) -> StoreSpec {
    let mut c = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    StoreSpec::Postgres(server.url_for(name))
}

#[test]
fn postgres_history_round_trips_trends_and_takes_concurrent_writers() {
    let server = match PgServer::start() {
        Ok(s) => s,
        Err(why) => yamba_testkit::skip!("{why}"),
    };

    // Round trip, bit for bit.
    let spec = database(&server, "roundtrip");
    let mut h = History::open(&spec).unwrap();
    assert!(h.location().starts_with("postgres:///roundtrip"));
    let f = variant("2026-11-23T10:00:00Z", "6.1.0", 1.0);
    let id = h.save(&f, &origin()).unwrap().id();
    let real = real_run();
    let id_real = h.save(&real, &origin()).unwrap().id();
    drop(h);
    let mut h = History::open(&spec).unwrap();
    let back = h.load(id).unwrap();
    assert_eq!(observation_bits(&back), observation_bits(&f));
    assert_eq!(text(&back), text(&f));
    assert_eq!(back.results, f.results);
    assert_eq!(text(&h.load(id_real).unwrap()), text(&real));
    assert_eq!(h.save(&f, &origin()).unwrap(), Saved::Existing(id));
    assert_eq!(h.count().unwrap(), 2);
    let listed = h.list(None).unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|r| r.results > 0 && r.ok > 0));

    // A trend over three runs.
    let spec = database(&server, "trend");
    let mut h = History::open(&spec).unwrap();
    let ids: Vec<i64> = [
        ("2026-11-23T10:00:00Z", "6.1.0", 1.0),
        ("2026-11-23T11:00:00Z", "6.1.0", 1.2),
        ("2026-11-23T12:00:00Z", "6.12.0", 0.9),
    ]
    .iter()
    .map(|(t, k, s)| h.save(&variant(t, k, *s), &origin()).unwrap().id())
    .collect();
    let t = h.trend("cpu.syscall.getppid@hot").unwrap();
    assert_eq!(t.points.iter().map(|p| p.run).collect::<Vec<_>>(), ids);
    let v: Vec<f64> = t.points.iter().map(|p| p.value.unwrap()).collect();
    assert!(
        (v[1] / v[0] - 1.2).abs() < 0.01 && (v[2] / v[0] - 0.9).abs() < 0.01,
        "{v:?}"
    );
    assert_eq!(
        t.points[2].changes,
        vec!["kernel: 6.1.0 → 6.12.0".to_string()]
    );

    // Four writers at once on an empty database: creating the tables
    // races too.
    let spec = database(&server, "concurrent");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let spec = spec.clone();
            std::thread::spawn(move || {
                let mut h = History::open(&spec).unwrap();
                (0..3)
                    .map(|i| {
                        let f = variant(
                            &format!("2026-11-23T1{w}:0{i}:00Z"),
                            "6.1.0",
                            1.0 + (w * 3 + i) as f64 / 50.0,
                        );
                        (h.save(&f, &origin()).unwrap().id(), text(&f))
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let stored: Vec<(i64, String)> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let mut h = History::open(&spec).unwrap();
    assert_eq!(h.count().unwrap(), 12);
    for (id, want) in &stored {
        assert_eq!(&text(&h.load(*id).unwrap()), want, "run @{id}");
    }
}

#[test]
fn an_unreachable_server_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "postgres://yamba:s3cret@localhost/none?host={}&port=1",
        dir.path().display()
    );
    let e = History::open(&StoreSpec::Postgres(url))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with("cannot connect to postgres://yamba:***@"),
        "{e}"
    );
    assert!(!e.contains("s3cret") && !e.contains('\n'), "{e}");
}
