//! Earlier runs of a run's configuration in a shared store: found however
//! many newer runs of other machines (or other kernels) the store holds,
//! and no more than asked for — the newest of them.

mod common;

use yamba_history::earlier::earlier_values;
use yamba_history::{History, Origin, OriginKind, Resolver, StoreSpec};
use yamba_results::ResultsFile;

fn file(host: &str, kernel: &str, hour: u32) -> ResultsFile {
    let mut f = common::fleet::base();
    f.machine.hostname = host.to_string();
    f.machine.kernel = kernel.to_string();
    f.started = format!("2026-11-{:02}T{:02}:00:00Z", 1 + hour / 24, hour % 24);
    // Fork's headline is 100 + the hour: each run's value names it.
    for r in f.results.iter_mut().filter(|r| r.id == "proc.fork.light") {
        let v = 100.0 + f64::from(hour);
        if let Some(c) = &mut r.certainty {
            c.estimate.estimate = v;
            c.estimate.ci = None;
        }
        if let Some(s) = &mut r.summary {
            s.median = v;
            s.median_ci = None;
        }
    }
    f
}

#[test]
fn earlier_runs_of_a_machine_are_found_behind_the_fleets_newer_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let mut h = History::open(&StoreSpec::Sqlite(path.clone())).unwrap();
    let origin = Origin {
        kind: OriginKind::Import,
        suite: None,
        source: None,
    };
    // Machine a: 6 runs (hours 0–5) on its kernel, 1 on another (hour 6);
    // then 60 newer runs of other machines.
    for hour in 0..6 {
        h.save(&file("a", "6.1.0", hour), &origin).unwrap();
    }
    h.save(&file("a", "6.12.0", 6), &origin).unwrap();
    for hour in 7..67 {
        h.save(&file(&format!("b-{hour}"), "6.1.0", hour), &origin)
            .unwrap();
    }
    drop(h);

    let this = file("a", "6.1.0", 80);
    let mut resolver = Resolver::new(Some(path.to_str().unwrap()));
    let all = earlier_values(&mut resolver, &this, 40);
    assert_eq!(all.runs, 6);
    let key = "proc.fork.light@hot";
    let sorted = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    assert_eq!(
        sorted(all.values[key].clone()),
        vec![100.0, 101.0, 102.0, 103.0, 104.0, 105.0]
    );
    // At most n, the newest: hours 3–5 of the six.
    let three = earlier_values(&mut resolver, &this, 3);
    assert_eq!(three.runs, 3);
    assert_eq!(sorted(three.values[key].clone()), vec![103.0, 104.0, 105.0]);
    // A run started before all of a's runs has none.
    assert_eq!(
        earlier_values(&mut resolver, &file("a", "6.1.0", 0), 40).runs,
        0
    );
}
