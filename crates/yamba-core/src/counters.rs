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
    //! perf_event_open(2) counting events.
    use crate::perf_sys::{Attr, FLAG_EXCLUDE_HV, FLAG_INHERIT};

    pub const HW_CPU_CYCLES: u64 = 0;
    pub const HW_INSTRUCTIONS: u64 = 1;
    const PERF_TYPE_HARDWARE: u32 = 0;
    const FORMAT_TOTAL_TIME_ENABLED: u64 = 1;
    const FORMAT_TOTAL_TIME_RUNNING: u64 = 2;

    pub struct Counter {
        fd: i32,
    }

    impl Counter {
        pub fn open(config: u64) -> Result<Counter, String> {
            let attr = Attr {
                type_: PERF_TYPE_HARDWARE,
                config,
                read_format: FORMAT_TOTAL_TIME_ENABLED | FORMAT_TOTAL_TIME_RUNNING,
                flags: FLAG_INHERIT | FLAG_EXCLUDE_HV,
                ..Attr::default()
            };
            let fd = crate::perf_sys::open(attr, 0, -1).map_err(|e| match e.raw_os_error() {
                Some(code @ (libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV)) => format!(
                    "hardware counters unavailable: this kernel offers no CPU performance counters \
                     (perf_event_open: {}), as is usual under a hypervisor",
                    match code {
                        libc::ENOENT => "ENOENT",
                        libc::EOPNOTSUPP => "EOPNOTSUPP",
                        _ => "ENODEV",
                    }
                ),
                Some(libc::EACCES) | Some(libc::EPERM) => format!(
                    "hardware counters unavailable: not permitted ({e}); lower /proc/sys/kernel/perf_event_paranoid or run as root"
                ),
                _ => format!("hardware counters unavailable: perf_event_open failed: {e}"),
            })?;
            Ok(Counter { fd })
        }

        /// The count scaled by enabled/running time, and the running share.
        pub fn read(&self) -> (u64, f64) {
            let mut v = [0u64; 3];
            // SAFETY: reading 24 bytes into a 24-byte buffer.
            let n = unsafe { libc::read(self.fd, v.as_mut_ptr().cast(), 24) };
            if n != 24 || v[2] == 0 {
                return (v[0], if v[1] > 0 { 0.0 } else { 1.0 });
            }
            let share = v[2] as f64 / v[1].max(1) as f64;
            ((v[0] as f64 / share.max(1e-9)) as u64, share)
        }
    }

    impl Drop for Counter {
        fn drop(&mut self) {
            // SAFETY: closing our own fd.
            unsafe { libc::close(self.fd) };
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
