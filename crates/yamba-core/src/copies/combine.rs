//! From N copies' results to one result per quantity, and the scaling
//! against the run's one-copy result.

use super::spawn::CopyProcess;
use super::{copies_id, CopyReport};
use crate::bench::{Benchmark, Session};
use crate::isolate::ChildOutcome;
use yamba_results::copies::{Copies, CopiesBlock};
use yamba_results::results::{Accounting, BenchResult, BlockKind, Certainty, Mode, Status};
use yamba_results::{CpuStates, Rotation};

/// The copies' start may lag the first copy's by at most this share of
/// the shortest copy's measuring time.
const START_SPREAD_SHARE: f64 = 0.1;

/// One copy's results, or why it has none.
struct CopyResults {
    cpu: usize,
    results: Result<Vec<(BenchResult, Option<CopyReport>)>, String>,
}

/// One result per result the copies gave (in the first copy's order), or
/// one failed result when none gave any.
pub(crate) fn combine(
    session: &Session,
    bench: &'static Benchmark,
    mode: Mode,
    cpus: &[usize],
    procs: Vec<CopyProcess>,
    cpu_states: Option<CpuStates>,
) -> Vec<BenchResult> {
    let count = cpus.len();
    let accounting = accounting(&procs, cpu_states);
    let ended_early: Vec<usize> = (0..procs.len()).filter(|&i| procs[i].ended_early).collect();
    let copies: Vec<CopyResults> = procs
        .into_iter()
        .zip(cpus)
        .map(|(p, &cpu)| CopyResults {
            cpu,
            results: match p.outcome {
                ChildOutcome::Finished(rs) => Ok(rs
                    .into_iter()
                    .map(|mut r| {
                        let report = CopyReport::take(&mut r);
                        (r, report)
                    })
                    .collect()),
                ChildOutcome::Failed(why) => Err(why),
            },
        })
        .collect();
    let mut keys: Vec<String> = Vec::new();
    for c in &copies {
        for (r, _) in c.results.iter().flatten() {
            if !keys.contains(&r.key()) {
                keys.push(r.key());
            }
        }
    }
    if keys.is_empty() {
        let mut r = crate::runner::failed(session, bench, mode, failures(&copies, None));
        r.id = copies_id(bench.id, count);
        r.params.insert("copies".into(), count.into());
        r.accounting = Some(accounting);
        return vec![r];
    }
    keys.iter()
        .map(|k| {
            let mut r = one_quantity(&copies, k, &ended_early);
            r.accounting = Some(accounting.clone());
            r
        })
        .collect()
}

/// "copy 1 (CPU 3): why; …" for every copy without the result `key` (any
/// result when None).
fn failures(copies: &[CopyResults], key: Option<&str>) -> String {
    let mut out = Vec::new();
    for (i, c) in copies.iter().enumerate() {
        let why = match &c.results {
            Err(why) => why.clone(),
            Ok(rs) => match key.map(|k| rs.iter().find(|(r, _)| r.key() == k)) {
                Some(None) => "gave no such result".into(),
                Some(Some((r, _))) if !matches!(r.status, Status::Ok | Status::Withheld) => {
                    r.reason.clone().unwrap_or_else(|| r.status.as_str().into())
                }
                _ => continue,
            },
        };
        out.push(format!("copy {} (CPU {}): {why}", i + 1, c.cpu));
    }
    out.join("; ")
}

/// The copies' results under `key` as one: observations the copies'
/// values, every copy's evidence named, and the copies' own checks.
fn one_quantity(copies: &[CopyResults], key: &str, ended_early: &[usize]) -> BenchResult {
    let count = copies.len();
    let found: Vec<Option<&(BenchResult, Option<CopyReport>)>> = copies
        .iter()
        .map(|c| {
            c.results
                .as_ref()
                .ok()?
                .iter()
                .find(|(r, _)| r.key() == key)
        })
        .collect();
    let template = found.iter().flatten().next().expect("a copy gave this key");
    let mut m = template.0.clone();
    m.id = copies_id(&template.0.id, count);
    m.description = format!("{} ({count} simultaneous copies)", template.0.description);
    m.params.insert("copies".into(), count.into());
    // The first copy's tables and curve describe one copy, not the N.
    m.extra.clear();
    m.series = None;
    m.evidence.clear();
    m.warnings.clear();
    m.certainty = None;
    if let Some(method) = m.method.as_mut() {
        // Each copy's code ran at its own placements; the value is per copy.
        method.placement = None;
    }
    let measured = |r: &BenchResult| matches!(r.status, Status::Ok | Status::Withheld);
    let values: Vec<Option<f64>> = found
        .iter()
        .map(|f| {
            let (r, _) = f.as_ref()?;
            let rot = r.method.as_ref().map_or(Rotation::NONE, |x| x.rotation());
            measured(r).then(|| rot.value(&r.observations)).flatten()
        })
        .collect();
    for (i, f) in found.iter().enumerate() {
        let Some((r, _)) = f else { continue };
        let at = format!("copy {}, CPU {}", i + 1, copies[i].cpu);
        for e in &r.evidence {
            let mut e = e.clone();
            e.check = format!("{} ({at})", e.check);
            m.evidence.push(e);
        }
        for w in &r.warnings {
            let w = format!("{w} ({at})");
            if !m.warnings.contains(&w) {
                m.warnings.push(w);
            }
        }
    }
    let means: Vec<Option<f64>> = found
        .iter()
        .map(|f| {
            let (r, _) = f.as_ref()?;
            measured(r)
                .then(|| r.summary.as_ref().map(|s| s.mean))
                .flatten()
        })
        .collect();
    let reports: Vec<Option<CopyReport>> = found.iter().map(|f| f.and_then(|x| x.1)).collect();
    placement_evidence(&mut m, copies, &reports);
    together_evidence(&mut m, &reports, ended_early);
    let cpus: Vec<usize> = copies.iter().map(|c| c.cpu).collect();
    m.copies = Some(Copies {
        count,
        one_copy_id: template.0.id.clone(),
        blocks: vec![CopiesBlock {
            cpus,
            values: values.clone(),
            means,
        }],
        one_copy: None,
        one_copy_mean: None,
        scaling: None,
    });
    m.set_observations(values.iter().flatten().copied().collect());
    if values.iter().any(Option::is_none) {
        m.status = Status::Failed;
        m.reason = Some(failures(copies, Some(key)));
        return m;
    }
    let good: Vec<&BenchResult> = found.iter().flatten().map(|(r, _)| r).collect();
    let (resolution, core_mhz) = crate::runner::blocks_clock(good.iter().copied());
    let sizes = good.iter().map(|r| r.observations.len()).collect();
    // One block of copies: the copies stand as its processes.
    let values: Vec<f64> = values.into_iter().flatten().collect();
    m.certainty = Certainty::from_blocks(BlockKind::Process, values, sizes, resolution, core_mhz);
    m.status = Status::Ok;
    m.reason = None;
    m.apply_evidence();
    m
}

/// Gating: every copy ran on the CPU it was pinned to, and no two shared one.
fn placement_evidence(m: &mut BenchResult, copies: &[CopyResults], reports: &[Option<CopyReport>]) {
    let expected: Vec<String> = copies
        .iter()
        .enumerate()
        .map(|(i, c)| format!("copy {} on CPU {}", i + 1, c.cpu))
        .collect();
    let show = |c: Option<usize>| c.map_or("?".into(), |c| c.to_string());
    let observed: Vec<String> = reports
        .iter()
        .enumerate()
        .map(|(i, r)| match r {
            Some(r) => format!(
                "copy {} on CPU {} → {}",
                i + 1,
                show(r.cpu_at_start),
                show(r.cpu_at_end)
            ),
            None => format!("copy {}: no report", i + 1),
        })
        .collect();
    let mut distinct: Vec<usize> = copies.iter().map(|c| c.cpu).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let ok = distinct.len() == copies.len()
        && reports.iter().zip(copies).all(|(r, c)| {
            r.is_some_and(|r| r.cpu_at_start == Some(c.cpu) && r.cpu_at_end == Some(c.cpu))
        });
    m.add_evidence(
        "each copy ran on the CPU it was pinned to (when released and when it had measured), no two on one CPU",
        expected.join(", "),
        observed.join(", "),
        ok,
    );
}

/// Gating: the copies were released together (the last started within
/// [`START_SPREAD_SHARE`] of the shortest copy's measuring time after the
/// first), and none had stopped before the last had measured.
fn together_evidence(m: &mut BenchResult, reports: &[Option<CopyReport>], ended_early: &[usize]) {
    let have: Vec<&CopyReport> = reports.iter().flatten().collect();
    let first = have.iter().map(|r| r.started_ns).min().unwrap_or(0);
    let last = have.iter().map(|r| r.started_ns).max().unwrap_or(0);
    let shortest = have
        .iter()
        .map(|r| r.finished_ns.saturating_sub(r.started_ns))
        .min()
        .unwrap_or(0);
    let spread_ms = (last - first) as f64 / 1e6;
    let allowed_ms = START_SPREAD_SHARE * shortest as f64 / 1e6;
    let early: Vec<String> = ended_early
        .iter()
        .map(|i| format!("copy {}", i + 1))
        .collect();
    m.add_evidence(
        format!(
            "the copies measured together: released at once (the last within {:.0}% of the shortest copy's measuring time after the first), each running until the last had measured",
            START_SPREAD_SHARE * 100.0
        ),
        format!("start spread ≤ {allowed_ms:.3} ms; no copy ended early"),
        format!(
            "start spread {spread_ms:.3} ms; {}",
            if early.is_empty() {
                "no copy ended early".to_string()
            } else {
                format!("{} ended early", early.join(", "))
            }
        ),
        have.len() == reports.len() && spread_ms <= allowed_ms && early.is_empty(),
    );
}

/// The block's accounting: its wall time, the copies' CPU times summed.
fn accounting(procs: &[CopyProcess], cpu_states: Option<CpuStates>) -> Accounting {
    let u = procs.iter().map(|p| &p.usage);
    Accounting {
        wall_s: u.clone().map(|u| u.wall.as_secs_f64()).fold(0.0, f64::max),
        user_s: u.clone().map(|u| u.user_s).sum(),
        system_s: u.clone().map(|u| u.system_s).sum(),
        max_rss_kib: u.clone().map(|u| u.max_rss_kib).max().unwrap_or(0),
        voluntary_switches: u.clone().map(|u| u.voluntary_switches).sum(),
        involuntary_switches: u.map(|u| u.involuntary_switches).sum(),
        cpu_states,
        ..Accounting::default()
    }
}

/// Fills each copies result's `one_copy`, `one_copy_mean` and `scaling`
/// from the one-copy result beside it (same id without the suffix, same
/// mode); results already pooled over blocks.
pub fn attach_scaling(results: &mut [BenchResult]) {
    type One = (Option<f64>, Option<f64>, yamba_results::units::Unit);
    let ones: std::collections::HashMap<String, One> = results
        .iter()
        .filter(|r| r.copies.is_none() && r.status == Status::Ok)
        .map(|r| {
            (
                r.key(),
                (r.value(), r.summary.as_ref().map(|s| s.mean), r.unit),
            )
        })
        .collect();
    for r in results.iter_mut() {
        // A withheld result keeps its numbers for diagnosis; so its scaling.
        let ok = matches!(r.status, Status::Ok | Status::Withheld);
        let mode = r.mode;
        let Some(c) = r.copies.as_mut() else { continue };
        let one = ones.get(&format!("{}@{}", c.one_copy_id, mode.as_str()));
        c.one_copy = one.and_then(|o| o.0);
        c.one_copy_mean = one.and_then(|o| o.1);
        c.scaling = one
            .filter(|_| ok)
            .and_then(|&(_, mean, unit)| c.scaling_against(mean?, unit));
    }
}
