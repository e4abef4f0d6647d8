//! Area `space`: memory per primitive (the Go! report's spatial
//! performance) — process, thread, pipe, socketpair, eventfd, epoll,
//! timerfd, mapped region — kernel and user bytes per object.

#[cfg(target_os = "linux")]
pub mod adapter;
#[cfg(target_os = "linux")]
pub mod measure;
#[cfg(target_os = "linux")]
pub mod primitives;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order (none yet off Linux: no adapter).
#[cfg(target_os = "linux")]
pub static BENCHMARKS: &[&Benchmark] = &[
    &primitives::PROCESS,
    &primitives::THREAD,
    &primitives::PIPE,
    &primitives::SOCKETPAIR,
    &primitives::EVENTFD,
    &primitives::EPOLL,
    &primitives::TIMERFD,
    &primitives::MAPPING,
];

#[cfg(not(target_os = "linux"))]
pub static BENCHMARKS: &[&Benchmark] = &[];
