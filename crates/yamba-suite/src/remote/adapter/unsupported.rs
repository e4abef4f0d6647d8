//! The agent's adapter where there is no Linux one: a request resolved a
//! component at a time beneath the root's descriptor with O_NOFOLLOW (no
//! symbolic link followed), the directory reached proven beneath the root
//! by walking back up to it, the file opened without blocking and checked
//! after (a device's open has run by then).
//! `NAME` is `NO_ADAPTER`, so the runner skips the benchmarks that name it.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

/// The root directory, opened for the walks.
pub fn open_root(p: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(p)
}

/// Always the component walk here.
pub fn resolver() -> &'static str {
    "component walk"
}

/// Nothing to force: the walk is the only way here.
#[doc(hidden)]
pub fn force_component_walk(_on: bool) {}

fn at(dir: &OwnedFd, name: &str, flags: i32) -> Result<OwnedFd, String> {
    let c = std::ffi::CString::new(name).map_err(|_| "path contains a NUL byte".to_string())?;
    // SAFETY: a valid C string and an open descriptor; the result is ours.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(format!("cannot open: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: a descriptor openat just gave us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn id(f: &OwnedFd) -> Result<(u64, u64), String> {
    let c = f.try_clone().map_err(|e| format!("cannot stat: {e}"))?;
    let m = File::from(c)
        .metadata()
        .map_err(|e| format!("cannot stat: {e}"))?;
    Ok((m.dev(), m.ino()))
}

/// Opens `rel` beneath `root` without following any symbolic link, then
/// checks it is a regular file with one link.
pub fn open_beneath(root: &File, rel: &str) -> Result<File, String> {
    let (dirs, last) = crate::remote::adapter::split_request(rel)?;
    let mut cur: OwnedFd = root
        .try_clone()
        .map_err(|e| format!("cannot open: {e}"))?
        .into();
    for d in &dirs {
        cur = at(&cur, d, libc::O_RDONLY | libc::O_DIRECTORY)?;
    }
    let file: File = at(&cur, last, libc::O_RDONLY | libc::O_NONBLOCK)?.into();
    let root_id = id(&root.try_clone().map_err(|e| e.to_string())?.into())?;
    let mut up = cur;
    for _ in 0..dirs.len() {
        if id(&up)? == root_id {
            return Err("resolves outside the served root (moved while being opened)".into());
        }
        up = at(&up, "..", libc::O_RDONLY | libc::O_DIRECTORY)?;
    }
    if id(&up)? != root_id {
        return Err("resolves outside the served root (moved while being opened)".into());
    }
    let meta = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".into());
    }
    if meta.nlink() > 1 {
        return Err(format!("has {} hard links", meta.nlink()));
    }
    Ok(file)
}
