//! The embedded history: a results file stored and read back is the same
//! file, bit for bit; a trend over three stored runs has three points and
//! marks the kernel change; concurrent writers lose nothing; a file is not
//! stored twice; a run's header and headlines read back alone.

mod common;

use common::files::{observation_bits, real_run, text, variant};
use yamba_history::{History, Origin, OriginKind, Saved, StoreSpec};

fn origin() -> Origin {
    Origin {
        kind: OriginKind::Import,
        suite: None,
        source: None,
    }
}

fn open(dir: &std::path::Path) -> History {
    History::open(&StoreSpec::Sqlite(dir.join("deep/er/history.sqlite"))).unwrap()
}

#[test]
fn a_stored_file_reads_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = open(dir.path());
    assert!(h.created);
    let f = variant("2026-11-23T10:00:00Z", "6.1.0", 1.0);
    let id = h.save(&f, &origin()).unwrap().id();
    let back = h.load(id).unwrap();
    assert_eq!(observation_bits(&back), observation_bits(&f));
    assert!(
        back.results
            .iter()
            .map(|r| r.observations.len())
            .sum::<usize>()
            > 5000
    );
    assert_eq!(text(&back), text(&f));
    assert_eq!(back.results, f.results);
    // The real file, untouched, too; and opening again finds both.
    let real = real_run();
    let id2 = h.save(&real, &origin()).unwrap().id();
    drop(h);
    let mut h = open(dir.path());
    assert!(!h.created);
    assert_eq!(text(&h.load(id2).unwrap()), text(&real));
    assert_eq!(text(&h.load(id).unwrap()), text(&f));
    // The listing counts what the file holds.
    let runs = h.list(None).unwrap();
    assert_eq!(runs.len(), 2);
    let s = runs.iter().find(|r| r.id == id).unwrap();
    let count =
        |st: yamba_results::Status| f.results.iter().filter(|r| r.status == st).count() as i64;
    assert_eq!(s.results, f.results.len() as i64);
    assert_eq!(s.ok, count(yamba_results::Status::Ok));
    assert_eq!(s.withheld, count(yamba_results::Status::Withheld));
    assert!(s.withheld > 0 && s.ok > 0);
    assert_eq!(s.kernel, "6.1.0");
    assert_eq!(s.origin, "import");
    assert!(h.load(999).unwrap_err().to_string().contains("no run @999"));
}

#[test]
fn a_header_and_the_headlines_read_back_without_the_observations() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = open(dir.path());
    let f = variant("2026-11-23T10:00:00Z", "6.1.0", 1.0);
    let id = h.save(&f, &origin()).unwrap().id();
    let header = h.load_header(id).unwrap();
    assert!(header.results.is_empty());
    assert_eq!(header.started, f.started);
    assert_eq!(header.config, f.config);
    assert_eq!(header.machine.kernel, "6.1.0");
    // One headline per result that was ok, as the file's own.
    let heads = h.headlines(id).unwrap();
    let ok: Vec<&yamba_results::BenchResult> = f
        .results
        .iter()
        .filter(|r| r.status == yamba_results::Status::Ok && r.value().is_some())
        .collect();
    assert!(!ok.is_empty() && ok.len() < f.results.len());
    assert_eq!(heads.len(), ok.len());
    for r in ok {
        assert_eq!(heads[&r.key()], r.value().unwrap(), "{}", r.key());
    }
    assert!(h
        .load_header(999)
        .unwrap_err()
        .to_string()
        .contains("no run @999"));
}

#[test]
fn the_same_file_is_not_stored_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = open(dir.path());
    let f = variant("2026-11-23T10:00:00Z", "6.1.0", 1.0);
    let first = h.save(&f, &origin()).unwrap();
    assert!(matches!(first, Saved::New(_)));
    assert_eq!(h.save(&f, &origin()).unwrap(), Saved::Existing(first.id()));
    assert_eq!(h.count().unwrap(), 1);
}

#[test]
fn a_trend_over_three_runs_has_three_points_and_marks_the_kernel_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = open(dir.path());
    // Stored out of order: the trend follows when they started.
    let c = h
        .save(&variant("2026-11-23T12:00:00Z", "6.12.0", 1.5), &origin())
        .unwrap()
        .id();
    let a = h
        .save(&variant("2026-11-23T10:00:00Z", "6.1.0", 1.0), &origin())
        .unwrap()
        .id();
    let b = h
        .save(&variant("2026-11-23T11:00:00Z", "6.1.0", 1.1), &origin())
        .unwrap()
        .id();
    let t = h.trend("cpu.syscall.getppid@hot").unwrap();
    assert_eq!(t.key, "cpu.syscall.getppid@hot");
    let runs: Vec<i64> = t.points.iter().map(|p| p.run).collect();
    assert_eq!(runs, vec![a, b, c]);
    // Each point is the stored result's headline value.
    let base = real_run();
    let want = base
        .results
        .iter()
        .find(|r| r.key() == "cpu.syscall.getppid@hot")
        .unwrap();
    let v: Vec<f64> = t.points.iter().map(|p| p.value.unwrap()).collect();
    let loaded = h.load(b).unwrap();
    let rb = loaded.results.iter().find(|r| r.key() == t.key).unwrap();
    assert_eq!(v[1], rb.headline().unwrap().0);
    assert!((v[2] / v[0] - 1.5).abs() < 0.01, "{v:?}");
    assert!(want.median().is_some());
    assert!(t
        .points
        .iter()
        .all(|p| p.ci.is_some_and(|(lo, hi)| lo <= hi)));
    assert!(t.points[0].changes.is_empty() && t.points[1].changes.is_empty());
    assert_eq!(
        t.points[2].changes,
        vec!["kernel: 6.1.0 → 6.12.0".to_string()]
    );
    // The id alone is ambiguous: measured hot and cold.
    let e = h.trend("cpu.syscall.getppid").unwrap_err().to_string();
    assert!(
        e.contains("cpu.syscall.getppid@cold") && e.contains("@hot"),
        "{e}"
    );
    let e = h.trend("cpu.syscall.getpid").unwrap_err().to_string();
    assert!(
        e.contains("no stored run") && e.contains("cpu.syscall.getppid@hot"),
        "{e}"
    );
    // --last 2: the two newest by start, oldest first.
    assert_eq!(h.last(2).unwrap(), vec![b, c]);
    assert!(h
        .last(4)
        .unwrap_err()
        .to_string()
        .contains("holds 3 run(s)"));
}

/// Eight writers at once, each its own connection, five runs each: every
/// run is stored whole, with its own observations.
#[test]
fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let spec = StoreSpec::Sqlite(dir.path().join("h.sqlite"));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let spec = spec.clone();
            std::thread::spawn(move || {
                let mut h = History::open(&spec).unwrap();
                (0..5)
                    .map(|i| {
                        let f = variant(
                            &format!("2026-11-23T1{t}:0{i}:00Z"),
                            "6.1.0",
                            1.0 + (t * 5 + i) as f64 / 100.0,
                        );
                        let id = h.save(&f, &origin()).unwrap();
                        assert!(matches!(id, Saved::New(_)));
                        (id.id(), text(&f))
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let stored: Vec<(i64, String)> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let mut h = History::open(&spec).unwrap();
    assert_eq!(h.count().unwrap(), 40);
    for (id, want) in &stored {
        assert_eq!(&text(&h.load(*id).unwrap()), want, "run @{id}");
    }
    assert_eq!(h.trend("cpu.syscall.getppid@hot").unwrap().points.len(), 40);
}

#[test]
fn a_newer_schema_is_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    drop(History::open(&StoreSpec::Sqlite(path.clone())).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute(
        "UPDATE yamba_meta SET value = '99' WHERE name = 'schema_version'",
        [],
    )
    .unwrap();
    drop(c);
    let e = History::open(&StoreSpec::Sqlite(path))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("schema version 99 is newer"), "{e}");
}
