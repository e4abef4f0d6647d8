//! A run of Yamba benchmarks through yamba's runner, kept in a normal
//! results file (raw observations, method, evidence), as `yamba run` does.

use crate::LangError;
use yamba_core::runner::{merge_repetitions, run_benchmarks, Quiet};
use yamba_core::{Benchmark, RunConfig, Session};
use yamba_results::output::{Output, Saved};
use yamba_results::results::ResultsFile;

/// Runs `benches` (each in a forked child, crash- and hang-isolated, as
/// configured) and returns the results file, also written to `out`.
pub fn run(
    config: RunConfig,
    benches: &[&'static Benchmark],
    command: Vec<String>,
    out: Option<&Output>,
) -> Result<ResultsFile, LangError> {
    run_saving(config, benches, command, out).map(|(file, _)| file)
}

/// As [`run`], also saying where the file went (None: no file was
/// asked for): what was measured is not lost when `out` cannot be written
/// at the end (a full disk, a folder removed meanwhile) — it goes to a
/// fallback place, and the file is returned either way.
pub fn run_saving(
    config: RunConfig,
    benches: &[&'static Benchmark],
    command: Vec<String>,
    out: Option<&Output>,
) -> Result<(ResultsFile, Option<Saved>), LangError> {
    let session = Session::prepare(config);
    run_in(&session, benches, command, out)
}

/// As [`run_saving`], in a session already prepared. Fails before
/// measuring when `out` cannot be written at the start.
pub fn run_in(
    session: &Session,
    benches: &[&'static Benchmark],
    command: Vec<String>,
    out: Option<&Output>,
) -> Result<(ResultsFile, Option<Saved>), LangError> {
    let mut file = ResultsFile::new(
        command,
        serde_json::to_value(&session.config).map_err(LangError::Config)?,
        session.machine.clone(),
        session.clock.info().clone(),
        session.base.clone(),
    );
    if session.config.quick {
        file.notes
            .push("quick pass: short budgets, numbers are rough".into());
    }
    if let Some(o) = out {
        o.save_here(&file)?;
    }
    let results = run_benchmarks(session, benches, &mut Quiet);
    file.results = merge_repetitions(&results);
    file.finish(false);
    let saved = out.map(|o| o.finish(&file));
    Ok((file, saved))
}
