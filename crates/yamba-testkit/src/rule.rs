//! The sequential decision rule's statistics: a distribution-free
//! confidence interval of the median from order statistics.
//!
//! For n independent observations of a continuous quantity, the number
//! below the true median is Binomial(n, 1/2), so the interval between the
//! k-th smallest and the k-th largest observation misses the median with
//! probability 2·P(B ≤ k − 1), whatever the distribution (ties only make
//! it cover more often).

/// The level of the interval that must lie inside the accepted region for
/// a check to pass: 90% two-sided, that is two one-sided 95% bounds. A
/// median outside the region is outside on one side only, so only that
/// side's bound can let a check pass falsely: at each look with
/// probability at most 5% (at n = 5, the first look, 1/32).
pub const PASS_LEVEL: f64 = 0.90;

/// The whole check's false-failure rate: a fail needs an interval at level
/// 1 − ALPHA/L wholly outside the region, L the number of looks.
pub const ALPHA: f64 = 0.001;

/// P(B ≤ j) for B ~ Binomial(n, 1/2), for j = 0..n.
fn binomial_half_cdf(n: usize) -> Vec<f64> {
    // pmf(0) = 2^-n, pmf(i+1) = pmf(i)·(n−i)/(i+1), in logs so large n
    // does not underflow.
    let mut ln_p = -(n as f64) * std::f64::consts::LN_2;
    let mut acc = 0.0;
    let mut cdf = Vec::with_capacity(n + 1);
    for i in 0..=n {
        acc += ln_p.exp();
        cdf.push(acc.min(1.0));
        if i < n {
            ln_p += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
    }
    cdf
}

/// The narrowest order-statistic interval of the median of `sorted` (in
/// ascending order) whose coverage is at least `level`: `[x(k), x(n+1−k)]`
/// with the largest k such that 2·P(B ≤ k − 1) ≤ 1 − level. `None` when
/// even the whole range has less coverage (too few observations: at 95%
/// the first interval exists at n = 6, at 90% at n = 5).
pub fn median_interval(sorted: &[f64], level: f64) -> Option<(f64, f64)> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let cdf = binomial_half_cdf(n);
    let miss = 1.0 - level;
    // k − 1 = j: the interval [x(j+1), x(n−j)] misses with 2·cdf[j].
    let best = cdf
        .iter()
        .take(n.div_ceil(2))
        .take_while(|&&c| 2.0 * c <= miss)
        .count()
        .checked_sub(1);
    best.map(|j| (sorted[j], sorted[n - 1 - j]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binomial_sums_to_one_and_matches_known_values() {
        let c = binomial_half_cdf(10);
        assert!((c[10] - 1.0).abs() < 1e-12);
        // P(B ≤ 1) = 11/1024 for n = 10.
        assert!((c[1] - 11.0 / 1024.0).abs() < 1e-15);
        let big = binomial_half_cdf(900);
        assert!((big[900] - 1.0).abs() < 1e-9);
    }

    #[test]
    fn intervals_match_the_tables() {
        let xs: Vec<f64> = (1..=25).map(f64::from).collect();
        // 95%: none at n = 5 (miss 2/32), the whole range at 6 (2/64).
        assert_eq!(median_interval(&xs[..5], 0.95), None);
        assert_eq!(median_interval(&xs[..6], 0.95), Some((1.0, 6.0)));
        // 90% (the pass level): none at n = 4 (2/16), the range at 5;
        // the 2nd to the 7th first at n = 8 (2·9/256 = 0.070).
        assert_eq!(median_interval(&xs[..4], PASS_LEVEL), None);
        assert_eq!(median_interval(&xs[..5], PASS_LEVEL), Some((1.0, 5.0)));
        assert_eq!(median_interval(&xs[..7], PASS_LEVEL), Some((1.0, 7.0)));
        assert_eq!(median_interval(&xs[..8], PASS_LEVEL), Some((2.0, 7.0)));
        // n = 25: the 8th and the 18th (2·P(B ≤ 7) = 0.0433).
        assert_eq!(median_interval(&xs, 0.95), Some((8.0, 18.0)));
        // At 1 − 0.001/21 the whole range first covers at n = 16.
        let level = 1.0 - ALPHA / 21.0;
        assert_eq!(median_interval(&xs[..15], level), None);
        assert_eq!(median_interval(&xs[..16], level), Some((1.0, 16.0)));
    }
}
