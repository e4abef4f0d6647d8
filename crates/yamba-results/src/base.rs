//! BASE, the cost of measuring nothing, as a results file records it.
//! (Measuring it is `yamba_core::base`'s job.)

use serde::{Deserialize, Serialize};
use yamba_stats::Summary;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Base {
    /// The minimum observation, in nanoseconds: what is subtracted.
    pub base_ns: f64,
    /// The minimum in clock ticks.
    pub base_ticks: u64,
    /// Share of observations within 2× the minimum (the seed's "narrow").
    pub share_within_2x_min: f64,
    pub summary: Summary,
    /// Every observation, in nanoseconds, in the order taken.
    pub observations: Vec<f64>,
}
