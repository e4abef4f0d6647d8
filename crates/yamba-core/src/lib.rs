//! yamba's measurement core.
//!
//! The pieces every benchmark stands on: a calibrated [`clock`], the cost of
//! measuring nothing ([`base`]), the loop and single-operation [`harness`]
//! with run-time [`unroll`]ing and [`cold`]-cache worst cases, the
//! [`machine`] description, CPU [`cpustates`], [`affinity`], crash and hang
//! [`isolate`]ion and the suite [`runner`]. The versioned [`results`] file's
//! types live in the `yamba-results` crate and are re-exported here.

pub mod affinity;
pub mod base;
pub mod bench;
pub mod clock;
pub mod cold;
pub mod coreclock;
pub mod counters;
pub mod cpustates;
pub mod harness;
pub mod host;
pub mod interrupt;
pub mod isolate;
pub mod lifeline;
pub mod machine;
pub mod placement;
pub mod profile;
pub mod results;
pub mod run_session;
pub mod runner;
pub mod scratch;
pub mod settings;
pub mod stop;
pub mod time_block;
pub mod unroll;

/// Units of results: re-exported from `yamba-results` at their old path.
pub use yamba_results::units;

pub use bench::{Benchmark, Ctx, Replication, RunConfig, Session};
pub use clock::Clock;
pub use harness::{Measured, Plan};
pub use machine::{Describe, Machine};
pub use results::{BenchResult, Evidence, Method, MethodKind, Mode, ResultsFile, Series, Status};
pub use settings::{Kind, Setting};
pub use units::Unit;

/// This yamba's version, as recorded in results files.
pub use yamba_results::VERSION;
