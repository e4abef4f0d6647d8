//! Platform adapter for the `space` area (yamba-suite's `space::adapter`)
//! and the stress's baselines: creating N of a primitive and holding them,
//! counting that they exist (the census), and reading what memory the
//! kernel and this process account.
//!
//! The interface every implementation provides: `NAME`; `kernel` (the
//! [`Kernel`] counters, defined here for all), `refresh_counters`; `own_rss`, `private_bytes`; `census`,
//! `still_mapped`, `raise_nofile`; `Batch` (`create`, `files`, `children`, `pages`).
//! The primitives are [`Kind`]s: `Batch::create` makes the first eight
//! (the space area's), `Batch::files` files in a directory; not the
//! stress's file mappings, signals or CPU time.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use crate::Kind;
pub use imp::*;

/// The machine-wide kernel counters (on Linux, from /proc/meminfo), in
/// bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kernel {
    pub s_reclaimable: f64,
    pub s_unreclaim: f64,
    pub kernel_stack: f64,
    pub page_tables: f64,
}
