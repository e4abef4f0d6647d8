//! Hardware counts over a benchmark, as a results file records them.
//! (Reading the counters is `yamba_core::counters`'s job.)

use serde::{Deserialize, Serialize};

/// Counts over one benchmark, scaled for multiplexing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub cycles: u64,
    pub instructions: u64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// Share of the time the counters were actually counting (1 unless multiplexed).
    pub running_share: f64,
}
