//! Every platform without a `signal` adapter. `NAME` is `NO_ADAPTER`, so
//! the runner skips this area's benchmarks with "no adapter for this
//! platform"; the functions exist only so the generic code compiles: each
//! fails with that reason (or does nothing) and measures nothing. Porting:
//! copy this file to `<os>.rs`, implement it, and select it in `mod.rs`.

use std::sync::atomic::AtomicU64;

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

fn why<T>() -> Result<T, String> {
    Err(yamba_core::bench::no_adapter_reason())
}

#[derive(Debug, Clone, Copy)]
pub enum Handler {
    Counting,
    Fault,
}

pub struct Saved;

/// Releases nothing, as the Linux type releases its object: generic code
/// drops it at the same point on every platform.
impl Drop for Saved {
    fn drop(&mut self) {}
}

pub fn action(_h: Handler) -> libc::sigaction {
    // SAFETY: an all-zero sigaction is a valid value (never installed here).
    unsafe { std::mem::zeroed() }
}

pub fn sigaction(_sig: libc::c_int, _act: &libc::sigaction) -> bool {
    false
}

pub fn install(_sig: libc::c_int, _h: Handler) -> Result<Saved, String> {
    why()
}

pub fn is_installed(_sig: libc::c_int, _h: Handler) -> bool {
    false
}

pub fn handled() -> u64 {
    0
}

pub fn reset_handled() {}

pub fn faults() -> u64 {
    0
}

pub fn gettid() -> i32 {
    0
}

pub fn getpid() -> i32 {
    0
}

pub fn send(_pid: i32, _tid: i32, _sig: libc::c_int) -> bool {
    false
}

pub struct MaskGuard;

impl MaskGuard {
    pub fn suspend(&self) {}
}

/// Releases nothing, as the Linux type releases its object: generic code
/// drops it at the same point on every platform.
impl Drop for MaskGuard {
    fn drop(&mut self) {}
}

pub fn block(_sig: libc::c_int) -> MaskGuard {
    MaskGuard
}

pub fn fork_peer<F: FnOnce()>(_body: F) -> Result<i32, String> {
    why()
}

pub fn kill_and_reap(_pid: i32) {}

pub struct ProtPage;

impl ProtPage {
    pub fn new(_len: usize) -> Result<ProtPage, String> {
        why()
    }
    pub fn revoke(&self) -> bool {
        false
    }
    pub fn grant(&self) -> bool {
        false
    }
    pub fn store(&self, _v: u64) {}
    pub fn load(&self) -> u64 {
        0
    }
}

/// Memory shared with forked children.
pub struct SharedPage(AtomicU64);

impl SharedPage {
    pub fn new() -> Result<SharedPage, String> {
        why()
    }
    pub fn slot(&self, _i: usize) -> &AtomicU64 {
        &self.0
    }
}
