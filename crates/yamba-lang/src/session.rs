//! A run of Yamba benchmarks through yamba's runner, kept in a normal
//! results file (raw observations, method, evidence), as `yamba run` does.

use std::path::Path;
use yamba_core::results::{now_rfc3339, ResultsFile, Tool, SCHEMA_NAME, SCHEMA_VERSION};
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
    let mut file = ResultsFile {
        schema: SCHEMA_NAME.into(),
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "yamba".into(),
            version: yamba_core::VERSION.into(),
        },
        started: now_rfc3339(),
        finished: None,
        complete: false,
        interrupted: false,
        command,
        config: serde_json::to_value(&session.config).map_err(|e| e.to_string())?,
        machine: session.machine.clone(),
        clock: session.clock.info().clone(),
        base: session.base.clone(),
        results: Vec::new(),
        notes: Vec::new(),
    };
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
    file.finished = Some(now_rfc3339());
    file.complete = true;
    write(&file)?;
    Ok(file)
}
