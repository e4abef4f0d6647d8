//! Every platform without an `ipc` adapter. `NAME` is `NO_ADAPTER`, so the
//! runner skips this area's benchmarks with "no adapter for this platform";
//! the functions exist only so the generic code compiles: each fails with
//! that reason (or returns nothing) and measures nothing. Porting: copy
//! this file to `<os>.rs`, implement it, and select it in `mod.rs`.

use std::sync::atomic::AtomicU32;

use super::CpuTimes;

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

fn why<T>() -> Result<T, String> {
    Err(yamba_core::bench::no_adapter_reason())
}

pub fn pipe() -> Result<(i32, i32), String> {
    why()
}
pub fn fifo() -> Result<(i32, i32), String> {
    why()
}
pub fn socketpair(_: bool) -> Result<(i32, i32), String> {
    why()
}
pub fn eventfd() -> Result<i32, String> {
    why()
}
pub fn mq_anonymous(_: &str, _: i64) -> Result<i32, String> {
    why()
}
pub fn close(_: i32) {}
pub fn dup(_: i32) -> Result<i32, String> {
    why()
}
pub fn write_all(_: i32, _: &[u8]) -> bool {
    false
}
pub fn read_exact(_: i32, _: &mut [u8]) -> bool {
    false
}
pub fn mq_send(_: i32, _: u8) -> bool {
    false
}
pub fn mq_receive(_: i32, _: &mut [u8]) -> Option<u8> {
    None
}
pub fn futex_wait(_: &AtomicU32, _: u32) -> i64 {
    -1
}
pub fn futex_wake(_: &AtomicU32) -> i64 {
    -1
}
pub fn sched_yield() {
    std::thread::yield_now();
}
pub fn fork() -> Result<i32, String> {
    why()
}
pub fn exit_now(code: i32) -> ! {
    std::process::exit(code)
}
pub fn kill_and_reap(_: i32) {}
pub fn thread_switches() -> (u64, u64) {
    (0, 0)
}
pub fn process_switches(_: i32) -> Option<(u64, u64)> {
    None
}
pub fn set_batch(_: bool) -> Result<bool, String> {
    Err(yamba_core::bench::no_adapter_reason())
}
pub fn cpu_busy_ns(_: usize) -> Option<CpuTimes> {
    None
}
pub fn futex_wait_private(_: &AtomicU32, _: u32) -> i64 {
    -1
}
pub fn futex_wake_private(_: &AtomicU32) -> i64 {
    -1
}

/// No System V semaphores here: `new` fails with the reason.
pub struct SysvSems;
impl SysvSems {
    pub fn new(_: usize) -> Result<SysvSems, String> {
        why()
    }
    pub fn op(&self, _: &[(u16, i16)]) -> bool {
        false
    }
    pub fn value(&self, _: u16) -> Option<i32> {
        None
    }
}

/// No POSIX semaphores here: `new` fails with the reason.
pub struct PosixSems;
impl PosixSems {
    pub fn new(_: usize) -> Result<PosixSems, String> {
        why()
    }
    pub fn post(&self, _: usize) -> bool {
        false
    }
    pub fn wait(&self, _: usize) -> bool {
        false
    }
    pub fn value(&self, _: usize) -> Option<i32> {
        None
    }
}

/// No pthread mutex through this adapter: `new` fails with the reason.
pub struct PthreadMutex;
impl PthreadMutex {
    pub fn new() -> Result<PthreadMutex, String> {
        why()
    }
    pub fn lock(&self) -> bool {
        false
    }
    pub fn unlock(&self) -> bool {
        false
    }
}
