//! Memory shared with forked workers (MAP_SHARED, zeroed by the kernel):
//! how a worker says how far it got, so that a crash or a hang is reported
//! with the operation that was in progress, and how the supervisor tells
//! the workers to stop.

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// Workers (churn and error tests together) one run may have.
pub const MAX_SLOTS: usize = 256;

/// A value of type `T` in a shared anonymous mapping. `T` must be valid
/// when all-zero (atomics and arrays of them).
pub struct Shared<T> {
    ptr: *mut T,
}

// SAFETY: T is only reached through shared references to atomics.
unsafe impl<T: Sync> Send for Shared<T> {}
unsafe impl<T: Sync> Sync for Shared<T> {}

impl<T> Shared<T> {
    pub fn new_zeroed() -> Result<Shared<T>, String> {
        // SAFETY: a fresh anonymous shared mapping; the kernel zeroes it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                std::mem::size_of::<T>().max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "mmap(MAP_SHARED): {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Shared { ptr: p.cast() })
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: mapped for self's lifetime; all-zero is a valid T.
        unsafe { &*self.ptr }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: our own mapping, of this size.
        unsafe { libc::munmap(self.ptr.cast(), std::mem::size_of::<T>().max(1)) };
    }
}

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
