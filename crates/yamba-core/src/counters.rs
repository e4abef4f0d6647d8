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

#[cfg(test)]
mod tests {
    use super::*;

    /// Either the counters work and count a known loop, or the reason is stated.
    #[test]
    fn counts_a_known_loop_or_says_why_not() {
        match Counters::start() {
            Err(why) => assert!(why.starts_with("hardware counters unavailable"), "{why}"),
            Ok(c) => {
                let before = c.read();
                let mut x = 0u64;
                for i in 0..10_000_000u64 {
                    x = std::hint::black_box(x.wrapping_add(i));
                }
                let after = c.read();
                let insns = after.instructions - before.instructions;
                assert!(
                    insns >= 10_000_000,
                    "{insns} instructions for a 10M-iteration loop"
                );
                assert!(after.cycles > before.cycles);
            }
        }
    }
}
