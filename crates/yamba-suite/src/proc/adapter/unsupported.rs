//! Every platform without a `proc` adapter. `NAME` is `NO_ADAPTER`, so the
//! runner skips this area's benchmarks with "no adapter for this platform";
//! the functions exist only so the generic code compiles: each fails with
//! that reason and measures nothing. Porting: copy this file to `<os>.rs`,
//! implement it, and select it in `mod.rs`.

use std::sync::atomic::AtomicU64;

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

fn why<T>() -> Result<T, String> {
    Err(yamba_core::bench::no_adapter_reason())
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

pub fn fork<F: FnOnce() -> i32>(_child: F) -> Result<i32, String> {
    why()
}

pub fn wait(_pid: i32) -> Result<Exit, String> {
    why()
}

#[derive(Default)]
pub struct VforkStack;

impl VforkStack {
    pub fn new() -> VforkStack {
        VforkStack
    }
}

pub fn vfork_exit(_stack: &mut VforkStack) -> Result<i32, String> {
    why()
}

pub struct Program;

impl Program {
    pub fn new(_path: &str) -> Result<Program, String> {
        why()
    }
}

pub fn spawn(_p: &Program) -> Result<i32, String> {
    why()
}

pub fn fork_exec(_p: &Program) -> Result<i32, String> {
    why()
}

pub fn thread_create_join(_ran: &AtomicU64) -> Result<(), String> {
    why()
}

pub struct TouchedHeap;

impl TouchedHeap {
    pub fn new(_bytes: usize, _page: usize) -> Result<TouchedHeap, String> {
        why()
    }
}

/// Releases nothing, as the Linux type releases its object: generic code
/// drops it at the same point on every platform.
impl Drop for TouchedHeap {
    fn drop(&mut self) {}
}

pub fn vm_rss_bytes() -> Option<u64> {
    None
}

pub fn rss_anon_bytes() -> Option<u64> {
    None
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
