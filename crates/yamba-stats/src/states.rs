//! Machine states: the levels a quantity's process medians fall into, and
//! whether a new run's processes lie where earlier identical runs' did.
//!
//! On some machines a quantity does not vary around one value between
//! runs but jumps between a few: on an AMD EPYC (Zen 4) KVM guest a 1-byte
//! read from /dev/zero costs 201 ns in most processes, 222 ns in others —
//! sometimes in every process of a three-second run — and 260–290 ns in a
//! few, with nothing changed. A test on one run's processes against
//! another's calls every such pair "slower". What separates a state of the
//! machine from a change is history: a state identical runs of the
//! baseline's configuration have shown before is not a change. A level B
//! is in that no earlier run reached, or a shift inside a level beyond what
//! the earlier runs' means spread, still is.

/// Two neighbouring sorted values start a new level when their gap is at
/// least this share of the smaller one ...
pub const STATE_MIN_GAP: f64 = 0.02;
/// ... and this many times the median gap between neighbours.
pub const STATE_GAP_FACTOR: f64 = 8.0;
/// Earlier runs (besides the baseline) needed before states are learned.
pub const MIN_KNOWN_RUNS: usize = 2;

/// The levels of `values`: closed ranges `(lo, hi)`, ascending, split where
/// the gap between sorted neighbours is at least [`STATE_MIN_GAP`] of the
/// smaller and [`STATE_GAP_FACTOR`] × the median gap. Non-finite values are
/// ignored.
pub fn levels(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Vec::new();
    }
    v.sort_by(f64::total_cmp);
    let mut gaps: Vec<f64> = v.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_by(f64::total_cmp);
    let typical = if gaps.is_empty() {
        0.0
    } else {
        gaps[gaps.len() / 2]
    };
    let mut out = Vec::new();
    let mut lo = v[0];
    for w in v.windows(2) {
        let gap = w[1] - w[0];
        if gap >= STATE_MIN_GAP * w[0].abs() && gap >= STATE_GAP_FACTOR * typical && gap > 0.0 {
            out.push((lo, w[0]));
            lo = w[1];
        }
    }
    out.push((lo, *v.last().expect("not empty")));
    out
}

/// One level the new run's processes occupy, and what earlier runs showed
/// there.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownLevel {
    /// The level's range over every run's process medians, new run included.
    pub lo: f64,
    pub hi: f64,
    /// Processes of the new run in it.
    pub new_processes: usize,
    /// Earlier runs with processes in it.
    pub known_runs: usize,
    /// The new run's mean in the level, and the range the earlier runs'
    /// means predict for it (a prediction interval with ≥ 3 runs there,
    /// else the range of their processes), both widened by the floor.
    pub new_mean: f64,
    pub predicted: (f64, f64),
}

/// Whether every level run `new`'s process medians fall in is a state the
/// `known` runs (each one run's process medians: the baseline and earlier
/// identical runs) have shown, with `new`'s mean there inside what their
/// means predict at `confidence`. `floor` (≥ 0, in the values' unit)
/// widens every predicted range: the clock's resolution per observation.
///
/// `Ok(levels)` when all of them are known; `Err(levels)` with the first
/// level that is not last; `None` with fewer than [`MIN_KNOWN_RUNS`] + 1
/// known runs, or nothing to judge.
pub fn within_known_states(
    new: &[f64],
    known: &[Vec<f64>],
    confidence: f64,
    floor: f64,
) -> Option<Result<Vec<KnownLevel>, Vec<KnownLevel>>> {
    let new: Vec<f64> = new.iter().copied().filter(|x| x.is_finite()).collect();
    let known: Vec<Vec<f64>> = known
        .iter()
        .map(|r| {
            r.iter()
                .copied()
                .filter(|x| x.is_finite())
                .collect::<Vec<_>>()
        })
        .filter(|r| !r.is_empty())
        .collect();
    if new.is_empty() || known.len() < MIN_KNOWN_RUNS + 1 {
        return None;
    }
    let all: Vec<f64> = known.iter().flatten().chain(&new).copied().collect();
    let floor = floor.max(0.0);
    let levels = levels(&all);
    // Per level: the new run's processes there, and each known run's mean
    // there (runs without processes in it left out).
    let per_level: Vec<(f64, f64, Vec<f64>, Vec<f64>)> = levels
        .iter()
        .map(|&(lo, hi)| {
            let inside = |x: &&f64| **x >= lo && **x <= hi;
            let mine: Vec<f64> = new.iter().filter(inside).copied().collect();
            let means: Vec<f64> = known
                .iter()
                .map(|r| r.iter().filter(inside).copied().collect::<Vec<_>>())
                .filter(|r| !r.is_empty())
                .map(|r| mean(&r))
                .collect();
            (lo, hi, mine, means)
        })
        .filter(|(_, _, mine, _)| !mine.is_empty())
        .collect();
    // How much a run's mean moves from run to run, relative to the level:
    // from the level most known runs reached. A whole run shifts all its
    // levels alike, so a rare level borrows it.
    let spread = per_level
        .iter()
        .map(|(_, _, _, means)| means)
        .filter(|m| m.len() >= 3)
        .max_by_key(|m| m.len())
        .map(|m| (relative_sd(m), m.len()));
    // Each occupied level is judged; together they keep `confidence`.
    let per_confidence = 1.0 - (1.0 - confidence) / per_level.len().max(1) as f64;
    let mut judged = Vec::new();
    for (lo, hi, mine, means) in per_level {
        let new_mean = mean(&mine);
        let k = means.len();
        // The level's own spread of run means where ≥ 3 runs reached it
        // (a rare state can be a wide cloud), else the borrowed one.
        let own = (k >= 3).then(|| (relative_sd(&means), k));
        let predicted = if k == 0 {
            (f64::NAN, f64::NAN)
        } else if let Some((rel_sd, runs)) = own.or(spread) {
            let c = mean(&means);
            let half = crate::t_quantile(per_confidence, (runs - 1) as f64)
                * rel_sd
                * c.abs()
                * (1.0 + 1.0 / k as f64).sqrt();
            (c - half - floor, c + half + floor)
        } else {
            // Too few runs anywhere to know the spread: the range of the
            // known processes in the level.
            let (mn, mx) = known
                .iter()
                .flatten()
                .filter(|x| **x >= lo && **x <= hi)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            (mn - floor, mx + floor)
        };
        let ok = k > 0 && new_mean >= predicted.0 && new_mean <= predicted.1;
        judged.push(KnownLevel {
            lo,
            hi,
            new_processes: mine.len(),
            known_runs: k,
            new_mean,
            predicted,
        });
        if !ok {
            return Some(Err(judged));
        }
    }
    Some(Ok(judged))
}

/// The range of the `known` runs' typical values — each run's median of
/// its process medians, so that one disturbed process does not stretch
/// the range for every later comparison — with ≥ [`MIN_KNOWN_RUNS`] + 1
/// runs. A new identical run's value falls inside the range of k
/// exchangeable runs with probability (k − 1)/(k + 1) and above it with
/// 1/(k + 1): with 39 runs, 95% and 2.5%, whatever the shape of the
/// machine's variation — states, drift, a heavy tail — as long as the
/// runs are alike. [`run_value`] is the same statistic for the new run.
pub fn known_run_range(known: &[Vec<f64>]) -> Option<(f64, f64, usize)> {
    let values: Vec<f64> = known.iter().filter_map(|r| run_value(r)).collect();
    if values.len() < MIN_KNOWN_RUNS + 1 {
        return None;
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lo, hi, values.len()))
}

/// One run's typical value for [`known_run_range`]: the median of its
/// (finite) process medians.
pub fn run_value(processes: &[f64]) -> Option<f64> {
    let v: Vec<f64> = processes
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    crate::Summary::of(&v).map(|s| s.median)
}

/// Sample standard deviation of `v` (≥ 2 values) over its mean's size.
fn relative_sd(v: &[f64]) -> f64 {
    let c = mean(v);
    let sd = (v.iter().map(|x| (x - c).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt();
    sd / c.abs().max(f64::MIN_POSITIVE)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separated_values_form_levels_and_close_ones_do_not() {
        let v = [201.5, 201.7, 202.1, 203.0, 221.1, 221.6, 225.6, 221.1];
        assert_eq!(levels(&v), vec![(201.5, 203.0), (221.1, 225.6)]);
        // A 1% gap is not a state: one level.
        assert_eq!(levels(&[100.0, 100.1, 101.1, 101.2]).len(), 1);
        // A gap of 2% among values spread as widely as it is not one either.
        let spread: Vec<f64> = (0..20).map(|i| 100.0 + i as f64 * 2.5).collect();
        assert_eq!(levels(&spread).len(), 1);
        assert!(levels(&[]).is_empty());
        assert_eq!(levels(&[5.0, 5.0, 5.0]), vec![(5.0, 5.0)]);
    }

    fn runs(v: &[&[f64]]) -> Vec<Vec<f64>> {
        v.iter().map(|r| r.to_vec()).collect()
    }

    #[test]
    fn a_run_in_a_state_earlier_runs_showed_is_known() {
        let known = runs(&[
            &[201.2, 201.7, 201.2, 201.0, 201.2, 201.2],
            &[202.0, 201.1, 222.1, 221.8, 221.9, 221.8],
            &[201.4, 201.1, 201.4, 201.2, 200.9, 200.9],
            &[225.1, 225.2, 222.3, 201.2, 201.2, 201.5],
        ]);
        // Every process slow: the state runs 2 and 4 were partly in.
        let new = [222.1, 225.8, 222.6, 225.3, 225.6, 222.7];
        let got = within_known_states(&new, &known, 0.95, 0.2).unwrap();
        assert!(got.is_ok(), "{got:?}");
        // The same run 10% above every state seen: a change.
        let moved: Vec<f64> = new.iter().map(|x| x * 1.10).collect();
        assert!(within_known_states(&moved, &known, 0.95, 0.2)
            .unwrap()
            .is_err());
    }

    #[test]
    fn a_shift_inside_a_level_beyond_the_runs_spread_is_not_known() {
        // Five runs whose means agree within 0.1%, the new one 1% above.
        let known = runs(&[
            &[100.0, 100.1, 99.9, 100.0],
            &[100.1, 100.0, 100.2, 100.1],
            &[99.9, 100.0, 100.0, 99.8],
            &[100.0, 100.0, 100.1, 100.0],
            &[100.1, 99.9, 100.0, 100.1],
        ]);
        let same = [100.0, 100.1, 100.0, 99.9];
        assert!(within_known_states(&same, &known, 0.95, 0.0)
            .unwrap()
            .is_ok());
        let shifted = [101.0, 101.1, 101.0, 100.9];
        assert!(within_known_states(&shifted, &known, 0.95, 0.0)
            .unwrap()
            .is_err());
    }

    #[test]
    fn the_run_range_is_the_range_of_the_runs_medians() {
        let known = runs(&[&[1.0, 3.0], &[4.0], &[0.5, 1.0, 90.0], &[f64::NAN]]);
        // One disturbed process (90) does not stretch the range.
        assert_eq!(known_run_range(&known), Some((1.0, 4.0, 3)));
        assert_eq!(known_run_range(&known[..2]), None);
        assert_eq!(run_value(&[3.0, 1.0, 2.0, f64::NAN]), Some(2.0));
    }

    #[test]
    fn too_little_history_judges_nothing() {
        let known = runs(&[&[1.0, 1.0], &[1.0, 1.1]]);
        assert!(within_known_states(&[1.0], &known, 0.95, 0.0).is_none());
        assert!(within_known_states(&[], &runs(&[&[1.0], &[1.0], &[1.0]]), 0.95, 0.0).is_none());
    }

    /// The promise under the null: runs drawn from one two-state machine
    /// (each process in the slow state with probability 0.2, the state
    /// sticky within a run half the time, a per-run shift of σ = 0.3%)
    /// are judged known in ≥ 95% of cases once 10 earlier runs are there;
    /// the same machine 5% slower is judged known in ≤ 5%. (A slowdown
    /// that moves the fast state onto the slow one — here 10% — cannot be
    /// told from a run spent in the slow state: that is the price, and
    /// docs/certainty.md says so.)
    #[test]
    fn known_states_hold_for_identical_runs_and_not_for_a_slowdown() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut uniform = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut normal = || {
            let (u1, u2): (f64, f64) = (uniform().max(1e-12), uniform());
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let mut run = |scale: f64| -> Vec<f64> {
            let shift = 1.0 + 0.003 * normal();
            let sticky = normal() > 0.0;
            let all_slow = normal() > 1.28; // 10% of runs
            (0..6)
                .map(|_| {
                    let slow = if sticky {
                        all_slow
                    } else {
                        normal() > 0.84 // 20%
                    };
                    let base = if slow { 222.0 } else { 201.3 };
                    base * shift * scale * (1.0 + 0.001 * normal())
                })
                .collect()
        };
        let (mut known_same, mut known_slow, trials) = (0, 0, 400);
        for _ in 0..trials {
            let history: Vec<Vec<f64>> = (0..10).map(|_| run(1.0)).collect();
            if within_known_states(&run(1.0), &history, 0.95, 0.2)
                .unwrap()
                .is_ok()
            {
                known_same += 1;
            }
            if within_known_states(&run(1.05), &history, 0.95, 0.2)
                .unwrap()
                .is_ok()
            {
                known_slow += 1;
            }
        }
        eprintln!("identical: {known_same} of {trials} known; 5% slower: {known_slow}");
        assert!(
            known_same as f64 >= 0.95 * trials as f64,
            "identical runs judged known in {known_same} of {trials}"
        );
        assert!(
            known_slow as f64 <= 0.05 * trials as f64,
            "5% slower judged known in {known_slow} of {trials}"
        );
    }
}
