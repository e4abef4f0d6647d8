//! The `cpu` area's platform adapter against ground truth, on whichever
//! platform it is built for: x86-64 with the deterministic tests, i686
//! natively in .ci/i686 (the aarch64 guest checks its adapter through the
//! smoke run's evidence: its build selects packages' unit tests, and
//! yamba-suite's are not wanted there). Every shape of getppid returns
//! the parent's pid; every shape of read takes one zero byte from /dev/zero
//! and a bad descriptor comes back as -EBADF, sign-extended; the call
//! procedures pass every 64-bit argument whole (`yamba_callN` returns one
//! plus its arguments) and the carried chain grows by one a call.
//!
//! An integration test, not unit tests of the adapter: .ci/i686 builds it
//! without yamba-suite's unit tests (65 s of CPU at the timed crates'
//! opt-level, for three tests).
#![cfg(linux_adapters)]

use yamba_suite::cpu::adapter::{calls, syscall0, syscall3, vdso, wrapped};
use yamba_suite::cpu::adapter::{SYS_GETPPID, SYS_READ};

fn ppid() -> i64 {
    // SAFETY: getppid has no preconditions.
    i64::from(unsafe { libc::getppid() })
}

/// i686 has the vDSO's own system-call entry (`__kernel_vsyscall`); the
/// others have none.
fn has_vdso_entry() -> bool {
    let has = vdso::entry().is_some();
    assert_eq!(has, cfg!(target_arch = "x86"), "a vDSO system-call entry");
    has
}

#[test]
fn getppid_in_every_shape_returns_the_parent() {
    assert_eq!(syscall0(SYS_GETPPID), ppid(), "inline");
    // SAFETY: the function makes the system call and returns.
    let called = unsafe { wrapped::yamba_sys_getppid() };
    assert_eq!(called, ppid(), "call-wrapped");
    if has_vdso_entry() {
        assert_eq!(vdso::syscall0(SYS_GETPPID), ppid(), "vDSO entry");
    }
}

#[test]
fn read_in_every_shape_reads_one_zero_byte() {
    let f = std::fs::File::open("/dev/zero").unwrap();
    let fd = i64::from(std::os::fd::AsRawFd::as_raw_fd(&f));
    let mut b = [7u8; 1];
    assert_eq!(syscall3(SYS_READ, fd, b.as_mut_ptr() as i64, 1), 1);
    assert_eq!(b, [0], "inline");
    b = [7];
    // SAFETY: reads one byte into a one-byte buffer we own.
    let got = unsafe { wrapped::yamba_sys_read(fd, b.as_mut_ptr(), 1) };
    assert_eq!((got, b), (1, [0]), "call-wrapped");
    if has_vdso_entry() {
        b = [7];
        assert_eq!(vdso::syscall3(SYS_READ, fd, b.as_mut_ptr() as i64, 1), 1);
        assert_eq!(b, [0], "vDSO entry");
    }
    // A bad descriptor comes back as -EBADF, sign-extended to 64 bits.
    assert_eq!(syscall3(SYS_READ, -1, b.as_mut_ptr() as i64, 1), -9);
    // SAFETY: as above; the kernel refuses the descriptor.
    let got = unsafe { wrapped::yamba_sys_read(-1, b.as_mut_ptr(), 1) };
    assert_eq!(got, -9);
}

#[test]
fn calls_pass_every_u64_argument_whole() {
    // High and low words differ, so a swapped or dropped word shows.
    let x = 0x0000_0001_0000_0003u64;
    for n in 1..=7u32 {
        let want = 1 + u64::from(n) * x;
        assert_eq!(calls::call_chained(n, x), want, "{n} arguments");
    }
    let a = [1, 2, 3, 4, 5, 6, 7];
    for n in 0..=7 {
        calls::call(n, &a);
        calls::dummy(n, &a);
    }
    let c = calls::call_carried();
    assert_eq!(calls::call_carried(), c + 1);
}
