//! Platform adapter for the `cpu` area: a system call made with the raw
//! instruction (nothing of libc in between: libc may cache or wrap some
//! calls), direct calls to the `yamba_callN` procedures from machine code,
//! and whether the vDSO serves clock_gettime.
//!
//! The interface every implementation provides:
//! - `NAME`: the adapter's name as results record it;
//! - `syscall0(nr) -> i64`, `syscall3(nr, a, b, c) -> i64`, `SYS_GETPPID`,
//!   `SYS_READ`;
//! - `wrapped::{yamba_sys_getppid, yamba_sys_read, yamba_just_ret}`: the
//!   call-wrapped shape, functions whose body is the system call and `ret`;
//! - `calls::call(n, &args)` and `calls::dummy(n, &args)` (F: the same
//!   argument moves without the call), `calls::call_chained(n, x)` (every
//!   argument `x`, the callee's result returned: chained by the caller)
//!   and `calls::call_carried()` (no argument; the callee carries a chain
//!   through its own static counter);
//! - `vdso_mapped() -> bool`;
//! - `vdso::{entry, syscall0, syscall3}`: the system call through the
//!   vDSO's own entry where the platform has one (i386's
//!   `__kernel_vsyscall`; `entry()` is None elsewhere and the `.vdso`
//!   shape is not measured).
//!
//! The instructions differ by architecture, so the platforms here are
//! Linux on x86-64, on 32-bit x86 and on aarch64; everywhere else `unsupported.rs`
//! (whose `NAME` is `NO_ADAPTER`: the runner skips this area's benchmarks
//! with "no adapter for this platform").

#[cfg_attr(all(linux_adapters, target_arch = "x86_64"), path = "linux_x86_64.rs")]
#[cfg_attr(all(linux_adapters, target_arch = "x86"), path = "linux_x86.rs")]
#[cfg_attr(
    all(linux_adapters, target_arch = "aarch64"),
    path = "linux_aarch64.rs"
)]
#[cfg_attr(
    not(all(
        linux_adapters,
        any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")
    )),
    path = "unsupported.rs"
)]
mod imp;
#[cfg(not(all(linux_adapters, target_arch = "x86")))]
pub mod no_vdso;

pub use imp::*;

/// Architecture-specific, OS-independent pieces: optimisation barriers
/// that keep values in registers, and dependent-operation chains.
mod arch;
pub use arch::{chains, exit, opaque, order};

/// The same system calls in the three shapes a caller may have: the raw
/// instruction inline, a call to a function whose body is the instruction
/// and `ret`, and libc's wrapper.
pub mod shapes {
    use super::wrapped::{yamba_just_ret, yamba_sys_getppid, yamba_sys_read};

    #[inline(always)]
    pub fn getppid_inline() -> i64 {
        super::syscall0(super::SYS_GETPPID)
    }

    #[inline(always)]
    pub fn getppid_call() -> i64 {
        // SAFETY: the function makes the system call with no arguments and
        // clobbers only what the C calling convention allows.
        unsafe { yamba_sys_getppid() }
    }

    #[inline(always)]
    pub fn getppid_libc() -> i64 {
        // SAFETY: getppid has no preconditions.
        unsafe { libc::getppid() as i64 }
    }

    #[inline(always)]
    pub fn read_inline(fd: i32, buf: &mut [u8; 1]) -> i64 {
        super::syscall3(super::SYS_READ, fd as i64, buf.as_mut_ptr() as i64, 1)
    }

    #[inline(always)]
    pub fn read_call(fd: i32, buf: &mut [u8; 1]) -> i64 {
        // SAFETY: reads one byte into a one-byte buffer the caller owns.
        unsafe { yamba_sys_read(fd as i64, buf.as_mut_ptr(), 1) }
    }

    /// Whether the platform has a vDSO system-call entry (the `.vdso` shape).
    pub fn has_vdso_entry() -> bool {
        super::vdso::entry().is_some()
    }

    #[inline(always)]
    pub fn getppid_vdso() -> i64 {
        super::vdso::syscall0(super::SYS_GETPPID)
    }

    #[inline(always)]
    pub fn read_vdso(fd: i32, buf: &mut [u8; 1]) -> i64 {
        super::vdso::syscall3(super::SYS_READ, fd as i64, buf.as_mut_ptr() as i64, 1)
    }

    #[inline(always)]
    pub fn read_libc(fd: i32, buf: &mut [u8; 1]) -> i64 {
        // SAFETY: reads one byte into a one-byte buffer the caller owns.
        unsafe { libc::read(fd, buf.as_mut_ptr().cast(), 1) as i64 }
    }

    /// Whether libc takes its single-threaded fast paths: glibc's
    /// `__libc_single_threaded`, found at run time (None where libc has no
    /// such flag). Once a process has had a second thread — also in a fork
    /// of it — glibc's read() goes through its cancellation-point path,
    /// ~20 ns more.
    pub fn libc_single_threaded() -> Option<bool> {
        // SAFETY: dlsym with a NUL-terminated name; the symbol, when
        // present, is glibc's one-byte flag, read once.
        unsafe {
            let p = libc::dlsym(libc::RTLD_DEFAULT, c"__libc_single_threaded".as_ptr());
            (!p.is_null()).then(|| std::ptr::read_volatile(p as *const u8) != 0)
        }
    }

    /// A call to a function that only returns: what the call-wrapped shape
    /// costs beyond the inline one when the kernel is not crossed.
    #[inline(always)]
    pub fn just_call() {
        // SAFETY: the function does nothing but return.
        unsafe { yamba_just_ret() }
    }
}
