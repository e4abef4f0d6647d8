//! What is made of a series of timed runs of one command (the seed's
//! worldstone): the summary, the comparison of several commands, the
//! exports, the log file, the results file, the ministat comparison with
//! an earlier log.
//!
//! Everything here is pure (the runs are made by [`crate::run`]), so it can
//! be tested on fixed numbers.

use yamba_ministat::{self as ministat, MinistatOptions};
use yamba_results::units::format_sig;
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
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// The command and its arguments as given.
    pub command: Vec<String>,
    /// Run through `sh -c`.
    pub shell: bool,
    pub warmup: usize,
    pub prepare: Option<String>,
    pub cleanup: Option<String>,
    pub runs: Vec<StoneRun>,
    /// The command as the user wrote it, for summaries and exports
    /// (`None`: its words joined by spaces).
    pub label: Option<String>,
    /// Parameter values substituted into the command (`-P`/`-L`).
    pub parameters: Vec<(String, String)>,
    /// Mean time of spawning the shell alone (`sh -c ''`), subtracted from
    /// every run with `--shell`; 0 without.
    pub shell_spawn_ns: f64,
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

    /// Seconds per run by the cycle counter, less the shell's own spawn
    /// time with `--shell`: what the log holds.
    pub fn seconds(&self) -> Vec<f64> {
        self.runs
            .iter()
            .map(|r| (r.cycles_ns - self.shell_spawn_ns).max(0.0) / 1e9)
            .collect()
    }

    /// The command as shown to people.
    pub fn display(&self) -> String {
        match &self.label {
            Some(l) => l.clone(),
            None => display_command(self),
        }
    }
}

/// How much faster the fastest command ran than each of the others.
#[derive(Debug, Clone, PartialEq)]
pub struct Relative {
    /// Index of the series with the lowest mean time.
    pub fastest: usize,
    /// Per series: mean time ÷ the fastest's mean, and that ratio's
    /// standard deviation (the two relative deviations in quadrature).
    pub ratios: Vec<(f64, f64)>,
}

/// Mean and sample standard deviation of a series' seconds.
pub fn mean_sd(series: &Series) -> Option<(f64, f64)> {
    Summary::of(&series.seconds()).map(|s| (s.mean, s.stddev))
}

/// Relative speed of several series; `None` with fewer than two or when a
/// mean is not positive.
pub fn relative(series: &[Series]) -> Option<Relative> {
    if series.len() < 2 {
        return None;
    }
    let stats: Vec<(f64, f64)> = series.iter().map(mean_sd).collect::<Option<_>>()?;
    if stats.iter().any(|&(m, _)| m.is_nan() || m <= 0.0) {
        return None;
    }
    let fastest = (0..stats.len())
        .min_by(|&a, &b| stats[a].0.total_cmp(&stats[b].0))
        .unwrap();
    let (mf, sf) = stats[fastest];
    let ratios = stats
        .iter()
        .map(|&(m, sd)| {
            let r = m / mf;
            let rel = ((sd / m).powi(2) + (sf / mf).powi(2)).sqrt();
            (r, if m == mf && sd == sf { 0.0 } else { r * rel })
        })
        .collect();
    Some(Relative { fastest, ratios })
}

/// "`a` ran 1.42 ± 0.03 times faster than `b`", one line per other command.
pub fn relative_text(series: &[Series]) -> String {
    let Some(rel) = relative(series) else {
        return String::new();
    };
    let mut out = format!("Summary\n  {} ran\n", series[rel.fastest].display());
    for (i, s) in series.iter().enumerate() {
        if i == rel.fastest {
            continue;
        }
        let (r, sd) = rel.ratios[i];
        out.push_str(&format!(
            "    {} ± {} times faster than {}\n",
            fixed(r),
            fixed(sd),
            s.display()
        ));
    }
    out
}

fn fixed(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Modified z-score (Iglewicz and Hoaglin: 0.6745 · (x − median) / MAD)
/// above which a run is called an outlier. Process times have long tails,
/// so the bound is far above the textbook 3.5: only runs that are
/// unmistakably different are flagged.
pub const OUTLIER_SCORE: f64 = 10.0;

/// Modified z-scores of `values` (all 0 when their MAD is 0).
pub fn modified_z(values: &[f64]) -> Vec<f64> {
    let med = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        yamba_stats::percentile_sorted(&s, 50.0)
    };
    if values.is_empty() {
        return Vec::new();
    }
    let m = med(values);
    let dev: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    let mad = med(&dev);
    values
        .iter()
        .map(|v| {
            if mad > 0.0 {
                0.6745 * (v - m) / mad
            } else {
                0.0
            }
        })
        .collect()
}

/// What a reader of the summary should be told: outlying runs, a first
/// run slower than the rest (caches were cold: use --warmup), runs too
/// short to time well.
pub fn warnings(series: &Series) -> Vec<String> {
    let secs = series.seconds();
    let mut out = Vec::new();
    if secs.len() >= 3 {
        let z = modified_z(&secs);
        let first_slow = z[0] > OUTLIER_SCORE && series.warmup == 0;
        if first_slow {
            out.push(format!(
                "the first run ({} s) was much slower than the rest (median {} s): \
                 caches were probably cold; --warmup N runs the command N times untimed first",
                sig(secs[0]),
                sig(median(&secs[1..]))
            ));
        }
        let outliers = z
            .iter()
            .enumerate()
            .filter(|&(i, z)| z.abs() > OUTLIER_SCORE && !(first_slow && i == 0))
            .count();
        if outliers > 0 {
            out.push(format!(
                "{outliers} of {} runs were outliers (modified z-score above {OUTLIER_SCORE}): \
                 other programs may have disturbed them; on a quiet machine the spread is smaller",
                secs.len()
            ));
        }
    }
    if let Some(s) = Summary::of(&secs) {
        if s.mean < 0.005 {
            out.push(format!(
                "a run took {} ms on average: process start-up is a large part of that{}",
                sig(s.mean * 1e3),
                if series.shell {
                    ""
                } else {
                    "; to measure an operation rather than a program, use `yamba run`"
                }
            ));
        }
    }
    out
}

fn sig(v: f64) -> String {
    ministat::format_g(v, 4)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    yamba_stats::percentile_sorted(&s, 50.0)
}

/// The series as JSON, one object per command (times in seconds, as in
/// hyperfine's export, plus what hyperfine lacks: cycle-counter times,
/// peak RSS).
pub fn export_json(series: &[Series]) -> serde_json::Value {
    let rel = relative(series);
    let results: Vec<serde_json::Value> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let secs = s.seconds();
            let sum = Summary::of(&secs);
            let get = |f: fn(&Summary) -> f64| sum.as_ref().map(f);
            let params: serde_json::Map<String, serde_json::Value> = s
                .parameters
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::json!({
                "command": s.display(),
                "mean": get(|x| x.mean),
                "stddev": get(|x| x.stddev),
                "median": get(|x| x.median),
                "min": get(|x| x.min),
                "max": get(|x| x.max),
                "user": mean_of(s.runs.iter().map(|r| r.user_s)),
                "system": mean_of(s.runs.iter().map(|r| r.system_s)),
                "max_rss_kib": s.runs.iter().map(|r| r.max_rss_kib).max(),
                "relative": rel.as_ref().map(|r| r.ratios[i].0),
                "relative_stddev": rel.as_ref().map(|r| r.ratios[i].1),
                "times": secs,
                "wall_times": s.runs.iter().map(|r| r.wall_ns / 1e9).collect::<Vec<_>>(),
                "exit_codes": s.runs.iter().map(|r| r.exit_code).collect::<Vec<_>>(),
                "shell_spawn_s": s.shell_spawn_ns / 1e9,
                "parameters": params,
            })
        })
        .collect();
    serde_json::json!({ "results": results })
}

/// [`export_json`] as the file holds it: indented, with a final newline.
pub fn export_json_text(series: &[Series]) -> String {
    serde_json::to_string_pretty(&export_json(series)).expect("a JSON value prints") + "\n"
}

fn mean_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// One CSV line per command: command, mean, stddev, median, user, system,
/// min, max (seconds), then one column per parameter.
pub fn export_csv(series: &[Series]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for s in series {
        for (k, _) in &s.parameters {
            if !names.contains(&k.as_str()) {
                names.push(k);
            }
        }
    }
    let mut out = String::from("command,mean,stddev,median,user,system,min,max,max_rss_kib");
    for n in &names {
        out.push_str(&format!(",parameter_{}", csv_field(n)));
    }
    out.push('\n');
    for s in series {
        let Some(sum) = Summary::of(&s.seconds()) else {
            continue;
        };
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{}",
            csv_field(&s.display()),
            sum.mean,
            sum.stddev,
            sum.median,
            mean_of(s.runs.iter().map(|r| r.user_s)).unwrap_or(0.0),
            mean_of(s.runs.iter().map(|r| r.system_s)).unwrap_or(0.0),
            sum.min,
            sum.max,
            s.runs.iter().map(|r| r.max_rss_kib).max().unwrap_or(0),
        ));
        for n in &names {
            let v = s.parameters.iter().find(|(k, _)| k == n).map(|(_, v)| v);
            out.push(',');
            out.push_str(&csv_field(v.map_or("", String::as_str)));
        }
        out.push('\n');
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A Markdown table: mean ± σ, min, max in one unit for all rows (the one
/// that suits the fastest), and the relative speed.
pub fn export_markdown(series: &[Series]) -> String {
    let rel = relative(series);
    let fastest = series
        .iter()
        .filter_map(mean_sd)
        .map(|(m, _)| m)
        .fold(f64::INFINITY, f64::min);
    let (div, unit) = Unit::Nanoseconds.scale_for(if fastest.is_finite() {
        fastest * 1e9
    } else {
        0.0
    });
    let f = |s: f64| format_sig(s * 1e9 / div);
    let mut out = format!(
        "| Command | Mean [{unit}] | Min [{unit}] | Max [{unit}] | Relative |\n|:---|---:|---:|---:|---:|\n"
    );
    for (i, s) in series.iter().enumerate() {
        let Some(sum) = Summary::of(&s.seconds()) else {
            continue;
        };
        let relative = match &rel {
            Some(r) if r.fastest == i => "1.00".to_string(),
            Some(r) => format!("{} ± {}", fixed(r.ratios[i].0), fixed(r.ratios[i].1)),
            None => "1.00".to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {} ± {} | {} | {} | {} |\n",
            s.display().replace('|', "\\|").replace('`', "'"),
            f(sum.mean),
            f(sum.stddev),
            f(sum.min),
            f(sum.max),
            relative
        ));
    }
    out
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
        series.display(),
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
            runs.iter()
                .map(|r| (r.wall_ns - series.shell_spawn_ns).max(0.0) / 1e9)
                .collect(),
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
    if series.shell_spawn_ns > 0.0 {
        out.push_str(&format!(
            "(times less {} ms, the mean time to spawn the shell alone, `sh -c ''`)\n",
            format_sig(series.shell_spawn_ns / 1e6)
        ));
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

/// What `yamba stone` prints after a series: its [`summary_text`], a
/// `Warning: ` line per [`warnings`], and a blank line.
pub fn report_text(series: &Series) -> String {
    let mut out = summary_text(series);
    for w in warnings(series) {
        out.push_str(&format!("Warning: {w}\n"));
    }
    out.push('\n');
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
    r.set_observations(series.seconds().iter().map(|s| s * 1e9).collect());
    if series.shell_spawn_ns > 0.0 {
        r.param("shell_spawn_ns_subtracted", series.shell_spawn_ns);
    }
    for (k, v) in &series.parameters {
        r.param(&format!("parameter.{k}"), v);
    }
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
