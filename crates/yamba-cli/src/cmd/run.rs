//! `yamba run`: measure, print a table, keep everything in a results file.

use anyhow::bail;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use yamba_core::run_session::{self, Start};
use yamba_core::runner::Observer;
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Session, Status};
use yamba_results::output::Output;
use yamba_results::ResultsFile;

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
#[command(after_help = super::compare::EXIT_CODES)]
pub struct Args {
    /// Benchmarks or areas to run (ids, areas such as `cpu`, or dotted prefixes; an exact id runs that benchmark alone); default: the default suite.
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
    /// Sampling budget per measured quantity in one block (process), in seconds
    /// (default 0.15; three times that for a quantity a precise run measures in one process only).
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Kill a benchmark after this many seconds (default: each benchmark's own limit).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Folder for scratch files (default: a fresh folder in the working directory).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// A `yamba serve` agent to measure against (net, fs.remote). A
    /// benchmark that fails against it (refused, no answer, no file)
    /// makes the exit status 1, --strict or not.
    #[arg(long, value_name = "HOST:PORT")]
    pub remote: Option<String>,
    /// A file holding the agent's token (mode 0600), or set YAMBA_TOKEN. Never written to the results file.
    #[arg(
        long,
        value_name = "FILE",
        requires = "remote",
        conflicts_with = "token"
    )]
    pub token_file: Option<PathBuf>,
    /// The agent's token itself (visible to every local user: prefer YAMBA_TOKEN or --token-file).
    #[arg(long, value_name = "TOKEN", requires = "remote")]
    pub token: Option<String>,
    /// A benchmark setting, KEY=VALUE (repeatable; `yamba list --settings` shows them all).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Blocks: run the whole list exactly N times, interleaved, each
    /// benchmark in a fresh process every time; a result's interval comes
    /// from the processes' values, so it includes the variation between
    /// runs. By default a precise run gives every benchmark 3 blocks, each
    /// half a quick pass, and adds blocks (up to 10, in at most a
    /// tenth of the first three's time) where the interval is still wider
    /// than 1%, and to replace processes that ran on a core another
    /// hardware thread was using (in at most the time those took); --quick
    /// measures one block, whose interval is within-process only.
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// Also run every benchmark as N simultaneous copies, each pinned to a CPU of its own
    /// (N ≤ the CPUs allowed; `all`: every one), beside one copy: each result gains
    /// `<id>.copiesN`, the per-copy value, and the scaling of N copies against one
    /// (N: perfect, 1: serialized). Benchmarks that cannot run as copies say why (docs/copies.md).
    #[arg(long, value_name = "N|all", value_parser = parse_copies)]
    pub copies: Option<Copies>,
    /// Measure the code where this build put it, one placement per process (as other tools do),
    /// instead of copies at placements drawn at random in every block (docs/certainty.md).
    #[arg(long)]
    pub fixed_placement: bool,
    /// After the table, print where the run's time went: per benchmark, starting its
    /// processes, calibration, code placement, warm-up, sampling and its own work.
    #[arg(long)]
    pub timings: bool,
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
    /// With --baseline: gate — exit with status 1 when a result is worse
    /// than the baseline by more than P percent (the test of `yamba compare
    /// --threshold`: Holm–Bonferroni over all results at 95%), and with
    /// status 3 ("undecided") when none is but some result had too few
    /// processes to test (a --quick run has 1; a result measured on a
    /// shared core in one run and alone in the other has too few in one
    /// state).
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
    let mut config = config_from(&args)?;
    if let Some(name) = &args.profile {
        return profile(name, config);
    }
    let mut benches = yamba_suite::select(&args.names).map_err(anyhow::Error::msg)?;
    config.settings = checked_settings(config.settings, &benches)?;
    let seed = args
        .seed
        .unwrap_or_else(yamba_core::clock::monotonic_raw_ns);
    if args.shuffle {
        run_session::shuffle(&mut benches, seed);
    }
    let baseline = read_baseline(&args)?;
    let output =
        Output::new(args.out.as_deref(), &args.results_dir, "yamba").map_err(anyhow::Error::msg)?;
    let recorder = args.history.start()?;

    yamba_core::interrupt::install();
    let interactive = std::io::stderr().is_terminal();
    if interactive {
        eprintln!("yamba: calibrating the clock and measuring BASE…");
    }
    let mut run = yamba_suite::session::start(Start {
        config,
        output,
        command: std::env::args().collect(),
        // Each benchmark in a fresh `yamba __bench` process: none inherits
        // the memory of this one, whatever ran before it.
        bench_exe: std::env::current_exe().ok(),
        shuffle_seed: args.shuffle.then_some(seed),
        noise_probe: None,
    })?;
    // Earlier runs of this configuration (started before it), read when
    // the run is complete (an incomplete run matches none): each result
    // gets its interval for the runs from them, in the file, and the table
    // says where they moved more than the run's own interval.
    let earlier = std::rc::Rc::new(std::cell::RefCell::new(None));
    if !args.history.no_history {
        let (store, read) = (args.history.store.store.clone(), earlier.clone());
        run.before_finish = Some(Box::new(move |file| {
            let mut h = yamba_history::Resolver::new(store.as_deref());
            let e = yamba_history::earlier::earlier_values(
                &mut h,
                file,
                yamba_history::earlier::HISTORY_RUNS,
            );
            yamba_report::between::attach(file, &e);
            *read.borrow_mut() = Some(e);
        }));
    }
    let mut progress = Progress::new(interactive);
    let outcome = run.run(&benches, &mut progress);
    drop(progress);
    warn_save_errors(&outcome.save_errors);
    let file = &run.file;

    print_results(&args, &run.session, file, earlier.borrow().as_ref())?;
    let gate = match &baseline {
        Some(base) => against_baseline(&args, base, file),
        None => 0,
    };
    // Whatever happened to the results file, the table above was printed.
    let suite = if args.names.is_empty() {
        "default".to_string()
    } else {
        args.names.join(" ")
    };
    let ending = super::saved::conclude(
        &outcome.saved,
        recorder.as_ref(),
        file,
        yamba_history::OriginKind::Run,
        suite,
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
    let remote_failed = remote_failed(&args, file);
    let failed = (args.strict && bad > 0) || remote_failed;
    Ok(ending.exit_code_gated(failed, gate))
}

/// `--profile BENCH`: sample where its time goes instead of a run.
fn profile(name: &str, mut config: RunConfig) -> anyhow::Result<i32> {
    let benches = yamba_suite::select(&[name.to_string()]).map_err(anyhow::Error::msg)?;
    if benches.len() != 1 {
        bail!(
            "--profile takes one benchmark; '{name}' names {}",
            benches.len()
        );
    }
    config.settings = checked_settings(config.settings, &benches)?;
    let session = Session::prepare(config);
    super::profile::run_profile(&session, benches[0])
}

/// The `--baseline` file or history run, read before anything is measured
/// (and `--threshold` checked).
fn read_baseline(args: &Args) -> anyhow::Result<Option<ResultsFile>> {
    if let Some(t) = args.threshold {
        if !(t.is_finite() && t >= 0.0) {
            bail!("--threshold {t}: must be a percentage ≥ 0");
        }
    }
    let Some(p) = &args.baseline else {
        return Ok(None);
    };
    yamba_history::Resolver::new(args.history.store.store.as_deref())
        .read(&p.to_string_lossy())
        .map(Some)
        .map_err(|e| anyhow::anyhow!("--baseline {}: {e}", p.display()))
}

/// The first of the run's failed saves (the file is saved after every
/// benchmark), and how many more there were.
fn warn_save_errors(errors: &[String]) {
    if let Some(first) = errors.first() {
        let more = errors.len() - 1;
        let more = if more > 0 {
            format!(" (and {more} later save(s) alike)")
        } else {
            String::new()
        };
        eprintln!("yamba: warning: during the run: {first}{more}");
    }
}

/// Stdout: the table (with what earlier runs of this configuration say
/// beyond this run's intervals, docs/certainty.md), JSON or CSV; and the
/// timings when asked.
fn print_results(
    args: &Args,
    s: &Session,
    file: &ResultsFile,
    earlier: Option<&yamba_report::between::EarlierValues>,
) -> anyhow::Result<()> {
    use yamba_report::table;
    match args.format {
        Format::Table => {
            let layout = table::Layout {
                width: table_width(),
            };
            print!(
                "{}",
                table::header_with(&s.machine, s.clock.info(), &s.base, s.cpu, layout)
            );
            print!("{}", table::render_with(&file.results, layout));
            print!(
                "{}",
                table::fit_lines(&table::render_comparisons(&file.results), layout)
            );
            print!(
                "{}",
                table::fit_lines(&table::render_copies(&file.results), layout)
            );
            print!("{}", table::notes_text(&file.notes, layout));
            if let Some(earlier) = earlier {
                let spreads = yamba_report::between::spreads(file, earlier);
                print!(
                    "{}",
                    table::fit_lines(
                        &yamba_report::between::text(file, &spreads, earlier),
                        layout
                    )
                );
            }
        }
        Format::Json => println!("{}", file.to_json()?),
        Format::Csv => print!("{}", yamba_report::export::results_csv(file)),
    }
    if args.timings {
        // Beside the table; kept off stdout when it carries JSON or CSV.
        let t = yamba_report::timings::table(file);
        if args.format == Format::Table {
            print!("\n{t}");
        } else {
            eprint!("{t}");
        }
    }
    Ok(())
}

/// `--baseline`: the comparison's table (earlier runs of the baseline's
/// configuration tell a state of the machine from a change,
/// docs/certainty.md) and the gate's exit status.
fn against_baseline(args: &Args, base: &ResultsFile, file: &ResultsFile) -> i32 {
    let earlier = if args.history.no_history {
        yamba_report::compare::EarlierRuns::default()
    } else {
        let mut h = yamba_history::Resolver::new(args.history.store.store.as_deref());
        yamba_history::earlier::earlier_runs(
            &mut h,
            base,
            file,
            yamba_history::earlier::HISTORY_RUNS,
        )
    };
    let mut c = yamba_report::compare::compare_with(base, file, 0.95, &earlier);
    if let Some(t) = args.threshold {
        c = c.gated(t);
    }
    if args.format == Format::Table {
        let at = args.baseline.as_deref().unwrap_or(std::path::Path::new(""));
        println!("\nagainst the baseline {}:", at.display());
        print!("{}", yamba_report::compare::table(&c));
    }
    super::compare::gate_status(&c, " than the baseline")
}

/// Against an agent, a failure is the agent's or the way to it (refused,
/// silent, no file to serve): the run did not do what was asked.
fn remote_failed(args: &Args, file: &ResultsFile) -> bool {
    let failed = args.remote.is_some()
        && file
            .results
            .iter()
            .any(|r| r.status == yamba_core::Status::Failed);
    if failed {
        eprintln!(
            "yamba: a benchmark failed against the agent at {}: exit status 1",
            args.remote.as_deref().unwrap_or("")
        );
    }
    failed
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
    if c.remote.is_some() {
        let token = yamba_suite::remote::token::from_options(
            args.token.as_deref(),
            args.token_file.as_deref(),
        )
        .map_err(anyhow::Error::msg)?;
        if let Some((t, source)) = token {
            if let Some(w) = yamba_suite::remote::token::command_line_warning(&source) {
                eprintln!("yamba: warning: {w}");
            }
            c.remote_token = Some(t);
        }
    }
    c.isolate = !args.no_isolate;
    c.fixed_placement = args.fixed_placement;
    if let Some(n) = args.repeat {
        if !(1..=1000).contains(&n) {
            bail!("--repeat {n}: must be between 1 and 1000");
        }
        c.repetitions = n;
        c.max_blocks = n;
    }
    if let Some(copies) = args.copies {
        c.copies = match copies {
            Copies::All => yamba_core::copies::all_cpus(),
            Copies::Count(n) => n,
        };
        if c.copies > 1 {
            let first =
                (!c.no_pin).then(|| c.cpu.unwrap_or_else(yamba_core::affinity::default_cpu));
            let usable = yamba_core::affinity::usable_cpus();
            yamba_core::copies::copy_cpus(c.copies, first, usable).map_err(anyhow::Error::msg)?;
        }
    }
    c.settings = yamba_core::settings::parse_pairs(&args.settings)?;
    Ok(c)
}

/// `--copies N` or `--copies all`.
#[derive(Clone, Copy, Debug)]
pub enum Copies {
    All,
    Count(usize),
}

fn parse_copies(s: &str) -> Result<Copies, String> {
    if s == "all" {
        return Ok(Copies::All);
    }
    match s.parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(Copies::Count(n)),
        _ => Err(format!(
            "'{s}': a number of copies from 1 to 4096, or 'all'"
        )),
    }
}

/// The width the table is laid out for: the terminal's when standard
/// output is one, or $COLUMNS when set; unlimited for a file or a pipe.
fn table_width() -> Option<usize> {
    if std::io::stdout().is_terminal() {
        Some(crate::term::size().0)
    } else {
        crate::term::env_size("COLUMNS")
    }
}

/// The `--set` pairs checked against the benchmarks' declarations (old
/// names renamed, with a warning on stderr).
fn checked_settings(
    given: BTreeMap<String, String>,
    chosen: &[&'static Benchmark],
) -> anyhow::Result<BTreeMap<String, String>> {
    let (settings, warnings) = yamba_core::settings::resolve(&given, &yamba_suite::all(), chosen)?;
    for w in warnings {
        eprintln!("yamba: warning: {w}");
    }
    Ok(settings)
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
