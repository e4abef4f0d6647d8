//! No hardware counters where there is no adapter: every open says why.

pub const HW_CPU_CYCLES: u64 = 0;
pub const HW_INSTRUCTIONS: u64 = 1;
pub struct Counter;
impl Counter {
    pub fn open(_: u64) -> Result<Counter, String> {
        Err("hardware counters: no adapter for this platform".into())
    }
    pub fn read(&self) -> (u64, f64) {
        (0, 0.0)
    }
}
