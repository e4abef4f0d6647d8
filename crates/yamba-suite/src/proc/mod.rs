//! Area `proc`: creating and destroying processes and threads — fork
//! light and heavy (with their tails), vfork, posix_spawn, fork + exec,
//! thread create + join, and fork split into creation and exit + reap.

pub mod adapter;
pub mod check;
pub mod exec;
pub mod fork;
pub mod thread;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &fork::LIGHT,
    &fork::HEAVY,
    &fork::PHASES,
    &exec::VFORK,
    &exec::SPAWN,
    &exec::FORK_EXEC,
    &thread::THREAD,
];
