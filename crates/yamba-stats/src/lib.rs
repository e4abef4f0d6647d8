//! Statistics for yamba.
//!
//! Everything a number needs before it can be trusted: a summary of a sample
//! with confidence intervals, a rank test to compare two samples whose
//! distributions are skewed (as timings are), Welch's t test on two runs'
//! blocks with the Holm and Benjamini–Hochberg corrections for testing a
//! whole suite at once, a least-squares fit, and the seed's outlier layers
//! (mean ± 2σ, repeatable). And the [`units`] numbers are in, with their
//! printing, which every reader and the plots share.

mod blocks;
mod fit;
mod outliers;
mod rank;
mod states;
mod summary;
mod welch;

pub mod units;

pub use blocks::{
    batch_medians, between_blocks, between_blocks_two_stage, mann_whitney_exact_p,
    mann_whitney_min_p, min_blocks_for, outlying_blocks, rotation_medians, rotation_value,
    two_stage_blocks, BlockEstimate, OUTLIER_MIN_SHARE, OUTLIER_SIGMAS,
};
pub use fit::{linear_fit, LinearFit};
pub use outliers::{remove_outlier_layers, OutlierLayer};
pub use rank::{hodges_lehmann_ratio_ci, mann_whitney_u, MannWhitney};
pub use states::{
    known_run_range, levels, run_value, within_known_states, KnownLevel, MIN_KNOWN_RUNS,
    STATE_GAP_FACTOR, STATE_MIN_GAP,
};
pub use summary::{median_ci_ranks, percentile_sorted, Interval, Summary};
pub use welch::{benjamini_hochberg, holm, Welch};

/// Two-sided Student t quantile for `confidence` (e.g. 0.95) with `df` degrees of freedom.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let p = 1.0 - (1.0 - confidence) / 2.0;
    StudentsT::new(0.0, 1.0, df.max(1.0))
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(f64::NAN)
}

/// Two-sided standard normal quantile for `confidence`.
pub fn z_quantile(confidence: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let p = 1.0 - (1.0 - confidence) / 2.0;
    Normal::new(0.0, 1.0).unwrap().inverse_cdf(p)
}
