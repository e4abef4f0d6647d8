//! Platform adapter for the `net` area: sockets are std's (BSD sockets
//! everywhere), so what differs is only the name. (The agent's file
//! handling, and `fs.remote`'s adapter, is `crate::remote::adapter`.)
//!
//! The interface every implementation provides: `NAME`, and
//! `tcp_time_wait()` (sockets in TIME_WAIT, when the platform says).
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
