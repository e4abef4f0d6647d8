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

    #[cfg(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64"))]
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
    #[cfg(target_arch = "x86")]
    opaque_in!(i32, reg, "/* {0} */");
    #[cfg(target_arch = "x86")]
    opaque_in!(f32, xmm_reg, "/* {0} */");
    #[cfg(target_arch = "x86")]
    opaque_in!(f64, xmm_reg, "/* {0} */");
    /// 32-bit x86: a 64-bit integer is two registers, both hidden.
    #[cfg(target_arch = "x86")]
    macro_rules! opaque_pair {
        ($($t:ty),*) => {$(
            impl Opaque for $t {
                #[inline(always)]
                fn opaque(self) -> Self {
                    let (mut lo, mut hi) = (self as u32, (self as u64 >> 32) as u32);
                    // SAFETY: an empty asm block; it only claims to modify
                    // the two registers holding the value.
                    unsafe {
                        std::arch::asm!("/* {0} {1} */", inout(reg) lo, inout(reg) hi,
                            options(nomem, nostack, preserves_flags));
                    }
                    (u64::from(hi) << 32 | u64::from(lo)) as $t
                }
            }
        )*};
    }
    #[cfg(target_arch = "x86")]
    opaque_pair!(i64, u64);
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
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
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
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    opaque_in!(i32, i64, u64, f32, f64);

    /// Whether [`Opaque`] costs nothing here (a register-only barrier).
    pub const IN_REGISTERS: bool = cfg!(any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64"
    ));
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

    /// 32-bit x86: the chains run on the low word (a 32-bit register add
    /// or multiply has the same latency); the high word is carried along.
    #[cfg(target_arch = "x86")]
    #[inline(always)]
    pub fn adds(x: u64) -> u64 {
        let mut lo = x as u32;
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "add {x}, {one}", ".endr", x = inout(reg) lo,
                one = in(reg) 1u32, options(nomem, nostack));
        }
        x & !0xFFFF_FFFF | u64::from(lo)
    }

    #[cfg(target_arch = "x86")]
    #[inline(always)]
    pub fn adds_two(x: u64, y: u64) -> (u64, u64) {
        let (mut a, mut b) = (x as u32, y as u32);
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "add {x}, {one}", "add {y}, {one}", ".endr",
                x = inout(reg) a, y = inout(reg) b, one = in(reg) 1u32, options(nomem, nostack));
        }
        (
            x & !0xFFFF_FFFF | u64::from(a),
            y & !0xFFFF_FFFF | u64::from(b),
        )
    }

    #[cfg(target_arch = "x86")]
    #[inline(always)]
    pub fn muls(x: u64) -> u64 {
        let mut lo = x as u32;
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "imul {x}, {x}, 3", ".endr", x = inout(reg) lo,
                options(nomem, nostack));
        }
        x & !0xFFFF_FFFF | u64::from(lo)
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
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    #[inline(always)]
    pub fn adds(mut x: u64) -> u64 {
        use super::opaque::Opaque;
        for _ in 0..BLOCK {
            x = x.wrapping_add(1).opaque();
        }
        x
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    #[inline(always)]
    pub fn adds_two(mut x: u64, mut y: u64) -> (u64, u64) {
        use super::opaque::Opaque;
        for _ in 0..BLOCK {
            x = x.wrapping_add(1).opaque();
            y = y.wrapping_add(1).opaque();
        }
        (x, y)
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    #[inline(always)]
    pub fn muls(mut x: u64) -> u64 {
        use super::opaque::Opaque;
        for _ in 0..BLOCK {
            x = x.wrapping_mul(3).opaque();
        }
        x
    }
}

/// Instruction order: where later work must not start before earlier work
/// has finished (a planted cost must add all of its latency, not overlap
/// the next system call's entry).
pub mod order {
    /// Waits until every earlier instruction has completed before any
    /// later one starts: `lfence` on x86-64 (dispatch-serialising on
    /// Intel, and on AMD where Linux sets it so, as it does since
    /// Spectre), `isb` on aarch64. Elsewhere only a compiler fence: work
    /// before it may still overlap work after it.
    #[inline(always)]
    pub fn wait_for_earlier() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: lfence exists on every x86-64 CPU and touches no state.
        unsafe {
            std::arch::x86_64::_mm_lfence()
        };
        #[cfg(target_arch = "x86")]
        // SAFETY: lfence exists on every x86 CPU with SSE2 (which the i686
        // target requires) and touches no state.
        unsafe {
            std::arch::x86::_mm_lfence()
        };
        #[cfg(target_arch = "aarch64")]
        // SAFETY: isb touches no memory or register.
        unsafe {
            std::arch::asm!("isb", options(nomem, nostack, preserves_flags))
        };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    }
}

/// An instruction every x86 hypervisor traps: CPUID exits to it
/// unconditionally under VMX and is intercepted by every SVM hypervisor
/// (KVM, Hyper-V, Xen). In a guest its time is one VM exit and its return,
/// the yardstick for a cost a hypervisor adds (`cpu.syscall`'s `int 0x80`
/// on i686). None off x86.
pub mod exit {
    /// One CPUID (leaf 0), or None where there is no such instruction.
    pub fn cpuid() -> Option<fn()> {
        #[cfg(target_arch = "x86_64")]
        return Some(|| {
            std::hint::black_box(std::arch::x86_64::__cpuid(std::hint::black_box(0)));
        });
        #[cfg(target_arch = "x86")]
        return Some(|| {
            std::hint::black_box(std::arch::x86::__cpuid(std::hint::black_box(0)));
        });
        #[allow(unreachable_code)]
        None
    }
}
