//! Platform adapter for the agent (`yamba serve`) and the benchmarks that
//! talk to one: how the agent opens a file without following links or
//! blocking, and how it learns the path the kernel actually opened.
//!
//! The interface every implementation provides: `NAME`,
//! `open_read_nofollow`, `fd_path`.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`, so the runner skips `fs.remote` there; the agent itself
//! still serves, with the portable checks only).

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
