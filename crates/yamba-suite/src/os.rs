//! Linux helpers that several areas' adapters had each written out the
//! same way. Area-specific platform code stays in each area's `adapter`
//! module; only what is identical across areas lives here.

use std::sync::atomic::AtomicU64;

/// Whether the kernel mapped a vDSO into this process (AT_SYSINFO_EHDR).
pub(crate) fn vdso_mapped() -> bool {
    // SAFETY: getauxval has no preconditions.
    unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) != 0 }
}

/// `what` and the last OS error, as one line.
pub(crate) fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Anonymous memory shared with children forked after this call (the
/// kernel zeroes it). Release it with [`unmap`].
pub(crate) fn map_shared(bytes: usize) -> Result<*mut u8, String> {
    // SAFETY: a fresh anonymous mapping; the kernel zeroes it.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(os_err("mmap(MAP_SHARED)"));
    }
    Ok(p.cast())
}

/// Unmaps memory from [`map_shared`].
pub(crate) fn unmap(p: *mut u8, bytes: usize) {
    // SAFETY: p/bytes came from map_shared.
    unsafe { libc::munmap(p.cast(), bytes) };
}

/// A 4 KiB page shared with forked children (MAP_SHARED), as 512 atomic
/// words: how a child reports timestamps or counters to its parent.
pub(crate) struct SharedPage {
    ptr: *mut AtomicU64,
}

impl SharedPage {
    pub(crate) fn new() -> Result<SharedPage, String> {
        // SAFETY: a fresh 4 KiB shared anonymous mapping, zero-filled.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err("cannot map a shared page"));
        }
        Ok(SharedPage { ptr: p.cast() })
    }

    /// Slot `i` (0..512) of the page.
    pub(crate) fn slot(&self, i: usize) -> &AtomicU64 {
        assert!(i < 512);
        // SAFETY: within the mapped page; AtomicU64 has u64's layout.
        unsafe { &*self.ptr.add(i) }
    }
}

impl Drop for SharedPage {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping.
        unsafe { libc::munmap(self.ptr.cast(), 4096) };
    }
}
