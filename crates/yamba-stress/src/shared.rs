//! What the supervisor shares with its forked workers (in yamba-os's
//! `Shared` memory): how a worker says how far it got, so that a crash or a
//! hang is reported with the operation that was in progress, and how the
//! supervisor tells the workers to stop.

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// Workers (churn and error tests together) one run may have.
pub const MAX_SLOTS: usize = 256;

/// Lifecycle of a slot's process.
pub const STARTING: u32 = 0;
pub const RUNNING: u32 = 1;
pub const DRAINING: u32 = 2;
pub const DONE: u32 = 3;

/// One worker's progress, written by the worker, read by the supervisor.
#[derive(Default)]
pub struct Slot {
    /// Operations (or error-test calls) completed.
    pub done: AtomicU64,
    /// The operation in progress: an op code (churn) or a call index (errors).
    pub current: AtomicU64,
    /// CLOCK_MONOTONIC when `current` started, in ns.
    pub since_ns: AtomicU64,
    pub state: AtomicU32,
    pub pid: AtomicI32,
}

impl Slot {
    /// Marks the start of operation `what`.
    #[inline]
    pub fn begin(&self, what: u64) {
        self.since_ns.store(now_ns(), Ordering::Relaxed);
        self.current.store(what, Ordering::Release);
    }

    #[inline]
    pub fn end(&self) {
        self.done.fetch_add(1, Ordering::Release);
    }
}

/// The whole run's control block.
pub struct Control {
    /// Set by the supervisor: finish the current operation, destroy everything, report.
    pub stop: AtomicU32,
    pub slots: [Slot; MAX_SLOTS],
}

impl Control {
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }
}

/// CLOCK_MONOTONIC in ns (shared by parent and children).
#[inline]
pub fn now_ns() -> u64 {
    yamba_core::clock::monotonic_ns()
}
