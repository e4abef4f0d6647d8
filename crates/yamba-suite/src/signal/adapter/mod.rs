//! Platform adapter for the `signal` area: installing handlers, sending a
//! signal to one thread, waiting for one, a peer process, and a page whose
//! protection makes every touch fault. The handlers live here because they
//! read the kernel's `siginfo_t`.
//!
//! The interface every implementation provides: `NAME`; `Handler`,
//! `Saved`, `action`, `sigaction`, `install`, `is_installed`; `handled`,
//! `reset_handled`, `faults`; `gettid`, `getpid`, `send`; `block` and
//! `MaskGuard`; `fork_peer`, `kill_and_reap`; `ProtPage`; `SharedPage`.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
