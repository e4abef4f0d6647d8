//! Area `cpu`: the costs everything else is measured against — reading
//! the timer, an empty loop iteration, a procedure call, a system call —
//! and the core itself: its clock, and the latency and parallelism of its
//! arithmetic.

// Public, hidden, for tests/cpu_adapter.rs: the adapter's interface
// checked against ground truth on every platform CI builds (x86-64, i686,
// aarch64), not a part of the crate's API.
#[doc(hidden)]
pub mod adapter;
pub mod call;
pub mod file_syscalls;
pub mod loop_overhead;
pub mod mhz;
pub mod ops;
pub mod select;
pub mod syscall;
pub mod timer;

use yamba_core::Benchmark;

pub static BENCHMARKS: &[&Benchmark] = &[
    &timer::BASE,
    &timer::CLOCK_GETTIME,
    &loop_overhead::LOOP,
    &call::CALL,
    &syscall::GETPPID,
    &syscall::READ_DEVZERO,
    &file_syscalls::WRITE_DEVNULL,
    &file_syscalls::FSTAT,
    &file_syscalls::OPEN,
    &select::SELECT,
    &select::POLL,
    &mhz::MHZ,
    &ops::OPS,
    &ops::PARALLEL,
];
