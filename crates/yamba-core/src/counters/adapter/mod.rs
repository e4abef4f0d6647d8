//! Hardware counters, per platform.
//!
//! The interface every implementation provides: `HW_CPU_CYCLES`,
//! `HW_INSTRUCTIONS`, and `Counter` with `open(event)` and `read()`
//! (count, share of the time it was counting).
//!
//! `linux.rs` (perf_event_open) on Linux; `unsupported.rs` elsewhere.

#[cfg_attr(target_os = "linux", path = "linux.rs")]
#[cfg_attr(not(target_os = "linux"), path = "unsupported.rs")]
mod imp;

pub use imp::*;
