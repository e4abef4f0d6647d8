/// An ordinary least-squares line y = slope·x + intercept.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinearFit {
    pub slope: f64,
    pub intercept: f64,
    /// Coefficient of determination; 1 for a perfect fit, `None` when y is constant.
    pub r_squared: Option<f64>,
    pub n: usize,
}

/// Least-squares fit of `y` against `x` (the seed's Figure 8 table).
/// `None` with fewer than two points or when all x are equal.
pub fn linear_fit(x: &[f64], y: &[f64]) -> Option<LinearFit> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mx = x[..n].iter().sum::<f64>() / nf;
    let my = y[..n].iter().sum::<f64>() / nf;
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x[i] - mx, y[i] - my);
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ss_res: f64 = (0..n)
        .map(|i| {
            let e = y[i] - (slope * x[i] + intercept);
            e * e
        })
        .sum();
    let r_squared = (syy != 0.0).then(|| 1.0 - ss_res / syy);
    Some(LinearFit {
        slope,
        intercept,
        r_squared,
        n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_line() {
        let f = linear_fit(&[1., 2., 3., 4.], &[3., 5., 7., 9.]).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12 && (f.intercept - 1.0).abs() < 1e-12);
        assert!((f.r_squared.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn noisy_line_r2_below_one() {
        let f = linear_fit(&[1., 2., 3., 4.], &[1., 3., 2., 4.]).unwrap();
        assert!((f.slope - 0.8).abs() < 1e-12);
        assert!((f.r_squared.unwrap() - 0.64).abs() < 1e-12);
        assert!(linear_fit(&[1., 1.], &[2., 3.]).is_none());
    }
}
