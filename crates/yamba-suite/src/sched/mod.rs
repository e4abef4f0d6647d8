//! Area `sched`: interruptions — how often and for how long the CPU is
//! taken from a program that never gives it up, and what a preemption
//! between two CPU-bound threads costs, and how late a timer wakes a
//! sleeping thread (`wakeup`). `interruptions::noise_report` is
//! also the machine's noise check for the runner.
//!
//! Both stand on the gap recorder in `gaps`; Linux specifics (per-thread
//! switch counts) are in `adapter`.

pub mod adapter;
pub mod gaps;
pub mod interruptions;
pub mod preemption;
pub mod wakeup;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &interruptions::INTERRUPTIONS,
    &preemption::PREEMPTION,
    &wakeup::NANOSLEEP,
    &wakeup::TIMERFD,
    &wakeup::ITIMER,
];
