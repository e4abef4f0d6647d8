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

    pub const SYS_GETPPID: i64 = 110;
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

    pub const SYS_GETPPID: i64 = 173;
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

    pub const SYS_GETPPID: i64 = libc::SYS_getppid as i64;
}

pub use imp::*;

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

/// Values the optimiser must treat as unknown while they stay in a
/// register: an empty `asm!` block that claims to change its operand.
/// Arithmetic chains written with it compile to exactly the operations
/// written, in order — nothing folded, reassociated or hoisted (compiled
/// today, lmbench's lat_ops loses its integer add chain this way and
/// reports 0.01 ns). Floats use the FP/SIMD register class so no move to
/// an integer register enters the chain.
pub mod opaque {
    /// A value to hide from the optimiser, at no run-time cost.
    pub trait Opaque: Copy {
        fn opaque(self) -> Self;
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    macro_rules! opaque_in {
        ($t:ty, $class:ident, $template:literal) => {
            impl Opaque for $t {
                #[inline(always)]
                fn opaque(mut self) -> Self {
                    // SAFETY: an empty asm block (the template is a comment
                    // naming the register); it only claims to modify the
                    // register holding the value.
                    unsafe {
                        std::arch::asm!($template, inout($class) self,
                            options(nomem, nostack, preserves_flags));
                    }
                    self
                }
            }
        };
    }

    #[cfg(target_arch = "x86_64")]
    opaque_in!(i32, reg, "/* {0:e} */");
    #[cfg(target_arch = "x86_64")]
    opaque_in!(i64, reg, "/* {0} */");
    #[cfg(target_arch = "x86_64")]
    opaque_in!(u64, reg, "/* {0} */");
    #[cfg(target_arch = "x86_64")]
    opaque_in!(f32, xmm_reg, "/* {0} */");
    #[cfg(target_arch = "x86_64")]
    opaque_in!(f64, xmm_reg, "/* {0} */");
    #[cfg(target_arch = "aarch64")]
    opaque_in!(i32, reg, "/* {0:w} */");
    #[cfg(target_arch = "aarch64")]
    opaque_in!(i64, reg, "/* {0} */");
    #[cfg(target_arch = "aarch64")]
    opaque_in!(u64, reg, "/* {0} */");
    #[cfg(target_arch = "aarch64")]
    opaque_in!(f32, vreg, "/* {0:s} */");
    #[cfg(target_arch = "aarch64")]
    opaque_in!(f64, vreg, "/* {0:d} */");

    /// Elsewhere: `black_box`, which may pass the value through memory
    /// (a store and a load inside every chain step: latencies read high).
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    macro_rules! opaque_in {
        ($($t:ty),*) => {$(
            impl Opaque for $t {
                #[inline(always)]
                fn opaque(self) -> Self {
                    std::hint::black_box(self)
                }
            }
        )*};
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    opaque_in!(i32, i64, u64, f32, f64);

    /// Whether [`Opaque`] costs nothing here (a register-only barrier).
    pub const IN_REGISTERS: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
}

/// The core clock's own tick: a block of [`BLOCK`] dependent adds of one
/// register to another. Every x86-64 and Armv8 core executes a dependent
/// register add in one cycle, so the block lasts [`BLOCK`] core cycles
/// whatever the time-stamp counter's rate. The addend is a register, not
/// an immediate: recent Intel cores (Golden Cove and later) fold
/// additions of small immediates in the renamer, and a chain of
/// `add reg, 1` then runs several times faster than one per cycle. [`muls`] is the same
/// block of integer multiplies (3 cycles each on every x86-64 core of the
/// last fifteen years: a cross-check, not an assumption).
pub mod chains {
    /// Dependent operations per block.
    pub const BLOCK: u64 = 100;

    /// Documented latency of a 64-bit register multiply, in cycles, where
    /// it is the same across this architecture's current cores.
    #[cfg(target_arch = "x86_64")]
    pub const MUL_CYCLES: Option<f64> = Some(3.0);
    #[cfg(not(target_arch = "x86_64"))]
    pub const MUL_CYCLES: Option<f64> = None;

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn adds(mut x: u64) -> u64 {
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "add {x}, {one}", ".endr", x = inout(reg) x,
                one = in(reg) 1u64, options(nomem, nostack));
        }
        x
    }

    /// Two independent chains of [`BLOCK`] adds, interleaved.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn adds_two(mut x: u64, mut y: u64) -> (u64, u64) {
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "add {x}, {one}", "add {y}, {one}", ".endr",
                x = inout(reg) x, y = inout(reg) y, one = in(reg) 1u64, options(nomem, nostack));
        }
        (x, y)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    pub fn muls(mut x: u64) -> u64 {
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "imul {x}, {x}, 3", ".endr", x = inout(reg) x,
                options(nomem, nostack));
        }
        x
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    pub fn adds(mut x: u64) -> u64 {
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "add {x}, {x}, {one}", ".endr", x = inout(reg) x,
                one = in(reg) 1u64, options(nomem, nostack));
        }
        x
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    pub fn adds_two(mut x: u64, mut y: u64) -> (u64, u64) {
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "add {x}, {x}, {one}", "add {y}, {y}, {one}", ".endr",
                x = inout(reg) x, y = inout(reg) y, one = in(reg) 1u64, options(nomem, nostack));
        }
        (x, y)
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    pub fn muls(mut x: u64) -> u64 {
        let three = 3u64;
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "mul {x}, {x}, {t}", ".endr", x = inout(reg) x,
                t = in(reg) three, options(nomem, nostack));
        }
        x
    }

    /// Elsewhere: the same chains in Rust, each step hidden from the
    /// optimiser (see [`super::opaque`]).
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[inline(always)]
    pub fn adds(mut x: u64) -> u64 {
        use super::opaque::Opaque;
        for _ in 0..BLOCK {
            x = x.wrapping_add(1).opaque();
        }
        x
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[inline(always)]
    pub fn adds_two(mut x: u64, mut y: u64) -> (u64, u64) {
        use super::opaque::Opaque;
        for _ in 0..BLOCK {
            x = x.wrapping_add(1).opaque();
            y = y.wrapping_add(1).opaque();
        }
        (x, y)
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[inline(always)]
    pub fn muls(mut x: u64) -> u64 {
        use super::opaque::Opaque;
        for _ in 0..BLOCK {
            x = x.wrapping_mul(3).opaque();
        }
        x
    }
}
