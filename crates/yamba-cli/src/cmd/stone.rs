//! `yamba stone`: the seed's worldstone. Runs a command N times (after
//! warm-ups, with prepare/cleanup commands around each run), timing each
//! run with the cycle counter and the wall clock and taking the kernel's
//! accounting of the child (wait4: user and system CPU, peak RSS). Writes
//! a log of seconds, one per line, that ministat reads, and a results file.

use anyhow::{bail, Context};
use std::io::{IsTerminal, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use yamba_core::isolate::time_command;
use yamba_core::Clock;
use yamba_core::Describe;
use yamba_report::stone::{self, Series, StoneRun};

#[derive(clap::Args)]
#[command(trailing_var_arg = true)]
pub struct Args {
    /// Timed runs.
    #[arg(short = 'n', long = "runs", default_value_t = 5, value_name = "RUNS")]
    runs: usize,
    /// Untimed runs first (caches, page cache, CPU frequency).
    #[arg(long, default_value_t = 0, value_name = "N")]
    warmup: usize,
    /// Run before every run (warm-ups included), through `sh -c`; e.g. `make clean`.
    #[arg(long, value_name = "CMD")]
    prepare: Option<String>,
    /// Run after every run, through `sh -c`.
    #[arg(long, value_name = "CMD")]
    cleanup: Option<String>,
    /// The log of seconds per run [default: stone.<command>.log, or with
    /// `.next` appended while that exists, as worldstone does].
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// The results file [default: the log's name with `.json` appended].
    #[arg(long, value_name = "RESULTS.json")]
    out: Option<PathBuf>,
    /// Run COMMAND through `sh -c` (its words joined by spaces); without
    /// this it is executed directly, never through a shell.
    #[arg(long)]
    shell: bool,
    /// Keep going when a run exits non-zero (its time is kept).
    #[arg(long)]
    ignore_failure: bool,
    /// Show the command's (and prepare/cleanup's) output instead of discarding it.
    #[arg(long)]
    show_output: bool,
    /// A previous log to compare with (ministat: x = it, + = this series).
    #[arg(long, value_name = "OTHER.log")]
    compare: Option<PathBuf>,
    #[command(flatten)]
    history: super::history::RecordArgs,
    /// The command to time, and its arguments (after `--`).
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    if args.runs == 0 {
        bail!("-n must be at least 1");
    }
    if args
        .command
        .first()
        .map(String::as_str)
        .unwrap_or("")
        .is_empty()
    {
        bail!("no command to run (give it after --)");
    }
    // Read the comparison first: a bad file should not cost a whole series.
    let other = match &args.compare {
        Some(p) => {
            if args.runs < 3 {
                bail!("--compare needs at least 3 runs (-n 3): ministat needs 3 values");
            }
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            let v = stone::parse_log(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            if v.len() < 3 {
                bail!(
                    "{}: has {} values, ministat needs at least 3",
                    p.display(),
                    v.len()
                );
            }
            Some(v)
        }
        None => None,
    };
    let recorder = args.history.start()?;
    let started = yamba_core::results::now_rfc3339();
    let clock = Clock::detect(100);
    let base = yamba_core::base::measure_base(&clock, 10_000);
    let machine = yamba_core::Machine::describe();

    let mut series = Series {
        command: args.command.clone(),
        shell: args.shell,
        warmup: args.warmup,
        prepare: args.prepare.clone(),
        cleanup: args.cleanup.clone(),
        runs: Vec::new(),
    };
    let progress = std::io::stderr().is_terminal();
    let total = args.warmup + args.runs;
    for i in 0..total {
        let warm = i < args.warmup;
        if let Some(p) = &args.prepare {
            helper("--prepare", p, args.show_output)?;
        }
        let run = time_once(&clock, &args)?;
        if let Some(c) = &args.cleanup {
            helper("--cleanup", c, args.show_output)?;
        }
        if !run.succeeded() && !args.ignore_failure {
            if progress {
                eprintln!();
            }
            bail!(
                "{} {} {}: stopping (--ignore-failure keeps going{})",
                if warm { "warm-up" } else { "run" },
                if warm { i + 1 } else { i + 1 - args.warmup },
                run.status_text(),
                if args.show_output {
                    ""
                } else {
                    "; --show-output shows its output"
                }
            );
        }
        if progress {
            let mut e = std::io::stderr();
            let _ = if warm {
                write!(e, "w{}. ", i + 1)
            } else {
                write!(e, "{}. ", i + 1 - args.warmup)
            };
            let _ = e.flush();
        }
        if !warm {
            series.runs.push(run);
        }
    }
    if progress {
        eprintln!("Done.");
    }

    let log = args
        .log
        .clone()
        .unwrap_or_else(|| default_log(&series.name()));
    let out = args.out.clone().unwrap_or_else(|| {
        let mut s = log.clone().into_os_string();
        s.push(".json");
        PathBuf::from(s)
    });
    let seconds = series.seconds();
    yamba_core::results::write_atomic(&log, stone::log_text(&seconds).as_bytes())
        .with_context(|| format!("cannot write {}", log.display()))?;
    let ctx = stone::Context {
        clock: clock.info(),
        base: &base,
        machine: &machine,
        argv: std::env::args().collect(),
        started,
    };
    let results = stone::results_file(&series, &ctx);
    results
        .write_atomic(&out)
        .with_context(|| format!("cannot write {}", out.display()))?;

    let unrecorded = super::history::record(
        recorder.as_ref(),
        &results,
        yamba_history::OriginKind::Stone,
        series.command.join(" "),
        Some(out.clone()),
    );

    print!("{}", stone::summary_text(&series));
    let r = &results.results[0];
    if let Some(why) = &r.reason {
        println!("WITHHELD: {why}");
    }
    println!("Time measurements logfile is {}.", log.display());
    println!("Results file is {}.", out.display());
    if let (Some(old), Some(path)) = (other, &args.compare) {
        println!();
        let text = stone::compare_text(
            &path.display().to_string(),
            &old,
            &log.display().to_string(),
            &seconds,
        )
        .map_err(|e| anyhow::anyhow!("ministat: {e}"))?;
        print!("{text}");
    }
    Ok(if unrecorded { 2 } else { 0 })
}

/// `stone.<name>.log`, or with `.next` appended while the name is taken.
fn default_log(name: &str) -> PathBuf {
    let mut p = format!("stone.{name}.log");
    while Path::new(&p).exists() {
        p.push_str(".next");
    }
    PathBuf::from(p)
}

/// Runs a prepare or cleanup command through `sh -c`; its failure stops the series.
fn helper(what: &str, cmd: &str, show: bool) -> anyhow::Result<()> {
    let mut c = Command::new("sh");
    c.arg("-c").arg(cmd).stdin(Stdio::null());
    if !show {
        c.stdout(Stdio::null()).stderr(Stdio::null());
    }
    let st = c
        .status()
        .with_context(|| format!("cannot run {what} command {cmd:?}"))?;
    if !st.success() {
        bail!("{what} command {cmd:?} failed ({st}): stopping");
    }
    Ok(())
}

/// One timed run (`yamba_core::isolate::time_command`), as the report reads it.
fn time_once(clock: &Clock, args: &Args) -> anyhow::Result<StoneRun> {
    let mut cmd = if args.shell {
        let mut c = Command::new("sh");
        c.arg("-c").arg(args.command.join(" "));
        c
    } else {
        let mut c = Command::new(&args.command[0]);
        c.args(&args.command[1..]);
        c
    };
    cmd.stdin(Stdio::null());
    if !args.show_output {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
    }
    let t = time_command(clock, &mut cmd)
        .with_context(|| format!("cannot run {:?}", args.command[0]))?;
    Ok(StoneRun {
        ticks: t.ticks,
        cycles_ns: t.clock_ns,
        wall_ns: t.wall_ns,
        user_s: t.usage.user_s,
        system_s: t.usage.system_s,
        max_rss_kib: t.usage.max_rss_kib,
        exit_code: t.status.code(),
        signal: t.status.signal(),
    })
}
