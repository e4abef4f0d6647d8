//! The clock a run used, as every results file records it. (Detecting and
//! calibrating it is `yamba_core::clock`'s job.)

use serde::{Deserialize, Serialize};

/// Which counter the clock reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// x86-64 time-stamp counter, invariant (constant_tsc + nonstop_tsc).
    Tsc,
    /// aarch64 generic timer, virtual count (CNTVCT_EL0).
    ArmVirtualCounter,
    /// clock_gettime(CLOCK_MONOTONIC_RAW), in nanoseconds.
    MonotonicRaw,
}

/// How a counter's frequency was established.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Counter frequency in Hz.
    pub frequency_hz: f64,
    /// Relative uncertainty of the frequency (spread of the calibration windows).
    pub relative_uncertainty: f64,
    /// Against what, and for how long.
    pub reference: String,
    pub windows: usize,
    pub window_ms: f64,
}

/// Description of the clock in use, as recorded in every results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockInfo {
    pub kind: ClockKind,
    /// Why this clock was chosen (or why a better one was not).
    pub reason: String,
    /// Duration of one tick, in nanoseconds.
    pub tick_ns: f64,
    /// Smallest non-zero difference seen between consecutive reads, in nanoseconds.
    pub resolution_ns: f64,
    pub calibration: Calibration,
}
