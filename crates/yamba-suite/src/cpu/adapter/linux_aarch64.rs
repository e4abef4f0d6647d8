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

pub const SYS_GETPPID: i64 = 173;

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
}
