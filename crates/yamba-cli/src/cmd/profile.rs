//! `yamba run --profile BENCH`: where the time goes while a benchmark runs,
//! kernel and user, as a kprof-style table (see `yamba_core::profile`).
//!
//! The benchmark runs as usual (pinned, same harness, same session) in a
//! forked child sampled by a software cpu-clock event, so the table shows
//! the measurement loop itself as well as the operation it measures.

use anyhow::Context;
use std::time::Duration;
use yamba_core::profile::{hot_symbols, profile_child, render, Symbolizer};
use yamba_core::runner::run_one;
use yamba_core::{BenchResult, Benchmark, Mode, Session, Status};

/// One sample per this many ns of CPU time (20 kHz).
const PERIOD_NS: u64 = 50_000;
/// The benchmark is repeated until this much time has passed (seconds;
/// quick, precise), so that even a benchmark that stops early on precision
/// gives enough samples for the shares to mean something.
const MIN_SAMPLING_S: (f64, f64) = (0.5, 2.0);
/// Lines of the table.
const TOP: usize = 25;

/// Runs `bench` under a sampling profiler and prints the top symbols.
pub fn run_profile(session: &Session, bench: &'static Benchmark) -> anyhow::Result<i32> {
    let mode = session.config.modes.first().copied().unwrap_or(Mode::Hot);
    let parent = session
        .config
        .scratch_dir
        .clone()
        .unwrap_or_else(|| ".".into());
    let scratch = parent.join(format!(".yamba-profile-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let results_path = scratch.join("results.json");
    let times_path = scratch.join("times");
    let min_s = if session.config.quick {
        MIN_SAMPLING_S.0
    } else {
        MIN_SAMPLING_S.1
    };
    let timeout = Duration::from_secs(session.config.timeout_s.unwrap_or(bench.timeout_s));
    let sampled = profile_child(PERIOD_NS, timeout, || {
        // Already in a child of our own: no second fork.
        let mut here = session.clone();
        here.config.isolate = false;
        let t0 = std::time::Instant::now();
        let mut times = 0u32;
        let results = loop {
            let r = run_one(&here, bench, mode, &scratch);
            times += 1;
            if t0.elapsed().as_secs_f64() >= min_s || r.iter().any(|x| x.status != Status::Ok) {
                break r;
            }
        };
        let _ = std::fs::write(&times_path, times.to_string());
        match serde_json::to_vec(&results) {
            Ok(bytes) if std::fs::write(&results_path, &bytes).is_ok() => 0,
            _ => 1,
        }
    });
    let results: Vec<BenchResult> = std::fs::read(&results_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let times = std::fs::read_to_string(&times_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&scratch);
    let samples = sampled.map_err(|why| anyhow::anyhow!("cannot profile {}: {why}", bench.id))?;

    println!(
        "profile of {} ({}), run {} times to sample at least {min_s} s:",
        bench.id,
        mode.as_str(),
        times.trim()
    );
    for r in &results {
        let value = r
            .median()
            .map(|m| format!("median {m:.1} {}", r.unit.symbol()))
            .unwrap_or_default();
        let why = r
            .reason
            .as_deref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        println!("  {}: {:?}, {value}{why}", r.id, r.status);
    }
    if results.is_empty() {
        println!(
            "  (the benchmark sent no result; exit status {})",
            samples.status
        );
    }
    if samples.samples.is_empty() {
        println!("no samples: the benchmark used too little CPU time to be sampled");
        return Ok(0);
    }
    let mut sym = Symbolizer::new(samples.maps.clone());
    let hot = hot_symbols(&samples, &mut sym);
    print!("{}", render(&samples, &hot, TOP));
    if let Some(problem) = sym.kernel_problem() {
        println!("kernel addresses left unnamed: {problem}");
    }
    Ok(0)
}
