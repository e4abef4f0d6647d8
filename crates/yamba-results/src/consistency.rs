//! Whether a result's stored statistics are those of its observations.
//!
//! A results file is a plain JSON document: an edited or damaged one can
//! hold a summary, block medians or an interval that its observations do
//! not give — and a reader that takes the medians from one and the change
//! from the other reports what was never measured. Every statistic a
//! reader uses is recomputed here from the observations (with the block
//! sizes stored) and compared: the summary, each block's median, the
//! between-block estimate and interval, the estimate in cycles, and the
//! per-repetition medians of `extra.repetitions`. Files yamba writes pass
//! by construction (the same functions computed them); the tolerance only
//! absorbs the last bit of a decimal round trip.

use crate::results::{BenchResult, BlockKind, ResultsFile, Status};
use yamba_stats::Summary;

/// Relative difference two stored and recomputed values may have.
pub const TOLERANCE: f64 = 1e-9;

/// What disagrees in one result.
#[derive(Debug, Clone, PartialEq)]
pub struct Inconsistency {
    /// `id@mode`.
    pub key: String,
    /// Each disagreement, in words: what is stored against what the
    /// observations give.
    pub problems: Vec<String>,
}

impl std::fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: stored statistics disagree with the observations ({}) — edited or damaged?",
            self.key,
            self.problems.join("; ")
        )
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()) || (a.is_nan() && b.is_nan())
}

fn fmt(v: f64) -> String {
    crate::units::format_sig(v)
}

/// Checks `r`; Ok when everything stored follows from its observations.
pub fn check_result(r: &BenchResult) -> Result<(), Inconsistency> {
    let mut problems = Vec::new();
    check_summary(r, &mut problems);
    check_certainty(r, &mut problems);
    check_repetitions(r, &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Inconsistency {
            key: r.key(),
            problems,
        })
    }
}

impl ResultsFile {
    /// Every result whose stored statistics disagree with its observations.
    pub fn inconsistencies(&self) -> Vec<Inconsistency> {
        self.results
            .iter()
            .filter_map(|r| check_result(r).err())
            .collect()
    }
}

fn check_summary(r: &BenchResult, out: &mut Vec<String>) {
    let Some(s) = &r.summary else {
        return;
    };
    let Some(want) = Summary::of(&r.observations) else {
        out.push(format!(
            "a summary of {} observations, but {} observations stored{}",
            s.n,
            r.observations.len(),
            if r.observations.is_empty() {
                ""
            } else {
                " (not all numbers)"
            }
        ));
        return;
    };
    if s.n != want.n {
        out.push(format!(
            "summary counts {} observations, {} stored",
            s.n, want.n
        ));
    }
    for (what, got, should) in [
        ("median", s.median, want.median),
        ("mean", s.mean, want.mean),
        ("min", s.min, want.min),
        ("max", s.max, want.max),
        ("stddev", s.stddev, want.stddev),
    ] {
        if !close(got, should) {
            out.push(format!(
                "summary {what} {} stored, {} recomputed",
                fmt(got),
                fmt(should)
            ));
        }
    }
    let ci = |i: Option<yamba_stats::Interval>| i.map(|i| (i.lo, i.hi));
    match (ci(s.median_ci), ci(want.median_ci)) {
        (Some((a, b)), Some((c, d))) if close(a, c) && close(b, d) => {}
        (None, None) => {}
        (got, should) => out.push(format!(
            "median interval {got:?} stored, {should:?} recomputed"
        )),
    }
}

fn check_certainty(r: &BenchResult, out: &mut Vec<String>) {
    let Some(c) = &r.certainty else {
        return;
    };
    let b = c.medians.len();
    // Batches of one process far from the others are left out of the
    // estimate (see `Certainty::within_process`): as many as are named.
    let left_out = match c.block {
        BlockKind::Batch => c.estimate.outliers.len(),
        BlockKind::Process => b - c.kept_blocks().len(),
        BlockKind::Placement => 0,
    };
    if c.sizes.len() != b || c.estimate.blocks + left_out != b {
        out.push(format!(
            "{} block medians, {} block sizes, {} blocks counted",
            b,
            c.sizes.len(),
            c.estimate.blocks
        ));
        return;
    }
    let total: usize = c.sizes.iter().sum();
    if total != r.observations.len() {
        out.push(format!(
            "blocks hold {total} observations, {} stored",
            r.observations.len()
        ));
        return;
    }
    let values = match block_values(r, c) {
        Ok(v) => v,
        Err(why) => {
            out.push(why);
            return;
        }
    };
    for (i, (&m, want)) in c.medians.iter().zip(values).enumerate() {
        if !want.is_some_and(|w| close(m, w)) {
            out.push(format!(
                "block {} median {} stored, {} recomputed",
                i + 1,
                fmt(m),
                want.map_or("none".into(), fmt)
            ));
        }
    }
    let confidence = c.estimate.ci.map_or(0.95, |i| i.confidence);
    let Some(mut e) = yamba_stats::between_blocks(&c.medians, c.estimate.resolution, confidence)
    else {
        out.push("block medians give no estimate".into());
        return;
    };
    // Which blocks the estimate stands on: all, or — for batches, as the
    // writer decides — those not far from the others.
    let mut kept: Vec<usize> = (0..b).collect();
    if !c.shared_core.is_empty() || !c.core_adds_per_cycle.is_empty() {
        // The best the blocks were judged against, as stored; a file that
        // stores none was judged by the rule of its day (`adds_best`).
        if let Some(stored) = c.core_adds_best {
            let again =
                crate::results::judged_best_adds(&c.core_adds_per_cycle, c.core_adds_reference);
            if !again.is_some_and(|a| close(stored, a)) {
                out.push(format!(
                    "best adds per cycle {} stored, {} recomputed from the adds per cycle",
                    fmt(stored),
                    again.map_or("none".into(), fmt)
                ));
                return;
            }
        }
        let want = c.adds_best().map_or_else(Vec::new, |best| {
            crate::results::shared_below(&c.core_adds_per_cycle, best)
        });
        if c.core_adds_per_cycle.len() != b || want != c.shared_core {
            out.push(format!(
                "shared-core blocks {:?} stored, {want:?} recomputed from the adds per cycle",
                c.shared_core
            ));
            return;
        }
    }
    if c.block == BlockKind::Process && c.kept_blocks().len() < b {
        kept = c.kept_blocks();
    }
    if c.block == BlockKind::Batch && !e.outliers.is_empty() && 2 * e.outliers.len() < b {
        kept.retain(|i| !e.outliers.contains(i));
    }
    if kept.len() < b || c.pilot.is_some() {
        let medians: Vec<f64> = kept.iter().map(|&i| c.medians[i]).collect();
        let pilot = c.pilot.unwrap_or(medians.len());
        match yamba_stats::between_blocks_two_stage(
            &medians,
            pilot,
            c.estimate.resolution,
            confidence,
        ) {
            Some(k) => e = k,
            None => {
                out.push("block medians give no estimate".into());
                return;
            }
        }
    }
    if kept.len() != c.estimate.blocks {
        out.push(format!(
            "{} blocks counted, {} recomputed",
            c.estimate.blocks,
            kept.len()
        ));
    }
    if !close(c.estimate.estimate, e.estimate) {
        out.push(format!(
            "estimate {} stored, {} recomputed from the block medians",
            fmt(c.estimate.estimate),
            fmt(e.estimate)
        ));
    }
    if !close(c.estimate.stddev, e.stddev) {
        out.push(format!(
            "block spread {} stored, {} recomputed",
            fmt(c.estimate.stddev),
            fmt(e.stddev)
        ));
    }
    match (c.estimate.ci, e.ci) {
        (Some(x), Some(y)) if close(x.lo, y.lo) && close(x.hi, y.hi) => {}
        (None, None) => {}
        (x, y) => out.push(format!(
            "interval {:?} stored, {:?} recomputed",
            x.map(|i| (i.lo, i.hi)),
            y.map(|i| (i.lo, i.hi))
        )),
    }
    if let Some(cy) = &c.cycles {
        // Each kept block's median times its core clock, averaged.
        let want = c
            .block_cycles()
            .map(|all| kept.iter().map(|&i| all[i]).sum::<f64>() / kept.len() as f64);
        if !want.is_some_and(|w| close(cy.estimate, w)) {
            out.push(format!(
                "estimate in cycles {} stored, {} recomputed",
                fmt(cy.estimate),
                want.map_or("none".into(), fmt)
            ));
        }
    }
}

/// Each block's value recomputed from the observations: the median of a
/// batch or of an unplaced process, the mean of a placed process's
/// placements' medians, the median of one placement's observations.
fn block_values(
    r: &BenchResult,
    c: &crate::results::Certainty,
) -> Result<Vec<Option<f64>>, String> {
    use crate::results::Rotation;
    if c.block == BlockKind::Placement {
        let [rot] = c.rotations[..] else {
            return Err(format!(
                "placement blocks with {} rotations stored (one expected)",
                c.rotations.len()
            ));
        };
        let groups = yamba_stats::rotation_medians(&r.observations, rot.slots, rot.stretch);
        let sizes: Vec<usize> = groups.iter().map(|g| g.1).collect();
        if sizes != c.sizes {
            return Err(format!(
                "placement sizes {:?} stored, {sizes:?} recomputed",
                c.sizes
            ));
        }
        return Ok(groups.into_iter().map(|g| Some(g.0)).collect());
    }
    if !c.rotations.is_empty() && c.rotations.len() != c.sizes.len() {
        return Err(format!(
            "{} blocks, {} rotations stored",
            c.sizes.len(),
            c.rotations.len()
        ));
    }
    let mut at = 0;
    Ok(c.sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let block = &r.observations[at..at + size];
            at += size;
            c.rotations.get(i).unwrap_or(&Rotation::NONE).value(block)
        })
        .collect())
}

/// `extra.repetitions`: one entry per process of a pooled result, whose
/// measured entries' observations are concatenated in `observations`.
fn check_repetitions(r: &BenchResult, out: &mut Vec<String>) {
    let Some(reps) = r.extra.get("repetitions").and_then(|v| v.as_array()) else {
        return;
    };
    let measured: Vec<&serde_json::Value> = reps
        .iter()
        .filter(|x| {
            x.get("status")
                .and_then(|s| serde_json::from_value::<Status>(s.clone()).ok())
                .is_some_and(|s| matches!(s, Status::Ok | Status::Withheld))
        })
        .collect();
    let sizes: Option<Vec<usize>> = measured
        .iter()
        .map(|x| x.get("n")?.as_u64().map(|n| n as usize))
        .collect();
    let Some(sizes) = sizes else {
        out.push("a repetition without its observation count".into());
        return;
    };
    let total: usize = sizes.iter().sum();
    if total != r.observations.len() {
        out.push(format!(
            "repetitions hold {total} observations, {} stored",
            r.observations.len()
        ));
        return;
    }
    let mut at = 0;
    for (i, (x, size)) in measured.iter().zip(sizes).enumerate() {
        let want = Summary::of(&r.observations[at..at + size]).map(|s| s.median);
        at += size;
        let got = x.get("median").and_then(|m| m.as_f64());
        let same = match (got, want) {
            (Some(g), Some(w)) => close(g, w),
            (None, None) => true,
            _ => false,
        };
        if !same {
            out.push(format!(
                "repetition {} median {} stored, {} recomputed",
                i + 1,
                got.map_or("none".into(), fmt),
                want.map_or("none".into(), fmt)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{BlockKind, Certainty, Mode};
    use crate::units::Unit;

    fn pooled(processes: &[Vec<f64>]) -> BenchResult {
        let mut r = BenchResult::new("a.b", "a.b", "a", Unit::Nanoseconds, Mode::Hot, "t");
        r.set_observations(processes.concat());
        let medians = processes
            .iter()
            .map(|p| Summary::of(p).unwrap().median)
            .collect();
        let sizes = processes.iter().map(Vec::len).collect();
        r.certainty = Certainty::from_blocks(
            BlockKind::Process,
            medians,
            sizes,
            1.0,
            vec![2000.0; processes.len()],
        );
        r.extra.insert(
            "repetitions".into(),
            processes
                .iter()
                .map(|p| {
                    serde_json::json!({"status": "ok", "n": p.len(),
                        "median": Summary::of(p).unwrap().median})
                })
                .collect::<Vec<_>>()
                .into(),
        );
        r
    }

    fn procs() -> Vec<Vec<f64>> {
        (0..6)
            .map(|i| (0..20).map(|j| 100.0 + i as f64 + (j % 7) as f64).collect())
            .collect()
    }

    #[test]
    fn what_yamba_writes_passes_and_survives_a_round_trip() {
        let r = pooled(&procs());
        check_result(&r).unwrap();
        let mut one = BenchResult::new("a.c", "a.c", "a", Unit::Nanoseconds, Mode::Hot, "t");
        let obs: Vec<f64> = (0..1000).map(|i| 1.0 / (1.0 + i as f64)).collect();
        one.set_observations(obs.clone());
        one.certainty = Certainty::within_process(&obs, 0.001, Some(3456.7));
        check_result(&one).unwrap();
        let back: BenchResult =
            serde_json::from_str(&serde_json::to_string(&one).unwrap()).unwrap();
        check_result(&back).unwrap();
        // A batch disturbed by a preemption is left out of the estimate by
        // the writer, and so by the check.
        let mut hit: Vec<f64> = (0..100).map(|i| 3.06 + (i % 7) as f64 * 0.001).collect();
        hit[40..50].iter_mut().for_each(|v| *v = 496.0);
        let mut left = BenchResult::new("a.e", "a.e", "a", Unit::Nanoseconds, Mode::Hot, "t");
        left.set_observations(hit.clone());
        left.certainty = Certainty::within_process(&hit, 0.0158, Some(3600.0));
        assert_eq!(left.certainty.as_ref().unwrap().estimate.blocks, 9);
        check_result(&left).unwrap();
        left.certainty.as_mut().unwrap().estimate.outliers.clear();
        assert!(check_result(&left).is_err(), "a block left out unnamed");
        // Nothing measured: nothing to disagree with.
        let empty = BenchResult::new("a.d", "a.d", "a", Unit::Nanoseconds, Mode::Hot, "t");
        check_result(&empty).unwrap();
    }

    /// The best reading the shared-core blocks were judged against is
    /// recomputed from the readings; an edited one is named even where it
    /// names the same blocks.
    #[test]
    fn an_edited_best_reading_is_named() {
        let mut r = pooled(&procs());
        let c = r.certainty.as_mut().unwrap();
        c.leave_out_shared_core(vec![3.75, 3.74, 3.76, 3.75, 2.2, 3.74], None);
        assert_eq!(
            (c.shared_core.clone(), c.core_adds_best),
            (vec![4], Some(3.76))
        );
        check_result(&r).unwrap();
        r.certainty.as_mut().unwrap().core_adds_best = Some(3.9);
        let e = check_result(&r).unwrap_err().to_string();
        assert!(
            e.contains("best adds per cycle 3.900 stored, 3.760 recomputed"),
            "{e}"
        );
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn every_tampered_statistic_is_named() {
        let base = pooled(&procs());
        let cases: Vec<(&str, Box<dyn Fn(&mut BenchResult)>)> = vec![
            (
                "summary median",
                Box::new(|r| r.summary.as_mut().unwrap().median *= 0.8),
            ),
            (
                "block 3 median",
                Box::new(|r| r.certainty.as_mut().unwrap().medians[2] = 50.0),
            ),
            (
                "estimate",
                Box::new(|r| r.certainty.as_mut().unwrap().estimate.estimate = 90.0),
            ),
            (
                "interval",
                Box::new(|r| {
                    let ci = r.certainty.as_mut().unwrap().estimate.ci.as_mut().unwrap();
                    ci.lo = 0.0;
                }),
            ),
            (
                "in cycles",
                Box::new(|r| {
                    r.certainty
                        .as_mut()
                        .unwrap()
                        .cycles
                        .as_mut()
                        .unwrap()
                        .estimate = 1.0
                }),
            ),
            (
                "summary mean",
                Box::new(|r| {
                    r.observations.iter_mut().for_each(|v| *v *= 1.2);
                }),
            ),
            (
                "blocks hold",
                Box::new(|r| {
                    r.observations.pop();
                }),
            ),
            (
                "repetition 2 median",
                Box::new(|r| {
                    r.extra.get_mut("repetitions").unwrap()[1]["median"] = 1.0.into();
                }),
            ),
        ];
        for (what, tamper) in cases {
            let mut r = base.clone();
            tamper(&mut r);
            let e = check_result(&r).expect_err(what);
            let text = e.to_string();
            assert!(text.contains(what), "{what}: {text}");
            assert!(
                text.starts_with("a.b@hot: stored statistics disagree"),
                "{text}"
            );
        }
    }
}
