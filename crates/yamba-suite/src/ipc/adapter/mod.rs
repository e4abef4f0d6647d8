//! Platform adapter for the `ipc` area: the kernel objects the generic
//! round-trip, context-switch and one-way templates use (pipes, FIFOs, UNIX
//! sockets, eventfd, futex, POSIX message queues, System V and POSIX
//! semaphores, pthread mutexes; shared memory is
//! yamba-os's `Shared`), peer processes, and the kernel's own
//! context-switch counts used as evidence.
//!
//! The interface every implementation provides: `NAME`; `pipe`, `fifo`,
//! `socketpair`, `eventfd`, `mq_anonymous`, `close`, `dup`, `write_all`,
//! `read_exact`, `mq_send`, `mq_receive`; `futex_wait`, `futex_wake`,
//! `futex_wait_private`, `futex_wake_private`, `sched_yield`;
//! `SysvSems`, `PosixSems`, `PthreadMutex` (semaphores and the mutex of
//! `sem` and `lock`); `fork`, `exit_now`, `kill_and_reap`; `thread_switches`,
//! `process_switches`, `cpu_busy_ns` (a task's own scheduling times are
//! yamba-os's `sched`).
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;

/// One CPU's accumulated times (`cpu_busy_ns`), in ns since boot.
#[derive(Debug, Clone, Copy)]
pub struct CpuTimes {
    /// Not idle or waiting for I/O (includes steal).
    pub busy_ns: f64,
    /// Taken by the hypervisor while the CPU wanted to run: it delays
    /// whatever was due on that CPU, and a task's schedstat holds it only
    /// if the task was queued then.
    pub steal_ns: f64,
    pub total_ns: f64,
}
