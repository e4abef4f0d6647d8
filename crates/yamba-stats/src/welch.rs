//! Comparing two runs' blocks: Welch's t test, and the corrections for
//! testing many results at once.
//!
//! A run gives each quantity a handful of block values (3 to 10 processes
//! in a precise run). A rank test cannot call anything with 3 a side (the
//! smallest two-sided Mann-Whitney p is 0.1), and none on ≤ 10 blocks can
//! reach a family-wise level over a suite of a hundred lines. Welch's t on
//! the blocks is valid from 2 a side — its interval is wide then, as it
//! should be — and gives p-values as small as the data warrant:
//!
//! - [`Welch::of`]: the difference of means mean(b) − mean(a), its
//!   standard error √(s²ₐ/nₐ + s²ᵦ/nᵦ) and the Welch–Satterthwaite degrees
//!   of freedom (s²ₐ/nₐ + s²ᵦ/nᵦ)² / ((s²ₐ/nₐ)²/(nₐ−1) + (s²ᵦ/nᵦ)²/(nᵦ−1));
//!   [`Welch::of_logs`] on the logarithms, where a change is a ratio;
//! - two-sided and one-sided p-values, the latter against a shifted null
//!   ("b exceeds a by at most δ": what a regression gate asks);
//! - [`holm`]: Holm–Bonferroni step-down adjusted p-values (family-wise
//!   error rate), [`benjamini_hochberg`]: step-up adjusted p-values
//!   (false-discovery rate).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Welch's two-sample t statistic's parts for mean(b) − mean(a).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// mean(b) − mean(a).
    pub diff: f64,
    /// Standard error of `diff`.
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, var)
}

impl Welch {
    /// The test of `b` against `a`; `None` unless both have at least 2
    /// values, all finite.
    pub fn of(a: &[f64], b: &[f64]) -> Option<Welch> {
        Welch::with_variance_floor(a, b, 0.0)
    }

    /// [`Welch::of`], with each side's sample variance taken as at least
    /// `floor` (e.g. the variance a quantised reading adds, step²/12, so
    /// that values which tie cannot claim a zero standard error).
    pub fn with_variance_floor(a: &[f64], b: &[f64], floor: f64) -> Option<Welch> {
        if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
            return None;
        }
        let (ma, va) = mean_var(a);
        let (mb, vb) = mean_var(b);
        let floor = if floor.is_finite() {
            floor.max(0.0)
        } else {
            0.0
        };
        let (na, nb) = (a.len() as f64, b.len() as f64);
        let (ua, ub) = (va.max(floor) / na, vb.max(floor) / nb);
        let se = (ua + ub).sqrt();
        let df = if ua + ub > 0.0 {
            (ua + ub).powi(2) / (ua * ua / (na - 1.0) + ub * ub / (nb - 1.0))
        } else {
            // Both sides constant: no spread to weigh; the pooled count.
            na + nb - 2.0
        };
        Some(Welch {
            diff: mb - ma,
            se,
            df,
        })
    }

    /// [`Welch::with_variance_floor`] on the natural logarithms: `diff` is
    /// the log of the ratio of geometric means, b over a. `None` when a
    /// value is ≤ 0.
    pub fn of_logs(a: &[f64], b: &[f64], floor: f64) -> Option<Welch> {
        if a.iter().chain(b).any(|&v| v.is_nan() || v <= 0.0) {
            return None;
        }
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        Welch::with_variance_floor(&ln(a), &ln(b), floor)
    }

    /// P(T ≥ (diff − delta)/se) under the null: small when the true
    /// difference is larger than `delta`.
    fn upper_tail(&self, delta: f64) -> f64 {
        let d = self.diff - delta;
        if self.se == 0.0 {
            return if d > 0.0 { 0.0 } else { 1.0 };
        }
        match StudentsT::new(0.0, 1.0, self.df.max(1e-3)) {
            Ok(t) => 1.0 - t.cdf(d / self.se),
            Err(_) => f64::NAN,
        }
    }

    /// The t statistic, diff / se (infinite when se is 0 and diff is not).
    pub fn t(&self) -> f64 {
        if self.se == 0.0 && self.diff == 0.0 {
            0.0
        } else {
            self.diff / self.se
        }
    }

    /// Two-sided p-value of "the means are equal".
    pub fn p_two_sided(&self) -> f64 {
        if self.diff == 0.0 {
            return 1.0;
        }
        (2.0 * self.upper_tail_abs()).min(1.0)
    }

    fn upper_tail_abs(&self) -> f64 {
        if self.diff >= 0.0 {
            self.upper_tail(0.0)
        } else {
            self.mirror().upper_tail(0.0)
        }
    }

    fn mirror(&self) -> Welch {
        Welch {
            diff: -self.diff,
            ..*self
        }
    }

    /// One-sided p-value of the null "the true difference is at most
    /// `delta`" against "it is larger".
    pub fn p_greater(&self, delta: f64) -> f64 {
        self.upper_tail(delta)
    }

    /// One-sided p-value of the null "the true difference is at least
    /// `delta`" against "it is smaller".
    pub fn p_less(&self, delta: f64) -> f64 {
        self.mirror().upper_tail(-delta)
    }

    /// The two-sided interval for the difference at `confidence`.
    pub fn ci(&self, confidence: f64) -> (f64, f64) {
        let h = if self.se == 0.0 {
            0.0
        } else {
            crate::t_quantile(confidence, self.df.max(1e-3)) * self.se
        };
        (self.diff - h, self.diff + h)
    }
}

/// Holm–Bonferroni step-down adjusted p-values: a result is rejected at
/// family-wise level α when its adjusted p is ≤ α. With m p-values sorted
/// ascending, the k-th (from 0) is multiplied by m − k, and the adjusted
/// values are made non-decreasing in that order. Non-finite p-values are
/// treated as 1.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean = |x: f64| {
        if x.is_finite() {
            x.clamp(0.0, 1.0)
        } else {
            1.0
        }
    };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| clean(p[i]).total_cmp(&clean(p[j])));
    let mut out = vec![1.0; m];
    let mut running = 0.0f64;
    for (k, &i) in order.iter().enumerate() {
        running = running.max(((m - k) as f64 * clean(p[i])).min(1.0));
        out[i] = running;
    }
    out
}

/// Benjamini–Hochberg step-up adjusted p-values (q-values): the results
/// whose adjusted p is ≤ q are the discoveries at false-discovery rate q
/// (for independent or positively dependent tests). With m p-values sorted
/// ascending, the k-th (from 1) is multiplied by m / k, and the adjusted
/// values are made non-decreasing from the largest down. Non-finite
/// p-values are treated as 1.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean = |x: f64| {
        if x.is_finite() {
            x.clamp(0.0, 1.0)
        } else {
            1.0
        }
    };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| clean(p[i]).total_cmp(&clean(p[j])));
    let mut out = vec![1.0; m];
    let mut running = 1.0f64;
    for (k, &i) in order.iter().enumerate().rev() {
        running = running.min(clean(p[i]) * m as f64 / (k + 1) as f64);
        out[i] = running.min(1.0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn close(x: f64, y: f64, tol: f64) -> bool {
        (x - y).abs() <= tol * y.abs().max(1e-300)
    }

    /// scipy 1.17: `stats.ttest_ind(b, a, equal_var=False)` — its
    /// statistic, p-value, df and `confidence_interval(0.95)`, and
    /// `alternative='greater'`.
    #[test]
    fn matches_scipy_welch() {
        let cases: [(&[f64], &[f64], [f64; 6]); 3] = [
            (
                &[1.0, 2.0, 3.0, 4.0, 5.0],
                &[3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                [
                    2.40192230708,
                    0.0398030820241,
                    8.98936170213,
                    0.145047356036,
                    4.85495264396,
                    0.0199015410121,
                ],
            ),
            (
                &[100.2, 101.1, 99.7],
                &[104.9, 105.3, 106.1],
                [
                    9.43438416447,
                    0.000780759653008,
                    3.91393407837,
                    3.58601483946,
                    6.61398516054,
                    0.000390379826504,
                ],
            ),
            (
                &[10.0, 10.5],
                &[11.0, 12.5, 11.8, 12.1],
                [
                    3.95897327444,
                    0.0198437588801,
                    3.65680923975,
                    0.435136312308,
                    2.76486368769,
                    0.00992187944005,
                ],
            ),
        ];
        for (a, b, [t, p, df, lo, hi, p_greater]) in cases {
            let w = Welch::of(a, b).unwrap();
            assert!(close(w.t(), t, 1e-9), "t {} vs {t}", w.t());
            assert!(close(w.df, df, 1e-9), "df {} vs {df}", w.df);
            assert!(
                close(w.p_two_sided(), p, 1e-6),
                "p {} vs {p}",
                w.p_two_sided()
            );
            assert!(close(w.p_greater(0.0), p_greater, 1e-6));
            let (l, h) = w.ci(0.95);
            assert!(close(l, lo, 1e-6) && close(h, hi, 1e-6), "[{l}, {h}]");
            // The other way round: the same test, mirrored.
            let r = Welch::of(b, a).unwrap();
            assert!(close(r.p_two_sided(), p, 1e-6));
            assert!(close(r.p_less(0.0), p_greater, 1e-6));
        }
    }

    /// scipy: on the logs, `ttest_ind(log b, log a, equal_var=False)` and,
    /// with the null shifted by log 1.05, `ttest_ind(log b − log 1.05,
    /// log a, equal_var=False, alternative='greater')`.
    #[test]
    fn matches_scipy_on_logs_and_with_a_shifted_null() {
        let (a, b) = ([100.2, 101.1, 99.7], [104.9, 105.3, 106.1]);
        let w = Welch::of_logs(&a, &b, 0.0).unwrap();
        assert!(close(w.t(), 9.4028926658, 1e-9), "{}", w.t());
        assert!(close(w.p_two_sided(), 0.000852863136432, 1e-6));
        let (lo, hi) = w.ci(0.95);
        assert!(close(lo, 0.03471939540831086, 1e-6), "{lo}");
        assert!(close(hi, 0.06445326360311528, 1e-6), "{hi}");
        let p = w.p_greater(1.05f64.ln());
        assert!(close(p, 0.443785597583, 1e-6), "{p}");
        assert!(Welch::of_logs(&[1.0, 0.0], &b, 0.0).is_none());
        assert!(Welch::of(&[1.0], &b).is_none(), "one value a side");
    }

    #[test]
    fn constant_sides_and_the_variance_floor() {
        // Every block tied: no spread, so any difference is certain ...
        let w = Welch::of(&[20.0; 3], &[21.0; 3]).unwrap();
        assert_eq!((w.se, w.df, w.p_two_sided()), (0.0, 4.0, 0.0));
        assert_eq!(w.p_greater(0.5), 0.0);
        assert_eq!(w.p_greater(1.5), 1.0);
        assert_eq!(
            Welch::of(&[20.0; 3], &[20.0; 3]).unwrap().p_two_sided(),
            1.0
        );
        // ... unless a quantum's rounding is allowed for (step²/12).
        let w = Welch::with_variance_floor(&[20.0; 3], &[21.0; 3], 1.0 / 12.0).unwrap();
        assert!(w.p_two_sided() > 0.01, "{w:?}");
    }

    #[test]
    fn holm_and_benjamini_hochberg_match_known_values() {
        let p = [0.01, 0.04, 0.03, 0.005, 0.2];
        // By hand: sorted 0.005·5, 0.01·4, 0.03·3, 0.04·2 → 0.09, 0.2·1.
        let h = holm(&p);
        for (x, y) in h.iter().zip([0.04, 0.09, 0.09, 0.025, 0.2]) {
            assert!((x - y).abs() < 1e-12, "{h:?}");
        }
        // scipy.stats.false_discovery_control(p, method='bh').
        let q = benjamini_hochberg(&p);
        for (x, y) in q.iter().zip([0.025, 0.05, 0.05, 0.025, 0.2]) {
            assert!((x - y).abs() < 1e-12, "{q:?}");
        }
        assert!(holm(&[]).is_empty() && benjamini_hochberg(&[]).is_empty());
        assert_eq!(holm(&[f64::NAN, 0.01]), vec![1.0, 0.02]);
    }

    fn normal(rng: &mut rand::rngs::StdRng) -> f64 {
        let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Under the null with 3 normal blocks a side and unequal spreads,
    /// Welch's test keeps its level (it is slightly conservative there).
    #[test]
    fn keeps_its_level_with_three_blocks() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let trials = 20_000;
        let mut called = 0;
        for i in 0..trials {
            let sb = if i % 2 == 0 { 1.0 } else { 3.0 };
            let a: Vec<f64> = (0..3).map(|_| normal(&mut rng)).collect();
            let b: Vec<f64> = (0..3).map(|_| sb * normal(&mut rng)).collect();
            called += usize::from(Welch::of(&a, &b).unwrap().p_two_sided() < 0.05);
        }
        let rate = called as f64 / trials as f64;
        assert!((0.02..=0.055).contains(&rate), "{rate}");
    }
}
