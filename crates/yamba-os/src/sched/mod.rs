//! What the scheduler accounts to one task: the time it ran on a CPU and
//! the time it was runnable but waited for one. The `ipc` peers' check that
//! a peer had its CPU, the `proc` and `signal` areas' check that the
//! measuring thread seldom waited, and the stress supervisor's account of a
//! stalled worker all read it here.
//!
//! The interface every implementation provides: `sched_times`.
//!
//! `linux.rs` on Linux (/proc/…/schedstat, present when the kernel keeps
//! schedstats); `unsupported.rs` everywhere else (None: "cannot tell").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;

/// A task's accumulated scheduling times, in ns since it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedTimes {
    /// On a CPU.
    pub ran_ns: u64,
    /// Runnable but not running: waiting for a CPU.
    pub waited_ns: u64,
}

impl SchedTimes {
    /// The times accumulated since `earlier` (0 where a counter went back).
    pub fn since(self, earlier: SchedTimes) -> SchedTimes {
        SchedTimes {
            ran_ns: self.ran_ns.saturating_sub(earlier.ran_ns),
            waited_ns: self.waited_ns.saturating_sub(earlier.waited_ns),
        }
    }
}
