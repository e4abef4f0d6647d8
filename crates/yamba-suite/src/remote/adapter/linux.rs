//! The agent's Linux adapter: O_NOFOLLOW opens and /proc/self/fd.

use std::fs::File;
use std::os::fd::AsRawFd;
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

/// The path the kernel reports for an open descriptor (/proc/self/fd).
pub fn fd_path(f: &File) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()
}
