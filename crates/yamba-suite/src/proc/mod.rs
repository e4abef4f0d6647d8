//! Area `proc`: creating and destroying processes and threads — fork
//! light and heavy (with their tails), vfork, posix_spawn, fork + exec,
//! thread create + join, fork split into creation and exit + reap, and
//! a command run through the shell.

#[cfg(target_os = "linux")]
pub mod adapter;
#[cfg(target_os = "linux")]
pub mod check;
#[cfg(target_os = "linux")]
pub mod exec;
#[cfg(target_os = "linux")]
pub mod fork;
#[cfg(target_os = "linux")]
pub mod shell;
#[cfg(target_os = "linux")]
pub mod thread;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order (none yet off Linux: no adapter).
#[cfg(target_os = "linux")]
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

#[cfg(not(target_os = "linux"))]
pub static BENCHMARKS: &[&Benchmark] = &[];
