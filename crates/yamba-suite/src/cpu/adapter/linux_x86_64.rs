//! Linux on x86-64: `syscall`, and `call` to the callees with their
//! arguments in the System V registers.

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

pub const SYS_GETPPID: i64 = 110;

pub(crate) use crate::os::vdso_mapped;

/// Direct calls to the `yamba_callN` procedures, written as machine code so
/// the compiler can neither drop, inline, nor turn them into indirect calls:
/// the arguments are placed in the C calling convention's registers (and
/// the stack for the 7th) by the constraints, and the block is one `call`.
/// `dummy(N)` is the same block without the call (F).
pub mod calls {
    use crate::cpu::call::*;

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
}
