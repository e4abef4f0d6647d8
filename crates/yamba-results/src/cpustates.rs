//! CPU states over an interval, as a results file records them. (Reading
//! /proc/stat is `yamba_core::cpustates`'s job.)

use serde::{Deserialize, Serialize};

/// CPU utilisation over an interval, in percent of all CPUs' time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuStates {
    pub user: f64,
    pub system: f64,
    pub idle: f64,
    pub iowait: f64,
    pub steal: f64,
    /// USER_HZ ticks the interval covered, summed over CPUs.
    pub ticks: u64,
}

impl CpuStates {
    /// The seed's `top` line, with iowait and steal added as Linux has them.
    pub fn line(&self) -> String {
        format!(
            "CPU states: {:.2}% user, {:.2}% system, {:.2}% idle, {:.2}% iowait, {:.2}% steal",
            self.user, self.system, self.idle, self.iowait, self.steal
        )
    }

    pub fn busy(&self) -> f64 {
        100.0 - self.idle - self.iowait
    }
}
