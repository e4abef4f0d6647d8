//! Hardware counters next to time: CPU cycles and instructions retired
//! over a benchmark, where the kernel offers them (most virtual machines
//! expose no PMU; `probe` then says so plainly, and results carry none).

pub use yamba_results::counters::Counts;

/// Cycles and instructions of this process and everything it starts.
pub struct Counters {
    cycles: adapter::Counter,
    instructions: adapter::Counter,
}

impl Counters {
    /// Opens and starts the counters; Err says why they cannot be had here.
    pub fn start() -> Result<Counters, String> {
        let cycles = adapter::Counter::open(adapter::HW_CPU_CYCLES)?;
        let instructions = adapter::Counter::open(adapter::HW_INSTRUCTIONS)?;
        Ok(Counters {
            cycles,
            instructions,
        })
    }

    pub fn read(&self) -> Counts {
        let (c, c_share) = self.cycles.read();
        let (i, _) = self.instructions.read();
        Counts {
            cycles: c,
            instructions: i,
            ipc: if c > 0 { i as f64 / c as f64 } else { 0.0 },
            running_share: c_share,
        }
    }
}

/// Whether hardware counters can be had here, and if not, why.
pub fn probe() -> Result<(), String> {
    Counters::start().map(|_| ())
}

/// The counters, per platform (`counters/adapter/`).
mod adapter;
