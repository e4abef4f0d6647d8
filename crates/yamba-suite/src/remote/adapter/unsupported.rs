//! The agent's adapter where there is no Linux one: POSIX opens (without
//! following a final link or blocking), checked after, and no way to read
//! back the path a descriptor refers to.
//! `NAME` is `NO_ADAPTER`, so the runner skips the benchmarks that name it.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

/// Without O_PATH: opened without following a final link or blocking,
/// then checked (a device's open has run by then).
pub fn open_regular(p: &Path) -> Result<File, String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(p)
        .map_err(|e| format!("cannot open: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".into());
    }
    if meta.nlink() > 1 {
        return Err(format!("has {} hard links", meta.nlink()));
    }
    Ok(file)
}

/// Not available portably: the canonicalize and O_NOFOLLOW checks remain.
pub fn fd_path(_f: &File) -> Option<PathBuf> {
    None
}
