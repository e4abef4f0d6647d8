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
///
/// Remembered per thread: statrs inverts the regularised incomplete beta
/// function by iteration (tens of µs), and every interval asks again for
/// the same few (confidence, df) pairs — in a comparison of a large suite
/// that inversion was most of the time.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static KNOWN: RefCell<HashMap<(u64, u64), f64>> = RefCell::new(HashMap::new());
    }
    let key = (confidence.to_bits(), df.to_bits());
    if let Some(q) = KNOWN.with(|k| k.borrow().get(&key).copied()) {
        return q;
    }
    let p = 1.0 - (1.0 - confidence) / 2.0;
    let q = StudentsT::new(0.0, 1.0, df.max(1.0))
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(f64::NAN);
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        // Non-integer df (a Welch df) could grow it without bound.
        if k.len() >= 4096 {
            k.clear();
        }
        k.insert(key, q);
    });
    q
}

/// Two-sided standard normal quantile for `confidence`.
pub fn z_quantile(confidence: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    let p = 1.0 - (1.0 - confidence) / 2.0;
    Normal::new(0.0, 1.0).unwrap().inverse_cdf(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_are_the_tables_and_the_same_when_asked_again() {
        // Two-sided 95% and 99% critical values of Student's t (tables).
        for (conf, df, want) in [
            (0.95, 1.0, 12.706),
            (0.95, 4.0, 2.776),
            (0.95, 30.0, 2.042),
            (0.99, 9.0, 3.250),
            (0.95, 1000.0, 1.962),
        ] {
            let first = t_quantile(conf, df);
            assert!(
                (first - want).abs() < 5e-4,
                "t({conf}, {df}) = {first}, want {want}"
            );
            // The remembered value is the computed one, bit for bit.
            assert_eq!(t_quantile(conf, df).to_bits(), first.to_bits());
        }
    }
}
