/// One layer of outlier removal: what the seed's `plot -o` does once.
#[derive(Debug, Clone, PartialEq)]
pub struct OutlierLayer {
    pub mean: f64,
    pub stddev: f64,
    /// How many values this layer removed.
    pub removed: usize,
}

/// Removes `layers` layers of outliers — values further than 2 standard
/// deviations from the mean, the mean and deviation recomputed for each
/// layer — keeping the order of the values that remain.
pub fn remove_outlier_layers(values: &[f64], layers: usize) -> (Vec<f64>, Vec<OutlierLayer>) {
    let mut kept = values.to_vec();
    let mut report = Vec::with_capacity(layers);
    for _ in 0..layers {
        let n = kept.len();
        if n < 2 {
            report.push(OutlierLayer {
                mean: kept.first().copied().unwrap_or(f64::NAN),
                stddev: 0.0,
                removed: 0,
            });
            continue;
        }
        let mean = kept.iter().sum::<f64>() / n as f64;
        let sd = (kept.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)).sqrt();
        let before = kept.len();
        kept.retain(|v| (v - mean).abs() <= 2.0 * sd);
        report.push(OutlierLayer {
            mean,
            stddev: sd,
            removed: before - kept.len(),
        });
    }
    (kept, report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn removes_a_spike() {
        let mut v = vec![10.0; 50];
        v[7] = 1000.0;
        let (kept, layers) = remove_outlier_layers(&v, 1);
        assert_eq!(kept.len(), 49);
        assert_eq!(layers[0].removed, 1);
        let (_, layers) = remove_outlier_layers(&v, 3);
        assert_eq!(
            layers.iter().map(|l| l.removed).collect::<Vec<_>>(),
            vec![1, 0, 0]
        );
    }

    proptest! {
        #[test]
        fn layers_only_shrink_and_keep_order(v in proptest::collection::vec(-1e6f64..1e6, 0..200), k in 0usize..5) {
            let (kept, layers) = remove_outlier_layers(&v, k);
            prop_assert_eq!(layers.len(), k);
            prop_assert_eq!(kept.len() + layers.iter().map(|l| l.removed).sum::<usize>(), v.len());
            // kept is a subsequence of v
            let mut it = v.iter();
            for x in &kept { prop_assert!(it.any(|y| y == x)); }
            // each layer never removes everything (at least the value nearest the mean stays)
            if !v.is_empty() { prop_assert!(!kept.is_empty()); }
        }
    }
}
