//! `yamba run --profile BENCH`: where the time goes while a benchmark runs,
//! kernel and user, as a kprof-style table (`yamba_core::profile` does the
//! work; this prints it).

use yamba_core::profile::{profile_benchmark, render};
use yamba_core::{Benchmark, Session};

/// Lines of the table.
const TOP: usize = 25;

/// Runs `bench` under a sampling profiler and prints the top symbols.
pub fn run_profile(session: &Session, bench: &'static Benchmark) -> anyhow::Result<i32> {
    let p = profile_benchmark(session, bench).map_err(anyhow::Error::msg)?;
    println!(
        "profile of {} ({}), run {} times to sample at least {} s:",
        bench.id,
        p.mode.as_str(),
        p.times,
        p.min_sampling_s
    );
    for r in &p.results {
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
    if p.results.is_empty() {
        println!(
            "  (the benchmark sent no result; exit status {})",
            p.samples.status
        );
    }
    if p.samples.samples.is_empty() {
        println!("no samples: the benchmark used too little CPU time to be sampled");
        return Ok(0);
    }
    print!("{}", render(&p.samples, &p.hot, TOP));
    if let Some(problem) = &p.kernel_problem {
        println!("kernel addresses left unnamed: {problem}");
    }
    Ok(0)
}
