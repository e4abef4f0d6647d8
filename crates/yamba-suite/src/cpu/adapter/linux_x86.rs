//! Linux on 32-bit x86 (i686): `int 0x80` (the i386 system-call
//! instruction, the number in eax, arguments in ebx, ecx, edx), a call
//! through the vDSO's `__kernel_vsyscall` (the entry glibc's i386
//! wrappers use: sysenter or syscall, whichever the CPU does fastest), and
//! `call` to the callees with their arguments on the stack (cdecl: every
//! `u64` is two words, low word at the lower address).

pub const NAME: &str = "linux-x86";

/// `int 0x80` with no arguments.
#[inline(always)]
pub fn syscall0(nr: i64) -> i64 {
    let ret: i32;
    // SAFETY: a system call without pointer arguments; int 0x80 changes
    // only eax.
    unsafe {
        std::arch::asm!("int 0x80", inlateout("eax") nr as i32 => ret, options(nostack));
    }
    i64::from(ret)
}

/// `int 0x80` with three arguments (read, write).
#[inline(always)]
pub fn syscall3(nr: i64, a: i64, b: i64, c: i64) -> i64 {
    let ret: i32;
    // SAFETY: the caller passes arguments valid for system call `nr`
    // (here: read into a buffer it owns); only eax is changed.
    unsafe {
        std::arch::asm!("int 0x80", inlateout("eax") nr as i32 => ret,
            in("ebx") a as i32, in("ecx") b as i32, in("edx") c as i32, options(nostack));
    }
    i64::from(ret)
}

/// The i386 system-call table's numbers (not x86-64's).
pub const SYS_GETPPID: i64 = 64;
pub const SYS_READ: i64 = 3;

/// `getauxval`'s key for the vDSO's system-call entry (AT_SYSINFO; i386
/// only, so the libc crate does not name it).
const AT_SYSINFO: libc::c_ulong = 32;

/// Where `__kernel_vsyscall` is (AT_SYSINFO), read once; None when the
/// kernel maps no vDSO (vdso=0) or gives no entry.
pub fn vdso_entry() -> Option<usize> {
    static ENTRY: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: getauxval has no preconditions; 0 means absent.
    let e = *ENTRY.get_or_init(|| unsafe { libc::getauxval(AT_SYSINFO) } as usize);
    (e != 0).then_some(e)
}

/// A system call through `__kernel_vsyscall`: the number in eax, the
/// arguments in ebx, ecx, edx, `call` to the entry, as glibc's wrappers do
/// (they load the entry from the thread control block each call; this
/// loads it from a static). Every register but eax is preserved by the
/// entry. Panics when there is none ([`vdso_entry`] says).
#[inline(always)]
fn vsyscall3(nr: i64, a: i64, b: i64, c: i64) -> i64 {
    let entry = vdso_entry().expect("no __kernel_vsyscall (AT_SYSINFO) in this process");
    let ret: i32;
    // SAFETY: AT_SYSINFO is the kernel's own entry point, which makes the
    // system call `nr` (arguments valid for it, as the caller promises) and
    // returns with every register but eax as it was.
    unsafe {
        std::arch::asm!("call {entry}", entry = in(reg) entry,
            inlateout("eax") nr as i32 => ret,
            in("ebx") a as i32, in("ecx") b as i32, in("edx") c as i32);
    }
    i64::from(ret)
}

/// The vDSO-entry shape (`.vdso`): a system call through `__kernel_vsyscall`.
pub mod vdso {
    pub use super::vdso_entry as entry;

    #[inline(always)]
    pub fn syscall0(nr: i64) -> i64 {
        super::vsyscall3(nr, 0, 0, 0)
    }

    #[inline(always)]
    pub fn syscall3(nr: i64, a: i64, b: i64, c: i64) -> i64 {
        super::vsyscall3(nr, a, b, c)
    }
}

/// The call-wrapped shape: functions whose whole body is the system call
/// and `ret` (what libc's wrappers are, less their error handling), written
/// as machine code so no compiler can inline them. On i386 the arguments
/// come from the stack and ebx is callee-saved, so `read` saves it and
/// loads its three arguments first; the result is sign-extended to the
/// `i64` the interface returns (edx:eax).
pub mod wrapped {
    std::arch::global_asm!(
        ".text",
        ".p2align 4",
        ".globl yamba_sys_getppid",
        "yamba_sys_getppid:",
        "mov eax, 64",
        "int 0x80",
        "cdq",
        "ret",
        ".p2align 4",
        ".globl yamba_sys_read",
        "yamba_sys_read:",
        // fd (i64) at [esp+4], buf at [esp+12], n (i64) at [esp+16]; +4 after the push.
        "push ebx",
        "mov ebx, [esp + 8]",
        "mov ecx, [esp + 16]",
        "mov edx, [esp + 20]",
        "mov eax, 3",
        "int 0x80",
        "cdq",
        "pop ebx",
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
/// the compiler can neither drop, inline, nor turn them into indirect calls.
/// cdecl passes every argument on the stack: each `u64` is pushed as two
/// words (high, then low), the last argument first, and the caller pops
/// them after the call. `dummy(N)` is the same pushes and pop without the
/// call (F).
pub mod calls {
    use crate::cpu::call::*;

    /// The call with its arguments pushed from `a` ($p: a's address):
    /// argument i's high word is at 8i+4, its low word at 8i, the last
    /// argument first; then the call and the pop.
    macro_rules! pushed_call {
        ($p:expr, $f:ident, $bytes:literal; $($off:literal)*) => {
            // SAFETY: calls a extern "C" function that touches no memory
            // but its arguments, pushed here from `a` and popped after the
            // call; every caller-saved register is declared clobbered.
            unsafe {
                std::arch::asm!(
                    concat!($("push dword ptr [{p} + ", $off, "]\n",)* "call {f}\nadd esp, ", $bytes),
                    p = in(reg) $p, f = sym $f, clobber_abi("C"))
            }
        };
    }
    /// The same pushes and pop without the call.
    macro_rules! pushed_no_call {
        ($p:expr, $bytes:literal; $($off:literal)*) => {
            // SAFETY: the pushes are undone at once; the constraints and
            // clobbers match pushed_call.
            unsafe {
                std::arch::asm!(
                    concat!($("push dword ptr [{p} + ", $off, "]\n",)* "add esp, ", $bytes),
                    p = in(reg) $p, clobber_abi("C"))
            }
        };
    }

    #[inline(always)]
    pub fn call(n: u32, a: &[u64; 7]) {
        let p = a.as_ptr();
        match n {
            // SAFETY: as in pushed_call, without arguments.
            0 => unsafe { std::arch::asm!("call {f}", f = sym yamba_call0, clobber_abi("C")) },
            1 => pushed_call!(p, yamba_call1, "8"; "4" "0"),
            2 => pushed_call!(p, yamba_call2, "16"; "12" "8" "4" "0"),
            3 => pushed_call!(p, yamba_call3, "24"; "20" "16" "12" "8" "4" "0"),
            4 => pushed_call!(p, yamba_call4, "32"; "28" "24" "20" "16" "12" "8" "4" "0"),
            5 => pushed_call!(p, yamba_call5, "40"; "36" "32" "28" "24" "20" "16" "12" "8" "4" "0"),
            6 => {
                pushed_call!(p, yamba_call6, "48"; "44" "40" "36" "32" "28" "24" "20" "16" "12" "8" "4" "0")
            }
            _ => {
                pushed_call!(p, yamba_call7, "56"; "52" "48" "44" "40" "36" "32" "28" "24" "20" "16" "12" "8" "4" "0")
            }
        }
    }

    #[inline(always)]
    pub fn dummy(n: u32, a: &[u64; 7]) {
        let p = a.as_ptr();
        match n {
            // SAFETY: an empty block; the clobbers match `call`'s.
            0 => unsafe { std::arch::asm!("", clobber_abi("C")) },
            1 => pushed_no_call!(p, "8"; "4" "0"),
            2 => pushed_no_call!(p, "16"; "12" "8" "4" "0"),
            3 => pushed_no_call!(p, "24"; "20" "16" "12" "8" "4" "0"),
            4 => pushed_no_call!(p, "32"; "28" "24" "20" "16" "12" "8" "4" "0"),
            5 => pushed_no_call!(p, "40"; "36" "32" "28" "24" "20" "16" "12" "8" "4" "0"),
            6 => pushed_no_call!(p, "48"; "44" "40" "36" "32" "28" "24" "20" "16" "12" "8" "4" "0"),
            _ => {
                pushed_no_call!(p, "56"; "52" "48" "44" "40" "36" "32" "28" "24" "20" "16" "12" "8" "4" "0")
            }
        }
    }

    /// One N-argument call (1 ≤ N ≤ 7) with every argument `x`, returning
    /// the callee's result (edx:eax): a loop that passes each result as the
    /// next call's `x` makes one dependency chain through every argument
    /// (stored by the pushes, loaded by the callee), the callee's body and
    /// its return value (latency).
    #[inline(always)]
    pub fn call_chained(n: u32, x: u64) -> u64 {
        let (lo, hi) = (x as u32, (x >> 32) as u32);
        let (rlo, rhi): (u32, u32);
        macro_rules! chained {
            ($f:ident, $bytes:literal, $($push:literal)*) => {
                // SAFETY: as in `call`: the pushed words are the arguments,
                // popped after the call; the result comes back in edx:eax.
                // `nomem`: the only memory touched is the pushed slots.
                unsafe {
                    std::arch::asm!(concat!($($push, "\n",)* "call {f}\nadd esp, ", $bytes),
                        lo = in(reg) lo, hi = in(reg) hi, f = sym $f,
                        lateout("eax") rlo, lateout("edx") rhi, clobber_abi("C"), options(nomem))
                }
            };
        }
        match n {
            0 | 1 => chained!(yamba_call1, "8", "push {hi}" "push {lo}"),
            2 => chained!(yamba_call2, "16", "push {hi}" "push {lo}" "push {hi}" "push {lo}"),
            3 => {
                chained!(yamba_call3, "24", "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}")
            }
            4 => {
                chained!(yamba_call4, "32", "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}")
            }
            5 => {
                chained!(yamba_call5, "40", "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}")
            }
            6 => {
                chained!(yamba_call6, "48", "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}")
            }
            _ => {
                chained!(yamba_call7, "56", "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}" "push {hi}" "push {lo}")
            }
        }
        u64::from(rhi) << 32 | u64::from(rlo)
    }

    /// A call with no argument whose callee carries a chain through
    /// memory: it loads a counter the previous call stored, adds one and
    /// stores it (`yamba_call0_carry`); its result is the new count.
    #[inline(always)]
    pub fn call_carried() -> u64 {
        let (lo, hi): (u32, u32);
        // SAFETY: calls a extern "C" function without arguments that
        // touches only its own static counter; every caller-saved register
        // is declared clobbered.
        unsafe {
            std::arch::asm!("call {f}", f = sym yamba_call0_carry,
                lateout("eax") lo, lateout("edx") hi, clobber_abi("C"))
        };
        u64::from(hi) << 32 | u64::from(lo)
    }
}
