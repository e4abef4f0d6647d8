//! Linux on aarch64: `svc #0`, and `bl` to the callees with their
//! arguments in x0–x6 (AAPCS64 passes the first eight in registers).

pub const NAME: &str = "linux-aarch64";

/// `svc #0` with no arguments: the number in x8, the result in x0.
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

/// No vDSO system-call entry on this platform (`.vdso` is not measured).
pub use super::no_vdso as vdso;

/// The call-wrapped shape: functions whose whole body is the system call
/// and `ret`, written as machine code so no compiler can inline them.
pub mod wrapped {
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
    extern "C" {
        pub fn yamba_sys_getppid() -> i64;
        pub fn yamba_sys_read(fd: i64, buf: *mut u8, n: i64) -> i64;
        pub fn yamba_just_ret();
    }
}

pub(crate) use crate::os::vdso_mapped;

/// Direct calls to the `yamba_callN` procedures, written as machine code so
/// the compiler can neither drop, inline, nor turn them into indirect calls:
/// the arguments are placed in x0–x6 by the constraints and the block is
/// one `bl` (which writes the return address to x30, clobbered like every
/// caller-saved register by `clobber_abi("C")`). `dummy(N)` is the same
/// block without the `bl` (F).
pub mod calls {
    use crate::cpu::call::*;

    macro_rules! direct_call {
        ($f:ident, $($reg:tt = $v:expr),*) => {
            // SAFETY: calls a extern "C" function that touches no memory,
            // with its arguments in the registers the ABI names; every
            // caller-saved register (x30 included) is declared clobbered,
            // and the stack pointer is 16-byte aligned as AAPCS64 keeps it.
            unsafe {
                std::arch::asm!("bl {f}", f = sym $f, $(in($reg) $v,)* clobber_abi("C"))
            }
        };
    }
    macro_rules! no_call {
        ($($reg:tt = $v:expr),*) => {
            // SAFETY: an empty block; the constraints and clobbers match direct_call.
            unsafe { std::arch::asm!("", $(in($reg) $v,)* clobber_abi("C")) }
        };
    }

    #[inline(always)]
    pub fn call(n: u32, a: &[u64; 7]) {
        match n {
            0 => direct_call!(yamba_call0,),
            1 => direct_call!(yamba_call1, "x0" = a[0]),
            2 => direct_call!(yamba_call2, "x0" = a[0], "x1" = a[1]),
            3 => direct_call!(yamba_call3, "x0" = a[0], "x1" = a[1], "x2" = a[2]),
            4 => direct_call!(
                yamba_call4,
                "x0" = a[0],
                "x1" = a[1],
                "x2" = a[2],
                "x3" = a[3]
            ),
            5 => direct_call!(
                yamba_call5,
                "x0" = a[0],
                "x1" = a[1],
                "x2" = a[2],
                "x3" = a[3],
                "x4" = a[4]
            ),
            6 => direct_call!(
                yamba_call6,
                "x0" = a[0],
                "x1" = a[1],
                "x2" = a[2],
                "x3" = a[3],
                "x4" = a[4],
                "x5" = a[5]
            ),
            _ => direct_call!(
                yamba_call7,
                "x0" = a[0],
                "x1" = a[1],
                "x2" = a[2],
                "x3" = a[3],
                "x4" = a[4],
                "x5" = a[5],
                "x6" = a[6]
            ),
        }
    }

    #[inline(always)]
    pub fn dummy(n: u32, a: &[u64; 7]) {
        match n {
            0 => no_call!(),
            1 => no_call!("x0" = a[0]),
            2 => no_call!("x0" = a[0], "x1" = a[1]),
            3 => no_call!("x0" = a[0], "x1" = a[1], "x2" = a[2]),
            4 => no_call!("x0" = a[0], "x1" = a[1], "x2" = a[2], "x3" = a[3]),
            5 => no_call!(
                "x0" = a[0],
                "x1" = a[1],
                "x2" = a[2],
                "x3" = a[3],
                "x4" = a[4]
            ),
            6 => no_call!(
                "x0" = a[0],
                "x1" = a[1],
                "x2" = a[2],
                "x3" = a[3],
                "x4" = a[4],
                "x5" = a[5]
            ),
            _ => no_call!(
                "x0" = a[0],
                "x1" = a[1],
                "x2" = a[2],
                "x3" = a[3],
                "x4" = a[4],
                "x5" = a[5],
                "x6" = a[6]
            ),
        }
    }

    macro_rules! chained_call {
        ($f:ident, $x:expr, $($reg:tt),*) => {{
            let r: u64;
            // SAFETY: as in direct_call; every argument register holds `x`
            // and the result is in x0. `nomem`: the callee touches no
            // memory of ours, so the chained value stays in registers.
            unsafe {
                std::arch::asm!("bl {f}", f = sym $f, inlateout("x0") $x => r, $(in($reg) $x,)*
                    clobber_abi("C"), options(nomem))
            };
            r
        }};
    }

    /// One N-argument call (1 ≤ N ≤ 7) with every argument `x`, returning
    /// the callee's result: a loop that passes each result as the next
    /// call's `x` makes one dependency chain through every argument, the
    /// callee's body and its return value (latency).
    #[inline(always)]
    pub fn call_chained(n: u32, x: u64) -> u64 {
        match n {
            0 | 1 => chained_call!(yamba_call1, x,),
            2 => chained_call!(yamba_call2, x, "x1"),
            3 => chained_call!(yamba_call3, x, "x1", "x2"),
            4 => chained_call!(yamba_call4, x, "x1", "x2", "x3"),
            5 => chained_call!(yamba_call5, x, "x1", "x2", "x3", "x4"),
            6 => chained_call!(yamba_call6, x, "x1", "x2", "x3", "x4", "x5"),
            _ => chained_call!(yamba_call7, x, "x1", "x2", "x3", "x4", "x5", "x6"),
        }
    }

    /// A call with no argument whose callee carries a chain through
    /// memory: it loads a counter the previous call stored, adds one and
    /// stores it (`yamba_call0_carry`); its result is the new count.
    #[inline(always)]
    pub fn call_carried() -> u64 {
        let r: u64;
        // SAFETY: calls a extern "C" function without arguments that
        // touches only its own static counter; every caller-saved register
        // (x30 included) is declared clobbered.
        unsafe {
            std::arch::asm!("bl {f}", f = sym yamba_call0_carry, lateout("x0") r, clobber_abi("C"))
        };
        r
    }
}
