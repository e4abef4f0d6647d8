//! Platform adapter for the agent: how it opens a file without following
//! links or blocking, and how it learns the path the kernel actually opened.

#[cfg(target_os = "linux")]
mod imp {
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
}

#[cfg(all(unix, not(target_os = "linux")))]
mod imp {
    use std::fs::File;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::{Path, PathBuf};

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
}

pub use imp::*;
