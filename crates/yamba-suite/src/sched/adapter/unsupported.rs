//! Every platform without a `sched` adapter. `NAME` is `NO_ADAPTER`, so
//! the runner skips this area's benchmarks with "no adapter for this
//! platform"; the functions exist only so the generic code compiles, and
//! measure nothing. Porting: copy this file to `<os>.rs`, implement it, and
//! select it in `mod.rs`.

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

fn why<T>() -> Result<T, String> {
    Err(yamba_core::bench::no_adapter_reason())
}

/// (0, 0): the machine's noise check (`interruptions::noise_report`) still
/// runs here, with no switch counts to attribute gaps by.
pub fn thread_switches() -> (u64, u64) {
    (0, 0)
}

pub fn run_in_new_session<F: FnOnce() -> i32>(_: F) -> Result<i32, String> {
    why()
}

pub fn set_autogroup_nice(_: i32) -> Result<(), String> {
    why()
}

pub fn map_shared(_: usize) -> Result<*mut u8, String> {
    why()
}

pub fn unmap(_: *mut u8, _: usize) {}
