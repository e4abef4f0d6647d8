//! A run session as `yamba run` makes it: the results file exists before
//! anything is measured, holds each benchmark's results as soon as it
//! finished, carries the noise probe's note, and is complete at the end.

use std::path::PathBuf;
use yamba_core::run_session::{RunSession, Start};
use yamba_core::runner::Observer;
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Session, Status, Unit};
use yamba_results::output::Output;
use yamba_results::results::ResultsFile;

fn one_result(ctx: &mut yamba_core::Ctx) -> Result<(), String> {
    let mut r = ctx.result(None);
    r.set_observations(vec![1.0, 2.0, 3.0]);
    ctx.push(r);
    Ok(())
}

static FIRST: Benchmark = Benchmark {
    id: "t.first",
    area: "t",
    unit: Unit::Nanoseconds,
    description: "three fixed observations",
    run: one_result,
    ..Benchmark::TEMPLATE
};

static SECOND: Benchmark = Benchmark {
    id: "t.second",
    area: "t",
    unit: Unit::Nanoseconds,
    description: "three fixed observations",
    run: one_result,
    ..Benchmark::TEMPLATE
};

/// Reads the file from disk whenever a benchmark starts.
struct Peek {
    path: PathBuf,
    seen: Vec<Vec<String>>,
}

impl Observer for Peek {
    fn started(&mut self, _: usize, _: usize, _: &Benchmark, _: Mode) {
        let f = ResultsFile::read(&self.path).unwrap();
        assert!(!f.complete);
        self.seen
            .push(f.results.iter().map(|r| r.id.clone()).collect());
    }
    fn finished(&mut self, _: &[BenchResult]) {}
}

fn noisy(_: &Session) -> Option<String> {
    Some("test noise".into())
}

#[test]
fn the_file_is_saved_after_every_benchmark_and_closed_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let mut config = RunConfig::quick();
    config.scratch_dir = Some(dir.path().to_path_buf());
    let mut run = RunSession::start(Start {
        config,
        output: Output::new(Some(&out), dir.path(), "yamba").unwrap(),
        command: vec!["test".into()],
        bench_exe: None,
        shuffle_seed: Some(42),
        noise_probe: Some(noisy),
    })
    .unwrap();
    let at_start = ResultsFile::read(&out).unwrap();
    assert!(at_start.results.is_empty() && !at_start.complete);
    assert_eq!(at_start.notes, run.file.notes);
    assert!(run.file.notes.iter().any(|n| n == "test noise"));
    assert!(run.file.notes.iter().any(|n| n.contains("seed 42")));

    let mut peek = Peek {
        path: out.clone(),
        seen: Vec::new(),
    };
    let outcome = run.run(&[&FIRST, &SECOND], &mut peek);
    assert!(!outcome.interrupted);
    assert!(outcome.save_errors.is_empty());
    assert_eq!(peek.seen, vec![vec![], vec!["t.first".to_string()]]);
    let end = ResultsFile::read(&out).unwrap();
    assert!(end.complete && end.finished.is_some());
    let ids: Vec<&str> = end.results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["t.first", "t.second"]);
    assert!(end.results.iter().all(|r| r.status == Status::Ok));
    assert_eq!(run.bad_results(), 0);
    // Scratch directories are gone; only the results file is left.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn an_unwritable_results_file_is_an_error_naming_the_folder() {
    // The one writer checks before a run session starts.
    let err = Output::new(
        Some(std::path::Path::new("/nonexistent/dir/r.json")),
        std::path::Path::new("."),
        "yamba",
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("/nonexistent/dir does not exist"), "{err}");
}
