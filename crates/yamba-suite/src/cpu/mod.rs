//! Area `cpu`: the costs everything else is measured against — reading
//! the timer, an empty loop iteration, a procedure call, a system call.

mod adapter;
pub mod call;
pub mod loop_overhead;
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
];
