//! yamba's measurement core.
//!
//! The pieces every benchmark stands on: a calibrated [`clock`], the cost of
//! measuring nothing ([`base`]), the loop and single-operation [`harness`]
//! with run-time [`unroll`]ing and [`cold`]-cache worst cases, the
//! [`machine`] description, CPU [`cpustates`], [`affinity`], crash and hang
//! [`isolate`]ion, the suite [`runner`] and the versioned [`results`] file.

pub mod affinity;
pub mod base;
pub mod bench;
pub mod clock;
pub mod cold;
pub mod coreclock;
pub mod counters;
pub mod cpustates;
pub mod harness;
pub mod interrupt;
pub mod isolate;
pub mod machine;
#[cfg(target_os = "linux")]
mod perf_sys;
pub mod profile;
pub mod results;
pub mod runner;
pub mod stop;
pub mod time_block;
pub mod units;
pub mod unroll;

pub use bench::{Benchmark, Ctx, Replication, RunConfig, Session};
pub use clock::Clock;
pub use harness::{Measured, Plan};
pub use machine::Machine;
pub use results::{BenchResult, Evidence, Mode, ResultsFile, Series, Status};
pub use units::Unit;

/// This yamba's version, as recorded in results files.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
