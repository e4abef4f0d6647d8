//! `yamba stone`: what is made of a series of timed runs of one command
//! (the seed's worldstone): the summary, the log file, the results file,
//! the ministat comparison with an earlier log.
//!
//! The runs themselves are made by the CLI (it owns the child processes);
//! everything here is pure, so it can be tested on fixed numbers.

use crate::ministat::{self, MinistatOptions};
use yamba_results::Base;
use yamba_results::ClockInfo;
use yamba_results::{Accounting, BenchResult, Method, Mode, ResultsFile};
use yamba_results::{Machine, Unit};
use yamba_stats::Summary;

/// One timed run of the command.
#[derive(Debug, Clone, PartialEq)]
pub struct StoneRun {
    /// Cycle-counter ticks from just before the spawn to the reaped exit.
    pub ticks: u64,
    /// The same interval in ns, by the calibrated clock.
    pub cycles_ns: f64,
    /// The same interval in ns, by CLOCK_MONOTONIC (the wall clock).
    pub wall_ns: f64,
    /// CPU time the kernel accounted to the child and its descendants (wait4).
    pub user_s: f64,
    pub system_s: f64,
    /// Peak resident set of the child (wait4's ru_maxrss), KiB.
    pub max_rss_kib: u64,
    /// Exit status, or None when killed by a signal.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

impl StoneRun {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// How the run ended, in words.
    pub fn status_text(&self) -> String {
        match (self.exit_code, self.signal) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(s)) => format!("killed by signal {}", signal_text(s)),
            _ => "ended abnormally".into(),
        }
    }
}

/// `9 (SIGKILL)`: the number and, where the C library knows it, the name
/// (std's own table, as its `ExitStatus` prints it).
fn signal_text(sig: i32) -> String {
    use std::os::unix::process::ExitStatusExt;
    let status = std::process::ExitStatus::from_raw(sig & 0x7f).to_string();
    status
        .strip_prefix("signal: ")
        .map(str::to_string)
        .unwrap_or_else(|| sig.to_string())
}

/// The series: what was run, how, and the runs.
#[derive(Debug, Clone)]
pub struct Series {
    /// The command and its arguments as given.
    pub command: Vec<String>,
    /// Run through `sh -c`.
    pub shell: bool,
    pub warmup: usize,
    pub prepare: Option<String>,
    pub cleanup: Option<String>,
    pub runs: Vec<StoneRun>,
}

impl Series {
    /// The command's name for ids and file names: the program's base name
    /// (the first word's, with `--shell`), made safe for a file name.
    pub fn name(&self) -> String {
        let first = self
            .command
            .first()
            .map(String::as_str)
            .unwrap_or("command");
        let word = if self.shell {
            first.split_whitespace().next().unwrap_or("sh")
        } else {
            first
        };
        let base = word.rsplit('/').next().unwrap_or(word);
        let safe: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if safe.is_empty() {
            "command".into()
        } else {
            safe
        }
    }

    /// Seconds per run by the cycle counter: what the log holds.
    pub fn seconds(&self) -> Vec<f64> {
        self.runs.iter().map(|r| r.cycles_ns / 1e9).collect()
    }
}

/// The log: one value per line, in seconds (as the seed's
/// `time.master.worldstone.log`, which ministat reads directly).
pub fn log_text(seconds: &[f64]) -> String {
    seconds.iter().map(|s| format!("{s:.9}\n")).collect()
}

/// Reads a log written by [`log_text`] (or any file of one number per
/// line; `#` comments and blank lines skipped). Err names the bad line.
pub fn parse_log(text: &str) -> Result<Vec<f64>, String> {
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let first = t.split_whitespace().next().unwrap_or(t);
        match first.parse::<f64>() {
            Ok(x) if x.is_finite() => v.push(x),
            _ => return Err(format!("line {}: not a number: {t:?}", i + 1)),
        }
    }
    Ok(v)
}

/// The summary printed after the runs: min, max, median, mean and stddev of
/// the cycle-counter time, the wall clock, CPU times and peak memory.
pub fn summary_text(series: &Series) -> String {
    let runs = &series.runs;
    let mut out = format!(
        "{}: {} run{}{}\n",
        display_command(series),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        if series.warmup > 0 {
            format!(
                " after {} warm-up{}",
                series.warmup,
                if series.warmup == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        }
    );
    out.push_str(&format!(
        "{:<18} {:>12} {:>12} {:>12} {:>12} {:>12}\n",
        "", "min", "max", "median", "mean", "stddev"
    ));
    let rows: [(&str, Vec<f64>); 5] = [
        ("time (cycles), s", series.seconds()),
        (
            "time (wall), s",
            runs.iter().map(|r| r.wall_ns / 1e9).collect(),
        ),
        ("user CPU, s", runs.iter().map(|r| r.user_s).collect()),
        ("system CPU, s", runs.iter().map(|r| r.system_s).collect()),
        (
            "peak RSS, KiB",
            runs.iter().map(|r| r.max_rss_kib as f64).collect(),
        ),
    ];
    for (label, values) in rows {
        if let Some(s) = Summary::of(&values) {
            let f = |x: f64| ministat::format_g(x, 6);
            out.push_str(&format!(
                "{label:<18} {:>12} {:>12} {:>12} {:>12} {:>12}\n",
                f(s.min),
                f(s.max),
                f(s.median),
                f(s.mean),
                f(s.stddev)
            ));
        }
    }
    let failed = runs.iter().filter(|r| !r.succeeded()).count();
    if failed > 0 {
        out.push_str(&format!(
            "{failed} of {} runs failed (ignored as asked)\n",
            runs.len()
        ));
    }
    out
}

fn display_command(series: &Series) -> String {
    if series.shell {
        format!("sh -c {:?}", series.command.join(" "))
    } else {
        series.command.join(" ")
    }
}

/// The ministat report of `old` (x) against `new` (+).
pub fn compare_text(
    old_name: &str,
    old: &[f64],
    new_name: &str,
    new: &[f64],
) -> Result<String, String> {
    ministat::compare(
        &[(old_name, old), (new_name, new)],
        &MinistatOptions::default(),
    )
    .map_err(|e| {
        String::from_utf8_lossy(&e.stderr_bytes())
            .trim()
            .to_string()
    })
}

/// What the results file records about the run's setting.
pub struct Context<'a> {
    pub clock: &'a ClockInfo,
    pub base: &'a Base,
    pub machine: &'a Machine,
    /// The yamba command line.
    pub argv: Vec<String>,
    pub started: String,
}

/// Relative difference allowed between the cycle counter and the wall clock
/// over a whole run before the result is withheld.
pub const CLOCK_AGREEMENT: f64 = 0.01;

/// The series as one [`BenchResult`] (id `stone.<name>`, observations in ns
/// by the cycle counter), with per-run CPU times and peak memory in `extra`,
/// in a [`ResultsFile`] like `yamba run` writes.
pub fn results_file(series: &Series, ctx: &Context) -> ResultsFile {
    let runs = &series.runs;
    let name = series.name();
    let mut r = BenchResult::new(
        format!("stone.{name}"),
        "stone",
        "stone",
        Unit::Nanoseconds,
        Mode::Hot,
        "posix-spawn-wait4",
    );
    r.description = format!("one run of `{}`, spawn to exit", display_command(series));
    r.method = Some(Method::direct(
        1,
        0.0,
        0.0,
        runs.iter().map(|r| r.wall_ns).sum::<f64>() / 1e9,
        format!("{} runs as asked", runs.len()),
    ));
    r.set_observations(runs.iter().map(|r| r.cycles_ns).collect());
    r.param("command", &series.command)
        .param("shell", series.shell)
        .param("runs", runs.len())
        .param("warmup", series.warmup);
    if let Some(p) = &series.prepare {
        r.param("prepare", p);
    }
    if let Some(c) = &series.cleanup {
        r.param("cleanup", c);
    }
    let worst = runs
        .iter()
        .map(|r| (r.cycles_ns / r.wall_ns.max(1.0) - 1.0).abs())
        .fold(0.0, f64::max);
    r.add_evidence(
        "the cycle counter and the wall clock agree on every run",
        format!("within {:.0}%", CLOCK_AGREEMENT * 100.0),
        format!("worst {:.4}%", worst * 100.0),
        worst <= CLOCK_AGREEMENT,
    );
    let failed = runs.iter().filter(|r| !r.succeeded()).count();
    r.add_note_evidence(
        "every run exited with status 0",
        format!("0 of {} failed", runs.len()),
        format!("{failed} failed"),
        failed == 0,
    );
    if failed > 0 {
        r.warn(format!(
            "{failed} runs failed; their times are included (--ignore-failure)"
        ));
    }
    let per_run: Vec<serde_json::Value> = runs
        .iter()
        .map(|x| {
            serde_json::json!({
                "ticks": x.ticks,
                "cycles_ns": x.cycles_ns,
                "wall_ns": x.wall_ns,
                "user_s": x.user_s,
                "system_s": x.system_s,
                "max_rss_kib": x.max_rss_kib,
                "exit_code": x.exit_code,
                "signal": x.signal,
            })
        })
        .collect();
    r.extra
        .insert("runs".into(), serde_json::Value::Array(per_run));
    r.accounting = Some(Accounting {
        wall_s: runs.iter().map(|r| r.wall_ns).sum::<f64>() / 1e9,
        user_s: runs.iter().map(|r| r.user_s).sum(),
        system_s: runs.iter().map(|r| r.system_s).sum(),
        max_rss_kib: runs.iter().map(|r| r.max_rss_kib).max().unwrap_or(0),
        // Switches, CPU states and counters are not taken per run here.
        ..Accounting::default()
    });
    r.apply_evidence();
    let mut file = ResultsFile::new(
        ctx.argv.clone(),
        serde_json::json!({ "stone": {
            "runs": runs.len(), "warmup": series.warmup, "shell": series.shell,
        }}),
        ctx.machine.clone(),
        ctx.clock.clone(),
        ctx.base.clone(),
    );
    file.started = ctx.started.clone();
    file.finish(false);
    file.results = vec![r];
    file.notes = vec![
        "accounting sums the runs (max_rss_kib is the largest); per-run values are in extra.runs"
            .into(),
    ];
    file
}
