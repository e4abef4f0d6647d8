//! Platform adapters for the `cpu` area: a system call made directly, with
//! nothing of libc in between (libc may cache or wrap some calls).

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod imp {
    pub const NAME: &str = "linux-x86_64";

    /// `syscall` with no arguments.
    #[inline(always)]
    pub fn syscall0(nr: i64) -> i64 {
        let ret: i64;
        // SAFETY: a system call without pointer arguments; rcx and r11 are
        // clobbered by the instruction.
        unsafe {
            std::arch::asm!("syscall", inlateout("rax") nr => ret,
                out("rcx") _, out("r11") _, options(nostack));
        }
        ret
    }

    /// `syscall` with three arguments (read, write).
    #[inline(always)]
    pub fn syscall3(nr: i64, a: i64, b: i64, c: i64) -> i64 {
        let ret: i64;
        // SAFETY: the caller passes arguments valid for system call `nr`
        // (here: read into a buffer it owns); rcx and r11 are clobbered.
        unsafe {
            std::arch::asm!("syscall", inlateout("rax") nr => ret,
                in("rdi") a, in("rsi") b, in("rdx") c,
                out("rcx") _, out("r11") _, options(nostack));
        }
        ret
    }

    pub const SYS_GETPPID: i64 = 110;
    pub const SYS_READ: i64 = 0;

    // The call-wrapped shape: a function whose whole body is the system
    // call and `ret` (what libc's wrappers are, less their error handling),
    // written as machine code so no compiler can inline it.
    std::arch::global_asm!(
        ".text",
        ".p2align 4",
        ".globl yamba_sys_getppid",
        "yamba_sys_getppid:",
        "mov eax, 110",
        "syscall",
        "ret",
        ".p2align 4",
        ".globl yamba_sys_read",
        "yamba_sys_read:",
        "xor eax, eax",
        "syscall",
        "ret",
        ".p2align 4",
        ".globl yamba_just_ret",
        "yamba_just_ret:",
        "ret",
    );
}

#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
mod imp {
    pub const NAME: &str = "linux-aarch64";

    /// `svc #0` with no arguments.
    #[inline(always)]
    pub fn syscall0(nr: i64) -> i64 {
        let ret: i64;
        // SAFETY: a system call without pointer arguments.
        unsafe {
            std::arch::asm!("svc #0", in("x8") nr, lateout("x0") ret, options(nostack));
        }
        ret
    }

    /// `svc #0` with three arguments (read, write).
    #[inline(always)]
    pub fn syscall3(nr: i64, a: i64, b: i64, c: i64) -> i64 {
        let ret: i64;
        // SAFETY: the caller passes arguments valid for system call `nr`.
        unsafe {
            std::arch::asm!("svc #0", in("x8") nr, inlateout("x0") a => ret,
                in("x1") b, in("x2") c, options(nostack));
        }
        ret
    }

    pub const SYS_GETPPID: i64 = 173;
    pub const SYS_READ: i64 = 63;

    std::arch::global_asm!(
        ".text",
        ".p2align 4",
        ".globl yamba_sys_getppid",
        "yamba_sys_getppid:",
        "mov x8, #173",
        "svc #0",
        "ret",
        ".p2align 4",
        ".globl yamba_sys_read",
        "yamba_sys_read:",
        "mov x8, #63",
        "svc #0",
        "ret",
        ".p2align 4",
        ".globl yamba_just_ret",
        "yamba_just_ret:",
        "ret",
    );
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod imp {
    pub const NAME: &str = "libc";

    pub fn syscall0(nr: i64) -> i64 {
        // SAFETY: a system call without arguments.
        unsafe { libc::syscall(nr as libc::c_long) as i64 }
    }

    pub fn syscall3(nr: i64, a: i64, b: i64, c: i64) -> i64 {
        // SAFETY: the caller passes arguments valid for system call `nr`.
        unsafe { libc::syscall(nr as libc::c_long, a, b, c) as i64 }
    }

    pub const SYS_GETPPID: i64 = libc::SYS_getppid as i64;
    pub const SYS_READ: i64 = libc::SYS_read as i64;

    #[no_mangle]
    #[inline(never)]
    pub extern "C" fn yamba_sys_getppid() -> i64 {
        syscall0(SYS_GETPPID)
    }

    #[no_mangle]
    #[inline(never)]
    pub extern "C" fn yamba_sys_read(fd: i64, buf: *mut u8, n: i64) -> i64 {
        syscall3(SYS_READ, fd, buf as i64, n)
    }

    #[no_mangle]
    #[inline(never)]
    pub extern "C" fn yamba_just_ret() {}
}

pub use imp::*;

/// The same system calls in the three shapes a caller may have: the raw
/// instruction inline, a call to a function whose body is the instruction
/// and `ret`, and libc's wrapper.
pub mod shapes {
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    extern "C" {
        fn yamba_sys_getppid() -> i64;
        fn yamba_sys_read(fd: i64, buf: *mut u8, n: i64) -> i64;
        fn yamba_just_ret();
    }
    #[cfg(not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    use super::imp::{yamba_just_ret, yamba_sys_getppid, yamba_sys_read};

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

/// Direct calls to the `yamba_callN` procedures, written as machine code so
/// the compiler can neither drop, inline, nor turn them into indirect calls:
/// the arguments are placed in the C calling convention's registers (and
/// the stack for the 7th on x86-64) by the constraints, and the block is
/// one `call`. `dummy::<N>` is the same block without the call (F).
pub mod calls {
    use crate::cpu::call::*;

    #[cfg(target_arch = "x86_64")]
    macro_rules! direct_call {
        ($f:ident, $($reg:tt = $v:expr),*) => {
            // SAFETY: calls a extern "C" function that touches no memory,
            // with its arguments in the registers the ABI names; every
            // caller-saved register is declared clobbered.
            unsafe {
                std::arch::asm!("call {f}", f = sym $f, $(in($reg) $v,)* clobber_abi("C"))
            }
        };
    }
    #[cfg(target_arch = "x86_64")]
    macro_rules! no_call {
        ($($reg:tt = $v:expr),*) => {
            // SAFETY: an empty block; the constraints and clobbers match direct_call.
            unsafe { std::arch::asm!("", $(in($reg) $v,)* clobber_abi("C")) }
        };
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn call(n: u32, a: &[u64; 7]) {
        match n {
            0 => direct_call!(yamba_call0,),
            1 => direct_call!(yamba_call1, "rdi" = a[0]),
            2 => direct_call!(yamba_call2, "rdi" = a[0], "rsi" = a[1]),
            3 => direct_call!(yamba_call3, "rdi" = a[0], "rsi" = a[1], "rdx" = a[2]),
            4 => direct_call!(
                yamba_call4,
                "rdi" = a[0],
                "rsi" = a[1],
                "rdx" = a[2],
                "rcx" = a[3]
            ),
            5 => direct_call!(
                yamba_call5,
                "rdi" = a[0],
                "rsi" = a[1],
                "rdx" = a[2],
                "rcx" = a[3],
                "r8" = a[4]
            ),
            6 => direct_call!(
                yamba_call6,
                "rdi" = a[0],
                "rsi" = a[1],
                "rdx" = a[2],
                "rcx" = a[3],
                "r8" = a[4],
                "r9" = a[5]
            ),
            // The 7th argument goes on the stack, just above the return address.
            _ => unsafe {
                std::arch::asm!("push {g}", "call {f}", "add rsp, 8", f = sym yamba_call7, g = in(reg) a[6],
                    in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("rcx") a[3], in("r8") a[4], in("r9") a[5],
                    clobber_abi("C"))
            },
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn dummy(n: u32, a: &[u64; 7]) {
        match n {
            0 => no_call!(),
            1 => no_call!("rdi" = a[0]),
            2 => no_call!("rdi" = a[0], "rsi" = a[1]),
            3 => no_call!("rdi" = a[0], "rsi" = a[1], "rdx" = a[2]),
            4 => no_call!("rdi" = a[0], "rsi" = a[1], "rdx" = a[2], "rcx" = a[3]),
            5 => no_call!(
                "rdi" = a[0],
                "rsi" = a[1],
                "rdx" = a[2],
                "rcx" = a[3],
                "r8" = a[4]
            ),
            6 => no_call!(
                "rdi" = a[0],
                "rsi" = a[1],
                "rdx" = a[2],
                "rcx" = a[3],
                "r8" = a[4],
                "r9" = a[5]
            ),
            _ => unsafe {
                std::arch::asm!("push {g}", "add rsp, 8", g = in(reg) a[6],
                    in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("rcx") a[3], in("r8") a[4], in("r9") a[5],
                    clobber_abi("C"))
            },
        }
    }

    #[cfg(target_arch = "x86_64")]
    macro_rules! chained_call {
        ($f:ident, $a:expr, $($reg:tt = $v:expr),*) => {{
            let r: u64;
            // SAFETY: as in direct_call; the first argument goes in rdi and
            // the result comes back in rax. `nomem`: the callee touches no
            // memory of ours, so the chained value stays in registers (through
            // memory, store forwarding would join the chain).
            unsafe {
                std::arch::asm!("call {f}", f = sym $f, in("rdi") $a, $(in($reg) $v,)*
                    lateout("rax") r, clobber_abi("C"), options(nomem))
            };
            r
        }};
    }
    #[cfg(target_arch = "x86_64")]
    macro_rules! chained_none {
        ($a:expr, $($reg:tt = $v:expr),*) => {{
            let r: u64;
            // SAFETY: one register move; constraints and clobbers match chained_call.
            unsafe {
                std::arch::asm!("mov rax, rdi", in("rdi") $a, $(in($reg) $v,)*
                    lateout("rax") r, clobber_abi("C"), options(nomem))
            };
            r
        }};
    }

    /// One N-argument call (N ≥ 1) whose first argument is `first` and
    /// whose result is returned, so a loop can feed each call's result to
    /// the next call: the calls form one dependency chain (latency).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn call_chained(n: u32, first: u64, a: &[u64; 7]) -> u64 {
        match n {
            0 | 1 => chained_call!(yamba_call1, first,),
            2 => chained_call!(yamba_call2, first, "rsi" = a[1]),
            3 => chained_call!(yamba_call3, first, "rsi" = a[1], "rdx" = a[2]),
            4 => chained_call!(yamba_call4, first, "rsi" = a[1], "rdx" = a[2], "rcx" = a[3]),
            5 => chained_call!(
                yamba_call5,
                first,
                "rsi" = a[1],
                "rdx" = a[2],
                "rcx" = a[3],
                "r8" = a[4]
            ),
            6 => chained_call!(
                yamba_call6,
                first,
                "rsi" = a[1],
                "rdx" = a[2],
                "rcx" = a[3],
                "r8" = a[4],
                "r9" = a[5]
            ),
            _ => {
                let r: u64;
                // SAFETY: as in `call`'s 7-argument case; result in rax.
                unsafe {
                    std::arch::asm!("push {g}", "call {f}", "add rsp, 8", f = sym yamba_call7, g = in(reg) a[6],
                        in("rdi") first, in("rsi") a[1], in("rdx") a[2], in("rcx") a[3], in("r8") a[4], in("r9") a[5],
                        lateout("rax") r, clobber_abi("C"), options(nomem))
                };
                r
            }
        }
    }

    /// F for [`call_chained`]: the same argument placement and a register
    /// move from the first argument to the result, without the call.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn dummy_chained(n: u32, first: u64, a: &[u64; 7]) -> u64 {
        match n {
            0 | 1 => chained_none!(first,),
            2 => chained_none!(first, "rsi" = a[1]),
            3 => chained_none!(first, "rsi" = a[1], "rdx" = a[2]),
            4 => chained_none!(first, "rsi" = a[1], "rdx" = a[2], "rcx" = a[3]),
            5 => chained_none!(first, "rsi" = a[1], "rdx" = a[2], "rcx" = a[3], "r8" = a[4]),
            6 => chained_none!(
                first,
                "rsi" = a[1],
                "rdx" = a[2],
                "rcx" = a[3],
                "r8" = a[4],
                "r9" = a[5]
            ),
            _ => {
                let r: u64;
                // SAFETY: as in `dummy`'s 7-argument case.
                unsafe {
                    std::arch::asm!("push {g}", "add rsp, 8", "mov rax, rdi", g = in(reg) a[6],
                        in("rdi") first, in("rsi") a[1], in("rdx") a[2], in("rcx") a[3], in("r8") a[4], in("r9") a[5],
                        lateout("rax") r, clobber_abi("C"), options(nomem))
                };
                r
            }
        }
    }

    /// Elsewhere: the chained call through a function pointer the
    /// optimiser cannot see through.
    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    pub fn call_chained(n: u32, first: u64, a: &[u64; 7]) -> u64 {
        use std::hint::black_box;
        match n {
            0 | 1 => black_box(yamba_call1 as extern "C" fn(u64) -> u64)(first),
            2 => black_box(yamba_call2 as extern "C" fn(u64, u64) -> u64)(first, a[1]),
            3 => black_box(yamba_call3 as extern "C" fn(u64, u64, u64) -> u64)(first, a[1], a[2]),
            4 => black_box(yamba_call4 as extern "C" fn(u64, u64, u64, u64) -> u64)(
                first, a[1], a[2], a[3],
            ),
            5 => black_box(yamba_call5 as extern "C" fn(u64, u64, u64, u64, u64) -> u64)(
                first, a[1], a[2], a[3], a[4],
            ),
            6 => black_box(yamba_call6 as extern "C" fn(u64, u64, u64, u64, u64, u64) -> u64)(
                first, a[1], a[2], a[3], a[4], a[5],
            ),
            _ => black_box(yamba_call7 as extern "C" fn(u64, u64, u64, u64, u64, u64, u64) -> u64)(
                first, a[1], a[2], a[3], a[4], a[5], a[6],
            ),
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    pub fn dummy_chained(_n: u32, first: u64, a: &[u64; 7]) -> u64 {
        std::hint::black_box(a);
        std::hint::black_box(first)
    }

    /// Elsewhere: a call the optimiser cannot see through (function pointer
    /// passed through `black_box`); an indirect, well-predicted call.
    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    pub fn call(n: u32, a: &[u64; 7]) {
        use std::hint::black_box;
        let r = match n {
            0 => black_box(yamba_call0 as extern "C" fn() -> u64)(),
            1 => black_box(yamba_call1 as extern "C" fn(u64) -> u64)(a[0]),
            2 => black_box(yamba_call2 as extern "C" fn(u64, u64) -> u64)(a[0], a[1]),
            3 => black_box(yamba_call3 as extern "C" fn(u64, u64, u64) -> u64)(a[0], a[1], a[2]),
            4 => black_box(yamba_call4 as extern "C" fn(u64, u64, u64, u64) -> u64)(
                a[0], a[1], a[2], a[3],
            ),
            5 => black_box(yamba_call5 as extern "C" fn(u64, u64, u64, u64, u64) -> u64)(
                a[0], a[1], a[2], a[3], a[4],
            ),
            6 => black_box(yamba_call6 as extern "C" fn(u64, u64, u64, u64, u64, u64) -> u64)(
                a[0], a[1], a[2], a[3], a[4], a[5],
            ),
            _ => black_box(yamba_call7 as extern "C" fn(u64, u64, u64, u64, u64, u64, u64) -> u64)(
                a[0], a[1], a[2], a[3], a[4], a[5], a[6],
            ),
        };
        black_box(r);
    }

    #[cfg(not(target_arch = "x86_64"))]
    #[inline(always)]
    pub fn dummy(_n: u32, a: &[u64; 7]) {
        std::hint::black_box(a);
    }
}
