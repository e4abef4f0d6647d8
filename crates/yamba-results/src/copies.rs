//! A result measured as N simultaneous copies (`yamba run --copies N`):
//! where the copies ran, each copy's value, and how the N copies' total
//! throughput compares with one copy's (docs/copies.md).

use crate::units::Unit;
use serde::{Deserialize, Serialize};

/// What a result measured as simultaneous copies adds to a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Copies {
    /// Copies that ran at once in each block.
    pub count: usize,
    /// The result measured as one copy in the same run (same mode): what
    /// `scaling` compares against.
    pub one_copy_id: String,
    /// Each block of N copies, in the order run.
    #[serde(deserialize_with = "crate::limits::list")]
    pub blocks: Vec<CopiesBlock>,
    /// The one-copy result's headline value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_copy: Option<f64>,
    /// The one-copy result's mean observation (over all its blocks): its
    /// throughput's inverse for a time, its throughput for a rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_copy_mean: Option<f64>,
    /// The N copies' total throughput over one copy's, from the means: N
    /// when they scale perfectly, 1 when they are fully serialized. None
    /// when the one-copy value is missing or the unit is neither a time
    /// nor a rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<f64>,
}

/// One block of N simultaneous copies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopiesBlock {
    /// The CPU each copy was pinned to, by copy.
    #[serde(deserialize_with = "crate::limits::list")]
    pub cpus: Vec<usize>,
    /// Each copy's value (its median, or the mean of its placements'
    /// medians), by copy; null for a copy that did not measure.
    #[serde(deserialize_with = "crate::limits::list")]
    pub values: Vec<Option<f64>>,
    /// Each copy's mean observation, by copy: what its throughput is
    /// (1/mean for a time). A median would not do: copies contending for
    /// a lock that one of them keeps taking again see many observations
    /// without a wait and a few with long ones, and the median of each
    /// copy leaves the waits out.
    #[serde(deserialize_with = "crate::limits::list")]
    pub means: Vec<Option<f64>>,
}

impl CopiesBlock {
    /// The copies' total throughput from their means: Σ 1/mᵢ for times,
    /// Σ mᵢ for rates; None when a copy did not measure, a time is not
    /// positive, or the unit is neither.
    pub fn total_rate(&self, unit: Unit) -> Option<f64> {
        let values: Option<Vec<f64>> = self.means.iter().copied().collect();
        let values = values?;
        if unit == Unit::Nanoseconds {
            values
                .iter()
                .map(|&v| (v > 0.0).then(|| 1.0 / v))
                .sum::<Option<f64>>()
        } else if unit.higher_is_better() {
            Some(values.iter().sum())
        } else {
            None
        }
    }
}

impl Copies {
    /// The scaling against a one-copy mean observation `one`: the mean over
    /// blocks of the copies' total throughput, over one copy's (1/one for
    /// times, one for rates). With equal copies this is N × one / per-copy
    /// for times; from means, it stays the throughput ratio when a shared
    /// resource favours one copy.
    pub fn scaling_against(&self, one: f64, unit: Unit) -> Option<f64> {
        let rates: Option<Vec<f64>> = self.blocks.iter().map(|b| b.total_rate(unit)).collect();
        let rates = rates.filter(|r| !r.is_empty())?;
        let mean = rates.iter().sum::<f64>() / rates.len() as f64;
        if unit == Unit::Nanoseconds {
            (one > 0.0).then_some(mean * one)
        } else {
            (one > 0.0).then_some(mean / one)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copies(blocks: &[&[f64]]) -> Copies {
        Copies {
            count: blocks[0].len(),
            one_copy_id: "a".into(),
            blocks: blocks
                .iter()
                .map(|v| CopiesBlock {
                    cpus: (0..v.len()).collect(),
                    values: v.iter().map(|&x| Some(x)).collect(),
                    means: v.iter().map(|&x| Some(x)).collect(),
                })
                .collect(),
            one_copy: None,
            one_copy_mean: None,
            scaling: None,
        }
    }

    #[test]
    fn scaling_is_n_for_equal_copies_and_one_for_serialized() {
        let ns = Unit::Nanoseconds;
        // Two copies each as fast as one: ×2; each twice as slow: ×1.
        assert_eq!(
            copies(&[&[100.0, 100.0]]).scaling_against(100.0, ns),
            Some(2.0)
        );
        assert_eq!(
            copies(&[&[200.0, 200.0]]).scaling_against(100.0, ns),
            Some(1.0)
        );
        // A lock that favours one copy: 1/110 + 1/1100 of one copy's
        // 1/100 — still ×1.0, where 2 × 100 / mean(110, 1100) = 0.17.
        let unfair = copies(&[&[110.0, 1100.0]])
            .scaling_against(100.0, ns)
            .unwrap();
        assert!((unfair - 1.0).abs() < 0.01, "{unfair}");
        // Rates add: 3 copies at 5 GB/s against one at 10 GB/s.
        let gb = Unit::GigabytesPerSecond;
        assert_eq!(
            copies(&[&[5.0, 5.0, 5.0]]).scaling_against(10.0, gb),
            Some(1.5)
        );
        // Blocks are averaged.
        assert_eq!(
            copies(&[&[100.0, 100.0], &[200.0, 200.0]]).scaling_against(100.0, ns),
            Some(1.5)
        );
        // Neither a time nor a rate, a copy missing, no one-copy value: none.
        assert_eq!(
            copies(&[&[1.0, 1.0]]).scaling_against(1.0, Unit::Bytes),
            None
        );
        let mut missing = copies(&[&[100.0, 100.0]]);
        missing.blocks[0].means[1] = None;
        assert_eq!(missing.scaling_against(100.0, ns), None);
        assert_eq!(copies(&[&[100.0, 100.0]]).scaling_against(0.0, ns), None);
    }
}
