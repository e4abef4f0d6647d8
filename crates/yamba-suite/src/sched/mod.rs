//! Area `sched`: interruptions — how often and for how long the CPU is
//! taken from a program that never gives it up, and what a preemption
//! between two CPU-bound threads costs. `interruptions::noise_report` is
//! also the machine's noise check for the runner.
//!
//! Both stand on the gap recorder in `gaps`; Linux specifics (per-thread
//! switch counts) are in `adapter`.

pub mod adapter;
pub mod gaps;
pub mod interruptions;
pub mod preemption;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[&interruptions::INTERRUPTIONS, &preemption::PREEMPTION];
