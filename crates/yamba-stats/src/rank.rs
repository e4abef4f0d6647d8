use statrs::distribution::{ContinuousCDF, Normal};

/// Result of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of the first sample.
    pub u: f64,
    /// Two-sided p-value (normal approximation with tie and continuity correction).
    pub p_value: f64,
}

/// Two-sided Mann-Whitney U test, as benchstat uses to compare timings:
/// it assumes nothing about the shape of the distributions.
/// Returns `None` when either sample is empty.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut all: Vec<(f64, usize)> = a
        .iter()
        .map(|&v| (v, 0))
        .chain(b.iter().map(|&v| (v, 1)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut ranks = vec![0.0; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for r in ranks.iter_mut().take(j + 1).skip(i) {
            *r = avg;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let r1: f64 = all
        .iter()
        .zip(&ranks)
        .filter(|((_, g), _)| *g == 0)
        .map(|(_, r)| r)
        .sum();
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u = r1 - n1f * (n1f + 1.0) / 2.0;
    let mu = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)).max(1.0));
    if var <= 0.0 {
        // Every value tied: no evidence of any difference.
        return Some(MannWhitney { u, p_value: 1.0 });
    }
    let z = ((u - mu).abs() - 0.5).max(0.0) / var.sqrt();
    let p = 2.0 * (1.0 - Normal::new(0.0, 1.0).unwrap().cdf(z));
    Some(MannWhitney {
        u,
        p_value: p.min(1.0),
    })
}

/// Confidence interval for the ratio b/a of two positive samples'
/// locations: the Hodges-Lehmann estimator on log values, with the
/// distribution-free interval from the Mann-Whitney null distribution
/// (normal approximation). Returns `(estimate, lo, hi)`, or `None` when a
/// sample is empty or holds a value ≤ 0.
pub fn hodges_lehmann_ratio_ci(a: &[f64], b: &[f64], confidence: f64) -> Option<(f64, f64, f64)> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|&v| v <= 0.0 || v.is_nan()) {
        return None;
    }
    let mut diffs: Vec<f64> = Vec::with_capacity(a.len() * b.len());
    for &x in a {
        for &y in b {
            diffs.push(y.ln() - x.ln());
        }
    }
    diffs.sort_by(|x, y| x.total_cmp(y));
    let m = diffs.len();
    let est = crate::percentile_sorted(&diffs, 50.0);
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let z = crate::z_quantile(confidence);
    let k = (n1 * n2 / 2.0 - z * (n1 * n2 * (n1 + n2 + 1.0) / 12.0).sqrt()).floor();
    let k = (k.max(0.0) as usize).min(m - 1);
    let lo = diffs[k];
    let hi = diffs[m - 1 - k];
    Some((est.exp(), lo.exp(), hi.exp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_samples_give_p_one() {
        let a = [1.0, 2.0, 3.0, 4.0];
        let r = mann_whitney_u(&a, &a).unwrap();
        assert!(r.p_value > 0.9);
    }

    #[test]
    fn separated_samples_are_significant() {
        let a: Vec<f64> = (0..20).map(|i| 100.0 + i as f64 * 0.1).collect();
        let b: Vec<f64> = (0..20).map(|i| 110.0 + i as f64 * 0.1).collect();
        let r = mann_whitney_u(&a, &b).unwrap();
        assert_eq!(r.u, 0.0);
        assert!(r.p_value < 1e-6, "{r:?}");
        let (est, lo, hi) = hodges_lehmann_ratio_ci(&a, &b, 0.95).unwrap();
        assert!(lo <= est && est <= hi);
        assert!((est - 1.1).abs() < 0.01, "{est}");
    }

    #[test]
    fn matches_scipy_reference() {
        // By hand: ranks of a = 1, 2, 3.5, 5.5, 7.5 → R1 = 19.5, U = 4.5, μ = 15;
        // three pairs of ties → σ² = 30/12·(12 − 18/110) = 29.591; z = (10.5 − 0.5)/σ = 1.8383;
        // p = 2·(1 − Φ(z)) = 0.0660 (scipy's asymptotic method with continuity agrees).
        let r = mann_whitney_u(&[1., 2., 3., 4., 5.], &[3., 4., 5., 6., 7., 8.]).unwrap();
        assert_eq!(r.u, 4.5);
        assert!((r.p_value - 0.0660).abs() < 0.0005, "{}", r.p_value);
    }
}
