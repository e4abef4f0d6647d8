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

/// # Safety
/// As `yamba_os::mmap::unmap`: a mapping the caller owns and no longer uses.
pub unsafe fn unmap(_: *mut u8, _: usize) {}

pub fn monotonic_ns() -> u64 {
    0
}
pub fn timer_slack_ns() -> Option<u64> {
    None
}
pub fn set_timer_slack_ns(_: u64) -> Result<(), String> {
    why()
}
pub fn sleep_until(_: u64) -> Result<(), String> {
    why()
}
pub fn sleep_for(_: u64) -> Result<(), String> {
    why()
}

/// No timerfd here: `start` fails with the reason.
pub struct PeriodicTimer;
impl PeriodicTimer {
    pub fn start(_: u64, _: u64) -> Result<PeriodicTimer, String> {
        why()
    }
    pub fn wait(&self) -> Result<u64, String> {
        why()
    }
}

/// No interval timer through this adapter: `new` fails with the reason.
pub struct AlarmTimer;
impl AlarmTimer {
    pub fn new() -> Result<AlarmTimer, String> {
        why()
    }
    pub fn arm(&self, _: u64) -> Result<(), String> {
        why()
    }
    pub fn wait(&self, _: u64) -> Result<bool, String> {
        why()
    }
}
