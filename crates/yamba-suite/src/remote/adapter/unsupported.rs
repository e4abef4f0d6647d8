//! Every platform without a Linux adapter. `NAME` is `NO_ADAPTER`, so the
//! runner skips the benchmarks that name it; the agent still serves, with
//! the portable checks (POSIX O_NOFOLLOW, canonicalized paths) only.
//! Porting: copy this file to `<os>.rs`, implement it, and select it in
//! `mod.rs`.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

pub fn open_read_nofollow(p: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(p)
}

/// Not available portably: the canonicalize and O_NOFOLLOW checks remain.
pub fn fd_path(_f: &File) -> Option<PathBuf> {
    None
}
