//! The `vdso` adapter piece of a platform with no vDSO system-call entry
//! (all but i686, whose `__kernel_vsyscall` is `linux_x86.rs`'s): the
//! `.vdso` shape is not measured there (`entry()` is None), so the calls
//! are never reached.

pub fn entry() -> Option<usize> {
    None
}

pub fn syscall0(_nr: i64) -> i64 {
    unreachable!("no vDSO system-call entry on this platform")
}

pub fn syscall3(_nr: i64, _a: i64, _b: i64, _c: i64) -> i64 {
    unreachable!("no vDSO system-call entry on this platform")
}
