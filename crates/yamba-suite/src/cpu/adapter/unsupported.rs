//! Every platform without a `cpu` adapter. `NAME` is `NO_ADAPTER`, so the
//! runner skips this area's adapter-backed benchmarks with "no adapter for
//! this platform"; the functions exist only so the generic code compiles,
//! and measure nothing. Porting: copy this file to `<os>_<arch>.rs`,
//! implement it, and select it in `mod.rs`.

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

/// Never reached (the benchmarks that use it are skipped): fails loudly.
pub fn syscall0(_nr: i64) -> i64 {
    unreachable!("{}", yamba_core::bench::no_adapter_reason())
}

/// Never reached (the benchmarks that use it are skipped): fails loudly.
pub fn syscall3(_nr: i64, _a: i64, _b: i64, _c: i64) -> i64 {
    unreachable!("{}", yamba_core::bench::no_adapter_reason())
}

pub const SYS_GETPPID: i64 = -1;
pub const SYS_READ: i64 = -1;

/// No vDSO system-call entry on this platform (`.vdso` is not measured).
pub use super::no_vdso as vdso;

/// The call-wrapped shape (never reached here).
pub mod wrapped {
    /// # Safety
    /// Never reached: fails loudly.
    pub unsafe fn yamba_sys_getppid() -> i64 {
        unreachable!("{}", yamba_core::bench::no_adapter_reason())
    }
    /// # Safety
    /// Never reached: fails loudly.
    pub unsafe fn yamba_sys_read(_fd: i64, _buf: *mut u8, _n: i64) -> i64 {
        unreachable!("{}", yamba_core::bench::no_adapter_reason())
    }
    /// # Safety
    /// Never reached: fails loudly.
    pub unsafe fn yamba_just_ret() {
        unreachable!("{}", yamba_core::bench::no_adapter_reason())
    }
}

pub fn vdso_mapped() -> bool {
    false
}

pub mod calls {
    pub fn call(_n: u32, _a: &[u64; 7]) {
        unreachable!("{}", yamba_core::bench::no_adapter_reason())
    }
    pub fn dummy(_n: u32, _a: &[u64; 7]) {
        unreachable!("{}", yamba_core::bench::no_adapter_reason())
    }
    pub fn call_chained(_n: u32, _x: u64) -> u64 {
        unreachable!("{}", yamba_core::bench::no_adapter_reason())
    }
    pub fn call_carried() -> u64 {
        unreachable!("{}", yamba_core::bench::no_adapter_reason())
    }
}
