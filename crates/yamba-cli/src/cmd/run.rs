//! `yamba run`: measure, print a table, keep everything in a results file.

use anyhow::bail;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use yamba_core::run_session::{self, Start};
use yamba_core::runner::Observer;
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Session, Status};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    Hot,
    Cold,
    Both,
}

#[derive(clap::Args)]
pub struct Args {
    /// Benchmarks or areas to run (ids, areas such as `cpu`, or dotted prefixes); default: the default suite.
    pub names: Vec<String>,
    /// A rough pass: short budgets (the whole default suite in well under a minute).
    #[arg(long)]
    pub quick: bool,
    /// Results file to write (default: a timestamped file under --results-dir).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Folder for the default results file.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub results_dir: PathBuf,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// CPU to pin to (default: the last allowed CPU).
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Do not pin benchmarks to a CPU.
    #[arg(long, conflicts_with = "cpu")]
    pub no_pin: bool,
    /// Worst case: caches evicted and branch history disturbed before each operation (same as --mode cold).
    #[arg(long, conflicts_with = "mode")]
    pub cold: bool,
    /// Best case (hot), worst case (cold), or both side by side.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Ask for SCHED_FIFO (needs root or CAP_SYS_NICE; refused otherwise, and said so).
    #[arg(long)]
    pub realtime: bool,
    /// Sampling budget per measured quantity, in seconds (default 2, or 0.15 with --quick).
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Kill a benchmark after this many seconds (default: each benchmark's own limit).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Folder for scratch files (default: a fresh folder in the working directory).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// A `yamba serve` agent to measure against (net, fs.remote).
    #[arg(long, value_name = "HOST:PORT")]
    pub remote: Option<String>,
    /// The agent's token (as it printed at start).
    #[arg(long, value_name = "TOKEN", requires = "remote")]
    pub token: Option<String>,
    /// Benchmark-specific setting, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Blocks: run the whole list N times, interleaved, each benchmark in a
    /// fresh process every time, sharing its sampling budget among them; a
    /// result's interval comes from the processes' medians, so it includes
    /// the variation between runs (default 6; 1 with --quick, whose
    /// intervals are then within-process only).
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// Run benchmarks in a random order (the seed is printed and recorded).
    #[arg(long)]
    pub shuffle: bool,
    /// Seed for --shuffle.
    #[arg(long, value_name = "N", requires = "shuffle")]
    pub seed: Option<u64>,
    /// A saved results file (or @ID, a run in the history) to compare this
    /// run against when it ends (the same table as `yamba compare BASELINE NEW`).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: exit with status 1 when a result got significantly
    /// slower than the baseline by more than P percent.
    #[arg(long, value_name = "P", requires = "baseline")]
    pub threshold: Option<f64>,
    /// Exit with status 1 when any benchmark failed or was withheld.
    #[arg(long)]
    pub strict: bool,
    /// Run benchmarks in this process (no crash or hang isolation; for debugging).
    #[arg(long, hide = true)]
    pub no_isolate: bool,
    /// Sample where the time goes while BENCH runs, and print the top symbols.
    #[arg(long, value_name = "BENCH")]
    pub profile: Option<String>,
    #[command(flatten)]
    pub history: super::history::RecordArgs,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let config = config_from(&args)?;
    if let Some(name) = &args.profile {
        let benches =
            yamba_suite::select(std::slice::from_ref(name)).map_err(anyhow::Error::msg)?;
        if benches.len() != 1 {
            bail!(
                "--profile takes one benchmark; '{name}' names {}",
                benches.len()
            );
        }
        let session = Session::prepare(config);
        return super::profile::run_profile(&session, benches[0]);
    }
    let mut benches = yamba_suite::select(&args.names).map_err(anyhow::Error::msg)?;
    let seed = args
        .seed
        .unwrap_or_else(yamba_core::clock::monotonic_raw_ns);
    if args.shuffle {
        run_session::shuffle(&mut benches, seed);
    }
    let baseline = match &args.baseline {
        Some(p) => Some(
            yamba_history::Resolver::new(args.history.store.store.as_deref())
                .read(&p.to_string_lossy())
                .map_err(|e| anyhow::anyhow!("--baseline {}: {e}", p.display()))?,
        ),
        None => None,
    };
    if let Some(t) = args.threshold {
        if !(t.is_finite() && t >= 0.0) {
            bail!("--threshold {t}: must be a percentage ≥ 0");
        }
    }
    let out_path = match &args.out {
        Some(p) => p.clone(),
        None => run_session::default_out(&args.results_dir).map_err(anyhow::Error::msg)?,
    };
    run_session::check_writable(&out_path).map_err(anyhow::Error::msg)?;
    let recorder = args.history.start()?;

    yamba_core::interrupt::install();
    let interactive = std::io::stderr().is_terminal();
    if interactive {
        eprintln!("yamba: calibrating the clock and measuring BASE…");
    }
    let mut run = yamba_suite::session::start(Start {
        config,
        out: out_path.clone(),
        command: std::env::args().collect(),
        // Each benchmark in a fresh `yamba __bench` process: none inherits
        // the memory of this one, whatever ran before it.
        bench_exe: std::env::current_exe().ok(),
        shuffle_seed: args.shuffle.then_some(seed),
        noise_probe: None,
    })
    .map_err(anyhow::Error::msg)?;
    let mut progress = Progress::new(interactive);
    let outcome = run.run(&benches, &mut progress);
    drop(progress);
    let outcome = outcome.map_err(anyhow::Error::msg)?;
    for e in &outcome.save_errors {
        eprintln!("yamba: warning: {e}");
    }
    let file = &run.file;

    match args.format {
        Format::Table => {
            print!("{}", header(&run.session));
            print!("{}", yamba_report::table::render(&file.results));
            print!("{}", yamba_report::table::render_comparisons(&file.results));
            for note in &file.notes {
                println!("note: {note}");
            }
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(file)?),
        Format::Csv => print!("{}", yamba_report::export::results_csv(file)),
    }
    let mut regressions = 0;
    if let Some(base) = &baseline {
        let c = yamba_report::compare::compare(base, file, 0.95);
        if args.format == Format::Table {
            println!(
                "\nagainst the baseline {}:",
                args.baseline.as_ref().unwrap().display()
            );
            print!("{}", yamba_report::compare::table(&c));
        }
        if let Some(t) = args.threshold {
            for r in c.regressions(t) {
                regressions += 1;
                eprintln!(
                    "yamba: {} is {:.1}% slower than the baseline (threshold {t}%)",
                    r.key,
                    r.worse_pct.unwrap_or(f64::NAN)
                );
            }
        }
    }
    eprintln!("yamba: results written to {}", out_path.display());
    let suite = if args.names.is_empty() {
        "default".to_string()
    } else {
        args.names.join(" ")
    };
    let unrecorded = super::history::record(
        recorder.as_ref(),
        file,
        yamba_history::OriginKind::Run,
        suite,
        Some(out_path.clone()),
    );
    if outcome.interrupted {
        let by = yamba_core::interrupt::signal()
            .map(|s| format!(" by {}", yamba_core::isolate::signal_name(s)))
            .unwrap_or_default();
        eprintln!(
            "yamba: interrupted{by}; kept the {} result(s) that finished",
            file.results.len()
        );
        return Ok(yamba_core::interrupt::exit_status());
    }
    let bad = run.bad_results();
    if bad > 0 {
        eprintln!("yamba: {bad} result(s) failed or were withheld; see the notes column");
    }
    Ok(if (args.strict && bad > 0) || regressions > 0 {
        1
    } else if unrecorded {
        2
    } else {
        0
    })
}

fn config_from(args: &Args) -> anyhow::Result<RunConfig> {
    let mut c = if args.quick {
        RunConfig::quick()
    } else {
        RunConfig::default()
    };
    c.modes = match (args.cold, args.mode) {
        (true, _) | (false, Some(ModeArg::Cold)) => vec![Mode::Cold],
        (false, Some(ModeArg::Both)) => vec![Mode::Hot, Mode::Cold],
        _ => vec![Mode::Hot],
    };
    if let Some(cpu) = args.cpu {
        let allowed = yamba_core::affinity::allowed_cpus();
        if !allowed.contains(&cpu) {
            bail!("--cpu {cpu}: not a CPU this process may run on (allowed: {allowed:?})");
        }
        c.cpu = Some(cpu);
    }
    c.no_pin = args.no_pin;
    c.realtime = args.realtime;
    if let Some(b) = args.budget {
        if !(b.is_finite() && b > 0.0 && b <= 3600.0) {
            bail!("--budget {b}: must be a number of seconds in (0, 3600]");
        }
        c.budget_s = b;
    }
    if let Some(t) = args.timeout {
        if t == 0 {
            bail!("--timeout 0: must be at least 1 second");
        }
        c.timeout_s = Some(t);
    }
    if let Some(dir) = &args.scratch {
        if !dir.is_dir() {
            bail!("--scratch {}: not a directory", dir.display());
        }
        c.scratch_dir = Some(dir.clone());
    }
    c.remote = args.remote.clone();
    c.remote_token = args.token.clone();
    c.isolate = !args.no_isolate;
    if let Some(n) = args.repeat {
        if !(1..=1000).contains(&n) {
            bail!("--repeat {n}: must be between 1 and 1000");
        }
        c.repetitions = n;
    }
    c.settings = parse_settings(&args.settings)?;
    Ok(c)
}

fn parse_settings(items: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    items
        .iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => bail!("--set {s}: expected KEY=VALUE"),
        })
        .collect()
}

fn header(session: &Session) -> String {
    let m = &session.machine;
    let c = session.clock.info();
    format!(
        "yamba {} on {} ({} CPUs, {}), kernel {}\nclock: {:?} at {:.3} MHz (±{:.3}%), resolution {:.1} ns; BASE {:.1} ns ({:.0}% within 2× min); pinned to {}\n\n",
        yamba_core::VERSION,
        m.cpu_model,
        m.online_cpus,
        m.hypervisor.as_deref().map(|h| format!("hypervisor: {h}")).unwrap_or_else(|| "no hypervisor detected".into()),
        m.kernel,
        c.kind,
        c.calibration.frequency_hz / 1e6,
        c.calibration.relative_uncertainty * 100.0,
        c.resolution_ns,
        session.base.base_ns,
        session.base.share_within_2x_min * 100.0,
        session.cpu.map(|c| format!("CPU {c}")).unwrap_or_else(|| "no CPU".into()),
    )
}

/// Progress on stderr when it is a terminal (the run session saves the
/// results file after every benchmark).
struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new(interactive: bool) -> Progress {
        let bar = interactive.then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} {msg} ({elapsed}, ~{eta} left)",
                )
                .unwrap(),
            );
            b
        });
        Progress { bar }
    }
}

impl Observer for Progress {
    fn started(&mut self, index: usize, total: usize, bench: &Benchmark, mode: Mode) {
        if let Some(b) = &self.bar {
            b.set_length(total as u64);
            b.set_position(index as u64);
            b.set_message(format!("{} ({})", bench.id, mode.as_str()));
        }
    }

    fn finished(&mut self, results: &[BenchResult]) {
        if let Some(b) = &self.bar {
            for r in results.iter().filter(|r| r.status == Status::Failed) {
                b.println(format!(
                    "yamba: {} failed: {}",
                    r.id,
                    r.reason.as_deref().unwrap_or("")
                ));
            }
            b.inc(1);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
