//! Area `signal`: exceptions — installing a handler, a signal to oneself,
//! a round trip to a peer process, and a protection fault resolved by a
//! handler (exception latency), hot and cold.

#[cfg(target_os = "linux")]
pub mod adapter;
#[cfg(target_os = "linux")]
pub mod check;
#[cfg(target_os = "linux")]
pub mod deliver;
#[cfg(target_os = "linux")]
pub mod fault;
#[cfg(target_os = "linux")]
pub mod install;
#[cfg(target_os = "linux")]
pub mod roundtrip;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order (none yet off Linux: no adapter).
#[cfg(target_os = "linux")]
pub static BENCHMARKS: &[&Benchmark] = &[
    &install::SIGACTION,
    &deliver::SELF,
    &roundtrip::ROUNDTRIP,
    &fault::FAULT,
];

#[cfg(not(target_os = "linux"))]
pub static BENCHMARKS: &[&Benchmark] = &[];
