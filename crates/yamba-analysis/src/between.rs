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
use yamba_results::{ResultsFile, Status};

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
