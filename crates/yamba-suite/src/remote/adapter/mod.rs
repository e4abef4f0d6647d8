//! Platform adapter for the agent: how it opens a file it may serve
//! without opening anything else first, and how it learns the path the
//! kernel actually opened.
//!
//! The interface every implementation provides: `NAME` (for the
//! benchmarks that talk to an agent; `NO_ADAPTER` skips them), `open_regular` (a regular
//! file with one link, on a file system that holds data, or why not) and
//! `fd_path`.
//!
//! `linux.rs` on Linux (O_PATH, fstat and fstatfs before opening);
//! `unsupported.rs` everywhere else, where the file is opened without
//! following a final link or blocking and checked after, and the opened
//! path cannot be read back (the agent's canonicalize checks remain).

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
