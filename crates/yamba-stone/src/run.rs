//! Making the runs: for each [`Job`], its setup command, warm-ups, then
//! the timed runs (each between the prepare and cleanup commands), timed
//! by [`yamba_core::isolate::time_command_limited`]. Nothing is printed:
//! what happens is told to a progress callback ([`Event`]).

use crate::plan::{substitute, Job, Options};
use crate::{shell_syntax, Error, Series, StoneRun};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use yamba_core::isolate::{time_command, time_command_limited};
use yamba_core::Clock;

/// What the engine is doing, for a progress display.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A job's series begins (after its setup command).
    Started(&'a Job),
    /// A run ended: a warm-up or a timed run, `number` counting each kind
    /// from 1.
    Ran {
        warmup: bool,
        number: usize,
        run: &'a StoneRun,
    },
    /// A run failed and the series stops ([`Error::RunFailed`] follows).
    Stopped(&'a Job),
    /// A job's series is complete.
    Finished(&'a Series),
}

/// Times every job in turn (after measuring the shell's start-up with
/// `options.shell`): one series per job, in order. Stops at the first
/// error: a helper that fails, a command that cannot be started or runs
/// past the timeout, or a failed run unless failures are ignored.
pub fn run(
    clock: &Clock,
    options: &Options,
    jobs: &[Job],
    progress: &mut dyn FnMut(Event<'_>),
) -> Result<Vec<Series>, Error> {
    let shell_spawn_ns = if options.shell {
        shell_spawn_ns(clock)?
    } else {
        0.0
    };
    jobs.iter()
        .map(|job| time_job(clock, options, job, shell_spawn_ns, progress))
        .collect()
}

/// One job's series: its setup command, warm-ups, then the timed runs (as
/// many as asked, or enough for about 3 seconds within the bounds).
/// `shell_spawn_ns` is subtracted from every run's time in the report
/// ([`Series::shell_spawn_ns`]); it is 0 without a shell.
pub fn time_job(
    clock: &Clock,
    options: &Options,
    job: &Job,
    shell_spawn_ns: f64,
    progress: &mut dyn FnMut(Event<'_>),
) -> Result<Series, Error> {
    let show = options.show_output;
    let around = |what, cmd: &Option<String>| match cmd {
        Some(c) => helper(what, &substitute(c, &job.parameters), show),
        None => Ok(()),
    };
    around("--setup", &options.setup)?;
    let mut series = Series {
        command: job.words.clone(),
        shell: options.shell,
        warmup: options.warmup,
        prepare: options.prepare.clone(),
        cleanup: options.cleanup.clone(),
        runs: Vec::new(),
        label: Some(job.label.clone()),
        parameters: job.parameters.clone(),
        shell_spawn_ns,
    };
    progress(Event::Started(job));
    let mut planned = options.runs.unwrap_or(usize::MAX);
    let mut i = 0;
    while series.runs.len() < planned {
        let warm = i < options.warmup;
        i += 1;
        around("--prepare", &options.prepare)?;
        let run = time_once(clock, options, &job.words)?;
        around("--cleanup", &options.cleanup)?;
        let number = if warm { i } else { series.runs.len() + 1 };
        if !run.succeeded() && !options.ignore_failure {
            progress(Event::Stopped(job));
            return Err(Error::RunFailed {
                label: job.label.clone(),
                run: if warm { "warm-up" } else { "run" },
                number,
                status: run.status_text(),
                hint: if show {
                    ""
                } else {
                    "; --show-output shows its output"
                },
            });
        }
        progress(Event::Ran {
            warmup: warm,
            number,
            run: &run,
        });
        if warm {
            continue;
        }
        if options.runs.is_none() && series.runs.is_empty() {
            planned = auto_runs(
                (run.cycles_ns - shell_spawn_ns).max(1.0),
                options.min_runs,
                options.max_runs,
            );
        }
        series.runs.push(run);
    }
    progress(Event::Finished(&series));
    Ok(series)
}

/// How many runs make about 3 seconds, given the first run's time.
pub fn auto_runs(first_ns: f64, min_runs: usize, max_runs: Option<usize>) -> usize {
    let n = (3e9 / first_ns).ceil().min(1e9) as usize;
    n.max(min_runs).min(max_runs.unwrap_or(usize::MAX))
}

/// Runs a setup, prepare or cleanup command through `sh -c`; its failure stops the series.
fn helper(what: &'static str, cmd: &str, show: bool) -> Result<(), Error> {
    let mut c = Command::new("sh");
    c.arg("-c").arg(cmd).stdin(Stdio::null());
    if !show {
        c.stdout(Stdio::null()).stderr(Stdio::null());
    }
    let command = || cmd.to_string();
    let status = c.status().map_err(|source| Error::Helper {
        what,
        command: command(),
        source,
    })?;
    if !status.success() {
        return Err(Error::HelperFailed {
            what,
            command: command(),
            status,
        });
    }
    Ok(())
}

/// The mean time of `sh -c ''` over 30 runs after 3 warm-ups: what
/// `--shell` adds to every run.
pub fn shell_spawn_ns(clock: &Clock) -> Result<f64, Error> {
    let empty = vec![String::new()];
    let mut times = Vec::new();
    for i in 0..33 {
        let mut c = shell_command(&empty);
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let t = time_command(clock, &mut c).map_err(Error::ShellStartup)?;
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

/// One timed run of `words` (through `sh -c` with `options.shell`).
fn time_once(clock: &Clock, options: &Options, words: &[String]) -> Result<StoneRun, Error> {
    let mut cmd = if options.shell {
        shell_command(words)
    } else {
        let mut c = Command::new(&words[0]);
        c.args(&words[1..]);
        c
    };
    cmd.stdin(Stdio::null());
    if !options.show_output {
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
    }
    let limit = options.timeout.map(std::time::Duration::from_secs_f64);
    let t = time_command_limited(clock, &mut cmd, limit).map_err(|source| Error::Spawn {
        program: words[0].clone(),
        hint: if !options.shell && shell_syntax(&words.join(" ")).is_some() {
            " (it looks like shell syntax: try --shell)"
        } else {
            ""
        },
        source,
    })?;
    if t.timed_out {
        return Err(Error::TimedOut {
            command: words.join(" "),
            seconds: options.timeout.unwrap_or_default(),
        });
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
    fn automatic_run_count() {
        assert_eq!(auto_runs(0.1e9, 10, None), 30);
        assert_eq!(auto_runs(2e9, 10, None), 10);
        assert_eq!(auto_runs(1e6, 10, Some(100)), 100);
    }
}
