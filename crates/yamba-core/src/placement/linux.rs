//! Linux's part of code placement: a function's extent from the ELF
//! symbol table, and a mapping within reach of the executable's code.

pub fn function_size(addr: usize) -> Result<usize, String> {
    super::symbols::function_size(addr)
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// A private anonymous mapping within a rel32's reach of the executable's
/// code, writable until [`Mapping::install`] makes it executable (and no
/// longer writable: W^X).
pub struct Mapping {
    pub addr: usize,
    pub len: usize,
}

impl Mapping {
    // Where the architecture has no placement adapter (32-bit x86), its
    // REACH is 0 and these checks are constant; the function is never
    // reached there.
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(clippy::unnecessary_min_or_max, clippy::absurd_extreme_comparisons)
    )]
    pub fn near(code: usize, len: usize) -> Result<Mapping, String> {
        let step = (super::arch::REACH / 8).max(1 << 20);
        let base = code & !(step - 1);
        for k in 1..=8usize {
            for hint in [base.checked_sub(k * step), base.checked_add(k * step)] {
                let Some(hint) = hint else { continue };
                // SAFETY: a new private anonymous mapping; MAP_FIXED_NOREPLACE
                // never replaces an existing one.
                let p = unsafe {
                    libc::mmap(
                        hint as *mut libc::c_void,
                        len,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                        -1,
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    continue;
                }
                let m = Mapping {
                    addr: p as usize,
                    len,
                };
                // A kernel older than MAP_FIXED_NOREPLACE takes it as a hint.
                if m.addr.abs_diff(code) < super::arch::REACH {
                    return Ok(m);
                }
            }
        }
        Err("no free address range within reach of the executable's code".into())
    }

    /// Writes each `(offset, bytes)` piece and makes the mapping
    /// read-execute. The pages a piece lies on are filled with int3 first,
    /// so a stray jump beside a copy traps; pages no piece touches stay
    /// unbacked: never executed, never resident.
    pub fn install(&self, pieces: &[(usize, Vec<u8>)]) -> Result<(), String> {
        let page = page_size();
        let mut filled = std::collections::BTreeSet::new();
        for (at, bytes) in pieces {
            assert!(at + bytes.len() <= self.len, "a piece past the mapping");
            for p in at / page..(at + bytes.len()).div_ceil(page) {
                if filled.insert(p) {
                    // SAFETY: page `p` of our mapping, writable.
                    unsafe { std::ptr::write_bytes((self.addr + p * page) as *mut u8, 0xcc, page) };
                }
            }
        }
        for (at, bytes) in pieces {
            // SAFETY: the mapping is ours, `len` bytes, writable, and the
            // piece lies inside it.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    (self.addr + at) as *mut u8,
                    bytes.len(),
                )
            };
        }
        // SAFETY: changing the protection of our own mapping.
        let r = unsafe {
            libc::mprotect(
                self.addr as *mut libc::c_void,
                self.len,
                libc::PROT_READ | libc::PROT_EXEC,
            )
        };
        if r != 0 {
            return Err(format!(
                "cannot make the placed code executable: {}",
                std::io::Error::last_os_error()
            ));
        }
        for (at, bytes) in pieces {
            super::arch::sync(self.addr + at, bytes.len());
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping; nothing calls into it after
        // its `Placed` is gone.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
    }
}
