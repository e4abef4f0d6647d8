//! Certainty from blocks: the unit of replication.
//!
//! Observations taken one after another in one process are not independent
//! samples of what a user sees when running again: they share the process's
//! memory layout, its CPU placement, the host's state of the moment.
//! Treating them as independent gives intervals that are far too narrow
//! (Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time", 2013).
//! So a quantity is sampled in *blocks* — fresh processes in a precise run,
//! contiguous batches of one process's observations otherwise — and its
//! interval comes from the blocks' medians, one value per block:
//!
//! - estimate: the mean of the block medians (each median shrugs off the
//!   interruptions inside its block; averaging blocks gives an estimate
//!   whose spread the Student-t interval describes);
//! - interval: Student t with B − 1 degrees of freedom on the block
//!   medians (the batch-means method when blocks are batches), widened to
//!   at least ± half the resolution of one observation, so a quantised
//!   clock whose readings tie can never claim a zero-width interval;
//! - outlying blocks: a block whose median lies beyond [`OUTLIER_SIGMAS`]
//!   robust standard deviations of the others (and beyond
//!   [`OUTLIER_MIN_SHARE`] of their median) is named, not averaged away
//!   silently.

use crate::Interval;
use serde::{Deserialize, Serialize};

/// A block this many robust standard deviations from the others is named.
pub const OUTLIER_SIGMAS: f64 = 4.0;
/// ... and only when it is also this far, relative, from the nearest of
/// them: smaller differences between processes are common (code and data
/// layout move a null system call by a few percent) and are what the
/// interval is for.
pub const OUTLIER_MIN_SHARE: f64 = 0.03;

/// What the blocks say about a quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockEstimate {
    /// Number of blocks.
    pub blocks: usize,
    /// Mean of the block medians.
    pub estimate: f64,
    /// Student-t interval on the block medians; `None` for fewer than 2 blocks.
    pub ci: Option<Interval>,
    /// Standard deviation of the block medians.
    pub stddev: f64,
    /// Smallest difference one observation can show (the clock's quantum
    /// divided by the operations per observation).
    pub resolution: f64,
    /// The interval was widened to ± resolution / 2.
    pub resolution_limited: bool,
    /// 0-based indices of blocks far from the others.
    pub outliers: Vec<usize>,
}

impl BlockEstimate {
    /// Half-width of the interval relative to the estimate.
    pub fn relative_precision(&self) -> Option<f64> {
        let ci = self.ci?;
        (self.estimate != 0.0).then(|| ci.half_width() / self.estimate.abs())
    }
}

fn median_of(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    crate::percentile_sorted(&s, 50.0)
}

/// Medians of `batches` contiguous, equal-sized runs of `obs` (the last
/// takes the remainder). Fewer batches when there are fewer observations.
pub fn batch_medians(obs: &[f64], batches: usize) -> Vec<f64> {
    let k = batches.min(obs.len()).max(1);
    if obs.is_empty() {
        return Vec::new();
    }
    let size = obs.len() / k;
    (0..k)
        .map(|i| {
            let end = if i + 1 == k {
                obs.len()
            } else {
                (i + 1) * size
            };
            median_of(&obs[i * size..end])
        })
        .collect()
}

/// One process's observations taken at `slots` code placements in turn,
/// `stretch` consecutive observations at a time: observation `i` ran at
/// placement `(i / stretch) % slots`. The median and count of each
/// placement's observations, in placement order (placements that got no
/// observation are left out).
pub fn rotation_medians(obs: &[f64], slots: usize, stretch: usize) -> Vec<(f64, usize)> {
    let (slots, stretch) = (slots.max(1), stretch.max(1));
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); slots];
    for (i, &x) in obs.iter().enumerate() {
        groups[(i / stretch) % slots].push(x);
    }
    groups
        .into_iter()
        .filter(|g| !g.is_empty())
        .map(|g| (median_of(&g), g.len()))
        .collect()
}

/// A process's value when its code ran at several placements: the mean
/// of its placements' medians ([`rotation_medians`]), so that every
/// placement counts alike however the interruptions fell; with one
/// placement, the median of the observations.
pub fn rotation_value(obs: &[f64], slots: usize, stretch: usize) -> Option<f64> {
    let m = rotation_medians(obs, slots, stretch);
    (!m.is_empty()).then(|| m.iter().map(|(v, _)| v).sum::<f64>() / m.len() as f64)
}

/// The estimate, interval and outlying blocks from one median per block.
/// `None` when there is no block or a median is not finite.
pub fn between_blocks(medians: &[f64], resolution: f64, confidence: f64) -> Option<BlockEstimate> {
    if medians.is_empty() || medians.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let b = medians.len();
    let estimate = medians.iter().sum::<f64>() / b as f64;
    let stddev = if b > 1 {
        (medians.iter().map(|m| (m - estimate).powi(2)).sum::<f64>() / (b - 1) as f64).sqrt()
    } else {
        0.0
    };
    let floor = resolution.max(0.0) / 2.0;
    let (ci, resolution_limited) = if b > 1 {
        let h = crate::t_quantile(confidence, (b - 1) as f64) * stddev / (b as f64).sqrt();
        let limited = h < floor;
        let h = h.max(floor);
        (
            Some(Interval {
                lo: estimate - h,
                hi: estimate + h,
                confidence,
            }),
            limited,
        )
    } else {
        (None, false)
    };
    Some(BlockEstimate {
        blocks: b,
        estimate,
        ci,
        stddev,
        resolution,
        resolution_limited,
        outliers: outlying_blocks(medians, resolution),
    })
}

/// Stein's two-stage rule (Stein, 1945): after a pilot of `pilot.len()`
/// blocks, how many blocks in all make the interval's half-width at most
/// `half_width` — `(t · s₀ / h)²` with s₀ the pilot's standard deviation
/// and t its Student quantile with pilot − 1 degrees of freedom — never
/// fewer than the pilot. Because the count depends on the pilot's spread
/// only, [`between_blocks_two_stage`]'s interval keeps its coverage
/// whatever count the rule chose (exactly, for normal block values),
/// which stopping as soon as the usual interval looks narrow does not.
pub fn two_stage_blocks(pilot: &[f64], half_width: f64, confidence: f64) -> usize {
    let n0 = pilot.len();
    if n0 < 2 || half_width.is_nan() || half_width <= 0.0 {
        return n0;
    }
    let mean = pilot.iter().sum::<f64>() / n0 as f64;
    let s0 = (pilot.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n0 - 1) as f64).sqrt();
    let t = crate::t_quantile(confidence, (n0 - 1) as f64);
    let n = (t * s0 / half_width).powi(2).ceil();
    if n.is_finite() {
        (n as usize).max(n0)
    } else {
        n0
    }
}

/// [`between_blocks`] over all `values`, its interval widened where
/// Stein's two-stage interval is wider: ± t(pilot − 1) · s₀ / √n, s₀ the
/// spread of the first `pilot` values (the pilot that chose n). Each of
/// the two intervals covers on its own terms, so their union does.
pub fn between_blocks_two_stage(
    values: &[f64],
    pilot: usize,
    resolution: f64,
    confidence: f64,
) -> Option<BlockEstimate> {
    let mut e = between_blocks(values, resolution, confidence)?;
    let n0 = pilot.min(values.len());
    if n0 < 2 || n0 == values.len() {
        return Some(e);
    }
    let p = &values[..n0];
    let mean = p.iter().sum::<f64>() / n0 as f64;
    let s0 = (p.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n0 - 1) as f64).sqrt();
    let h = crate::t_quantile(confidence, (n0 - 1) as f64) * s0 / (values.len() as f64).sqrt();
    if let Some(ci) = e.ci.as_mut() {
        if h > ci.half_width() {
            ci.lo = e.estimate - h;
            ci.hi = e.estimate + h;
            e.resolution_limited = false;
        }
    }
    Some(e)
}

/// Blocks whose median is far from the others': leave each out, and judge
/// its distance to the *nearest* of the rest against their spread (median
/// absolute deviation), so that two groups of blocks (a bimodal machine)
/// name nobody while a lone block far from all the others is named.
/// Needs at least four blocks (three others to judge against).
pub fn outlying_blocks(medians: &[f64], resolution: f64) -> Vec<usize> {
    if medians.len() < 4 {
        return Vec::new();
    }
    (0..medians.len())
        .filter(|&i| {
            let others: Vec<f64> = medians
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &v)| v)
                .collect();
            let center = median_of(&others);
            let devs: Vec<f64> = others.iter().map(|v| (v - center).abs()).collect();
            let sigma = 1.4826 * median_of(&devs);
            let off = others
                .iter()
                .map(|v| (medians[i] - v).abs())
                .fold(f64::INFINITY, f64::min);
            off > OUTLIER_SIGMAS * sigma
                && off > OUTLIER_MIN_SHARE * center.abs()
                && off > resolution
        })
        .collect()
}

/// Two-sided Mann-Whitney U p-value, exact (the permutation distribution
/// of the rank sum) when neither sample has ties across them and both are
/// small; `None` otherwise, when the normal approximation is the answer.
/// Block medians are few (a handful per run), where the normal
/// approximation is poor.
pub fn mann_whitney_exact_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || n1 + n2 > 60 {
        return None;
    }
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    if all.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    // U of a: pairs (x in a, y in b) with x > y.
    let u: usize = a
        .iter()
        .map(|x| b.iter().filter(|&&y| *x > y).count())
        .sum();
    // counts[n][u]: arrangements of n values of a among ... computed by the
    // recurrence f(i, j, u) = f(i−1, j, u−j) + f(i, j−1, u) over i of a and
    // j of b (the largest value belongs to a or to b).
    let max_u = n1 * n2;
    let mut f = vec![vec![vec![0f64; max_u + 1]; n2 + 1]; n1 + 1];
    for i in 0..=n1 {
        for j in 0..=n2 {
            if i == 0 || j == 0 {
                f[i][j][0] = 1.0;
                continue;
            }
            for k in 0..=i * j {
                let from_a = if k >= j { f[i - 1][j][k - j] } else { 0.0 };
                f[i][j][k] = from_a + f[i][j - 1][k];
            }
        }
    }
    let dist = &f[n1][n2];
    let total: f64 = dist.iter().sum();
    let lower: f64 = dist[..=u].iter().sum::<f64>() / total;
    let upper: f64 = dist[u..].iter().sum::<f64>() / total;
    Some((2.0 * lower.min(upper)).min(1.0))
}

/// The smallest two-sided p-value the exact Mann-Whitney test can give with
/// samples of `n1` and `n2` (complete separation): 2 / C(n1 + n2, n1).
pub fn mann_whitney_min_p(n1: usize, n2: usize) -> f64 {
    let mut c = 1.0f64;
    for i in 0..n1 {
        c = c * (n2 + n1 - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Blocks each side needs before the exact test can reach `1 − confidence`.
pub fn min_blocks_for(confidence: f64) -> usize {
    (1..100)
        .find(|&n| mann_whitney_min_p(n, n) < 1.0 - confidence)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_pilot_sets_the_count_and_the_width() {
        // s₀ = 1 over 3 pilot blocks: t(2) = 4.303, so ±1 needs 19 blocks.
        let pilot = [9.0, 10.0, 11.0];
        assert_eq!(two_stage_blocks(&pilot, 1.0, 0.95), 19);
        assert_eq!(two_stage_blocks(&pilot, 100.0, 0.95), 3);
        assert_eq!(two_stage_blocks(&[5.0, 5.0, 5.0], 0.1, 0.95), 3);
        // Later blocks that agree closely cannot narrow the interval below
        // what the pilot's spread gives for their number.
        let mut v = pilot.to_vec();
        v.extend([10.0; 16]);
        let e = between_blocks_two_stage(&v, 3, 0.0, 0.95).unwrap();
        let stein = 4.302652729911275 / (19f64).sqrt();
        assert!((e.ci.unwrap().half_width() - stein).abs() < 1e-9);
        // With the pilot alone it is the usual interval.
        let a = between_blocks_two_stage(&pilot, 3, 0.0, 0.95).unwrap();
        assert_eq!(a, between_blocks(&pilot, 0.0, 0.95).unwrap());
    }

    /// The rule's promise, simulated: normal block values, a pilot of 3,
    /// blocks added as the rule asks (capped at 10, as a precise run
    /// does); the final interval covers the true value at least as
    /// often as stated. Stopping when the usual interval first looks
    /// narrow enough does not.
    #[test]
    fn two_stage_intervals_keep_their_coverage_and_early_stopping_does_not() {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(25);
        let normal = |rng: &mut StdRng| -> f64 {
            // Box-Muller.
            let (u, v): (f64, f64) = (rng.gen(), rng.gen());
            (-2.0 * u.max(1e-300).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let (runs, truth, sd, target) = (4000, 100.0, 1.0, 1.0);
        let (mut stein_hits, mut naive_hits) = (0, 0);
        for _ in 0..runs {
            let mut v: Vec<f64> = (0..3).map(|_| truth + sd * normal(&mut rng)).collect();
            let n = two_stage_blocks(&v, target, 0.95).min(10);
            while v.len() < n {
                v.push(truth + sd * normal(&mut rng));
            }
            let e = between_blocks_two_stage(&v, 3, 0.0, 0.95)
                .unwrap()
                .ci
                .unwrap();
            stein_hits += usize::from(e.lo <= truth && truth <= e.hi);
            // Naive: add blocks until the usual interval is within target.
            let mut w: Vec<f64> = (0..3).map(|_| truth + sd * normal(&mut rng)).collect();
            loop {
                let ci = between_blocks(&w, 0.0, 0.95).unwrap().ci.unwrap();
                if ci.half_width() <= target || w.len() >= 10 {
                    naive_hits += usize::from(ci.lo <= truth && truth <= ci.hi);
                    break;
                }
                w.push(truth + sd * normal(&mut rng));
            }
        }
        let (stein, naive) = (
            stein_hits as f64 / runs as f64,
            naive_hits as f64 / runs as f64,
        );
        eprintln!("coverage over {runs} runs: two-stage {stein}, early stopping {naive}");
        assert!(stein >= 0.94, "two-stage coverage {stein}");
        assert!(
            naive < 0.93,
            "early stopping's coverage {naive} (it should under-cover)"
        );
    }

    #[test]
    fn rotations_group_by_placement_in_turn() {
        // Two placements, two observations at a time: 0 0 1 1 0 0 1.
        let obs = [1.0, 3.0, 10.0, 12.0, 2.0, 5.0, 11.0];
        let m = rotation_medians(&obs, 2, 2);
        assert_eq!(m, vec![(2.5, 4), (11.0, 3)]);
        assert_eq!(rotation_value(&obs, 2, 2), Some(6.75));
        assert_eq!(rotation_value(&obs, 1, 7), Some(5.0));
        assert_eq!(rotation_value(&[], 4, 2), None);
        // More placements than observations: only those used count.
        assert_eq!(
            rotation_medians(&[4.0, 6.0], 8, 1),
            vec![(4.0, 1), (6.0, 1)]
        );
    }

    #[test]
    fn batches_are_contiguous() {
        let obs: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(batch_medians(&obs, 5), vec![0.5, 2.5, 4.5, 6.5, 8.5]);
        assert_eq!(batch_medians(&obs, 3), vec![1.0, 4.0, 7.5]);
        assert_eq!(batch_medians(&obs[..2], 10), vec![0.0, 1.0]);
        assert!(batch_medians(&[], 4).is_empty());
    }

    #[test]
    fn tied_quantised_values_never_give_a_zero_width_interval() {
        // Every block read exactly 2 quanta of 10 ns.
        let e = between_blocks(&[20.0; 6], 10.0, 0.95).unwrap();
        let ci = e.ci.unwrap();
        assert!(e.resolution_limited);
        assert_eq!((ci.lo, ci.hi), (15.0, 25.0));
        assert!(e.relative_precision().unwrap() >= 0.25);
        assert!(between_blocks(&[20.0], 10.0, 0.95).unwrap().ci.is_none());
    }

    #[test]
    fn the_t_interval_covers_as_stated_under_normal_block_effects() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let normal = rand_distr_normal;
        let (runs, mut covered) = (4000, 0);
        for _ in 0..runs {
            let m: Vec<f64> = (0..6).map(|_| 100.0 + 3.0 * normal(&mut rng)).collect();
            let ci = between_blocks(&m, 0.0, 0.95).unwrap().ci.unwrap();
            covered += usize::from(ci.lo <= 100.0 && 100.0 <= ci.hi);
        }
        let share = covered as f64 / runs as f64;
        assert!((0.94..=0.96).contains(&share), "{share}");
    }

    /// A standard normal variate (Box-Muller), to keep the test free of a
    /// distributions crate.
    fn rand_distr_normal(rng: &mut rand::rngs::StdRng) -> f64 {
        let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    #[test]
    fn a_block_far_from_the_others_is_named() {
        let m = [1.80, 1.82, 2.33, 1.79, 1.83];
        assert_eq!(outlying_blocks(&m, 0.0), vec![2]);
        // Spread evenly: nobody stands out.
        assert!(outlying_blocks(&[1.0, 1.1, 1.2, 1.3, 1.4], 0.0).is_empty());
        // Two groups: nobody is alone.
        assert!(outlying_blocks(&[78.7, 78.7, 78.2, 82.8, 82.8, 82.7], 0.0).is_empty());
        // A difference below 3% is not worth naming, however tight the rest.
        assert!(outlying_blocks(&[100.0, 100.0, 100.0, 102.5], 0.0).is_empty());
        assert_eq!(outlying_blocks(&[100.0, 100.0, 100.0, 103.5], 0.0), vec![3]);
        assert!(outlying_blocks(&[1.0, 5.0, 1.0], 0.0).is_empty(), "too few");
    }

    #[test]
    fn exact_mann_whitney_matches_known_values() {
        // Complete separation of 5 and 5: p = 2 / C(10, 5) = 2/252.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let p = mann_whitney_exact_p(&a, &b).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        assert_eq!(p, mann_whitney_min_p(5, 5));
        // scipy.stats.mannwhitneyu(a, b, method='exact') gives these.
        let p = mann_whitney_exact_p(&a, &[1.5, 6.0, 7.0, 8.0, 9.0]).unwrap();
        assert!((p - 0.095238).abs() < 1e-6, "{p}");
        let p = mann_whitney_exact_p(
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            &[2.5, 7.0, 8.0, 9.0, 10.0, 11.0],
        )
        .unwrap();
        assert!((p - 0.025974).abs() < 1e-6, "{p}");
        let p = mann_whitney_exact_p(
            &[1.0, 3.0, 5.0, 7.0, 9.5, 11.0],
            &[2.0, 4.0, 6.0, 8.0, 10.0, 12.0],
        )
        .unwrap();
        assert!((p - 0.699134).abs() < 1e-6, "{p}");
        // Interleaved: no evidence.
        let p = mann_whitney_exact_p(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]).unwrap();
        assert!(p > 0.5, "{p}");
        assert!(
            mann_whitney_exact_p(&[1.0, 2.0], &[2.0, 3.0]).is_none(),
            "ties"
        );
        assert_eq!(min_blocks_for(0.95), 4);
        assert_eq!(min_blocks_for(0.99), 5);
    }

    #[test]
    fn exact_test_keeps_its_false_alarm_rate() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let trials = 4000;
        let alarms = (0..trials)
            .filter(|_| {
                let a: Vec<f64> = (0..6).map(|_| rng.gen::<f64>()).collect();
                let b: Vec<f64> = (0..6).map(|_| rng.gen::<f64>()).collect();
                mann_whitney_exact_p(&a, &b).unwrap() < 0.05
            })
            .count();
        let rate = alarms as f64 / trials as f64;
        // The exact test is conservative: its size is at most α.
        assert!(rate <= 0.05 && rate > 0.02, "{rate}");
    }
}
