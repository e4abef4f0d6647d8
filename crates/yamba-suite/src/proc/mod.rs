//! Area `proc`: creating and destroying processes and threads — fork
//! light and heavy (with their tails), vfork, posix_spawn, fork + exec,
//! thread create + join, fork split into creation and exit + reap, and
//! a command run through the shell.

pub mod adapter;
pub mod check;
pub mod exec;
pub mod fork;
pub mod shell;
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
    &shell::SHELL_BENCH,
    &thread::THREAD,
];
