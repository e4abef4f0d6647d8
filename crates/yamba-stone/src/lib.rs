//! `yamba stone`: timing whole commands, as a library. Each command runs
//! many times (after warm-ups, with setup/prepare/cleanup commands
//! around), each run timed with the cycle counter and the wall clock, with
//! the kernel's accounting of the child (wait4: user and system CPU, peak
//! RSS). Several commands, or one command over a parameter's values, are
//! compared ("1.42 ± 0.03 times faster"); a series makes a summary, a log
//! of seconds per run that ministat reads, a results file, and
//! JSON/CSV/Markdown exports.
//!
//! The engine: [`Options`] → [`plan`] → [`Job`]s → [`run`] → [`Series`],
//! with progress told to a callback ([`Event`]); nothing here prints. The
//! CLI's `yamba stone` parses the options into [`Options`], prints, and
//! writes the files the user asked for.
//!
//! ```no_run
//! let options = yamba_stone::Options {
//!     commands: vec!["sleep 0.1".into()],
//!     runs: Some(5),
//!     ..Default::default()
//! };
//! let jobs = yamba_stone::plan(&options)?;
//! let clock = yamba_core::Clock::detect(100);
//! let series = yamba_stone::run(&clock, &options, &jobs, &mut |_| {})?;
//! print!("{}", yamba_stone::summary_text(&series[0]));
//! # Ok::<(), yamba_stone::Error>(())
//! ```

mod error;
mod files;
mod plan;
mod run;
mod series;

pub use error::{Error, ScanProblem};
pub use files::{beside_log, default_log, log_path, read_comparison, DEFAULT_LOG};
pub use plan::{
    parameter_values, plan, shell_syntax, split_words, substitute, Job, Options, Parameter,
};
pub use run::{auto_runs, run, shell_spawn_ns, time_job, Event};
pub use series::*;
