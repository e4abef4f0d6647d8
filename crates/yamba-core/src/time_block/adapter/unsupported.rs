//! TIME_BLOCK where no counter is known: clock_gettime.

pub const NAME: &str = "clock_gettime";

pub fn start() -> u64 {
    super::mono_ns()
}

pub fn stop() -> u64 {
    super::mono_ns()
}
