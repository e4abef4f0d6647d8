//! Area `signal`: exceptions — installing a handler, a signal to oneself,
//! a round trip to a peer process, and a protection fault resolved by a
//! handler (exception latency), hot and cold.

pub mod adapter;
pub mod check;
pub mod deliver;
pub mod fault;
pub mod install;
pub mod roundtrip;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &install::SIGACTION,
    &deliver::SELF,
    &roundtrip::ROUNDTRIP,
    &fault::FAULT,
];
