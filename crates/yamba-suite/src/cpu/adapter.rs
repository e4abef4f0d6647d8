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

#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
mod imp {
    pub const NAME: &str = "libc";

    pub fn syscall0(nr: i64) -> i64 {
        // SAFETY: a system call without arguments.
        unsafe { libc::syscall(nr as libc::c_long) as i64 }
    }

    pub const SYS_GETPPID: i64 = libc::SYS_getppid as i64;
}

pub use imp::*;
