//! `yamba summary` fills lmbench's columns from what the suite really
//! writes. The table names result ids; a benchmark that lands under other
//! ids (the context-switch sweep's `.16k` curve, pipe bandwidth's
//! `.same_cpu`, mmap's `.32m`) would leave its column blank forever with a
//! reason that sounds like "not measured". So this runs, quickly, every
//! benchmark a column reads, and checks every column that has a yamba
//! source finds its result (and its point, for a curve) in the file.
//!
//! In a measurement binary (docs/testing.md), holding
//! yamba_testkit::alone(): some of those ids come from what a curve's
//! measurement finds (mem.latency.memory exists only when the latency curve
//! shows memory beyond the last-level cache), which a run beside other work
//! — CI's aarch64 build, in one run — can miss.

use std::collections::BTreeSet;
use std::process::Command;
use yamba_report::lmbench::{Source, COLUMNS};

/// The result ids a column's source may read.
fn ids(source: &Source) -> Vec<&'static str> {
    match *source {
        Source::Result { ids, .. } => ids.to_vec(),
        Source::Point { id, .. } => vec![id],
        Source::Mean(a, b) => a.iter().chain(b).copied().collect(),
        Source::None(_) => vec![],
    }
}

/// The benchmark that writes result `id`: the longest benchmark id that is
/// `id` or a dotted prefix of it.
fn benchmark_of(id: &str) -> Option<&'static str> {
    yamba_suite::all()
        .into_iter()
        .map(|b| b.id)
        .filter(|b| id == *b || id.starts_with(&format!("{b}.")))
        .max_by_key(|b| b.len())
}

#[test]
fn every_column_names_what_the_suite_produces() {
    let _alone = yamba_testkit::alone();
    let mut benchmarks = BTreeSet::new();
    for c in COLUMNS {
        for id in ids(&c.source) {
            if let Some(b) = benchmark_of(id) {
                benchmarks.insert(b);
            }
        }
    }
    assert!(benchmarks.len() > 20, "{benchmarks:?}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let o = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(["run", "--quick", "--out"])
        .arg(&file)
        .args(&benchmarks)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        file.exists(),
        "yamba run wrote no file: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let results = yamba_results::ResultsFile::read(&file).unwrap();
    let has = |id: &str| results.results.iter().find(|r| r.id == id);
    let mut missing = Vec::new();
    for c in COLUMNS {
        let head = c.head.join(" ");
        match c.source {
            Source::None(_) => {}
            Source::Point { id, x } => match has(id) {
                None => missing.push(format!("{head}: no {id}")),
                Some(r) => {
                    let on_curve = r
                        .series
                        .as_ref()
                        .is_some_and(|s| s.points.iter().any(|p| p[0] == x));
                    if !on_curve {
                        missing.push(format!("{head}: {id} has no point at {x}"));
                    }
                }
            },
            Source::Mean(a, b) => {
                for side in [a, b] {
                    if !side.iter().any(|id| has(id).is_some()) {
                        missing.push(format!("{head}: none of {side:?}"));
                    }
                }
            }
            Source::Result { ids, .. } => {
                if !ids.iter().any(|id| has(id).is_some()) {
                    missing.push(format!("{head}: none of {ids:?}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "columns whose result the suite does not write:\n{}",
        missing.join("\n")
    );
    // And the command itself: no column blank for want of a result id.
    let o = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .arg("summary")
        .arg(&file)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    let unexplained: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("blank") && l.contains("in the file"))
        .collect();
    assert!(unexplained.is_empty(), "{}", unexplained.join("\n"));
}
