//! `yamba stress`: parse the options, call `yamba_stress::run`, print the
//! table and what was found, write the results file, exit 1 when an
//! invariant failed or an error test found something.

use anyhow::bail;
use std::path::PathBuf;
use std::time::Duration;
use yamba_core::Mode;
use yamba_results::output::Output;
use yamba_stress::{churn::kind::parse_list, Plant, Replay, StressConfig};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    Hot,
    Cold,
    Both,
}

#[derive(clap::Args)]
pub struct Args {
    /// Stop after this many seconds (default 10 when --ops is not given).
    #[arg(long, value_name = "SECONDS")]
    pub time: Option<f64>,
    /// Stop each worker after N operations, and the error tests after N calls.
    #[arg(long, value_name = "N")]
    pub ops: Option<u64>,
    /// Seed of every random choice (default: a fresh one, printed and recorded).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Run only the error tests of --seed, to reproduce what they found
    /// (calls 0..--calls, or the one --call).
    #[arg(long, requires = "seed")]
    pub replay: bool,
    /// With --replay: run calls 0..N (default 10000).
    #[arg(long, value_name = "N", requires = "replay", conflicts_with = "call")]
    pub calls: Option<u64>,
    /// With --replay: run call K alone.
    #[arg(long, value_name = "K", requires = "replay")]
    pub call: Option<u64>,
    /// Churn workers (default: one per usable CPU).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// CPUs for the workers, round robin: 0,1 or 0-3 (default: every usable CPU).
    #[arg(long, value_name = "LIST")]
    pub cpu: Option<String>,
    /// What the workers churn: all (default), none, or a list of process,
    /// thread, pipe, socketpair, eventfd, epoll, timerfd, mmap-anon,
    /// mmap-file, file, signal, cpu (a CPU-bound spinner).
    #[arg(long, value_name = "LIST")]
    pub stressors: Option<String>,
    /// No error tests.
    #[arg(long)]
    pub no_errors: bool,
    /// A benchmark to measure idle and under stress (repeatable): ipc.rtt.pipe, proc.fork.light, mem.pagefault.anon, …
    #[arg(long, value_name = "NAME")]
    pub measure: Vec<String>,
    /// CPU the measurement is pinned to (default: the last usable CPU).
    #[arg(long, value_name = "N")]
    pub measure_cpu: Option<usize>,
    /// Best case (hot), worst case (cold), or both, for the measurement.
    #[arg(long, value_enum, default_value = "hot")]
    pub mode: ModeArg,
    /// Short measurement budgets.
    #[arg(long)]
    pub quick: bool,
    /// Sampling budget per measured quantity, in seconds.
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Benchmark-specific setting for the measurement, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// A worker or an error-test call that makes no progress for this long is reported as hung,
    /// with what its process was doing (asleep and where, in uninterruptible sleep, stopped, or
    /// kept from a CPU by a busy machine). Raise it on a machine that may stall a process.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub hang_timeout: f64,
    /// Results file to write (default: a timestamped file under --results-dir).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Folder for the default results file.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Folder for the workers' scratch files (default: the working directory).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    #[command(flatten)]
    pub history: super::history::RecordArgs,
}

/// `0,2,4-6` → [0, 2, 4, 5, 6].
fn parse_cpus(s: &str) -> anyhow::Result<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || anyhow::anyhow!("--cpu {s}: expected a list such as 0,1 or 0-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() {
        bail!("--cpu {s}: no CPU given");
    }
    Ok(out)
}

fn config_from(a: &Args) -> anyhow::Result<StressConfig> {
    let mut c = StressConfig {
        seed: a.seed,
        ..StressConfig::default()
    };
    if let Some(t) = a.time {
        if !(t.is_finite() && t > 0.0 && t <= 7.0 * 86400.0) {
            bail!("--time {t}: must be a number of seconds in (0, 604800]");
        }
        c.time = Some(Duration::from_secs_f64(t));
    }
    if a.ops == Some(0) {
        bail!("--ops 0: must be at least 1");
    }
    c.ops = a.ops;
    if a.replay {
        c.replay = Some(match a.call {
            Some(k) => Replay::Call(k),
            None => Replay::Calls(a.calls.unwrap_or(10_000)),
        });
    }
    if let Some(w) = a.workers {
        if !(1..=255).contains(&w) {
            bail!("--workers {w}: must be between 1 and 255");
        }
        c.workers = w;
    }
    if let Some(cpu) = &a.cpu {
        c.cpus = parse_cpus(cpu)?;
    }
    if let Some(s) = &a.stressors {
        c.stressors = parse_list(s)?;
    }
    c.error_tests = !a.no_errors;
    c.measure = a.measure.clone();
    if let Some(cpu) = a.measure_cpu {
        let allowed = yamba_core::affinity::allowed_cpus();
        if !allowed.contains(&cpu) {
            bail!("--measure-cpu {cpu}: not a CPU this process may run on (allowed: {allowed:?})");
        }
        c.measure_cpu = Some(cpu);
    }
    c.modes = match a.mode {
        ModeArg::Hot => vec![Mode::Hot],
        ModeArg::Cold => vec![Mode::Cold],
        ModeArg::Both => vec![Mode::Hot, Mode::Cold],
    };
    c.quick = a.quick;
    if let Some(b) = a.budget {
        if !(b.is_finite() && b > 0.0 && b <= 3600.0) {
            bail!("--budget {b}: must be a number of seconds in (0, 3600]");
        }
        c.budget_s = Some(b);
    }
    c.settings = yamba_core::settings::parse_pairs(&a.settings)?;
    if !(a.hang_timeout.is_finite() && a.hang_timeout >= 0.1) {
        bail!("--hang-timeout {}: must be at least 0.1 s", a.hang_timeout);
    }
    c.hang_timeout = Duration::from_secs_f64(a.hang_timeout);
    if let Some(d) = &a.scratch {
        if !d.is_dir() {
            bail!("--scratch {}: not a directory", d.display());
        }
        c.scratch_parent = Some(d.clone());
    }
    // Test-only defects, to prove the checks catch them (see yamba_stress::Plant).
    if let Ok(p) = std::env::var("YAMBA_STRESS_PLANT") {
        c.plant = Plant::parse(&p).map_err(|e| anyhow::anyhow!("YAMBA_STRESS_PLANT: {e}"))?;
    }
    c.bench_exe = std::env::current_exe().ok();
    Ok(c)
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let config = config_from(&args)?;
    // Before the run, not after a minute of it.
    let output =
        Output::new(args.out.as_deref(), &args.results_dir, "yamba").map_err(anyhow::Error::msg)?;
    let recorder = args.history.start()?;
    yamba_core::interrupt::install();
    if let Some(s) = config.seed {
        eprintln!("yamba stress: seed {s}");
    }
    let outcome = yamba_stress::run(&config)?;
    if config.seed.is_none() {
        eprintln!(
            "yamba stress: seed {} (replay with --seed {})",
            outcome.seed, outcome.seed
        );
    }
    let file = outcome.results_file(std::env::args().collect());
    let saved = output.finish(&file);
    match args.format {
        Format::Table => {
            print!("{}", yamba_report::table::render(&file.results));
            print!("{}", outcome.text());
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(&file)?),
    }
    let ending = super::saved::conclude(
        &saved,
        recorder.as_ref(),
        &file,
        yamba_history::OriginKind::Stress,
        "stress".into(),
    );
    let code = outcome.exit_code();
    if code == 1 {
        eprintln!("yamba stress: an invariant failed or an error test found something (see above)");
    }
    Ok(if code == 0 {
        ending.exit_code(false)
    } else {
        code
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpus("0,2,4-6").unwrap(), vec![0, 2, 4, 5, 6]);
        assert!(parse_cpus("3-1").is_err());
        assert!(parse_cpus("x").is_err());
    }
}
