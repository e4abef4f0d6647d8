//! Area `mem`: what memory costs — load-to-use latency by working-set size
//! (cache levels, memory, TLB), bandwidth (read, write, copy, triad, with
//! and without non-temporal stores, one thread and one per CPU), and page
//! faults (anonymous first touch, file page in the page cache, file page
//! read from the device — with proof that it really was paged out).

pub mod adapter;
pub mod bandwidth;
pub mod chase;
pub mod curve;
pub mod kernels;
pub mod latency;
pub mod line;
pub mod llc;
pub mod major;
pub mod naive;
pub mod pagefault;
pub mod plateau;
pub mod tlb;
pub mod touch;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &latency::LATENCY,
    &latency::LATENCY_HUGE,
    &tlb::TLB,
    &line::LINE,
    &bandwidth::READ,
    &bandwidth::WRITE,
    &bandwidth::COPY,
    &bandwidth::TRIAD,
    &bandwidth::WRITE_NT,
    &bandwidth::COPY_NT,
    &pagefault::ANON,
    &pagefault::CACHED,
    &major::MAJOR,
    &naive::NAIVE_MSYNC,
];
