//! Linux: perf_event_open(2) counting events, through the `perf-event2` crate.
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
