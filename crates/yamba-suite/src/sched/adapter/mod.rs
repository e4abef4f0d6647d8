//! Platform adapter for the `sched` area: the kernel's per-thread switch
//! counts used as evidence that a gap in the clock loop was the CPU being
//! taken away, a child in a scheduling group of its own, and the
//! timers and sleeps whose wake-ups `wakeup` measures.
//!
//! The interface every implementation provides: `NAME`,
//! `thread_switches`, `run_in_new_session`, `set_autogroup_nice`,
//! `map_shared`, `unmap`; for the wake-up latencies `monotonic_ns`,
//! `timer_slack_ns`, `set_timer_slack_ns`, `sleep_until`, `sleep_for`,
//! `PeriodicTimer` (timerfd), `AlarmTimer` (setitimer + SIGALRM).
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
