//! Area `space`: memory per primitive (the Go! report's spatial
//! performance) — process, thread, pipe, socketpair, eventfd, epoll,
//! timerfd, mapped region — kernel and user bytes per object
//! (`space.<primitive>`); and the time to create and to destroy one
//! (`space.create_destroy.<primitive>`, files too).

/// The area's platform adapter: yamba-os's `space`, shared with the
/// stress (creating, holding and counting the primitives; the kernel's
/// memory counters).
pub use yamba_os::space as adapter;
pub mod create_destroy;
pub mod measure;
pub mod primitives;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &primitives::PROCESS,
    &primitives::THREAD,
    &primitives::PIPE,
    &primitives::SOCKETPAIR,
    &primitives::EVENTFD,
    &primitives::EPOLL,
    &primitives::TIMERFD,
    &primitives::MAPPING,
    &create_destroy::PIPE,
    &create_destroy::SOCKETPAIR,
    &create_destroy::EVENTFD,
    &create_destroy::EPOLL,
    &create_destroy::TIMERFD,
    &create_destroy::MAPPING,
    &create_destroy::FILE,
];
