//! Area `mem`: what memory costs — load-to-use latency by working-set size
//! (cache levels, memory, TLB), how many misses overlap (memory-level
//! parallelism), bandwidth (read, write, copy, triad, with and without
//! non-temporal stores, libc's memset and memcpy, one thread and one per
//! CPU), page faults (anonymous first touch, file page in the page cache,
//! file page read from the device — with proof that it really was paged
//! out), and mapping a file and unmapping it.

pub mod adapter;
pub mod bandwidth;
pub mod bandwidth_curve;
pub mod chase;
pub mod curve;
pub mod kernels;
pub mod latency;
pub mod latency_sequential;
pub mod line;
pub mod llc;
pub mod major;
pub mod mmap;
pub mod naive;
pub mod pagefault;
pub mod parallelism;
pub mod plateau;
pub mod tlb;
pub mod touch;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &latency::LATENCY,
    &latency::LATENCY_HUGE,
    &latency_sequential::LATENCY_SEQUENTIAL,
    &tlb::TLB,
    &line::LINE,
    &parallelism::PARALLELISM,
    &bandwidth::READ,
    &bandwidth_curve::READ_CURVE,
    &bandwidth::WRITE,
    &bandwidth::COPY,
    &bandwidth::TRIAD,
    &bandwidth::WRITE_NT,
    &bandwidth::COPY_NT,
    &bandwidth::BCOPY,
    &bandwidth::BZERO,
    &bandwidth::RDWR,
    &bandwidth::ADD,
    &bandwidth::SCALE,
    &pagefault::ANON,
    &pagefault::CACHED,
    &major::MAJOR,
    &naive::NAIVE_MSYNC,
    &mmap::MMAP,
];
