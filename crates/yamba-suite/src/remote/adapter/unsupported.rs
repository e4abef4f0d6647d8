//! The agent's adapter where there is no Linux one: POSIX opens, and no way
//! to read back the path a descriptor refers to.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Opens read-only; a final symlink is refused (ELOOP) and a FIFO or
/// device does not block the agent.
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
