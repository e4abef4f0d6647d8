//! `yamba stone`: time whole commands. The engine is yamba-stone; here are
//! the options, the printing, and the files asked for (a log of seconds per
//! run for ministat, a results file, JSON/CSV/Markdown exports).

use anyhow::{bail, Context};
use std::io::IsTerminal;
use std::path::PathBuf;
use yamba_core::{Clock, Describe};
use yamba_results::output::Output;
use yamba_stone::{self as stone, Event, Options, Parameter, Series};

#[derive(clap::Args)]
#[command(after_help = "\
COMMAND is either one command's words after `--` (`yamba stone -- make -j4 all`), or one or \
more commands each quoted as one word (`yamba stone 'sleep 0.1' 'sleep 0.2'`), split into \
words as a shell would but run without one; --shell runs them through `sh -c`. Options may \
come before or after quoted commands.

Examples:
  yamba stone -n 10 --warmup 1 --prepare 'make clean' -- make all
  yamba stone 'gzip -1 -c big.tar' 'gzip -9 -c big.tar'
  yamba stone -P threads 1 4 'make -j{threads}'
  yamba stone -L level 1,6,9 'gzip -{level} -c big.tar' --export-markdown gzip.md
  yamba stone --log make.log -- make all      # keep the seconds per run for ministat")]
pub struct Args {
    /// Timed runs per command [default: automatic, at least --min-runs and
    /// about 3 seconds in all].
    #[arg(short = 'n', long = "runs", value_name = "RUNS")]
    runs: Option<usize>,
    /// With an automatic count: at least this many runs.
    #[arg(short = 'm', long, default_value_t = 10, value_name = "N")]
    min_runs: usize,
    /// With an automatic count: at most this many runs.
    #[arg(short = 'M', long, value_name = "N")]
    max_runs: Option<usize>,
    /// Untimed runs first (caches, page cache, CPU frequency).
    #[arg(short = 'w', long, default_value_t = 0, value_name = "N")]
    warmup: usize,
    /// Run once before each command's series, through `sh -c`; e.g. building it.
    #[arg(short = 's', long, value_name = "CMD")]
    setup: Option<String>,
    /// Run before every run (warm-ups included), through `sh -c`; e.g. `make clean`.
    #[arg(short = 'p', long, value_name = "CMD")]
    prepare: Option<String>,
    /// Run after every run, through `sh -c`.
    #[arg(short = 'c', long, value_name = "CMD")]
    cleanup: Option<String>,
    /// Run each command once per value of VAR from MIN to MAX (integers, or
    /// with --parameter-step-size any numbers), substituting `{VAR}`.
    #[arg(short = 'P', long, num_args = 3, value_names = ["VAR", "MIN", "MAX"], conflicts_with = "parameter_list")]
    parameter_scan: Vec<String>,
    /// The step of --parameter-scan [default: 1].
    #[arg(short = 'D', long, value_name = "STEP", requires = "parameter_scan")]
    parameter_step_size: Option<f64>,
    /// Run each command once per value in the comma-separated list, substituting `{VAR}`.
    #[arg(short = 'L', long, num_args = 2, value_names = ["VAR", "VALUES"])]
    parameter_list: Vec<String>,
    /// Write the seconds per run, one per line, for ministat (one command
    /// only). Without FILE: stone.<command>.log, or with `.next` appended
    /// while that exists.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = stone::DEFAULT_LOG)]
    log: Option<PathBuf>,
    /// Write a results file like `yamba run`'s (one command only).
    #[arg(long, value_name = "RESULTS.json")]
    out: Option<PathBuf>,
    /// Write every command's statistics and times as JSON.
    #[arg(long, value_name = "FILE")]
    export_json: Option<PathBuf>,
    /// Write every command's statistics as CSV.
    #[arg(long, value_name = "FILE")]
    export_csv: Option<PathBuf>,
    /// Write a Markdown table of the commands and their relative speed.
    #[arg(long, value_name = "FILE")]
    export_markdown: Option<PathBuf>,
    /// Run each command through `sh -c` (a command given as words is joined
    /// by spaces); the mean time to spawn the shell alone is measured and
    /// subtracted. Without this, commands are executed directly.
    #[arg(long)]
    shell: bool,
    /// Kill a run (with everything it started in its process group) that
    /// takes longer than this many seconds, and stop. Whatever a run
    /// leaves running in its process group is killed when it ends, in
    /// any case.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Keep going when a run exits non-zero (its time is kept).
    #[arg(short = 'i', long)]
    ignore_failure: bool,
    /// Show the commands' output instead of discarding it.
    #[arg(long)]
    show_output: bool,
    /// A previous log to compare with (ministat: x = it, + = this series; one command only).
    #[arg(long, value_name = "OTHER.log")]
    compare: Option<PathBuf>,
    #[command(flatten)]
    history: super::history::RecordArgs,
    /// The command(s) to time (see below).
    #[arg(required = true, num_args = 1.., value_name = "COMMAND")]
    command: Vec<String>,
}

impl Args {
    /// The engine's options.
    fn options(&self) -> Options {
        let parameter = match (&self.parameter_scan[..], &self.parameter_list[..]) {
            ([var, min, max], _) => Some(Parameter::scan(var, min, max, self.parameter_step_size)),
            (_, [var, values]) => Some(Parameter::list(var, values)),
            _ => None,
        };
        Options {
            commands: self.command.clone(),
            runs: self.runs,
            min_runs: self.min_runs,
            max_runs: self.max_runs,
            warmup: self.warmup,
            setup: self.setup.clone(),
            prepare: self.prepare.clone(),
            cleanup: self.cleanup.clone(),
            parameter,
            shell: self.shell,
            timeout: self.timeout,
            ignore_failure: self.ignore_failure,
            show_output: self.show_output,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let options = args.options();
    let jobs = stone::plan(&options)?;
    let one = [
        ("--log", &args.log),
        ("--out", &args.out),
        ("--compare", &args.compare),
    ];
    if let Some((flag, _)) = one.iter().find(|(_, p)| p.is_some() && jobs.len() != 1) {
        bail!(
            "{flag} takes one command, and {} were given (--export-json/csv/markdown cover several)",
            jobs.len()
        );
    }
    // Read the comparison first: a bad file should not cost a whole series.
    let other = (args.compare.as_ref())
        .map(|p| stone::read_comparison(p, args.runs))
        .transpose()?;
    let recorder = args.history.start()?;
    let started = yamba_results::results::now_rfc3339();
    let clock = Clock::detect(100);
    let base = yamba_core::base::measure_base(&clock, 10_000);
    let machine = yamba_core::Machine::describe();
    let terminal = std::io::stderr().is_terminal();
    let all = stone::run(&clock, &options, &jobs, &mut |event| match event {
        Event::Started(job) if terminal => eprint!("{}: ", job.label),
        Event::Ran { warmup, number, .. } if terminal => {
            eprint!("{}{number}. ", if warmup { "w" } else { "" })
        }
        Event::Stopped(_) if terminal => eprintln!(),
        Event::Finished(series) => {
            if terminal {
                eprintln!("done.");
            }
            print!("{}", stone::report_text(series));
        }
        _ => {}
    })?;
    print!("{}", stone::relative_text(&all));

    for (path, export) in [
        (
            &args.export_json,
            stone::export_json_text as fn(&[Series]) -> String,
        ),
        (&args.export_csv, stone::export_csv),
        (&args.export_markdown, stone::export_markdown),
    ] {
        if let Some(p) = path {
            yamba_results::results::write_atomic(p, export(&all).as_bytes())
                .with_context(|| format!("cannot write {}", p.display()))?;
        }
    }

    let seconds = all[0].seconds();
    let log = (args.log.as_ref()).map(|l| stone::log_path(l, &all[0].name()));
    if let Some(log) = &log {
        yamba_results::results::write_atomic(log, stone::log_text(&seconds).as_bytes())
            .with_context(|| format!("cannot write {}", log.display()))?;
        println!("Time measurements logfile is {}.", log.display());
    }
    let results_path = (args.out.clone()).or_else(|| log.as_deref().map(stone::beside_log));
    let ctx = stone::Context {
        clock: clock.info(),
        base: &base,
        machine: &machine,
        argv: std::env::args().collect(),
        started,
    };
    // Every series goes to the history; the first one also to --out,
    // through the one writer (a fallback place when it cannot be written).
    let mut end = super::saved::Ending::default();
    for (i, s) in all.iter().enumerate() {
        let results = stone::results_file(s, &ctx);
        let saved = results_path
            .as_ref()
            .filter(|_| i == 0)
            .map(|out| Output::at(out).finish(&results));
        if let Some(saved) = &saved {
            if let Some(why) = &results.results[0].reason {
                println!("WITHHELD: {why}");
            }
            if saved.not_where_asked() {
                end.not_saved |= super::saved::report(saved);
            } else {
                println!("Results file is {}.", saved.asked.display());
            }
        }
        end.unrecorded |= super::history::record(
            recorder.as_ref(),
            &results,
            yamba_history::OriginKind::Stone,
            s.name(),
            saved.and_then(|s| s.written),
        );
    }
    if let (Some(old), Some(path)) = (other, &args.compare) {
        println!();
        let name = log.map_or("this series".into(), |l| l.display().to_string());
        let text = stone::compare_text(&path.display().to_string(), &old, &name, &seconds)
            .map_err(|e| anyhow::anyhow!("ministat: {e}"))?;
        print!("{text}");
    }
    Ok(end.exit_code(false))
}
