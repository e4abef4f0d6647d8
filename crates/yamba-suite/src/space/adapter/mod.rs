//! Platform adapter for the `space` area: creating N of a primitive and
//! holding them, counting that they exist (the census), and reading what
//! memory the kernel and this process account.
//!
//! The interface every implementation provides: `NAME`; `Kind` (with
//! `fds`); `Kernel`, `kernel`, `refresh_counters`; `own_rss`,
//! `private_bytes`; `census`, `still_mapped`, `raise_nofile`; `Batch` (`create`,
//! `children`, `pages`).
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
