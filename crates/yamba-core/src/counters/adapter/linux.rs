//! Hardware counters on Linux: perf_event_open(2) counting events.

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
            Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => format!(
                "hardware counters unavailable: the kernel offers no CPU performance counters here ({e}; usual under a hypervisor)"
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
