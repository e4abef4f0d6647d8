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

/// No vDSO system-call entry on this platform (`.vdso` is not measured).
pub use super::no_vdso as vdso;

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

/// `cpu.call`'s callees, each at the start of a 64-byte line of its own:
/// what `cpu/call.rs` compiles from Rust elsewhere (one plus the sum of the
/// arguments, added from the last one), written out so that where each
/// one lies is chosen, not left to the build. The linker aligns functions
/// to 16 bytes, and a callee whose body crosses a 64-byte line costs a
/// Golden Cove-class core about 3 cycles more per call (Xeon guest, `yamba_call5`'s
/// body at 0, 16, 32, 48 and 56 bytes into a line: 1.65-1.85 ns per
/// chained call, then 2.64-2.76 and 2.39-2.59 where it crosses), which a
/// build gave one N and not the next: `cpu.call.5` read 2.45 ns and
/// `cpu.call.6` 1.89. docs/writing-benchmarks.md, "What cpu.call measures".
pub mod callees {
    /// One callee: at the start of a 64-byte line, global, and typed and
    /// sized as a function (the tests find it by name in the disassembly).
    macro_rules! line_aligned {
        ($name:literal, $($instruction:literal),+ $(,)?) => {
            concat!(
                ".p2align 6\n.globl ", $name, "\n.type ", $name, ",@function\n", $name, ":\n",
                $($instruction, "\n",)+
                ".size ", $name, ", . - ", $name,
            )
        };
    }
    std::arch::global_asm!(
        ".pushsection .text.yamba_callees,\"ax\",@progbits",
        line_aligned!("yamba_call0", "mov eax, 1", "ret"),
        line_aligned!(
            "yamba_call0_carry",
            "mov rax, qword ptr [rip + {carried}]",
            "inc rax",
            "mov qword ptr [rip + {carried}], rax",
            "ret",
        ),
        line_aligned!("yamba_call1", "lea rax, [rdi + 1]", "ret"),
        line_aligned!("yamba_call2", "lea rax, [rsi + 1]", "add rax, rdi", "ret"),
        line_aligned!("yamba_call3", "lea rax, [rdx + 1]", "add rax, rdi", "add rax, rsi", "ret"),
        line_aligned!(
            "yamba_call4",
            "lea rax, [rcx + 1]",
            "add rax, rdi",
            "add rax, rsi",
            "add rax, rdx",
            "ret",
        ),
        line_aligned!(
            "yamba_call5",
            "lea rax, [r8 + 1]",
            "add rax, rdi",
            "add rax, rsi",
            "add rax, rdx",
            "add rax, rcx",
            "ret",
        ),
        line_aligned!(
            "yamba_call6",
            "lea rax, [r9 + 1]",
            "add rax, rdi",
            "add rax, rsi",
            "add rax, rdx",
            "add rax, rcx",
            "add rax, r8",
            "ret",
        ),
        line_aligned!(
            "yamba_call7",
            "mov rax, qword ptr [rsp + 8]",
            "inc rax",
            "add rax, rdi",
            "add rax, rsi",
            "add rax, rdx",
            "add rax, rcx",
            "add rax, r8",
            "add rax, r9",
            "ret",
        ),
        ".popsection",
        carried = sym crate::cpu::call::CARRIED,
    );
    // SAFETY: the functions above follow the C calling convention, touch
    // no memory but their own stack argument and CARRIED (an atomic, by
    // plain moves, as the Rust callee's relaxed load and store), and
    // return in rax: calling them is safe.
    unsafe extern "C" {
        pub safe fn yamba_call0() -> u64;
        pub safe fn yamba_call0_carry() -> u64;
        pub safe fn yamba_call1(a: u64) -> u64;
        pub safe fn yamba_call2(a: u64, b: u64) -> u64;
        pub safe fn yamba_call3(a: u64, b: u64, c: u64) -> u64;
        pub safe fn yamba_call4(a: u64, b: u64, c: u64, d: u64) -> u64;
        pub safe fn yamba_call5(a: u64, b: u64, c: u64, d: u64, e: u64) -> u64;
        pub safe fn yamba_call6(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64;
        pub safe fn yamba_call7(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64, g: u64) -> u64;
    }
}

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
            // SAFETY: the callee takes 7 integer arguments (SysV: 6 in registers, the 7th on the stack) and clobbers only what clobber_abi("C") names; the push is undone after the call.
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
            // SAFETY: as above, without the call: the push is undone at once.
            _ => unsafe {
                std::arch::asm!("push {g}", "add rsp, 8", g = in(reg) a[6],
                    in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("rcx") a[3], in("r8") a[4], in("r9") a[5],
                    clobber_abi("C"))
            },
        }
    }

    macro_rules! chained_call {
        ($f:ident, $x:expr, $($reg:tt),*) => {{
            let r: u64;
            // SAFETY: as in direct_call; every argument register holds `x`
            // and the result comes back in rax. `nomem`: the callee touches
            // no memory of ours, so the chained value stays in registers.
            unsafe {
                std::arch::asm!("call {f}", f = sym $f, in("rdi") $x, $(in($reg) $x,)*
                    lateout("rax") r, clobber_abi("C"), options(nomem))
            };
            r
        }};
    }

    /// One N-argument call (1 ≤ N ≤ 7) with every argument `x`, returning
    /// the callee's result: a loop that passes each result as the next
    /// call's `x` makes one dependency chain through every argument, the
    /// callee's body and its return value (latency). The 7th argument goes
    /// through the stack (a store before the call, a load in the callee).
    #[inline(always)]
    pub fn call_chained(n: u32, x: u64) -> u64 {
        match n {
            0 | 1 => chained_call!(yamba_call1, x,),
            2 => chained_call!(yamba_call2, x, "rsi"),
            3 => chained_call!(yamba_call3, x, "rsi", "rdx"),
            4 => chained_call!(yamba_call4, x, "rsi", "rdx", "rcx"),
            5 => chained_call!(yamba_call5, x, "rsi", "rdx", "rcx", "r8"),
            6 => chained_call!(yamba_call6, x, "rsi", "rdx", "rcx", "r8", "r9"),
            _ => {
                let r: u64;
                // SAFETY: as in `call`'s 7-argument case; result in rax.
                // `nomem`: the only memory touched is the slot pushed and
                // popped within the block.
                unsafe {
                    std::arch::asm!("push {g}", "call {f}", "add rsp, 8", f = sym yamba_call7, g = in(reg) x,
                        in("rdi") x, in("rsi") x, in("rdx") x, in("rcx") x, in("r8") x, in("r9") x,
                        lateout("rax") r, clobber_abi("C"), options(nomem))
                };
                r
            }
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
        // is declared clobbered.
        unsafe {
            std::arch::asm!("call {f}", f = sym yamba_call0_carry, lateout("rax") r, clobber_abi("C"))
        };
        r
    }
}
