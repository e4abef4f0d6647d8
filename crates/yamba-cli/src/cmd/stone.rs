//! `yamba stone`: time whole commands. Each command runs many times (after
//! warm-ups, with setup/prepare/cleanup commands around), each run timed
//! with the cycle counter and the wall clock, with the kernel's accounting
//! of the child (wait4: user and system CPU, peak RSS). Several commands
//! (or one command over a parameter's values) are compared: "1.42 ± 0.03
//! times faster". On request it writes a log of seconds per run that
//! ministat reads, a results file, and JSON/CSV/Markdown exports.

use anyhow::{bail, Context};
use std::io::{IsTerminal, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use yamba_core::isolate::{time_command, time_command_limited};
use yamba_core::Clock;
use yamba_core::Describe;
use yamba_report::stone::{self, Series, StoneRun};
use yamba_results::output::Output;

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
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = DEFAULT_LOG)]
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

/// `--log` without a file name.
const DEFAULT_LOG: &str = "stone.<command>.log";

/// One command to time: its words (or its text for `sh -c`), as written.
#[derive(Debug, Clone, PartialEq)]
struct Job {
    words: Vec<String>,
    label: String,
    parameters: Vec<(String, String)>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    if let Some(t) = args.timeout {
        if !(t.is_finite() && t > 0.0 && t <= 86_400.0) {
            bail!("--timeout {t}: must be a number of seconds in (0, 86400]");
        }
    }
    if args.runs == Some(0) {
        bail!("-n must be at least 1");
    }
    if args.min_runs == 0 || args.max_runs.is_some_and(|m| m < args.min_runs) {
        bail!("--min-runs must be at least 1 and at most --max-runs");
    }
    let jobs = jobs(&args)?;
    let single = jobs.len() == 1;
    for (flag, given) in [
        ("--log", args.log.is_some()),
        ("--out", args.out.is_some()),
        ("--compare", args.compare.is_some()),
    ] {
        if given && !single {
            bail!(
                "{flag} takes one command, and {} were given (--export-json/csv/markdown cover several)",
                jobs.len()
            );
        }
    }
    // Read the comparison first: a bad file should not cost a whole series.
    let other = match &args.compare {
        Some(p) => Some(read_comparison(p, args.runs)?),
        None => None,
    };
    let recorder = args.history.start()?;
    let started = yamba_results::results::now_rfc3339();
    let clock = Clock::detect(100);
    let base = yamba_core::base::measure_base(&clock, 10_000);
    let machine = yamba_core::Machine::describe();
    let progress = std::io::stderr().is_terminal();
    let shell_spawn_ns = if args.shell {
        shell_spawn_ns(&clock)?
    } else {
        0.0
    };

    let mut all: Vec<Series> = Vec::new();
    for job in &jobs {
        if let Some(s) = &args.setup {
            helper("--setup", &substitute(s, &job.parameters), args.show_output)?;
        }
        let series = time_series(&clock, &args, job, shell_spawn_ns, progress)?;
        print!("{}", stone::summary_text(&series));
        for w in stone::warnings(&series) {
            println!("Warning: {w}");
        }
        println!();
        all.push(series);
    }
    print!("{}", stone::relative_text(&all));

    for (path, text) in [
        (
            &args.export_json,
            args.export_json
                .as_ref()
                .map(|_| serde_json::to_string_pretty(&stone::export_json(&all)).unwrap() + "\n"),
        ),
        (
            &args.export_csv,
            args.export_csv.as_ref().map(|_| stone::export_csv(&all)),
        ),
        (
            &args.export_markdown,
            args.export_markdown
                .as_ref()
                .map(|_| stone::export_markdown(&all)),
        ),
    ] {
        if let (Some(p), Some(t)) = (path, text) {
            yamba_results::results::write_atomic(p, t.as_bytes())
                .with_context(|| format!("cannot write {}", p.display()))?;
        }
    }

    let series = &all[0];
    let seconds = series.seconds();
    let log = args.log.as_ref().map(|l| {
        if l.as_os_str() == DEFAULT_LOG {
            default_log(&series.name())
        } else {
            l.clone()
        }
    });
    if let Some(log) = &log {
        yamba_results::results::write_atomic(log, stone::log_text(&seconds).as_bytes())
            .with_context(|| format!("cannot write {}", log.display()))?;
        println!("Time measurements logfile is {}.", log.display());
    }
    let results_path = args.out.clone().or_else(|| {
        log.as_ref().map(|l| {
            let mut s = l.clone().into_os_string();
            s.push(".json");
            PathBuf::from(s)
        })
    });
    let ctx = stone::Context {
        clock: clock.info(),
        base: &base,
        machine: &machine,
        argv: std::env::args().collect(),
        started,
    };
    // Every series goes to the history; the first one also to --out,
    // through the one writer (a fallback place when it cannot be written).
    let mut unrecorded = false;
    let mut not_saved = false;
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
                not_saved |= super::saved::report(saved);
            } else {
                println!("Results file is {}.", saved.asked.display());
            }
        }
        unrecorded |= super::history::record(
            recorder.as_ref(),
            &results,
            yamba_history::OriginKind::Stone,
            s.name(),
            saved.and_then(|s| s.written),
        );
    }
    if let (Some(old), Some(path)) = (other, &args.compare) {
        println!();
        let name = log
            .as_ref()
            .map(|l| l.display().to_string())
            .unwrap_or_else(|| "this series".into());
        let text = stone::compare_text(&path.display().to_string(), &old, &name, &seconds)
            .map_err(|e| anyhow::anyhow!("ministat: {e}"))?;
        print!("{text}");
    }
    Ok(if not_saved {
        1
    } else if unrecorded {
        2
    } else {
        0
    })
}

fn read_comparison(p: &Path, runs: Option<usize>) -> anyhow::Result<Vec<f64>> {
    if runs.is_some_and(|n| n < 3) {
        bail!("--compare needs at least 3 runs (-n 3): ministat needs 3 values");
    }
    let bytes = yamba_results::read_file_bounded(p).map_err(anyhow::Error::msg)?;
    let text =
        String::from_utf8(bytes).map_err(|e| anyhow::anyhow!("{}: not text: {e}", p.display()))?;
    let v = stone::parse_log(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
    if v.len() < 3 {
        bail!(
            "{}: has {} values, ministat needs at least 3",
            p.display(),
            v.len()
        );
    }
    Ok(v)
}

/// Runs one command's series: warm-ups, then the timed runs (as many as
/// asked, or enough for about 3 seconds within --min-runs/--max-runs).
fn time_series(
    clock: &Clock,
    args: &Args,
    job: &Job,
    shell_spawn_ns: f64,
    progress: bool,
) -> anyhow::Result<Series> {
    let mut series = Series {
        command: job.words.clone(),
        shell: args.shell,
        warmup: args.warmup,
        prepare: args.prepare.clone(),
        cleanup: args.cleanup.clone(),
        runs: Vec::new(),
        label: Some(job.label.clone()),
        parameters: job.parameters.clone(),
        shell_spawn_ns,
    };
    if progress {
        eprint!("{}: ", job.label);
    }
    let mut planned = args.runs.unwrap_or(usize::MAX);
    let mut i = 0;
    while series.runs.len() < planned {
        let warm = i < args.warmup;
        i += 1;
        if let Some(p) = &args.prepare {
            helper(
                "--prepare",
                &substitute(p, &job.parameters),
                args.show_output,
            )?;
        }
        let run = time_once(clock, args, &job.words)?;
        if let Some(c) = &args.cleanup {
            helper(
                "--cleanup",
                &substitute(c, &job.parameters),
                args.show_output,
            )?;
        }
        if !run.succeeded() && !args.ignore_failure {
            if progress {
                eprintln!();
            }
            bail!(
                "{}: {} {} {}: stopping (--ignore-failure keeps going{})",
                job.label,
                if warm { "warm-up" } else { "run" },
                if warm { i } else { series.runs.len() + 1 },
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
                write!(e, "w{i}. ")
            } else {
                write!(e, "{}. ", series.runs.len() + 1)
            };
            let _ = e.flush();
        }
        if warm {
            continue;
        }
        if args.runs.is_none() && series.runs.is_empty() {
            planned = auto_runs(
                (run.cycles_ns - shell_spawn_ns).max(1.0),
                args.min_runs,
                args.max_runs,
            );
        }
        series.runs.push(run);
    }
    if progress {
        eprintln!("done.");
    }
    Ok(series)
}

/// How many runs make about 3 seconds, given the first run's time.
fn auto_runs(first_ns: f64, min_runs: usize, max_runs: Option<usize>) -> usize {
    let n = (3e9 / first_ns).ceil().min(1e9) as usize;
    n.max(min_runs).min(max_runs.unwrap_or(usize::MAX))
}

/// The commands to time: the positional words as one command, or each
/// positional as a command of its own; then each over the parameter's values.
fn jobs(args: &Args) -> anyhow::Result<Vec<Job>> {
    let first = args.command.first().map(String::as_str).unwrap_or("");
    if first.trim().is_empty() {
        bail!("no command to run (give it after --)");
    }
    // Quoted commands (hyperfine's way) have spaces in the first word.
    let quoted = args.command.len() == 1 || first.contains(char::is_whitespace);
    let templates: Vec<String> = if quoted {
        args.command.clone()
    } else {
        vec![args.command.join(" ")]
    };
    let params = parameters(args)?;
    let mut out = Vec::new();
    for template in &templates {
        let sets: Vec<Vec<(String, String)>> = match &params {
            None => vec![Vec::new()],
            Some((var, values)) => {
                if !template.contains(&format!("{{{var}}}")) {
                    bail!("the parameter {var} is not used: write {{{var}}} in the command {template:?}");
                }
                values
                    .iter()
                    .map(|v| vec![(var.clone(), v.clone())])
                    .collect()
            }
        };
        for set in sets {
            let label = substitute(template, &set);
            let words = if args.shell {
                vec![label.clone()]
            } else if quoted {
                split_words(&label)?
            } else {
                // Words as given (each may hold spaces), parameters substituted.
                args.command.iter().map(|w| substitute(w, &set)).collect()
            };
            out.push(Job {
                words,
                label,
                parameters: set,
            });
        }
    }
    Ok(out)
}

/// The values of -P or -L, if given.
fn parameters(args: &Args) -> anyhow::Result<Option<(String, Vec<String>)>> {
    if let [var, lo, hi] = &args.parameter_scan[..] {
        let num = |s: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| anyhow::anyhow!("-P {var} {lo} {hi}: {s:?} is not a number"))
        };
        let (a, b) = (num(lo)?, num(hi)?);
        if b < a {
            bail!("-P {var} {lo} {hi}: MIN is larger than MAX");
        }
        let step = match args.parameter_step_size {
            Some(s) if s > 0.0 && s.is_finite() => s,
            Some(s) => bail!("--parameter-step-size {s}: must be a positive number"),
            None if a.fract() == 0.0 && b.fract() == 0.0 => 1.0,
            None => bail!("-P {var} {lo} {hi}: not integers; give --parameter-step-size"),
        };
        let count = ((b - a) / step + 1e-9).floor() as usize + 1;
        if count > 10_000 {
            bail!("-P {var} {lo} {hi}: {count} values are too many");
        }
        let integral = a.fract() == 0.0 && step.fract() == 0.0;
        let values = (0..count)
            .map(|i| {
                let v = a + step * i as f64;
                if integral {
                    format!("{}", v as i64)
                } else {
                    format!("{}", (v * 1e9).round() / 1e9)
                }
            })
            .collect();
        return Ok(Some((var.clone(), values)));
    }
    if let [var, list] = &args.parameter_list[..] {
        let values: Vec<String> = list.split(',').map(str::to_string).collect();
        if values.iter().any(String::is_empty) {
            bail!("-L {var} {list}: an empty value in the list");
        }
        return Ok(Some((var.clone(), values)));
    }
    Ok(None)
}

/// `{VAR}` replaced by its value.
fn substitute(text: &str, params: &[(String, String)]) -> String {
    params.iter().fold(text.to_string(), |t, (k, v)| {
        t.replace(&format!("{{{k}}}"), v)
    })
}

/// Splits a quoted command into words as a shell would, refusing what only
/// a shell can do (pipes, redirections, variables) with a pointer to --shell.
fn split_words(cmd: &str) -> anyhow::Result<Vec<String>> {
    if let Some(what) = shell_syntax(cmd) {
        bail!("{cmd:?} uses shell syntax ({what}); run it with --shell");
    }
    let words = shlex::split(cmd)
        .ok_or_else(|| anyhow::anyhow!("{cmd:?}: unbalanced quotes (or run it with --shell)"))?;
    if words.is_empty() {
        bail!("an empty command");
    }
    Ok(words)
}

/// The first piece of shell syntax outside quotes in `cmd`, if any.
fn shell_syntax(cmd: &str) -> Option<&'static str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let chars: Vec<char> = cmd.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '$' | '`' if !single => return Some("$ or `: expansion"),
            _ if single || double => {}
            '|' => return Some("|: a pipe or ||"),
            '&' => return Some("&: && or a background job"),
            ';' => return Some(";: a command list"),
            '<' | '>' => return Some("< or >: a redirection"),
            '*' | '?' => return Some("* or ?: a file pattern"),
            '~' if i == 0 || chars[i - 1] == ' ' => return Some("~: the home folder"),
            _ => {}
        }
    }
    None
}

/// `stone.<name>.log`, or with `.next` appended while the name is taken.
fn default_log(name: &str) -> PathBuf {
    let mut p = format!("stone.{name}.log");
    while Path::new(&p).exists() {
        p.push_str(".next");
    }
    PathBuf::from(p)
}

/// Runs a setup, prepare or cleanup command through `sh -c`; its failure stops the series.
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

/// The mean time of `sh -c ''` over 30 runs after 3 warm-ups: what
/// `--shell` adds to every run.
fn shell_spawn_ns(clock: &Clock) -> anyhow::Result<f64> {
    let empty = vec![String::new()];
    let mut times = Vec::new();
    for i in 0..33 {
        let mut c = shell_command(&empty);
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let t = time_command(clock, &mut c).context("cannot run sh to time its start-up")?;
        if i >= 3 {
            times.push(t.clock_ns);
        }
    }
    Ok(times.iter().sum::<f64>() / times.len() as f64)
}

fn shell_command(words: &[String]) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(words.join(" "));
    c
}

/// One timed run (`yamba_core::isolate::time_command`), as the report reads it.
fn time_once(clock: &Clock, args: &Args, words: &[String]) -> anyhow::Result<StoneRun> {
    let mut cmd = if args.shell {
        shell_command(words)
    } else {
        let mut c = Command::new(&words[0]);
        c.args(&words[1..]);
        c
    };
    cmd.stdin(Stdio::null());
    if !args.show_output {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
    }
    let limit = args.timeout.map(std::time::Duration::from_secs_f64);
    let t = time_command_limited(clock, &mut cmd, limit).with_context(|| {
        let hint = if !args.shell && shell_syntax(&words.join(" ")).is_some() {
            " (it looks like shell syntax: try --shell)"
        } else {
            ""
        };
        format!("cannot run {:?}{hint}", words[0])
    })?;
    if t.timed_out {
        bail!(
            "{}: timed out after {} s (--timeout): killed with its process group",
            words.join(" "),
            args.timeout.unwrap_or_default()
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_syntax_is_recognised_outside_quotes_only() {
        assert!(shell_syntax("ls | wc -l").is_some());
        assert!(shell_syntax("echo $HOME").is_some());
        assert!(shell_syntax("make > log").is_some());
        assert!(shell_syntax("a && b").is_some());
        assert!(shell_syntax("grep 'a|b' file").is_none());
        assert!(shell_syntax("sleep 0.1").is_none());
        assert!(shell_syntax("echo \"a;b\"").is_none());
    }

    #[test]
    fn automatic_run_count() {
        assert_eq!(auto_runs(0.1e9, 10, None), 30);
        assert_eq!(auto_runs(2e9, 10, None), 10);
        assert_eq!(auto_runs(1e6, 10, Some(100)), 100);
    }

    #[test]
    fn substitution() {
        let p = vec![("n".to_string(), "4".to_string())];
        assert_eq!(substitute("make -j{n} {m}", &p), "make -j4 {m}");
    }
}
