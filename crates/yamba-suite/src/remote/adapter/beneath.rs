//! Resolving a request beneath the root's directory descriptor, so that
//! no race can take it outside: the kernel's openat2 with
//! RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS (Linux 5.6 and later) resolves
//! every component — symbolic links included — and fails rather than
//! leave the root, however the tree changes meanwhile. Where openat2 is
//! missing (ENOSYS) or filtered (EPERM under a seccomp policy), the path
//! is walked a component at a time from the root descriptor with
//! O_NOFOLLOW, refusing any symbolic link, and the directory reached is
//! proven to be beneath the root by walking back up (`..`) to it.
//! Nothing is ever accepted on a path string or on /proc's word.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Test only: walk component by component even where openat2 works.
static FORCE_WALK: AtomicBool = AtomicBool::new(false);

/// Makes every later resolution walk component by component (the path
/// taken where the kernel has no openat2), for tests of that path.
#[doc(hidden)]
pub fn force_component_walk(on: bool) {
    FORCE_WALK.store(on, Ordering::SeqCst);
}

/// Which way paths are resolved here: "openat2" or "component walk".
pub fn resolver() -> &'static str {
    if FORCE_WALK.load(Ordering::SeqCst) || !has_openat2() {
        "component walk"
    } else {
        "openat2"
    }
}

fn has_openat2() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        // SAFETY: "." is a valid C string; the descriptor, if any, is closed at once.
        let r = unsafe { openat2(libc::AT_FDCWD, c".".as_ptr(), libc::O_PATH, 0) };
        match r {
            Ok(fd) => {
                // SAFETY: a descriptor we just opened.
                unsafe { libc::close(fd) };
                true
            }
            Err(e) => !matches!(e, libc::ENOSYS | libc::EPERM),
        }
    })
}

/// openat2(2): the descriptor, or errno.
///
/// # Safety
/// `path` must point to a NUL-terminated string.
unsafe fn openat2(
    dir: RawFd,
    path: *const libc::c_char,
    flags: i32,
    resolve: u64,
) -> Result<RawFd, i32> {
    // SAFETY: open_how is plain data; zero is a valid value of every field.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.resolve = resolve;
    // SAFETY: the caller's path; `how` is ours and of the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            path,
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(r as RawFd)
    }
}

fn errno_text(e: i32) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

/// An O_PATH handle (opens nothing: no device driver's open, no FIFO
/// rendezvous) on what `rel` names beneath the directory `root`, or why
/// not. `rel` has been checked to be relative, without `..` or NUL.
pub fn handle_beneath(root: &File, rel: &str) -> Result<File, String> {
    let c = std::ffi::CString::new(rel).map_err(|_| "path contains a NUL byte".to_string())?;
    if !FORCE_WALK.load(Ordering::SeqCst) {
        for _ in 0..8 {
            // SAFETY: a valid C string and an open directory descriptor.
            match unsafe {
                openat2(
                    root.as_raw_fd(),
                    c.as_ptr(),
                    libc::O_PATH | libc::O_CLOEXEC,
                    libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
                )
            } {
                // SAFETY: a descriptor openat2 just gave us.
                Ok(fd) => return Ok(unsafe { File::from_raw_fd(fd) }),
                // A rename or mount raced the resolution: the kernel
                // could not prove where it went; try again.
                Err(libc::EAGAIN) => continue,
                Err(libc::EXDEV) => return Err("resolves outside the served root".into()),
                Err(libc::ELOOP) => {
                    return Err("too many symbolic links, or a /proc magic link".into())
                }
                Err(libc::ENOSYS | libc::EPERM) => break,
                Err(e) => return Err(format!("cannot open: {}", errno_text(e))),
            }
        }
        if has_openat2() {
            return Err("changed while being opened (renamed again and again)".into());
        }
    }
    walk(root, rel)
}

/// The component walk: every directory opened O_NOFOLLOW from the one
/// before, the last component too (a symbolic link there is returned as
/// itself, and refused by its type), then the position proven.
fn walk(root: &File, rel: &str) -> Result<File, String> {
    let (dirs, last) = crate::remote::adapter::split_request(rel)?;
    let mut cur: OwnedFd = root
        .try_clone()
        .map_err(|e| format!("cannot open: {e}"))?
        .into();
    for d in &dirs {
        cur = at(&cur, d, libc::O_DIRECTORY).map_err(|e| match e {
            libc::ELOOP | libc::ENOTDIR => {
                format!("\"{d}\" on the way is not a directory (symbolic links are not followed without openat2)")
            }
            e => format!("cannot open: {}", errno_text(e)),
        })?;
    }
    let file = at(&cur, last, 0).map_err(|e| format!("cannot open: {}", errno_text(e)))?;
    // Proven beneath: `cur` reaches the root in exactly as many `..` as
    // it is deep, and is not the root on the way.
    let root_id = id(root.as_raw_fd())?;
    let mut up = cur;
    for _ in 0..dirs.len() {
        if id(up.as_raw_fd())? == root_id {
            return Err("resolves outside the served root (moved while being opened)".into());
        }
        up = at(&up, "..", libc::O_DIRECTORY)
            .map_err(|e| format!("cannot check: {}", errno_text(e)))?;
    }
    if id(up.as_raw_fd())? != root_id {
        return Err("resolves outside the served root (moved while being opened)".into());
    }
    // SAFETY: an O_PATH descriptor we own, handed to the File.
    Ok(unsafe { File::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(file)) })
}

/// openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | extra).
fn at(dir: &OwnedFd, name: &str, extra: i32) -> Result<OwnedFd, i32> {
    let c = std::ffi::CString::new(name).map_err(|_| libc::EINVAL)?;
    // SAFETY: a valid C string and an open descriptor; the result is ours.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC | extra,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    // SAFETY: a descriptor openat just gave us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// (device, inode) of a descriptor.
fn id(fd: RawFd) -> Result<(u64, u64), String> {
    // SAFETY: `fd` is open for the duration of the call (borrowed).
    let f = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
    let m = f.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    Ok((m.dev(), m.ino()))
}
