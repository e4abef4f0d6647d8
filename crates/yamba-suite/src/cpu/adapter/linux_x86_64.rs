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

/// The call-wrapped shape: functions whose whole body is the system call
/// and `ret` (what libc's wrappers are, less their error handling), written
/// as machine code so no compiler can inline them.
pub mod wrapped {
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
    extern "C" {
        pub fn yamba_sys_getppid() -> i64;
        pub fn yamba_sys_read(fd: i64, buf: *mut u8, n: i64) -> i64;
        pub fn yamba_just_ret();
    }
}

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
}
