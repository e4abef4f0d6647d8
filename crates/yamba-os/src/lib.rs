//! The operating-system primitives the benchmark areas (yamba-suite), the
//! language's stdlib (yamba-lang) and the stressors (yamba-stress) share,
//! so that none of them reaches into another's code for them:
//!
//! - [`OsError`]: what failed, one line each;
//! - [`Kind`]: the one list of primitives (process, pipe, mapping, …) the
//!   `space` area measures and the stress churns;
//! - [`Shared`]: memory shared with forked processes (a peer's report, the
//!   stress's control block);
//! - [`mmap`]: the mapping helpers every adapter maps memory with;
//! - [`mem`]: anonymous and file mappings, fault counts, residency and
//!   page-outs (the `mem` area's adapter, and the stdlib's `linux.page_out`);
//! - [`space`]: creating N of a primitive, counting them (the census) and
//!   the kernel's memory counters (the `space` area's adapter, and the
//!   stress's baselines);
//! - [`sched`]: a task's time on a CPU and waiting for one (the peers'
//!   and the measuring thread's checks, the stress's account of a stall).
//!
//! Platform code has the adapter shape of docs/writing-benchmarks.md: each
//! of `mmap`, `mem`, `space` and `sched` picks `linux.rs` or
//! `unsupported.rs` in its `mod.rs` on `cfg(linux_adapters)`, which
//! build.rs sets on Linux unless the `no-adapters` feature is on.

pub mod error;
pub mod kind;
pub mod mem;
pub mod mmap;
pub mod sched;
pub mod shared;
pub mod space;

pub use error::OsError;
pub use kind::Kind;
pub use shared::{Shared, SharedPage};

/// The adapter name of an `unsupported` adapter: a platform nobody has
/// written (and run) the platform code for yet. Benchmarks naming it are
/// reported skipped with [`no_adapter_reason`], never run.
pub const NO_ADAPTER: &str = "none";

/// Why a benchmark whose adapter is [`NO_ADAPTER`] did not run.
pub fn no_adapter_reason() -> String {
    format!(
        "no adapter for this platform ({}-{})",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// `what` and the last OS error, as one line (for an adapter whose
/// errors are its benchmark's reasons).
pub fn os_err(what: &str) -> String {
    OsError::last(what).to_string()
}
