//! What earlier runs of the same configuration say about a new run: the
//! spread a user sees when running again, next to the run's own interval.
//!
//! A run's interval comes from its processes, and speaks for them only:
//! where the machine has states that last longer than a run (a core shared
//! with another tenant for minutes, code placement of one build), the next
//! run can land outside it (docs/certainty.md, "Machine states and earlier
//! runs"). The history holds the evidence; `yamba run` shows it where it
//! says more than the interval does, and from 6 earlier runs on gives each
//! result an interval for the runs ([`runs_interval`]) that reaches where
//! the typical run lies.

use std::collections::BTreeMap;
use yamba_results::results::BetweenRuns;
use yamba_results::{ResultsFile, Status};
use yamba_stats::Interval;

/// Earlier runs' headline values, per result key (`id@mode`).
#[derive(Debug, Clone, Default)]
pub struct EarlierValues {
    /// How many earlier runs of the configuration were found.
    pub runs: usize,
    pub values: BTreeMap<String, Vec<f64>>,
    /// Where they came from, in words.
    pub source: Option<String>,
}

/// Fewest earlier values of a result before its spread is shown: with
/// k runs, a new identical run falls outside their range with probability
/// 2/(k + 1), so fewer say little.
pub const MIN_EARLIER: usize = 3;

/// One result whose earlier runs spread wider than its interval, or that
/// fell outside all of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    pub key: String,
    pub this: f64,
    /// This run's interval, half its width over its value (None: no interval).
    pub interval: Option<f64>,
    pub lo: f64,
    pub hi: f64,
    pub runs: usize,
    /// Half the earlier values' range over their median.
    pub spread: f64,
}

impl Spread {
    /// Below every earlier run (-1), inside their range (0), above (1).
    pub fn side(&self) -> i8 {
        if self.this < self.lo {
            -1
        } else if self.this > self.hi {
            1
        } else {
            0
        }
    }
}

/// The results of `file` whose earlier values (≥ [`MIN_EARLIER`]) spread
/// wider than the result's own interval, or which lie outside them.
pub fn spreads(file: &ResultsFile, earlier: &EarlierValues) -> Vec<Spread> {
    let mut out = Vec::new();
    for r in &file.results {
        if r.status != Status::Ok {
            continue;
        }
        let Some((this, ci)) = r.headline() else {
            continue;
        };
        let Some(values) = earlier.values.get(&r.key()) else {
            continue;
        };
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.len() < MIN_EARLIER || !this.is_finite() || this == 0.0 {
            continue;
        }
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let Some(mid) = yamba_stats::Summary::of(&v).map(|s| s.median) else {
            continue;
        };
        let spread = (hi - lo) / 2.0 / mid.abs().max(f64::MIN_POSITIVE);
        let interval = ci.map(|c| (c.hi - this).abs().max((this - c.lo).abs()) / this.abs());
        let s = Spread {
            key: r.key(),
            this,
            interval,
            lo,
            hi,
            runs: v.len(),
            spread,
        };
        if s.side() != 0 || interval.is_none_or(|i| spread > i) {
            out.push(s);
        }
    }
    out
}

/// Fewest earlier runs of a result before it gets an interval for the
/// runs: the fewest whose median has a 95% interval that assumes nothing
/// about their distribution (with 5, even their smallest to largest holds
/// it with 93.75% only).
pub const MIN_EARLIER_INTERVAL: usize = 6;

/// The interval for the runs of a result whose value is `this` and own
/// interval `own`, from earlier runs' values (None while too few to
/// bracket their median at `confidence`, [`MIN_EARLIER_INTERVAL`] at 95%):
/// the smallest interval holding both `own` and the distribution-free
/// interval of the earlier runs' median — where the machine's typical run
/// lies.
///
/// Why this shape: a run's value differs from the machine's typical run
/// by its own processes' error *and* by whatever state held the whole
/// run, which its processes cannot show. The earlier runs can: the order
/// statistics that bracket their median hold the typical run's value with
/// at least `confidence` whatever the runs' distribution, if the runs are
/// exchangeable (Binomial(k, ½)). Joined with the run's own interval, a
/// run near the typical keeps a narrow interval, and a run in a state the
/// typical run is not in gets one that reaches the typical — it says how
/// far this run may be from what the machine usually gives. No spread is
/// estimated, so no rare state widens every later interval, and a state
/// that holds many runs is not averaged away. On 20 precise default runs
/// of an AMD EPYC (Zen 3) guest the own intervals held the other runs'
/// median in 93.9% of cases (`mem.mmap.512k` 14 of 20, `read_devzero` 15);
/// with this rule, from the 7th run on, every one (docs/certainty.md, "An
/// interval for the runs").
pub fn runs_interval(
    this: f64,
    own: Option<Interval>,
    earlier: &[f64],
    confidence: f64,
) -> Option<BetweenRuns> {
    let mut v: Vec<f64> = earlier.iter().copied().filter(|x| x.is_finite()).collect();
    if !this.is_finite() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let (j, k) = yamba_stats::median_ci_ranks(v.len(), confidence)?;
    let typical = Interval {
        lo: v[j],
        hi: v[k],
        confidence,
    };
    let (lo, hi) = own.map_or((this, this), |c| (c.lo.min(this), c.hi.max(this)));
    Some(BetweenRuns {
        runs: v.len(),
        typical,
        ci: Interval {
            lo: lo.min(typical.lo),
            hi: hi.max(typical.hi),
            confidence,
        },
    })
}

/// Gives every result of `file` measured ok, with a certainty, its
/// interval for the runs ([`runs_interval`]) from the earlier runs'
/// values; returns how many got one.
pub fn attach(file: &mut ResultsFile, earlier: &EarlierValues) -> usize {
    let mut n = 0;
    for r in &mut file.results {
        if r.status != Status::Ok {
            continue;
        }
        let key = r.key();
        let Some(c) = r.certainty.as_mut() else {
            continue;
        };
        let Some(values) = earlier.values.get(&key) else {
            continue;
        };
        let own = c.estimate.ci;
        let confidence = own.map_or(0.95, |i| i.confidence);
        c.between_runs = runs_interval(c.estimate.estimate, own, values, confidence);
        n += usize::from(c.between_runs.is_some());
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(lo: f64, hi: f64) -> Option<Interval> {
        Some(Interval {
            lo,
            hi,
            confidence: 0.95,
        })
    }

    #[test]
    fn too_few_earlier_runs_say_nothing() {
        assert_eq!(
            runs_interval(1.0, own(0.9, 1.1), &[1.0, 1.2, 1.1, 0.9, 1.0], 0.95),
            None
        );
        assert_eq!(
            runs_interval(
                1.0,
                None,
                &[1.0, f64::NAN, 1.2, f64::INFINITY, 1.1, 0.9, 1.0],
                0.95
            ),
            None
        );
        assert_eq!(
            runs_interval(f64::NAN, None, &[1.0, 1.2, 1.1, 0.9, 1.0, 1.0], 0.95),
            None
        );
    }

    #[test]
    fn six_is_the_fewest_runs_whose_median_has_a_95_percent_interval() {
        let at = |k| yamba_stats::median_ci_ranks(k, 0.95);
        assert_eq!(at(MIN_EARLIER_INTERVAL - 1), None);
        assert_eq!(
            at(MIN_EARLIER_INTERVAL),
            Some((0, MIN_EARLIER_INTERVAL - 1))
        );
        let six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert!(runs_interval(3.5, None, &six, 0.95).is_some());
        assert!(runs_interval(3.5, None, &six[1..], 0.95).is_none());
    }

    #[test]
    fn the_earlier_runs_median_is_bracketed_by_order_statistics() {
        // Six earlier runs: only their smallest to largest holds the
        // median with 95% (1 − 2/64 = 96.9%); twenty: the 6th to the 15th
        // (95.9%). Neither reads the runs' spread: a far run changes
        // nothing inside.
        let b = runs_interval(
            10.0,
            own(9.9, 10.1),
            &[10.3, 9.8, 10.0, 10.1, 9.9, 10.2],
            0.95,
        )
        .unwrap();
        assert_eq!(b.runs, 6);
        assert_eq!((b.typical.lo, b.typical.hi), (9.8, 10.3));
        assert_eq!((b.ci.lo, b.ci.hi), (9.8, 10.3));
        let twenty: Vec<f64> = (1..=20).map(|i| 100.0 + i as f64).collect();
        let mut far = twenty.clone();
        far[19] = 1e6;
        for earlier in [&twenty, &far] {
            let b = runs_interval(110.0, own(109.0, 111.0), earlier, 0.95).unwrap();
            assert_eq!((b.typical.lo, b.typical.hi), (106.0, 115.0), "{b:?}");
            assert_eq!((b.ci.lo, b.ci.hi), (106.0, 115.0), "{b:?}");
        }
    }

    #[test]
    fn a_run_away_from_the_typical_reaches_it_and_one_near_keeps_its_own() {
        // Twelve earlier runs, two of them slow: the median's interval is
        // the 3rd to the 10th of them (96.1%), 134.5–134.7. With eight,
        // only their smallest to largest would hold it with 95%, and it
        // would reach the slow ones.
        let earlier = [
            134.4, 134.5, 154.8, 134.5, 134.6, 134.6, 134.5, 230.4, 134.7, 134.4, 134.6, 134.5,
        ];
        // Near: the typical's interval lies inside the run's own.
        let b = runs_interval(134.5, own(134.2, 134.9), &earlier, 0.95).unwrap();
        assert_eq!((b.ci.lo, b.ci.hi), (134.2, 134.9), "{b:?}");
        // In a slow state: from the typical up to the run's own upper end.
        let b = runs_interval(174.0, own(173.0, 175.0), &earlier, 0.95).unwrap();
        assert!(b.ci.lo <= 134.5 && b.ci.hi == 175.0, "{b:?}");
        // No own interval (one block): the value itself is in.
        let b = runs_interval(200.0, None, &earlier, 0.95).unwrap();
        assert_eq!(b.ci.hi, 200.0, "{b:?}");
    }

    /// Runs of a machine with a state that holds whole runs: each run's
    /// value is the machine's typical value, plus a run-level shift that
    /// no process of the run can show (normal, 1%), plus its processes'
    /// error (0.1%), which its own interval accounts for. Over 2000 runs,
    /// each judged with the 20 runs before it, the interval for the runs
    /// holds the typical value in at least 95% of runs less three standard
    /// errors (98.3% here; the median's interval alone holds it in 95.9%,
    /// the run's own widens it), and the own interval in far fewer (18%) —
    /// what the rule is for; and no more than 99%, which the earlier runs'
    /// whole range (99.9998% at 20) would exceed.
    #[test]
    fn the_runs_interval_covers_a_state_that_holds_whole_runs() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(25);
        let mut normal = || {
            // Box–Muller: the workspace's rand has no normal distribution.
            let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen_range(0.0..1.0));
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let truth = 100.0;
        let (blocks, within, between) = (3usize, 0.1, 1.0);
        let mut values = Vec::new();
        let (mut runs_held, mut own_held, mut trials) = (0, 0, 0);
        for _ in 0..2020 {
            let shift = between * normal();
            let medians: Vec<f64> = (0..blocks)
                .map(|_| truth + shift + within * normal())
                .collect();
            let est = yamba_stats::between_blocks(&medians, 0.0, 0.95).unwrap();
            let value = est.estimate;
            if values.len() >= 20 {
                let earlier = &values[values.len() - 20..];
                let b = runs_interval(value, est.ci, earlier, 0.95).unwrap();
                trials += 1;
                runs_held += usize::from(b.ci.lo <= truth && truth <= b.ci.hi);
                let c = est.ci.unwrap();
                own_held += usize::from(c.lo <= truth && truth <= c.hi);
            }
            values.push(value);
        }
        let (runs_share, own_share) = (
            runs_held as f64 / trials as f64,
            own_held as f64 / trials as f64,
        );
        assert!(
            (0.935..=0.99).contains(&runs_share),
            "the interval for the runs held the typical value in {runs_held} of {trials}"
        );
        assert!(
            own_share < 0.5,
            "the runs' own intervals held it in {own_held} of {trials}: the shift was not there"
        );
    }
}
