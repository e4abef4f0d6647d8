//! Linux: mmap(2) with the flags each helper names, munmap(2), and the
//! auxiliary vector.

/// Whether the kernel mapped a vDSO into this process (AT_SYSINFO_EHDR).
pub fn vdso_mapped() -> bool {
    // SAFETY: getauxval has no preconditions.
    unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) != 0 }
}

/// mmap(2) of `len` bytes; the one place the adapters call it. Creating a
/// mapping touches no existing memory except with MAP_FIXED, which is not
/// offered here (MAP_FIXED_NOREPLACE fails rather than replace anything).
fn mmap(at: usize, len: usize, prot: i32, flags: i32, fd: i32) -> std::io::Result<*mut u8> {
    debug_assert!(flags & libc::MAP_FIXED == 0);
    // SAFETY: a new mapping at an address the kernel chooses (or, with
    // MAP_FIXED_NOREPLACE, only where nothing is mapped); no existing memory
    // is affected. The caller owns the result and unmaps it.
    let p = unsafe { libc::mmap(at as *mut libc::c_void, len, prot, flags, fd, 0) };
    if p == libc::MAP_FAILED {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(p.cast())
    }
}

const RW: i32 = libc::PROT_READ | libc::PROT_WRITE;

/// Private anonymous memory, readable and writable, zero-filled. Release
/// it with [`unmap`].
pub fn map_anon(len: usize) -> std::io::Result<*mut u8> {
    mmap(0, len, RW, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)
}

/// Address space reserved and inaccessible (PROT_NONE): where to place
/// mappings with [`map_anon_at`] after unmapping it.
pub fn reserve(len: usize) -> std::io::Result<*mut u8> {
    mmap(
        0,
        len,
        libc::PROT_NONE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
    )
}

/// Private anonymous read-write memory exactly at `at`; fails (EEXIST)
/// rather than replace anything already mapped there.
pub fn map_anon_at(at: usize, len: usize) -> std::io::Result<*mut u8> {
    mmap(
        at,
        len,
        RW,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
        -1,
    )
}

/// The first `len` bytes of `file`, shared and read-only. Reading past the
/// file's end (or after it shrank) raises SIGBUS: the caller keeps `len`
/// within the file.
pub fn map_file_read(file: &std::fs::File, len: usize) -> std::io::Result<*mut u8> {
    use std::os::fd::AsRawFd;
    mmap(0, len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd())
}

/// Anonymous memory shared with children forked after this call (the
/// kernel zeroes it). Release it with [`unmap`].
pub fn map_shared(bytes: usize) -> Result<*mut u8, crate::OsError> {
    mmap(0, bytes, RW, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1)
        .map_err(crate::OsError::call("mmap(MAP_SHARED)"))
}

/// Unmaps memory from one of the `map_*` helpers above.
///
/// # Safety
/// `p`/`bytes` must cover pages this process mapped and owns, and nothing
/// may use them afterwards: unmapping memory a reference or another owner
/// still points to is a use after free.
pub unsafe fn unmap(p: *mut u8, bytes: usize) {
    // SAFETY: the caller's contract above.
    unsafe { libc::munmap(p.cast(), bytes) };
}
