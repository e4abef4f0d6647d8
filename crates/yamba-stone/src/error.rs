//! Why a plan or a series could not be made. Each message is one line, as
//! the user reads it after `yamba: `; where the cause is an OS error, it is
//! the error's source (printed after a colon by `{:#}`).

use std::path::PathBuf;
use std::process::ExitStatus;

/// What stopped [`crate::plan`], [`crate::run`] or [`crate::read_comparison`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("--timeout {0}: must be a number of seconds in (0, 86400]")]
    Timeout(f64),
    #[error("-n must be at least 1")]
    NoRuns,
    #[error("--min-runs must be at least 1 and at most --max-runs")]
    MinRuns,
    #[error("no command to run (give it after --)")]
    NoCommand,
    #[error("an empty command")]
    EmptyCommand,
    /// A command to run without a shell uses what only a shell can do.
    #[error("{command:?} uses shell syntax ({what}); run it with --shell")]
    ShellSyntax { command: String, what: &'static str },
    #[error("{0:?}: unbalanced quotes (or run it with --shell)")]
    UnbalancedQuotes(String),
    /// `-P VAR MIN MAX` (as written) cannot be scanned.
    #[error("-P {var} {min} {max}: {problem}")]
    Scan {
        var: String,
        min: String,
        max: String,
        problem: ScanProblem,
    },
    #[error("--parameter-step-size {0}: must be a positive number")]
    StepSize(f64),
    #[error("-L {var} {list}: an empty value in the list")]
    EmptyListValue { var: String, list: String },
    #[error("the parameter {var} is not used: write {{{var}}} in the command {command:?}")]
    UnusedParameter { var: String, command: String },
    /// A setup, prepare or cleanup command could not be started.
    #[error("cannot run {what} command {command:?}")]
    Helper {
        what: &'static str,
        command: String,
        source: std::io::Error,
    },
    /// A setup, prepare or cleanup command failed.
    #[error("{what} command {command:?} failed ({status}): stopping")]
    HelperFailed {
        what: &'static str,
        command: String,
        status: ExitStatus,
    },
    #[error("cannot run sh to time its start-up")]
    ShellStartup(#[source] std::io::Error),
    /// The command could not be started (`hint`: a pointer to --shell, or empty).
    #[error("cannot run {program:?}{hint}")]
    Spawn {
        program: String,
        hint: &'static str,
        source: std::io::Error,
    },
    /// A run failed and the series stops (`run`: "run" or "warm-up";
    /// `hint`: a pointer to --show-output, or empty).
    #[error("{label}: {run} {number} {status}: stopping (--ignore-failure keeps going{hint})")]
    RunFailed {
        label: String,
        run: &'static str,
        number: usize,
        status: String,
        hint: &'static str,
    },
    #[error("{command}: timed out after {seconds} s (--timeout): killed with its process group")]
    TimedOut { command: String, seconds: f64 },
    #[error("--compare needs at least 3 runs (-n 3): ministat needs 3 values")]
    CompareRuns,
    /// The earlier log could not be read (the message names it).
    #[error(transparent)]
    Read(yamba_results::InputError),
    #[error("{}: not text: {reason}", path.display())]
    NotText {
        path: PathBuf,
        reason: std::string::FromUtf8Error,
    },
    /// A line of the earlier log is not a number.
    #[error("{}: {reason}", path.display())]
    BadLog { path: PathBuf, reason: String },
    #[error("{}: has {count} values, ministat needs at least 3", path.display())]
    TooFewValues { path: PathBuf, count: usize },
}

/// What is wrong with a `-P` scan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScanProblem {
    #[error("{0:?} is not a number")]
    NotANumber(String),
    #[error("MIN is larger than MAX")]
    Reversed,
    #[error("not integers; give --parameter-step-size")]
    NotIntegers,
    #[error("{0} values are too many")]
    TooMany(usize),
}
