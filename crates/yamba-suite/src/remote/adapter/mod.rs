//! Platform adapter for the agent: how it opens a file without following
//! links or blocking, and how it learns the path the kernel actually opened.
//!
//! The interface every implementation provides: `open_read_nofollow`,
//! `fd_path`.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else, where files open
//! the same way but the opened path cannot be read back (the agent's
//! canonicalize and O_NOFOLLOW checks remain).

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
