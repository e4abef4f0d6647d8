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

#[cfg(target_os = "linux")]
mod adapter {
    //! perf_event_open(2) counting events, through the `perf-event2` crate.
    use perf_event::events::Hardware;
    use perf_event::Builder;
    use std::cell::RefCell;

    pub const HW_CPU_CYCLES: Hardware = Hardware::CPU_CYCLES;
    pub const HW_INSTRUCTIONS: Hardware = Hardware::INSTRUCTIONS;

    pub struct Counter {
        counter: RefCell<perf_event::Counter>,
    }

    impl Counter {
        /// Counts `event` in this process and everything it starts, user
        /// and kernel, from now on.
        pub fn open(event: Hardware) -> Result<Counter, String> {
            let counter = Builder::new(event)
                .inherit(true)
                .exclude_kernel(false)
                .exclude_hv(true)
                .enabled(true)
                .build()
                .map_err(|e| match e.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => format!(
                    "hardware counters unavailable: the kernel offers no CPU performance counters here ({e}; usual under a hypervisor)"
                ),
                Some(libc::EACCES) | Some(libc::EPERM) => format!(
                    "hardware counters unavailable: not permitted ({e}); lower /proc/sys/kernel/perf_event_paranoid or run as root"
                ),
                _ => format!("hardware counters unavailable: perf_event_open failed: {e}"),
            })?;
            Ok(Counter {
                counter: RefCell::new(counter),
            })
        }

        /// The count scaled by enabled/running time, and the running share.
        pub fn read(&self) -> (u64, f64) {
            match self.counter.borrow_mut().read_count_and_time() {
                Ok(ct) if ct.time_running > 0 => {
                    let share = ct.time_running as f64 / ct.time_enabled.max(1) as f64;
                    ((ct.count as f64 / share.max(1e-9)) as u64, share)
                }
                Ok(ct) => (ct.count, if ct.time_enabled > 0 { 0.0 } else { 1.0 }),
                Err(_) => (0, 0.0),
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod adapter {
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
}

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
