//! BASE, the cost of measuring nothing, as a results file records it.
//! (Measuring it is `yamba_core::base`'s job.)

use serde::{Deserialize, Serialize};
use yamba_stats::Summary;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Base {
    /// The minimum observation, in nanoseconds.
    pub base_ns: f64,
    /// Mean of the readings up to twice the median, in nanoseconds: what
    /// is subtracted from single timings (absent in files written before
    /// it was recorded: then the minimum was subtracted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ns: Option<f64>,
    /// The clock's quantum (smallest step between readings), in ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum_ns: Option<f64>,
    /// The minimum in clock ticks.
    pub base_ticks: u64,
    /// Share of observations within 2× the minimum (the seed's "narrow").
    pub share_within_2x_min: f64,
    pub summary: Summary,
    /// Every observation, in nanoseconds, in the order taken.
    #[serde(deserialize_with = "crate::limits::observations")]
    pub observations: Vec<f64>,
}

impl Base {
    /// What is subtracted from a single timing: the mean of the central
    /// readings (the minimum for files that predate it).
    pub fn subtract_ns(&self) -> f64 {
        self.mean_ns.unwrap_or(self.base_ns)
    }
}
