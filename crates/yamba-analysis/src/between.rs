//! What earlier runs of the same configuration say about a new run: the
//! spread a user sees when running again, next to the run's own interval.
//!
//! A run's interval comes from its processes, and speaks for them only:
//! where the machine has states that last longer than a run (a core shared
//! with another tenant for minutes, code placement of one build), the next
//! run can land outside it (docs/certainty.md, "Machine states and earlier
//! runs"). The history holds the evidence; `yamba run` shows it where it
//! says more than the interval does.

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

/// Standard deviations per median absolute deviation of a normal sample.
const MAD_TO_SD: f64 = 1.4826;

/// Fewest earlier runs of a result before it gets an interval for the
/// runs. For normal runs the rule holds the typical value in 95% of runs
/// at any count (simulated: 94.9% at 5, 94.8% at 10, 95.1% at 20), but
/// with fewer than 5 the width itself is too uncertain to tell a user
/// anything (t(2) = 4.3 times a deviation from 3 values), and one
/// disturbed run among 3 or 4 sets it.
pub const MIN_EARLIER_INTERVAL: usize = 5;

/// An earlier run further than this many standard deviations (from the
/// median absolute deviation) from their median may be left out of the
/// spread: a disturbed run, not the machine's run-to-run variation.
const FAR_RUN: f64 = 5.0;

/// Far runs are left out as disturbed only while they are at most this
/// share of the earlier runs: more are a state the machine's runs fall
/// into, and all stay in the spread — else a run in that state would get
/// a narrow interval around it. One in ten leaves a worst case of about
/// 90% coverage.
const FAR_SHARE: f64 = 0.1;

/// The interval for the runs of a result whose value is `this` and own
/// interval `own`, from earlier runs' values (≥ [`MIN_EARLIER_INTERVAL`];
/// else None): `this` ± t(k − 1) × the standard deviation of the k
/// earlier values — less those beyond [`FAR_RUN`] robust deviations of
/// their median while they are at most one in ten ([`FAR_SHARE`]) —
/// never narrower on either side than `own`.
///
/// Why this shape: a run's value differs from the machine's typical run
/// by its own processes' error *and* by whatever state held the whole
/// run; the earlier runs' values carry both, so their spread is the
/// error of one run's value, and with k of them Student's t with k − 1
/// degrees of freedom sets the width — exact for normal runs. A run far
/// from the others (an interval of ±8% among ±0.2%s) is left out, so
/// that one disturbed run in ten does not widen every later interval. On
/// 20 precise default runs of an AMD EPYC (Zen 3) guest the own intervals
/// held the other runs' median in 93.7% of cases
/// (`cpu.syscall.write_devnull` 13 of 20: runs of three fast processes,
/// ±0.1%, below a typical run that now and then holds a slow one); this
/// rule (from the 6th run on), replayed over them, 97.8%, none below 17
/// of 20, `write_devnull` 18; 20 more runs made with it, 93.9% → 97.9%
/// (docs/certainty.md, "An interval for the runs").
pub fn runs_interval(
    this: f64,
    own: Option<Interval>,
    earlier: &[f64],
    confidence: f64,
) -> Option<BetweenRuns> {
    let v: Vec<f64> = earlier.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < MIN_EARLIER_INTERVAL || !this.is_finite() {
        return None;
    }
    let median = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        yamba_stats::percentile_sorted(&xs, 50.0)
    };
    let mid = median(v.clone());
    let robust_sd = MAD_TO_SD * median(v.iter().map(|x| (x - mid).abs()).collect());
    let is_far = |x: &f64| (x - mid).abs() > FAR_RUN * robust_sd;
    let far = v.iter().filter(|x| is_far(x)).count();
    let kept: Vec<f64> = if far <= (v.len() as f64 * FAR_SHARE) as usize {
        v.iter().copied().filter(|x| !is_far(x)).collect()
    } else {
        v.clone()
    };
    let (spread, half) = if kept.len() >= 2 {
        let mean = kept.iter().sum::<f64>() / kept.len() as f64;
        let var = kept.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (kept.len() - 1) as f64;
        let sd = var.sqrt();
        (
            sd,
            yamba_stats::t_quantile(confidence, (kept.len() - 1) as f64) * sd,
        )
    } else {
        (0.0, 0.0)
    };
    let (lo, hi) = own.map_or((this, this), |c| (c.lo.min(this), c.hi.max(this)));
    Some(BetweenRuns {
        runs: v.len(),
        spread,
        ci: Interval {
            lo: lo.min(this - half),
            hi: hi.max(this + half),
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
            runs_interval(1.0, own(0.9, 1.1), &[1.0, 1.2, 1.1, 0.9], 0.95),
            None
        );
        assert_eq!(
            runs_interval(
                1.0,
                None,
                &[1.0, f64::NAN, 1.2, f64::INFINITY, 1.1, 0.9],
                0.95
            ),
            None
        );
    }

    #[test]
    fn the_width_is_t_times_the_earlier_runs_sd_without_one_far_run_in_ten() {
        // Ten earlier runs: median 100, robust sd 1.4826 × 1; the run at 130
        // is beyond 5 of them, the only one, and left out (one in ten may
        // be). The other nine: mean 100, sd 1.5, t(8) = 2.306.
        let nine = [100.0, 99.0, 101.0, 102.0, 98.0, 100.0, 100.0, 101.5, 98.5];
        let sd = {
            let m = nine.iter().sum::<f64>() / 9.0;
            (nine.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 8.0).sqrt()
        };
        let mut ten = nine.to_vec();
        ten.push(130.0);
        let b = runs_interval(101.0, own(100.9, 101.1), &ten, 0.95).unwrap();
        assert_eq!(b.runs, 10);
        assert!((b.spread - sd).abs() < 1e-9, "{b:?}");
        let half = 2.306_004 * sd;
        assert!((b.ci.lo - (101.0 - half)).abs() < 1e-3, "{b:?}");
        assert!((b.ci.hi - (101.0 + half)).abs() < 1e-3, "{b:?}");
        // Two far runs in ten are a state the runs fall into: both stay.
        let mut two = nine[..8].to_vec();
        two.extend([130.0, 131.0]);
        let b = runs_interval(101.0, own(100.9, 101.1), &two, 0.95).unwrap();
        assert!(b.spread > 10.0, "{b:?}");
        // Fewer than ten: none is left out.
        let b = runs_interval(101.0, own(100.9, 101.1), &ten[1..], 0.95).unwrap();
        assert!(b.spread > 5.0, "{b:?}");
    }

    #[test]
    fn never_narrower_than_the_run_s_own_interval() {
        // Earlier runs agree closely; this run's own interval is wide and
        // lopsided on one side: that side is kept.
        let b = runs_interval(
            50.0,
            own(49.9, 58.0),
            &[50.0, 50.1, 49.9, 50.0, 50.05],
            0.95,
        )
        .unwrap();
        assert_eq!(b.ci.hi, 58.0);
        assert!(b.ci.lo < 49.9 && b.ci.lo > 49.0, "{b:?}");
        // Identical earlier values: the own interval, unchanged.
        let b = runs_interval(7.0, own(6.5, 7.5), &[7.0; 6], 0.95).unwrap();
        assert_eq!((b.ci.lo, b.ci.hi, b.spread), (6.5, 7.5, 0.0));
    }

    /// Runs of a machine with a state that holds whole runs: each run's
    /// value is the machine's typical value, plus a run-level shift that
    /// no process of the run can show (normal, 1%), plus its processes'
    /// error (0.1%), which its own interval accounts for. Over 2000 runs,
    /// each judged with the 20 runs before it, the interval for the runs
    /// holds the typical value in 93.5–96.5% of runs (95% ± 3 standard
    /// errors; 95.75% here), and the own interval in far fewer (18%) —
    /// what the rule is for. A width far off fails either way (one
    /// spread: ~68%; three: ~99.7%); finer differences (1.96 in place of
    /// t, 94.0% here) are within what 2000 runs can tell.
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
            (0.935..=0.965).contains(&runs_share),
            "the interval for the runs held the typical value in {runs_held} of {trials}"
        );
        assert!(
            own_share < 0.5,
            "the runs' own intervals held it in {own_held} of {trials}: the shift was not there"
        );
    }
}
