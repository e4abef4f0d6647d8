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

pub const SYS_GETPPID: i64 = -1;

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
}
