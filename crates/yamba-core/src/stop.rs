//! When to stop sampling: a rule that cannot fool itself.
//!
//! Precision is judged on the interval a reader will see for one process —
//! Student t over the medians of [`BATCHES`](yamba_results::results::BATCHES)
//! contiguous batches (batch means), so drift and autocorrelation inside the
//! process widen it — and that interval is never narrower than the
//! resolution of one observation allows (the clock's quantum over the
//! operations per observation): readings that tie on a quantised clock do
//! not make a zero-width interval. Sampling also needs a minimum number of
//! observations and, in a precise run, a minimum time, so that the
//! observations span more than one moment of the machine. `stopped` says
//! which condition ended it and with what precision. With the code at
//! several placements, precision is that of the placements' medians given
//! the placements: their spread is placement's, which a block cannot
//! narrow by sampling longer and the blocks between processes measure.

use crate::harness::Plan;
use std::time::Duration;
use yamba_results::results::Certainty;
use yamba_results::Rotation;

/// Decides, observation by observation, whether sampling is done.
#[derive(Debug, Clone)]
pub struct StopRule {
    target_precision: f64,
    min_observations: usize,
    min_sampling: Duration,
    budget: Duration,
    max_observations: usize,
    resolution: f64,
    next_check: usize,
    /// How observations map to code placements: precision is judged over
    /// the placements, and only once each has been visited.
    rotation: Rotation,
}

impl StopRule {
    /// The plan's limits; `resolution`: the smallest step one observation
    /// can show, in the observations' unit (0 when unknown).
    pub fn new(plan: &Plan, resolution: f64) -> StopRule {
        StopRule {
            target_precision: plan.target_precision,
            min_observations: plan.min_observations.max(3),
            min_sampling: plan.min_sampling.min(plan.budget),
            budget: plan.budget,
            max_observations: plan.max_observations.max(1),
            resolution,
            next_check: 0,
            rotation: Rotation::NONE,
        }
    }

    /// Observations taken at code placements in turn (`rotation`).
    pub fn rotating(mut self, rotation: Rotation) -> StopRule {
        self.min_observations = self.min_observations.max(rotation.slots * rotation.stretch);
        self.rotation = rotation;
        self
    }

    /// Relative half-width of the within-process interval of `obs`, and
    /// whether the clock's resolution set it. With the code at several
    /// placements: of the mean of the placements' medians given those
    /// placements ([`Self::placed_precision`]), which sampling longer
    /// narrows; the spread between placements it cannot narrow — a block
    /// keeps its placements — and the blocks measure it.
    pub fn precision(&self, obs: &[f64]) -> Option<(f64, bool)> {
        self.judged(obs)
            .map(|j| (j.half_width, j.resolution_limited))
    }

    /// [`Self::precision`], and which interval it was.
    fn judged(&self, obs: &[f64]) -> Option<Judged> {
        if self.rotation != Rotation::NONE {
            if let Some((half_width, resolution_limited)) = self.placed_precision(obs) {
                return Some(Judged {
                    half_width,
                    resolution_limited,
                    given_placements: Some(self.rotation.slots),
                });
            }
        }
        let c = if self.rotation == Rotation::NONE {
            Certainty::within_process(obs, self.resolution, None)?
        } else {
            Certainty::within_process_placed(obs, self.rotation, self.resolution, None)?
        };
        Some(Judged {
            half_width: c.estimate.relative_precision()?,
            resolution_limited: c.estimate.resolution_limited,
            given_placements: None,
        })
    }

    /// Each placement's median with its batch-means interval, combined as
    /// the mean of independent medians is: half-width √(Σ hᵢ²)/k over
    /// the mean of the medians. None until every placement has enough
    /// observations for its own interval.
    fn placed_precision(&self, obs: &[f64]) -> Option<(f64, bool)> {
        let Rotation { slots, stretch } = self.rotation;
        let mut groups: Vec<Vec<f64>> = vec![Vec::new(); slots];
        for (i, &x) in obs.iter().enumerate() {
            groups[(i / stretch) % slots].push(x);
        }
        let (mut sum, mut h2, mut limited) = (0.0, 0.0, true);
        for g in &groups {
            let c = Certainty::within_process(g, self.resolution, None)?;
            let ci = c.estimate.ci.as_ref()?;
            sum += c.estimate.estimate;
            h2 += ((ci.hi - ci.lo) / 2.0).powi(2);
            limited &= c.estimate.resolution_limited;
        }
        let mean = sum / slots as f64;
        (mean != 0.0).then(|| (h2.sqrt() / slots as f64 / mean.abs(), limited))
    }

    /// Why sampling should stop now, or `None` to go on. `elapsed`: time
    /// spent sampling. Precision is looked at on a geometric schedule
    /// (every 25% more observations), so checking costs O(n log² n).
    pub fn check(&mut self, obs: &[f64], elapsed: Duration) -> Option<String> {
        let k = obs.len();
        if k >= self.max_observations {
            return Some(format!("max observations ({k}){}", self.said(obs)));
        }
        if k >= self.min_observations && k >= self.next_check && elapsed >= self.min_sampling {
            self.next_check = k + (k / 4).max(8);
            if let Some(j) = self.judged(obs) {
                if j.half_width <= self.target_precision {
                    return Some(format!(
                        "precision reached: {}",
                        j.said(self.target_precision, "set by")
                    ));
                }
            }
        }
        if elapsed >= self.budget && k >= self.min_observations.min(3) {
            return Some(format!("budget spent{}", self.said(obs)));
        }
        None
    }

    /// ": ±x% (target y%)" with the limit named, for a stop that was not
    /// precision's.
    fn said(&self, obs: &[f64]) -> String {
        match self.judged(obs) {
            Some(j) => format!(": {}", j.said(self.target_precision, "limited by")),
            None => String::new(),
        }
    }
}

/// A block's within-process precision as the stop rule judged it.
struct Judged {
    /// Relative half-width.
    half_width: f64,
    resolution_limited: bool,
    /// Some(k): of the mean of k placements' medians given those
    /// placements — not an interval over placements, which the blocks give.
    given_placements: Option<usize>,
}

impl Judged {
    /// "±x% (target y%)", what the interval is of, and the clock's limit.
    fn said(&self, target: f64, limit: &str) -> String {
        let mut s = format!(
            "±{:.2}% (target {:.2}%)",
            100.0 * self.half_width,
            100.0 * target
        );
        if let Some(k) = self.given_placements {
            s += &format!(
                " given its {k} code placements (the spread between placements is the blocks')"
            );
        }
        if self.resolution_limited {
            s += &format!(", {limit} the clock's resolution");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan {
            budget: Duration::from_millis(100),
            min_sampling: Duration::from_millis(10),
            min_observations: 20,
            target_precision: 0.01,
            ..Plan::quick()
        }
    }

    #[test]
    fn two_quanta_never_reach_precision() {
        // A single operation of 2 clock quanta (10 ns each): every reading
        // ties, and the interval is ± half a quantum, 25%.
        let mut rule = StopRule::new(&plan(), 10.0);
        let obs = vec![20.0; 1000];
        for k in 20..=1000 {
            let s = rule.check(&obs[..k], Duration::from_millis(50));
            assert!(s.is_none(), "{s:?} at {k}");
        }
        let s = rule.check(&obs, Duration::from_millis(100)).unwrap();
        assert!(
            s.starts_with("budget spent: ±25.00%") && s.contains("clock's resolution"),
            "{s}"
        );
    }

    #[test]
    fn steady_values_stop_on_precision_after_the_minimum_time() {
        let mut rule = StopRule::new(&plan(), 0.01);
        let obs: Vec<f64> = (0..40).map(|i| 1000.0 + (i % 3) as f64).collect();
        assert_eq!(
            rule.check(&obs, Duration::from_millis(5)),
            None,
            "too early"
        );
        let s = rule.check(&obs, Duration::from_millis(10)).unwrap();
        assert!(s.starts_with("precision reached: ±0.0"), "{s}");
        let mut rule = StopRule::new(&plan(), 0.01);
        assert_eq!(
            rule.check(&obs[..19], Duration::from_millis(50)),
            None,
            "too few"
        );
    }

    /// Two placements 10% apart, each steady: sampling longer cannot
    /// narrow their spread (the block keeps them), so precision is judged
    /// given the placements and is reached; the t interval over two
    /// placements (±64% here) would never be. Scatter inside a placement
    /// still holds the rule back.
    #[test]
    fn placements_apart_stop_on_their_own_precision() {
        let rotating = |obs: &[f64]| {
            StopRule::new(&plan(), 0.0)
                .rotating(Rotation {
                    slots: 2,
                    stretch: 100,
                })
                .check(obs, Duration::from_millis(10))
        };
        let steady: Vec<f64> = (0..400)
            .map(|i| if (i / 100) % 2 == 0 { 100.0 } else { 110.0 } + (i % 3) as f64 * 0.01)
            .collect();
        let s = rotating(&steady).unwrap();
        assert!(s.starts_with("precision reached: ±0.0"), "{s}");
        // The text says what the interval is of: not the spread between
        // the placements, which the blocks measure.
        assert!(
            s.contains("(target 1.00%) given its 2 code placements"),
            "{s}"
        );
        // ±40% of scatter drawn at random (an LCG), wandering in runs of
        // 25 observations as a slow machine's do.
        let mut r = 1u64;
        let scattered: Vec<f64> = steady
            .chunks(25)
            .flat_map(|c| {
                r = r
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let f = 0.6 + 0.8 * (r >> 11) as f64 / (1u64 << 53) as f64;
                c.iter().map(move |x| x * f)
            })
            .collect();
        assert_eq!(rotating(&scattered), None);
        // Not before every placement has its own interval.
        assert_eq!(rotating(&steady[..150]), None);
    }

    #[test]
    fn drift_inside_the_process_widens_the_interval() {
        // Two halves 10% apart: each half is tight, the batches are not.
        let obs: Vec<f64> = (0..1000)
            .map(|i| if i < 500 { 100.0 } else { 110.0 } + (i % 2) as f64 * 0.01)
            .collect();
        let rule = StopRule::new(&plan(), 0.0);
        let (p, _) = rule.precision(&obs).unwrap();
        assert!(p > 0.02, "{p}");
        let mut rule = rule;
        assert!(rule
            .check(&obs, Duration::from_millis(100))
            .unwrap()
            .starts_with("budget spent"));
    }
}
