use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, DiscreteCDF};

/// A closed interval `[lo, hi]` at a stated confidence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    /// Confidence level, e.g. 0.95.
    pub confidence: f64,
}

impl Interval {
    pub fn half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }

    /// How far the interval reaches from `value` on its farther side: the
    /// "±" a table prints beside a value the interval need not be centred
    /// on (a median's interval is not symmetric; an interval widened by
    /// earlier runs need not even hold the value's neighbourhood evenly).
    pub fn reach_from(&self, value: f64) -> f64 {
        (self.hi - value).abs().max((value - self.lo).abs())
    }
}

/// Summary of a sample, as the seed's `Sample.stat()` plus what a reader of
/// skewed timing distributions needs: the median with its interval, and
/// the tail percentiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for n < 2.
    pub stddev: f64,
    /// Coefficient of variation, stddev / |mean|; `None` when the mean is 0.
    pub cv: Option<f64>,
    pub p1: f64,
    pub p5: f64,
    pub p25: f64,
    pub p75: f64,
    pub p95: f64,
    pub p99: f64,
    /// Distribution-free interval for the median, from order statistics.
    /// `None` when the sample is too small to give one at this confidence (n < 6 at 95%).
    pub median_ci: Option<Interval>,
    /// Student-t interval for the mean; `None` for n < 2.
    pub mean_ci: Option<Interval>,
}

impl Summary {
    /// Summarises `values` at 95% confidence. Returns `None` for an empty sample
    /// or one containing NaN.
    pub fn of(values: &[f64]) -> Option<Summary> {
        Self::with_confidence(values, 0.95)
    }

    pub fn with_confidence(values: &[f64], confidence: f64) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| v.is_nan()) {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            let ss: f64 = sorted.iter().map(|v| (v - mean) * (v - mean)).sum();
            (ss / (n as f64 - 1.0)).sqrt()
        } else {
            0.0
        };
        let median_ci = median_ci_ranks(n, confidence).map(|(lo, hi)| Interval {
            lo: sorted[lo],
            hi: sorted[hi],
            confidence,
        });
        let mean_ci = (n > 1).then(|| {
            let h = crate::t_quantile(confidence, n as f64 - 1.0) * stddev / (n as f64).sqrt();
            Interval {
                lo: mean - h,
                hi: mean + h,
                confidence,
            }
        });
        let p = |q| percentile_sorted(&sorted, q);
        Some(Summary {
            n,
            min: sorted[0],
            max: sorted[n - 1],
            mean,
            median: p(50.0),
            stddev,
            cv: (mean != 0.0).then(|| stddev / mean.abs()),
            p1: p(1.0),
            p5: p(5.0),
            p25: p(25.0),
            p75: p(75.0),
            p95: p(95.0),
            p99: p(99.0),
            median_ci,
            mean_ci,
        })
    }

    /// Half-width of the median's interval relative to the median: the
    /// harness stops sampling once this is small enough.
    pub fn median_relative_precision(&self) -> Option<f64> {
        let ci = self.median_ci?;
        if self.median == 0.0 {
            return None;
        }
        Some(ci.half_width() / self.median.abs())
    }
}

/// Percentile `q` (0–100) of an ascending slice by linear interpolation
/// between closest ranks (the "R-7" definition used by numpy and R).
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty());
    let pos = (q / 100.0).clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// 0-based ranks `(j, k)` of the order statistics that bracket the median
/// with at least `confidence` coverage: P(X(j) ≤ median ≤ X(k)) ≥ confidence,
/// from the Binomial(n, ½) distribution, symmetric around the middle.
/// `None` when even (min, max) covers less than `confidence`.
pub fn median_ci_ranks(n: usize, confidence: f64) -> Option<(usize, usize)> {
    if n < 2 {
        return None;
    }
    let b = Binomial::new(0.5, n as u64).ok()?;
    // Coverage of [X(j), X(n-1-j)] (0-based) is 1 − 2·P(B ≤ j).
    // Find the largest j whose coverage still reaches the confidence.
    let alpha = 1.0 - confidence;
    let mut best = None;
    let mut lo = 0usize;
    let mut hi = (n - 1) / 2;
    while lo <= hi {
        let j = (lo + hi) / 2;
        if 2.0 * b.cdf(j as u64) <= alpha {
            best = Some(j);
            lo = j + 1;
        } else if j == 0 {
            break;
        } else {
            hi = j - 1;
        }
    }
    best.map(|j| (j, n - 1 - j))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_from_takes_the_farther_side() {
        let c = Interval {
            lo: 9.0,
            hi: 12.0,
            confidence: 0.95,
        };
        assert_eq!(c.reach_from(10.0), 2.0);
        assert_eq!(c.reach_from(11.5), 2.5);
        // A value outside the interval reaches to its far end.
        assert_eq!(c.reach_from(13.0), 4.0);
    }

    #[test]
    fn known_sample() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.min, 2.0);
        assert_eq!(s.max, 9.0);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        // sample stddev: sqrt(32/7)
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // t(0.975, 7) = 2.364624
        let h = s.mean_ci.unwrap().half_width();
        assert!((h - 2.364624 * s.stddev / 8f64.sqrt()).abs() < 1e-5);
    }

    #[test]
    fn median_ci_ranks_match_tables() {
        // Classic table values (Conover): n = 6 → (X(1), X(6)) 1-based, 96.9%.
        assert_eq!(median_ci_ranks(6, 0.95), Some((0, 5)));
        assert_eq!(median_ci_ranks(5, 0.95), None);
        // n = 20 → ranks 6 and 15 (1-based), coverage 95.9%.
        assert_eq!(median_ci_ranks(20, 0.95), Some((5, 14)));
        // n = 100 → ranks 40 and 61 (1-based).
        assert_eq!(median_ci_ranks(100, 0.95), Some((39, 60)));
    }

    #[test]
    fn median_ci_covers_true_median() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let trials = 2000;
        let mut covered = 0;
        for _ in 0..trials {
            // Exponential(1): true median ln 2, skewed like timings.
            let xs: Vec<f64> = (0..31).map(|_| -(1.0 - rng.gen::<f64>()).ln()).collect();
            let ci = Summary::of(&xs).unwrap().median_ci.unwrap();
            if ci.lo <= std::f64::consts::LN_2 && std::f64::consts::LN_2 <= ci.hi {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!(rate > 0.93 && rate < 0.995, "coverage {rate}");
    }

    #[test]
    fn percentiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile_sorted(&v, 0.0), 1.0);
        assert_eq!(percentile_sorted(&v, 100.0), 5.0);
        assert_eq!(percentile_sorted(&v, 25.0), 2.0);
        assert_eq!(percentile_sorted(&v, 90.0), 4.6);
    }

    #[test]
    fn rejects_empty_and_nan() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
        let one = Summary::of(&[3.0]).unwrap();
        assert_eq!(one.stddev, 0.0);
        assert!(one.mean_ci.is_none() && one.median_ci.is_none());
    }
}
