//! Platform adapter for the `net` area and the agent: sockets are std's
//! (BSD sockets everywhere); what differs is how the agent opens a file
//! without following links or blocking, and how it learns the path the
//! kernel actually opened.
//!
//! The interface every implementation provides: `NAME`,
//! `open_read_nofollow`, `fd_path`.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
