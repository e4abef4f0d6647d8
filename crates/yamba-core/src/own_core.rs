//! Observations a shared core took are left out of a process's value.
//!
//! The run judges whole processes by their core's integer throughput
//! ([`yamba_results::results::shared_core_blocks`]), which catches a
//! process whose core another hardware thread used throughout. A host
//! whose neighbour comes and goes faster than a process lives defeats it:
//! on an Intel Xeon guest, shared stretches lasted 0.15 s at the median
//! and alone ones 0.05 s (`bench/shared-core-bursts.sh`), so nearly every
//! process saw both, and its median sat anywhere between the two costs
//! (a system call costs 35–60% more on the shared core there).
//!
//! The harness reads the throughput between observations about once a
//! millisecond ([`crate::coreclock::Track`]); the observations between
//! two readings are one *segment*. A segment is kept when both of its
//! readings are within [`SHARED_CORE_SHARE`] of the best the process has
//! had (the best that two readings in a row reached), and otherwise left
//! out, counted in [`SharedCoreLeftOut`]. The choice looks at the readings,
//! never at the values, so it selects the core's state and nothing else:
//! the value is the cost on a core of its own. A process that shared its
//! core throughout has no better reading to be judged against and keeps
//! everything, for the run to judge.
//!
//! Dropping only whole segments at the end of the kept observations keeps
//! the order in which observations visit the code placements (a kept
//! observation's placement is fixed by its index), so a block's value
//! over its placements is unchanged in meaning.

use crate::coreclock::SHARED_CORE_SHARE;
use yamba_results::results::SharedCoreLeftOut;

/// Fewer kept observations than this and the last segment stays,
/// whatever its readings: a process never ends with nothing to report.
const MIN_KEPT: usize = 3;

/// A process that kept fewer than this share of its observations spent
/// most of its life on a shared core: it is judged by all its readings
/// (and the run then names it), not by the few it kept. On the Intel Xeon
/// guest such processes kept 3–73 of thousands, partly after the budget
/// ran out with the core still shared, and their values lay 10–200% above
/// the others'.
const MIN_KEPT_SHARE: f64 = 0.1;

/// The segments of one process's sampling, judged as its readings come.
#[derive(Debug, Default)]
pub(crate) struct OwnCore {
    readings: Vec<f64>,
    best: f64,
    /// Where the current segment (since the last reading) starts.
    segment_start: usize,
    /// The lowest reading next to a kept segment.
    kept_low: Option<f64>,
    /// The readings next to kept segments.
    kept_readings: Vec<f64>,
    left_out: Vec<f64>,
    /// Observations kept, when sampling finished.
    kept: usize,
}

impl OwnCore {
    /// A reading of the core's throughput (adds per cycle) taken before
    /// observation `obs.len()`: it ends the current segment and judges
    /// it. `may_leave_out` false keeps it whatever the readings (once the
    /// sampling budget is spent, so that sampling always ends).
    pub fn reading(&mut self, adds: f64, obs: &mut Vec<f64>, may_leave_out: bool) {
        let before = self.readings.last().copied();
        self.readings.push(adds);
        // The best is what two readings in a row reached: one reading
        // alone can be far too high (a chain of multiplies interrupted
        // reads the clock low, and the adds after it then read above
        // anything the core can do: 9.5 adds per cycle on a core that
        // does 5.3).
        if let Some(b) = before {
            self.best = self.best.max(b.min(adds));
        }
        let floor = SHARED_CORE_SHARE * self.best;
        if may_leave_out && self.kept_low.is_some_and(|low| low < floor) {
            // A better reading shows that what was kept so far ran on a
            // shared core too: all of it goes (the current segment with
            // it: keeping it alone would move it to other placements).
            self.left_out.append(obs);
            self.kept_low = None;
            self.kept_readings.clear();
        } else if obs.len() > self.segment_start {
            let low = before.map_or(adds, |b| b.min(adds));
            if may_leave_out && low < floor {
                self.left_out.extend(obs.drain(self.segment_start..));
            } else {
                self.kept_low = Some(self.kept_low.map_or(low, |k| k.min(low)));
                self.kept_readings.extend(before);
                self.kept_readings.push(adds);
            }
        }
        self.segment_start = obs.len();
    }

    /// After the last observation: `adds`, a reading taken then, judges
    /// the last segment, unless leaving it out would leave fewer than
    /// [`MIN_KEPT`] observations.
    pub fn finish(&mut self, adds: Option<f64>, obs: &mut Vec<f64>) {
        if let Some(a) = adds {
            let last = self.readings.last().map_or(0.0, |&b| b.min(a));
            let floor = SHARED_CORE_SHARE * self.best.max(last);
            let would_keep = if self.kept_low.is_some_and(|low| low < floor) {
                0
            } else {
                self.segment_start.min(obs.len())
            };
            self.reading(a, obs, would_keep >= MIN_KEPT);
        }
        self.kept = obs.len();
    }

    /// The observations left out and the readings that left them out;
    /// `None` when nothing was.
    pub fn left_out(&self) -> Option<SharedCoreLeftOut> {
        if self.left_out.is_empty() {
            return None;
        }
        let floor = SHARED_CORE_SHARE * self.best;
        Some(SharedCoreLeftOut {
            left_out: self.left_out.len(),
            adds_per_cycle: median(self.readings.iter().copied().filter(|&a| a < floor))?,
            best_adds_per_cycle: self.best,
        })
    }

    /// The throughput the kept observations ran at, where anything was
    /// left out: the median of the readings next to them (low where the
    /// budget ran out before the core was alone again, and the run then
    /// judges the process shared). `None` where nothing was left out, or
    /// where fewer than [`MIN_KEPT_SHARE`] of the observations were kept:
    /// the track's median of all readings then stands.
    pub fn kept_adds_per_cycle(&self) -> Option<f64> {
        let taken = self.kept + self.left_out.len();
        let few = (self.kept as f64) < MIN_KEPT_SHARE * taken as f64;
        (!self.left_out.is_empty() && !few).then_some(())?;
        median(self.kept_readings.iter().copied())
    }
}

fn median(v: impl Iterator<Item = f64>) -> Option<f64> {
    yamba_stats::Summary::of(&v.collect::<Vec<_>>()).map(|s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs segments of (readings taken before the segment, its
    /// observations) and a final reading; returns the kept observations.
    fn run(segments: &[(f64, &[f64])], last: f64, own: &mut OwnCore) -> Vec<f64> {
        let mut obs = Vec::new();
        for &(adds, values) in segments {
            own.reading(adds, &mut obs, true);
            obs.extend_from_slice(values);
        }
        own.finish(Some(last), &mut obs);
        obs
    }

    /// A burst of the neighbour in the middle: the segments next to a low
    /// reading go, whatever their values, and the value is the alone one.
    #[test]
    fn segments_next_to_a_shared_reading_are_left_out() {
        let mut own = OwnCore::default();
        let kept = run(
            &[
                (5.3, &[100.0, 101.0]),
                (5.3, &[100.0]),
                (3.1, &[150.0, 160.0]),
                (3.0, &[155.0]),
                (5.2, &[99.0, 100.0]),
            ],
            5.3,
            &mut own,
        );
        // The segment before the 3.1 reading is left out too: the burst
        // may have begun inside it.
        assert_eq!(kept, vec![100.0, 101.0, 99.0, 100.0]);
        let out = own.left_out().unwrap();
        assert_eq!(out.left_out, 4);
        assert_eq!(own.left_out, vec![100.0, 150.0, 160.0, 155.0]);
        assert_eq!(out.adds_per_cycle, 3.05);
        assert_eq!(out.best_adds_per_cycle, 5.3);
        assert_eq!(own.kept_adds_per_cycle(), Some(5.3));
    }

    /// The readings, not the values, decide: a slow observation next to
    /// good readings stays.
    #[test]
    fn values_do_not_decide() {
        let mut own = OwnCore::default();
        let kept = run(&[(5.3, &[100.0, 400.0]), (5.25, &[101.0])], 5.3, &mut own);
        assert_eq!(kept, vec![100.0, 400.0, 101.0]);
        assert!(own.left_out().is_none());
        assert_eq!(own.kept_adds_per_cycle(), None);
    }

    /// A process that kept a few of many observations is judged by all
    /// its readings, not by the few kept.
    #[test]
    fn a_process_that_kept_few_is_judged_by_all_its_readings() {
        let mut own = OwnCore::default();
        let mut segments: Vec<(f64, &[f64])> = vec![(5.3, &[100.0]), (5.3, &[100.0])];
        segments.extend(std::iter::repeat_n((3.0, &[150.0][..]), 30));
        let kept = run(&segments, 3.0, &mut own);
        // The last segment stays (fewer than three would be left).
        assert_eq!(kept, vec![100.0, 150.0]);
        assert_eq!(own.left_out().unwrap().left_out, 30);
        assert_eq!(own.kept_adds_per_cycle(), None);
    }

    /// One reading far above what the core can do (an interrupted clock
    /// chain) does not become the best: it takes two in a row.
    #[test]
    fn one_high_reading_is_not_the_best() {
        let mut own = OwnCore::default();
        let kept = run(
            &[
                (5.3, &[100.0]),
                (9.5, &[101.0]),
                (5.3, &[102.0]),
                (5.2, &[103.0]),
            ],
            5.3,
            &mut own,
        );
        assert_eq!(kept, vec![100.0, 101.0, 102.0, 103.0]);
        assert!(own.left_out().is_none());
    }

    /// A core shared throughout leaves nothing out: its readings agree,
    /// and only the run can tell (against other processes).
    #[test]
    fn a_core_shared_throughout_keeps_everything() {
        let mut own = OwnCore::default();
        let kept = run(
            &[(3.0, &[150.0]), (3.1, &[151.0]), (2.95, &[149.0])],
            3.05,
            &mut own,
        );
        assert_eq!(kept.len(), 3);
        assert!(own.left_out().is_none());
    }

    /// A process that starts shared and later reads the core alone: what
    /// it kept before is shared next to the new best, and goes.
    #[test]
    fn a_better_reading_leaves_out_what_was_kept_before_it() {
        let mut own = OwnCore::default();
        let kept = run(
            &[
                (3.0, &[150.0]),
                (3.0, &[151.0]),
                (5.3, &[100.0]),
                (5.3, &[101.0]),
            ],
            5.3,
            &mut own,
        );
        assert_eq!(kept, vec![101.0]);
        assert_eq!(own.left_out, vec![150.0, 151.0, 100.0]);
    }

    /// Once the budget is spent nothing more is left out; and the last
    /// segment stays where leaving it out would leave fewer than three.
    #[test]
    fn sampling_always_ends_with_observations() {
        let mut own = OwnCore::default();
        let mut obs = Vec::new();
        own.reading(5.3, &mut obs, true);
        obs.push(100.0);
        own.reading(2.0, &mut obs, false);
        obs.push(180.0);
        own.reading(2.0, &mut obs, false);
        assert_eq!(obs, vec![100.0, 180.0]);
        obs.push(181.0);
        own.finish(Some(2.0), &mut obs);
        assert_eq!(obs, vec![100.0, 180.0, 181.0]);
        // Nothing was left out: the track's readings stand.
        assert_eq!(own.kept_adds_per_cycle(), None);

        // Left out until the budget ran out, then kept shared: the kept
        // observations' readings say so.
        let mut own = OwnCore::default();
        let mut obs = Vec::new();
        own.reading(5.3, &mut obs, true);
        own.reading(5.3, &mut obs, true);
        obs.push(150.0);
        own.reading(2.8, &mut obs, true);
        obs.extend([151.0, 152.0, 153.0]);
        own.reading(2.8, &mut obs, false);
        own.finish(Some(2.9), &mut obs);
        assert_eq!(obs, vec![151.0, 152.0, 153.0]);
        assert_eq!(own.kept_adds_per_cycle(), Some(2.8));

        let mut own = OwnCore::default();
        let kept = run(&[(5.3, &[1.0, 2.0, 3.0]), (5.3, &[9.0])], 2.0, &mut own);
        assert_eq!(kept, vec![1.0, 2.0, 3.0]);

        // A last reading better than everything kept would leave nothing:
        // it leaves out nothing instead.
        let mut own = OwnCore::default();
        let kept = run(&[(3.0, &[1.0, 2.0, 3.0]), (3.0, &[4.0])], 5.3, &mut own);
        assert_eq!(kept, vec![1.0, 2.0, 3.0, 4.0]);
    }
}
