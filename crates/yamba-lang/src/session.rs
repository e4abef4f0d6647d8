//! A run of Yamba benchmarks through yamba's runner, kept in a normal
//! results file (raw observations, method, evidence), as `yamba run` does.

use std::path::Path;
use yamba_core::results::ResultsFile;
use yamba_core::runner::{merge_repetitions, run_benchmarks, Quiet};
use yamba_core::{Benchmark, RunConfig, Session};

/// Runs `benches` (each in a forked child, crash- and hang-isolated, as
/// configured) and returns the results file, also written to `out`.
pub fn run(
    config: RunConfig,
    benches: &[&'static Benchmark],
    command: Vec<String>,
    out: Option<&Path>,
) -> Result<ResultsFile, String> {
    let session = Session::prepare(config);
    run_in(&session, benches, command, out)
}

/// As [`run`], in a session already prepared.
pub fn run_in(
    session: &Session,
    benches: &[&'static Benchmark],
    command: Vec<String>,
    out: Option<&Path>,
) -> Result<ResultsFile, String> {
    let mut file = ResultsFile::new(
        command,
        serde_json::to_value(&session.config).map_err(|e| e.to_string())?,
        session.machine.clone(),
        session.clock.info().clone(),
        session.base.clone(),
    );
    if session.config.quick {
        file.notes
            .push("quick pass: short budgets, numbers are rough".into());
    }
    let write = |f: &ResultsFile| -> Result<(), String> {
        match out {
            Some(p) => f
                .write_atomic(p)
                .map_err(|e| format!("cannot write {}: {e}", p.display())),
            None => Ok(()),
        }
    };
    write(&file)?;
    let results = run_benchmarks(session, benches, &mut Quiet);
    file.results = merge_repetitions(&results);
    file.finish(false);
    write(&file)?;
    Ok(file)
}
