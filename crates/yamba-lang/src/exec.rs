//! Executable memory, W^X: code is written into a private read-write
//! mapping, which is then protected to read+execute before anything can
//! call it. No page is ever writable and executable at once.

use yamba_os::OsError;

/// Machine code mapped read+execute; unmapped on drop.
pub struct ExecMem {
    ptr: *mut u8,
    len: usize,
    code_len: usize,
}

// SAFETY: the mapping is immutable once created (read+execute only).
unsafe impl Send for ExecMem {}
// SAFETY: as for Send: nothing writes the mapping after it is created.
unsafe impl Sync for ExecMem {}

impl ExecMem {
    /// Maps `code` read+execute (W^X: written while RW, then protected).
    pub fn new(code: &[u8]) -> Result<ExecMem, OsError> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let len = code.len().max(1).div_ceil(page) * page;
        // SAFETY: a fresh private anonymous mapping.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(OsError::last(format!("mmap of {len} bytes for code")));
        }
        let mem = ExecMem {
            ptr: ptr as *mut u8,
            len,
            code_len: code.len(),
        };
        // SAFETY: the mapping is `len` ≥ code.len() bytes, writable, ours.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), mem.ptr, code.len()) };
        // SAFETY: changing the protection of our own mapping.
        if unsafe { libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
            return Err(OsError::last("mprotect(read+execute)"));
        }
        flush_icache(mem.ptr, code.len());
        Ok(mem)
    }

    pub fn addr(&self) -> usize {
        self.ptr as usize
    }

    pub fn code_len(&self) -> usize {
        self.code_len
    }

    /// Calls the code as `word f(word a0, …, word a5)`, a word the
    /// pointer's width; unused arguments are passed as 0 (harmless under the
    /// SysV and AAPCS64 conventions, which pass the first six integer
    /// arguments in registers, and under i386 cdecl, where the caller pops
    /// them). On x86-32 the arguments are truncated to 32 bits and the
    /// result (eax) zero-extended: the first argument is the word at
    /// [esp + 4], [ebp + 8] after `push ebp; mov ebp, esp`.
    ///
    /// # Safety
    /// The code must be a function of the platform's C calling convention
    /// that does what its author meant; it runs with this process's rights.
    pub unsafe fn call(&self, args: &[u64]) -> u64 {
        let mut a = [0usize; 6];
        for (d, s) in a.iter_mut().zip(args) {
            *d = *s as usize;
        }
        // SAFETY: the caller vouches for the code; it is mapped executable.
        let f: extern "C" fn(usize, usize, usize, usize, usize, usize) -> usize =
            unsafe { std::mem::transmute(self.ptr) };
        f(a[0], a[1], a[2], a[3], a[4], a[5]) as u64
    }
}

impl Drop for ExecMem {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

#[cfg(target_arch = "aarch64")]
fn flush_icache(ptr: *mut u8, len: usize) {
    extern "C" {
        fn __clear_cache(start: *mut libc::c_char, end: *mut libc::c_char);
    }
    // SAFETY: the range is our own mapping.
    unsafe { __clear_cache(ptr.cast(), ptr.add(len).cast()) };
}

#[cfg(not(target_arch = "aarch64"))]
fn flush_icache(_ptr: *mut u8, _len: usize) {}

/// The permissions (`r-xp`, …) of the mapping holding `addr`, from /proc/self/maps.
pub fn permissions_of(addr: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let range = f.next()?;
        let perms = f.next()?;
        let (a, b) = range.split_once('-')?;
        let (a, b) = (
            usize::from_str_radix(a, 16).ok()?,
            usize::from_str_radix(b, 16).ok()?,
        );
        (a <= addr && addr < b).then(|| perms.to_string())
    })
}

#[cfg(all(
    test,
    any(target_arch = "x86_64", target_arch = "x86"),
    target_os = "linux"
))]
mod tests {
    use super::*;

    #[test]
    fn code_runs_and_its_pages_are_never_writable_and_executable() {
        // x86-64: mov rax, rdi; add rax, rsi; ret
        // x86-32: mov eax, [esp + 4]; add eax, [esp + 8]; ret (cdecl)
        let code: &[u8] = if cfg!(target_arch = "x86_64") {
            &[0x48, 0x89, 0xf8, 0x48, 0x01, 0xf0, 0xc3]
        } else {
            &[0x8b, 0x44, 0x24, 0x04, 0x03, 0x44, 0x24, 0x08, 0xc3]
        };
        let m = ExecMem::new(code).unwrap();
        // SAFETY: the code above is a complete leaf function.
        assert_eq!(unsafe { m.call(&[40, 2]) }, 42);
        let p = permissions_of(m.addr()).unwrap();
        assert!(p.starts_with("r-x"), "{p}");
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(
            !maps.lines().any(|l| l
                .split_whitespace()
                .nth(1)
                .is_some_and(|p| p.contains('w') && p.contains('x'))),
            "a writable and executable mapping exists:\n{maps}"
        );
    }
}
