//! Every platform without a `net` adapter. `NAME` is `NO_ADAPTER`, so the
//! runner skips this area's benchmarks with "no adapter for this platform".
//! Porting: copy this file to `<os>.rs`, implement it, and select it in
//! `mod.rs`.

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

/// Not known here.
pub fn tcp_time_wait() -> Option<u64> {
    None
}
