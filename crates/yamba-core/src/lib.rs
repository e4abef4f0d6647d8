//! yamba's measurement core.
//!
//! The pieces every benchmark stands on: a calibrated [`clock`], the cost of
//! measuring nothing ([`base`]), the loop and single-operation [`harness`]
//! with run-time [`unroll`]ing and [`cold`]-cache worst cases, the
//! [`machine`] description, CPU [`cpustates`], [`affinity`], crash and hang
//! [`isolate`]ion and the suite [`runner`]. The versioned results file's
//! types live in the `yamba-results` crate; the ones a benchmark returns
//! ([`BenchResult`], [`Mode`], [`Status`], [`Unit`], …) are re-exported at
//! this crate's root.

pub mod affinity;
pub mod base;
pub mod bench;
pub mod clock;
pub mod cold;
pub mod copies;
pub mod coreclock;
pub mod counters;
pub mod cpustates;
pub mod harness;
pub mod host;
pub mod interrupt;
pub mod isolate;
pub mod lifeline;
pub mod machine;
pub mod memo;
pub mod placement;
pub mod profile;
pub mod run_session;
pub mod runner;
pub mod scratch;
pub mod settings;
pub mod stop;
pub mod time_block;
pub mod unroll;

pub use bench::{Benchmark, Cold, Ctx, Replication, RunConfig, Session};
pub use clock::Clock;
pub use harness::{Measured, Plan};
pub use machine::{Describe, Machine};
pub use settings::{Kind, Setting};
pub use yamba_results::results::{
    BenchResult, Evidence, Method, MethodKind, Mode, ResultsFile, Series, Status,
};
pub use yamba_results::units::Unit;

/// This yamba's version, as recorded in results files.
pub use yamba_results::VERSION;
