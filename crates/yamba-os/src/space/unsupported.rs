//! Every platform without a `space` adapter. `NAME` is `NO_ADAPTER`, so
//! the runner skips this area's benchmarks with "no adapter for this
//! platform"; the functions exist only so the generic code compiles: each
//! fails with that reason (or knows nothing) and measures nothing.
//! Porting: copy this file to `<os>.rs`, implement it, and select it in
//! `mod.rs`.

use super::Kernel;
use crate::Kind;

pub const NAME: &str = crate::NO_ADAPTER;

pub fn refresh_counters() -> bool {
    false
}

pub fn kernel() -> Option<Kernel> {
    None
}

pub fn own_rss() -> Option<u64> {
    None
}

pub fn private_bytes(_pid: i32) -> Option<u64> {
    None
}

pub fn census(_kind: Kind) -> Option<u64> {
    None
}

pub fn still_mapped(_pages: &[usize]) -> Option<u64> {
    None
}

pub fn raise_nofile(_need: u64) -> u64 {
    0
}

pub struct Batch;

impl Batch {
    pub fn create(_kind: Kind, _n: usize, _page: usize) -> Result<Batch, crate::OsError> {
        Err(crate::OsError::NoAdapter)
    }
    pub fn files(_names: Vec<std::ffi::CString>) -> Result<Batch, crate::OsError> {
        Err(crate::OsError::NoAdapter)
    }

    pub fn children(&self) -> &[i32] {
        &[]
    }

    pub fn pages(&self) -> &[usize] {
        &[]
    }
}

/// Releases nothing, as the Linux type releases its object: generic code
/// drops it at the same point on every platform.
impl Drop for Batch {
    fn drop(&mut self) {}
}
