//! Runs a list of benchmarks: requirement checks, modes, isolation,
//! scratch directories, accounting, busy-machine warnings.

use crate::bench::{Benchmark, Session};
use crate::cpustates::CpuTimes;
use crate::isolate::{run_bench_in_exec, run_in_child, ChildOutcome, ChildUsage};
use crate::scratch::ScratchRoot;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};
use yamba_results::results::{
    core_best_adds, run_best_adds, shared_below, shared_core_blocks, shared_core_warning,
    Accounting, BenchResult, BlockKind, Certainty, Mode, Status,
};
use yamba_results::{Phases, Rotation};

/// Share of all CPUs' time other processes may use before a result is
/// flagged as measured on a busy machine.
pub const BUSY_WARNING_PCT: f64 = 10.0;

/// Told about progress, e.g. to draw a progress bar and save as it goes.
pub trait Observer {
    fn started(&mut self, _index: usize, _total: usize, _bench: &Benchmark, _mode: Mode) {}
    fn finished(&mut self, _results: &[BenchResult]) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// The (benchmark, mode) pairs a run will measure, in order: with
/// repetitions, the whole list once per round, so repetitions of one
/// benchmark are interleaved with the others and drift spreads over all.
pub fn plan_runs(
    session: &Session,
    benches: &[&'static Benchmark],
) -> Vec<(&'static Benchmark, Mode)> {
    let mut out = Vec::new();
    for round in 0..session.config.repetitions.max(1) {
        for &b in benches {
            if round >= session.config.blocks_for(b) {
                continue;
            }
            for &m in &session.config.modes {
                out.push((b, m));
            }
        }
    }
    out
}

/// Pools repetitions of the same result (same id and mode), each measured
/// in a process of its own — the blocks of its interval: observations
/// concatenated in the order taken, the summary recomputed, the certainty
/// recomputed from one median per process (see
/// [`yamba_results::results::Certainty`]), each repetition's median kept in
/// `extra.repetitions`, a process whose median stands far from the others
/// named in the evidence. A repetition that failed is named in a warning;
/// the pooled result fails only when all did.
pub fn merge_repetitions(results: &[BenchResult]) -> Vec<BenchResult> {
    merge_blocks(results, None)
}

/// [`merge_repetitions`] for blocks whose count the two-stage rule chose
/// after a pilot of `pilot` blocks ([`run_benchmarks`]): each interval is
/// also never narrower than Stein's from the pilot.
pub fn merge_blocks(results: &[BenchResult], pilot: Option<usize>) -> Vec<BenchResult> {
    let best_adds = run_best_adds(results);
    let mut order: Vec<String> = Vec::new();
    let mut groups: std::collections::HashMap<String, Vec<&BenchResult>> = Default::default();
    for r in results {
        let k = r.key();
        if !groups.contains_key(&k) {
            order.push(k.clone());
        }
        groups.entry(k).or_default().push(r);
    }
    let mut pooled: Vec<BenchResult> = order
        .into_iter()
        .map(|k| match groups[&k].as_slice() {
            [one] => alone_or_shared((*one).clone(), best_adds),
            reps => pool(reps, pilot, best_adds),
        })
        .collect();
    crate::copies::attach_scaling(&mut pooled);
    pooled
}

/// A result measured in one process, with a warning when that process
/// ran on a shared core: below [`yamba_results::results::SHARED_CORE_SHARE`]
/// of the run's best adds
/// per cycle (`best_adds`), where another hardware thread used the core
/// (system calls 25–44% slower on the AMD EPYC guests; docs/certainty.md).
fn alone_or_shared(mut r: BenchResult, best_adds: Option<f64>) -> BenchResult {
    let adds = r.method.as_ref().and_then(|m| m.core_adds_per_cycle);
    if let (Some(a), Some(best)) = (adds, best_adds) {
        if !shared_core_blocks(&[a], Some(best)).is_empty() {
            r.warn(shared_core_warning(a, best));
        }
    }
    r
}

/// The run's note on shared cores: how many of its measurements (one per
/// result per process, before pooling) read below
/// [`yamba_results::results::SHARED_CORE_SHARE`] of the run's best adds
/// per cycle; `None` when none did. One line for the whole run, so that
/// a host whose neighbour was busy is told once, beside the results that
/// say it one by one.
/// `not_replaced`: the run's second stage decided, from its pilot, not to
/// replace shared processes ([`BlockTimes::shared_not_replaced`]); the
/// note says so, whatever the whole run's readings say afterwards.
pub fn shared_core_note(raw: &[BenchResult], not_replaced: bool) -> Option<String> {
    let adds = adds_readings(raw);
    let best = core_best_adds(&adds)?;
    let shared = shared_below(&adds, best).len();
    let rare = if not_replaced {
        "; so few of the pilot's ran alone that this run did not replace them (a replacement would share too)"
    } else {
        ""
    };
    (shared > 0).then(|| {
        format!(
            "shared core: {shared} of {} measurements ran while another hardware thread used the core \
             (below {:.0}% of the run's best {best:.2} independent adds per cycle); system calls read \
             up to 44% high there, dependent chains little or not at all (docs/certainty.md, \"A shared core\"){rare}",
            adds.len(),
            yamba_results::results::SHARED_CORE_SHARE * 100.0
        )
    })
}

/// Below this share of a run's measurements alone on their core, a
/// precise run does not replace shared processes: a replacement would
/// share too. (Found on a Zen 5 guest where 1428 of 1430 measurements
/// read shared and the second stage spent 71 of a run's 173 s on 294
/// replacement blocks, nearly all shared again — against a single reading
/// of 6.6 adds per cycle that nothing confirmed; against the confirmed
/// best, 4.84, 1026 of them were shared: [`core_best_adds`].)
const RARE_ALONE: f64 = 0.1;

/// Fewer measurements than this say nothing about how often a core is
/// alone.
const RARE_ALONE_MIN_READINGS: usize = 30;

/// The adds-per-cycle readings of `results` (one per result per
/// process), as the shared-core rules judge them.
fn adds_readings<'a>(results: impl IntoIterator<Item = &'a BenchResult>) -> Vec<f64> {
    results
        .into_iter()
        .filter_map(|r| r.method.as_ref()?.core_adds_per_cycle)
        .collect()
}

/// Whether so few of a run's `adds` readings ran alone on their core
/// ([`RARE_ALONE`]) that replacing shared ones is not worth its time.
fn alone_is_rare(adds: &[f64]) -> bool {
    let adds: Vec<f64> = adds.iter().copied().filter(|a| a.is_finite()).collect();
    if adds.len() < RARE_ALONE_MIN_READINGS {
        return false;
    }
    let alone = adds.len() - shared_core_blocks(&adds, None).len();
    (alone as f64) < RARE_ALONE * adds.len() as f64
}

fn pool(reps: &[&BenchResult], pilot: Option<usize>, best_adds: Option<f64>) -> BenchResult {
    let measured = |r: &&&BenchResult| matches!(r.status, Status::Ok | Status::Withheld);
    let good: Vec<&&BenchResult> = reps.iter().filter(measured).collect();
    let mut m = (**good.first().copied().unwrap_or(&reps[0])).clone();
    m.params.insert("repetitions".into(), reps.len().into());
    let per_rep: Vec<serde_json::Value> = reps
        .iter()
        .map(|r| {
            let mut rep = serde_json::json!({
                "status": r.status,
                "median": r.median(),
                "n": r.observations.len(),
                "reason": r.reason,
            });
            if let Some(p) = r.method.as_ref().and_then(|m| m.placement.as_ref()) {
                rep["placement"] = serde_json::to_value(p).unwrap_or_default();
            }
            rep
        })
        .collect();
    m.extra.insert("repetitions".into(), per_rep.into());
    if good.is_empty() {
        return m;
    }
    m.observations = good
        .iter()
        .flat_map(|r| r.observations.iter().copied())
        .collect();
    m.summary = yamba_stats::Summary::of(&m.observations);
    m.evidence = good
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.evidence
                .iter()
                .map(move |e| yamba_results::results::Evidence {
                    check: format!("{} (repetition {})", e.check, i + 1),
                    ..e.clone()
                })
        })
        .collect();
    m.warnings = Vec::new();
    for (i, r) in reps.iter().enumerate() {
        for w in &r.warnings {
            if !m.warnings.contains(w) {
                m.warnings.push(w.clone());
            }
        }
        if !matches!(r.status, Status::Ok | Status::Withheld) {
            m.warnings.push(format!(
                "repetition {} of {} did not measure: {}",
                i + 1,
                reps.len(),
                r.reason.as_deref().unwrap_or("no reason given")
            ));
        }
    }
    if let Some(method) = &mut m.method {
        method.elapsed_s = good
            .iter()
            .filter_map(|r| r.method.as_ref())
            .map(|x| x.elapsed_s)
            .sum();
    }
    if let Some(acct) = &mut m.accounting {
        let accts: Vec<&Accounting> = good.iter().filter_map(|r| r.accounting.as_ref()).collect();
        acct.wall_s = accts.iter().map(|a| a.wall_s).sum();
        acct.user_s = accts.iter().map(|a| a.user_s).sum();
        acct.system_s = accts.iter().map(|a| a.system_s).sum();
        acct.max_rss_kib = accts.iter().map(|a| a.max_rss_kib).max().unwrap_or(0);
        acct.bench_s = accts.iter().map(|a| a.bench_s).sum();
    }
    if let Some(method) = &mut m.method {
        method.phases = good
            .iter()
            .filter_map(|r| r.method.as_ref()?.phases)
            .reduce(Phases::plus);
    }
    // Blocks of copies: every block's placement and values, in order.
    if let Some(c) = m.copies.as_mut() {
        c.blocks = good
            .iter()
            .filter_map(|r| r.copies.as_ref())
            .flat_map(|c| c.blocks.iter().cloned())
            .collect();
    }
    let blocks: Vec<&BenchResult> = good.iter().map(|r| **r).collect();
    crate::placement::between_blocks_evidence(&mut m, &blocks);
    m.certainty = process_certainty(&good, best_adds);
    if let (Some(c), Some(p)) = (m.certainty.as_mut(), pilot) {
        c.two_stage(p);
    }
    if let Some(c) = m.certainty.clone() {
        match pooled_series(&good, &c.kept_blocks()) {
            Some(series) => m.series = Some(series),
            // A curve measured in the first process only is that
            // process's: said when the headline leaves it out.
            None if m.series.is_some() && !c.kept_blocks().contains(&0) => {
                m.warn(FIRST_PROCESS_CURVE_SHARED);
            }
            None => {}
        }
        name_outlying_processes(&mut m, c, &good);
    }
    m.status = Status::Ok;
    m.reason = None;
    m.apply_evidence();
    m
}

/// The warning on a curve measured in the first process only, when that
/// process ran on a shared core and the value leaves it out.
pub const FIRST_PROCESS_CURVE_SHARED: &str = "the curve was measured in the first process only, \
     which ran on a shared core and is left out of the value: its points describe a shared core";

/// A precise run's curve, where every process measured the whole of it:
/// at each x, the mean of the y of the processes the headline stands on
/// (`kept`, indices into `good`), as the headline is the mean of their
/// values — not the first process's curve alone, which is one process's
/// placement, core state and noise. None when a kept process has no curve
/// or measured other x than the first block (a benchmark that measures its
/// curve in the first block only, [`crate::Ctx::measures_curve`]: that
/// block's curve stays, even when the value leaves that block out — the
/// others' one-point curves are not a curve).
fn pooled_series(good: &[&&BenchResult], kept: &[usize]) -> Option<yamba_results::Series> {
    let first = good.first()?.series.as_ref()?;
    let curves: Vec<&yamba_results::Series> = kept
        .iter()
        .map(|&i| good.get(i)?.series.as_ref())
        .collect::<Option<_>>()?;
    let same_x = |c: &&yamba_results::Series| {
        c.points.len() == first.points.len()
            && c.points
                .iter()
                .zip(&first.points)
                .all(|(p, q)| p[0] == q[0])
    };
    if first.points.is_empty() || curves.is_empty() || !curves.iter().all(same_x) {
        return None;
    }
    let points = (0..first.points.len())
        .map(|j| {
            let y = curves.iter().map(|c| c.points[j][1]).sum::<f64>() / curves.len() as f64;
            [first.points[j][0], y]
        })
        .collect();
    Some(yamba_results::Series {
        points,
        ..first.clone()
    })
}

/// What pooling blocks into one interval needs of the processes' clocks:
/// the coarsest resolution among them, and each time's core clock.
pub(crate) fn blocks_clock<'a>(
    good: impl Iterator<Item = &'a BenchResult> + Clone,
) -> (f64, Vec<f64>) {
    let resolution = good
        .clone()
        .filter_map(|r| r.certainty.as_ref())
        .map(|c| c.estimate.resolution)
        .fold(0.0, f64::max);
    let core_mhz = good
        .filter(|r| r.unit == yamba_results::units::Unit::Nanoseconds)
        .filter_map(|r| r.method.as_ref()?.core_mhz)
        .collect();
    (resolution, core_mhz)
}

/// One block per process that measured: its value (its median, or the
/// mean of its placements' medians where its code ran at several), and a
/// resolution no finer than any process's; processes that ran on a shared
/// core judged against each other and the run's best (`best_adds`).
fn process_certainty(good: &[&&BenchResult], best_adds: Option<f64>) -> Option<Certainty> {
    let rotations: Vec<Rotation> = good
        .iter()
        .map(|r| r.method.as_ref().map_or(Rotation::NONE, |m| m.rotation()))
        .collect();
    let medians: Vec<f64> = good
        .iter()
        .zip(&rotations)
        .filter_map(|(r, rot)| rot.value(&r.observations))
        .collect();
    if medians.len() != good.len() {
        return None;
    }
    let sizes = good.iter().map(|r| r.observations.len()).collect();
    let (resolution, core_mhz) = blocks_clock(good.iter().map(|r| **r));
    let adds = adds_readings(good.iter().map(|r| **r));
    let mut c = Certainty::from_blocks(BlockKind::Process, medians, sizes, resolution, core_mhz)?;
    if rotations.iter().any(|r| *r != Rotation::NONE) {
        c.rotations = rotations;
    }
    c.leave_out_shared_core(adds, best_adds);
    Some(c)
}

/// Evidence (informational) that every process agreed with the others,
/// and a warning naming each that did not.
fn name_outlying_processes(m: &mut BenchResult, c: Certainty, good: &[&&BenchResult]) {
    if let Some(said) = c.shared_core_sentence() {
        m.warn(said);
    }
    if c.medians.len() < 4 {
        return;
    }
    let unit = m.unit.symbol();
    let others = |i: usize| {
        let v: Vec<f64> = (0..c.medians.len())
            .filter(|&j| j != i)
            .map(|j| c.medians[j])
            .collect();
        let (lo, hi) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        format!("{} to {} {unit}", fmt(lo), fmt(hi))
    };
    let named: Vec<String> = c
        .estimate
        .outliers
        .iter()
        .map(|&i| {
            let busy = good[i]
                .accounting
                .as_ref()
                .and_then(|a| a.others_busy_pct)
                .map(|b| format!(", machine {b:.0}% busy"))
                .unwrap_or_default();
            format!(
                "process {} of {}: {} {unit} against {} in the others{busy}",
                i + 1,
                c.medians.len(),
                fmt(c.medians[i]),
                others(i)
            )
        })
        .collect();
    m.add_note_evidence(
        format!(
            "every process's median agrees with the others' (within {} robust σ)",
            yamba_stats::OUTLIER_SIGMAS
        ),
        format!("{} of {} processes", c.medians.len(), c.medians.len()),
        if named.is_empty() {
            format!("{} of {}", c.medians.len(), c.medians.len())
        } else {
            named.join("; ")
        },
        named.is_empty(),
    );
    if !named.is_empty() {
        m.warn(format!(
            "{} disagreed with the others: {}",
            if named.len() == 1 {
                "a process"
            } else {
                "processes"
            },
            named.join("; ")
        ));
    }
}

fn fmt(v: f64) -> String {
    yamba_results::units::format_sig(v)
}

/// Runs every benchmark in every requested mode; stops early on Ctrl-C
/// (see [`crate::interrupt`]). Returns all results, failures included.
pub fn run_benchmarks(
    session: &Session,
    benches: &[&'static Benchmark],
    observer: &mut dyn Observer,
) -> Vec<BenchResult> {
    run_blocks(session, benches, observer).0
}

/// How a run's blocks went: seconds and counts of the pilot's and of the
/// extra blocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct BlockTimes {
    pub pilot_s: f64,
    pub extra_s: f64,
    pub blocks: usize,
    pub extra_blocks: usize,
    /// The run adapts its block count, and its pilot's cores were so
    /// rarely alone ([`alone_is_rare`]) that the second stage did not
    /// replace shared processes.
    pub shared_not_replaced: bool,
}

/// [`run_benchmarks`], saying how long the pilot and the extra blocks took.
pub fn run_blocks(
    session: &Session,
    benches: &[&'static Benchmark],
    observer: &mut dyn Observer,
) -> (Vec<BenchResult>, BlockTimes) {
    let scratch_root = ScratchRoot::create(session.config.scratch_dir.as_deref());
    let pilot = plan_runs(session, benches);
    let mut total = pilot.len();
    let mut done = 0;
    let mut all = Vec::new();
    // Seconds each (benchmark, mode) pilot block took, summed, and how many.
    let mut cost: HashMap<(&'static str, Mode), (f64, usize)> = HashMap::new();
    let mut said: HashSet<(&'static str, Mode)> = HashSet::new();
    // Blocks of each (benchmark, mode) begun so far: the next one's index.
    let mut begun: HashMap<(&'static str, Mode), usize> = HashMap::new();
    let mut run = |bench: &'static Benchmark,
                   mode: Mode,
                   total: usize,
                   all: &mut Vec<BenchResult>| {
        observer.started(done, total, bench, mode);
        let t0 = Instant::now();
        let index = begun.entry((bench.id, mode)).or_default();
        let session = &session.at_block(*index);
        *index += 1;
        let mut results = match &scratch_root {
            Ok(root) => run_one(session, bench, mode, &root.path),
            Err(e) => vec![failed(session, bench, mode, e.to_string())],
        };
        // With --copies N, each block is followed by its N-copy block,
        // so drift between the two hits both alike.
        if let (true, Ok(root)) = (session.config.copies > 1, &scratch_root) {
            let copies = crate::copies::run_copies(session, bench, mode, &root.path);
            // A benchmark that cannot run as copies says so once.
            if copies.iter().all(|r| r.status != Status::Skipped) || said.insert((bench.id, mode)) {
                results.extend(copies);
            }
        }
        observer.finished(&results);
        all.extend(results);
        done += 1;
        t0.elapsed().as_secs_f64()
    };
    let started = Instant::now();
    let mut times = BlockTimes {
        blocks: total,
        ..BlockTimes::default()
    };
    for (bench, mode) in pilot {
        if crate::interrupt::interrupted() {
            break;
        }
        let took = run(bench, mode, total, &mut all);
        let c = cost.entry((bench.id, mode)).or_default();
        c.0 += took;
        c.1 += 1;
    }
    times.pilot_s = started.elapsed().as_secs_f64();
    // The two-stage rule's second stage: more blocks, round by round,
    // where the pilot's spread asks for them — while they cost at most
    // the configured share of what the pilot did, or a fixed second
    // (`EXTRA_FLOOR_S`) when a short pilot's share buys no block. Each
    // round serves the cheapest blocks first and passes over one whose
    // pilot blocks took longer than what is left, so that one slow
    // benchmark (a file read at the device's pace) cannot spend the
    // allowance of twenty fast ones; a benchmark passed over is not
    // asked again. Ahead of them all, each round serves the results a
    // gate could not decide ([`short_of_alone`]).
    // Replacing shared processes only where a core alone is not rare.
    let replace = !alone_is_rare(&adds_readings(&all));
    times.shared_not_replaced = !replace
        && benches
            .iter()
            .any(|b| session.config.max_blocks_for(b) > session.config.blocks_for(b));
    let allowance = extra_allowance(started.elapsed().as_secs_f64(), session.config.extra_share)
        + if replace {
            shared_pilot_seconds(session, benches, &all, &cost)
        } else {
            0.0
        };
    let extra = Instant::now();
    let mut passed_over: HashSet<(&'static str, Mode)> = HashSet::new();
    'rounds: while !crate::interrupt::interrupted() {
        let best_adds = run_best_adds(&all);
        let mut wanted: Vec<(bool, f64, &'static Benchmark, Mode)> =
            more_blocks(session, benches, &all, replace)
                .into_iter()
                .filter(|(b, m)| !passed_over.contains(&(b.id, *m)))
                .map(|(b, m)| {
                    let (sum, n) = cost.get(&(b.id, m)).copied().unwrap_or_default();
                    let first = replace && short_of_alone(&all, b.id, m, best_adds);
                    (first, sum / n.max(1) as f64, b, m)
                })
                .collect();
        if wanted.is_empty() {
            break;
        }
        wanted.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.total_cmp(&b.1)));
        total += wanted.len();
        for (_, expected, bench, mode) in wanted {
            if crate::interrupt::interrupted() {
                break 'rounds;
            }
            let left = allowance - extra.elapsed().as_secs_f64();
            if left <= 0.0 {
                break 'rounds;
            }
            if expected > left {
                passed_over.insert((bench.id, mode));
                total -= 1;
                continue;
            }
            run(bench, mode, total, &mut all);
            times.extra_blocks += 1;
        }
    }
    times.extra_s = extra.elapsed().as_secs_f64();
    times.blocks += times.extra_blocks;
    (all, times)
}

/// Seconds the second stage may spend after a pilot of `pilot_s`: its
/// `share`, and never less than [`crate::bench::EXTRA_FLOOR_S`] (none when
/// the share is zero: no extra blocks asked).
fn extra_allowance(pilot_s: f64, share: f64) -> f64 {
    let share = share.clamp(0.0, 1e6);
    if share == 0.0 {
        return 0.0;
    }
    (pilot_s * share).max(crate::bench::EXTRA_FLOOR_S)
}

/// The (benchmark, mode) pairs the two-stage rule wants one more block of,
/// the neediest first: for each result, the pilot's spread (its first
/// blocks' values) says how many blocks make its 95% interval as narrow as
/// the target precision (or half the resolution), and — when `replace` —
/// one more for each process that ran on a shared core ([`replacing_shared`]);
/// a benchmark has fewer than the most any of its results wants, up to
/// its maximum.
pub fn more_blocks(
    session: &Session,
    benches: &[&'static Benchmark],
    results: &[BenchResult],
    replace: bool,
) -> Vec<(&'static Benchmark, Mode)> {
    let target = session.config.plan().target_precision;
    let best_adds = run_best_adds(results);
    let mut wants: Vec<(usize, &'static Benchmark, Mode)> = Vec::new();
    for &b in benches {
        let (pilot, max) = (
            session.config.blocks_for(b),
            session.config.max_blocks_for(b),
        );
        if max <= pilot {
            continue;
        }
        for &mode in &session.config.modes {
            let by_key = blocks_by_key(results, b.id, mode);
            let have = by_key.values().map(Vec::len).max().unwrap_or(0);
            let want = by_key
                .values()
                .filter_map(|blocks| blocks_wanted(blocks, pilot, target))
                .chain(
                    by_key
                        .values()
                        .filter(|_| replace)
                        .map(|blocks| replacing_shared(blocks, pilot, best_adds)),
                )
                .max()
                .unwrap_or(0)
                .min(max);
            if want > have {
                wants.push((want - have, b, mode));
            }
        }
    }
    wants.sort_by_key(|w| std::cmp::Reverse(w.0));
    wants.into_iter().map(|(_, b, m)| (b, m)).collect()
}

/// Whether a result of benchmark `id` in `mode` would, as its blocks
/// stand, describe a shared core with fewer than
/// [`yamba_results::results::MIN_BLOCKS_A_SIDE`] processes alone: half or
/// more of them ran on a shared core ([`shared_core_blocks`], against the
/// run's best reading `best_adds`). Against a run whose processes ran
/// alone, `compare`'s gate cannot compare it like with like and is left
/// undecided — in 10 identical pairs of precise runs on an Intel Xeon
/// guest, every undecided pair came from 1–4 such lines of ~205, still
/// wanting replacements when the second stage's allowance, spent on
/// cheaper blocks first, ran out (docs/certainty.md). Judged from adds
/// per cycle, never from values, like the replacements themselves.
fn short_of_alone(results: &[BenchResult], id: &str, mode: Mode, best_adds: Option<f64>) -> bool {
    blocks_by_key(results, id, mode).values().any(|blocks| {
        let adds = adds_readings(blocks.iter().copied());
        if adds.is_empty() || adds.len() != blocks.len() {
            return false;
        }
        let shared = shared_core_blocks(&adds, best_adds).len();
        yamba_results::results::shared_core_prevails(shared, adds.len())
            && adds.len() - shared < yamba_results::results::MIN_BLOCKS_A_SIDE
    })
}

/// The blocks of each result of benchmark `id` in `mode`, in the order
/// they ran (the pilot's first).
fn blocks_by_key<'a>(
    results: &'a [BenchResult],
    id: &str,
    mode: Mode,
) -> std::collections::BTreeMap<String, Vec<&'a BenchResult>> {
    let mut by_key: std::collections::BTreeMap<String, Vec<&BenchResult>> = Default::default();
    for r in results
        .iter()
        .filter(|r| r.benchmark == id && r.mode == mode)
    {
        by_key.entry(r.key()).or_default().push(r);
    }
    by_key
}

/// Seconds the pilot spent on processes that ran on a shared core: for
/// each benchmark that may get more blocks, its result with the most such
/// pilot blocks, at the benchmark's mean block time. The second stage may
/// spend this again, beyond its share of the pilot, to replace them ([`replacing_shared`]):
/// with the share alone, on an AMD EPYC (Zen 3) guest whose host kept the
/// sibling hardware thread busy about half the time, five of a run's
/// seven benchmarks kept one or two shared processes of their three, and
/// `signal.sigaction` read 249 ns alone and 284–342 shared. Counted from
/// the blocks' adds per cycle, never their values, so the interval's
/// coverage is kept; a run never takes more than its pilot's time again
/// for it.
fn shared_pilot_seconds(
    session: &Session,
    benches: &[&'static Benchmark],
    results: &[BenchResult],
    cost: &HashMap<(&'static str, Mode), (f64, usize)>,
) -> f64 {
    let mut total = 0.0;
    let best_adds = run_best_adds(results);
    for &b in benches {
        let pilot = session.config.blocks_for(b);
        if session.config.max_blocks_for(b) <= pilot {
            continue;
        }
        for &mode in &session.config.modes {
            let shared = shared_in_pilot(&blocks_by_key(results, b.id, mode), pilot, best_adds);
            let (sum, n) = cost.get(&(b.id, mode)).copied().unwrap_or_default();
            total += shared as f64 * sum / n.max(1) as f64;
        }
    }
    total
}

/// The most pilot blocks (the first `pilot`) of any one result that ran on
/// a shared core.
fn shared_in_pilot(
    by_key: &std::collections::BTreeMap<String, Vec<&BenchResult>>,
    pilot: usize,
    best_adds: Option<f64>,
) -> usize {
    by_key
        .values()
        .map(|blocks| {
            replacing_shared(&blocks[..blocks.len().min(pilot)], pilot, best_adds)
                .saturating_sub(pilot)
        })
        .max()
        .unwrap_or(0)
}

/// Blocks one result wants so that `pilot` of them ran on a core of their
/// own: one more for each block that ran on a shared core (another
/// hardware thread of the host was using it, [`shared_core_blocks`]),
/// judged against each other and against the run's best reading so far,
/// `best_adds`, so that a result whose every pilot block shared is
/// replaced too. A shared-core block the core moved is left out of the
/// value while fewer than half are such or the pilot's count ran alone;
/// otherwise the value describes a shared core (on the AMD EPYC guest,
/// `ipc.ctxsw.pipe`'s blocks read 1856 and 2038 ns alone, 2517 and 2950
/// shared: the run said 2341 ± 1261). The count looks at the blocks' adds
/// per cycle, never at their values, so the two-stage interval's coverage
/// is kept; the extra blocks' time allowance bounds it.
fn replacing_shared(blocks: &[&BenchResult], pilot: usize, best_adds: Option<f64>) -> usize {
    let adds = adds_readings(blocks.iter().copied());
    if adds.len() != blocks.len() {
        return 0;
    }
    pilot + shared_core_blocks(&adds, best_adds).len()
}

/// How many blocks one result's pilot asks for; None when its pilot did
/// not measure in every block.
fn blocks_wanted(blocks: &[&BenchResult], pilot: usize, target: f64) -> Option<usize> {
    let values: Vec<f64> = blocks
        .iter()
        .take(pilot)
        .filter(|r| matches!(r.status, Status::Ok | Status::Withheld))
        .filter_map(|r| {
            let rot = r.method.as_ref().map_or(Rotation::NONE, |m| m.rotation());
            rot.value(&r.observations)
        })
        .collect();
    if values.len() < pilot.max(2) {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let resolution = blocks
        .iter()
        .filter_map(|r| r.certainty.as_ref().map(|c| c.estimate.resolution))
        .fold(0.0, f64::max);
    let h = (target * mean.abs()).max(resolution / 2.0);
    Some(yamba_stats::two_stage_blocks(&values, h, 0.95))
}

/// Runs one benchmark in one mode, isolated unless the config says not.
pub fn run_one(
    session: &Session,
    bench: &'static Benchmark,
    mode: Mode,
    scratch_root: &Path,
) -> Vec<BenchResult> {
    if !bench.supports(mode) {
        let mut r = failed(session, bench, mode, String::new());
        r.status = Status::Skipped;
        r.reason = Some(match bench.no_cold() {
            Some(why) if mode == Mode::Cold => format!("has no cold mode: {why}"),
            _ => format!("has no {} mode", mode.as_str()),
        });
        return vec![r];
    }
    if let Err(why) = bench.runnable(&session.machine, &session.config) {
        let mut r = failed(session, bench, mode, String::new());
        r.status = Status::Skipped;
        r.reason = Some(why);
        return vec![r];
    }
    let scratch = scratch_root.join(format!("{}-{}", bench.id, mode.as_str()));
    if let Err(e) = std::fs::create_dir_all(&scratch) {
        return vec![failed(
            session,
            bench,
            mode,
            format!("cannot create scratch directory {}: {e}", scratch.display()),
        )];
    }
    let timeout = Duration::from_secs(session.config.timeout_s.unwrap_or(bench.timeout_s));
    let before = CpuTimes::read().ok();
    let work = || run_here(session, bench, mode, &scratch);
    let (outcome, usage) = if let (true, Some(exe)) = (session.config.isolate, &session.bench_exe) {
        run_bench_in_exec(session, exe, bench, mode, &scratch, timeout)
    } else if session.config.isolate {
        run_in_child(timeout, work)
    } else {
        let t0 = Instant::now();
        let r = work();
        let usage = ChildUsage {
            wall: t0.elapsed(),
            ..ChildUsage::default()
        };
        (ChildOutcome::Finished(r), usage)
    };
    let after = CpuTimes::read().ok();
    let _ = std::fs::remove_dir_all(&scratch);
    let mut results = match outcome {
        ChildOutcome::Finished(r) if r.is_empty() => {
            vec![failed(session, bench, mode, "produced no result".into())]
        }
        ChildOutcome::Finished(r) => r,
        ChildOutcome::Failed(why) => vec![failed(session, bench, mode, why)],
    };
    let accounting = account(session, &usage, before, after);
    for r in &mut results {
        if let Some(busy) = accounting.others_busy_pct {
            if busy > BUSY_WARNING_PCT && r.status == Status::Ok {
                r.warnings.push(format!(
                    "machine busy: {busy:.0}% of CPU time went to other processes during this benchmark"
                ));
            }
        }
        // Counters and its own time were read inside the benchmark's
        // process; keep them.
        let inside = r.accounting.take().unwrap_or_default();
        r.accounting = Some(Accounting {
            counters: inside.counters,
            bench_s: inside.bench_s,
            ..accounting.clone()
        });
    }
    results
}

/// Runs the benchmark in this process: pins, raises priority if asked,
/// catches the benchmark's own error as a failed result. What an isolated
/// child process does.
pub fn run_here(
    session: &Session,
    bench: &'static Benchmark,
    mode: Mode,
    scratch: &Path,
) -> Vec<BenchResult> {
    let mut warnings = Vec::new();
    if let Some(cpu) = session.cpu {
        if let Err(e) = crate::affinity::pin_current_thread(cpu) {
            warnings.push(format!("not pinned: {e}"));
        }
    }
    if session.config.realtime {
        if let Err(e) = crate::affinity::set_realtime() {
            warnings.push(format!("not real-time: {e} (needs root or CAP_SYS_NICE)"));
        }
    }
    let counters = crate::counters::Counters::start().ok();
    let t0 = Instant::now();
    let mut ctx = session.context(bench, mode, scratch);
    // A benchmark's scratch folder sits in the run's (`run_one`,
    // `copies::run_copies`), whose facts outlive the block.
    if let Some(run) = scratch.parent().filter(|p| !p.as_os_str().is_empty()) {
        ctx.share_with_run(crate::memo::Memo::in_run(run));
    }
    let outcome = (bench.run)(&mut ctx);
    let bench_s = t0.elapsed().as_secs_f64();
    let counts = counters.map(|c| c.read());
    let mut results = ctx.into_results();
    if let Err(why) = outcome {
        results.push(failed(session, bench, mode, why));
    }
    for r in &mut results {
        r.warnings.extend(warnings.iter().cloned());
        r.accounting = Some(Accounting {
            counters: counts,
            bench_s: Some(bench_s),
            ..Accounting::default()
        });
    }
    results
}

fn account(
    session: &Session,
    usage: &ChildUsage,
    before: Option<CpuTimes>,
    after: Option<CpuTimes>,
) -> Accounting {
    let wall = usage.wall.as_secs_f64();
    let cpu_states = match (before, after) {
        (Some(b), Some(a)) => Some(b.states_until(&a)),
        _ => None,
    };
    let ours = usage.user_s + usage.system_s;
    // /proc/stat counts in USER_HZ ticks: over a short benchmark the
    // estimate is mostly rounding, so judge only windows of ≥ 0.5 s per CPU.
    let long_enough = |s: &crate::cpustates::CpuStates| {
        s.ticks as f64 >= 0.5 * crate::cpustates::user_hz() * session.machine.online_cpus as f64
    };
    let others_busy_pct = cpu_states
        .filter(|s| session.config.isolate && wall > 0.0 && long_enough(s))
        .map(|s| {
            let ours_pct = 100.0 * ours / (wall * session.machine.online_cpus as f64);
            (s.busy() - ours_pct).max(0.0)
        });
    Accounting {
        wall_s: wall,
        user_s: usage.user_s,
        system_s: usage.system_s,
        max_rss_kib: usage.max_rss_kib,
        voluntary_switches: usage.voluntary_switches,
        involuntary_switches: usage.involuntary_switches,
        cpu_states,
        others_busy_pct,
        pinned_cpu: session.cpu,
        counters: None,
        bench_s: None,
    }
}

/// A failed result standing for the whole benchmark.
pub fn failed(
    session: &Session,
    bench: &'static Benchmark,
    mode: Mode,
    why: String,
) -> BenchResult {
    let ctx = session.context(bench, mode, Path::new(""));
    let mut r = ctx.result(None);
    r.status = Status::Failed;
    r.reason = Some(why);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BenchResult, Unit};

    fn rep(obs: &[f64], status: Status) -> BenchResult {
        let mut r = BenchResult::new("a.b", "a.b", "a", Unit::Nanoseconds, Mode::Hot, "t");
        r.set_observations(obs.to_vec());
        r.status = status;
        if status != Status::Ok {
            r.reason = Some("crashed".into());
        }
        r.add_evidence("held", "yes", "yes", true);
        r
    }

    /// One process's result `id` with median `median`, whose core read
    /// `adds` independent adds per cycle.
    fn measured(id: &str, median: f64, adds: Option<f64>) -> BenchResult {
        let mut r = rep(&[median], Status::Ok);
        r.id = id.into();
        let mut m = yamba_results::Method::direct(1, 0.01, 1.0, 1.0, "budget");
        m.core_adds_per_cycle = adds;
        r.method = Some(m);
        r
    }

    /// A precise run's curve, where every process measured it, is the
    /// mean at each x of the curves of the processes its headline stands
    /// on: a process a shared core moved is left out of both. Where a
    /// process measured other points (a curve measured in the first block
    /// only), the first block's curve stays — whole, and with a warning
    /// when the value leaves that block out (the others' one-point curves
    /// once made it a single point).
    #[test]
    fn a_precise_run_s_curve_is_its_processes_mean() {
        let curve = |median: f64, adds: f64, points: &[[f64; 2]]| {
            let mut r = measured("a.sweep", median, Some(adds));
            r.series = Some(yamba_results::Series {
                x_label: "processes".into(),
                x_unit: "".into(),
                y_label: "switch".into(),
                y_unit: "ns".into(),
                log_x: false,
                log_y: false,
                points: points.to_vec(),
            });
            r
        };
        // Three processes alone, and one shared whose values are 50% high.
        let raw = [
            curve(1700.0, 4.4, &[[2.0, 1700.0], [8.0, 2000.0], [16.0, 2100.0]]),
            curve(1160.0, 4.4, &[[2.0, 1160.0], [8.0, 1900.0], [16.0, 2000.0]]),
            curve(1150.0, 4.4, &[[2.0, 1150.0], [8.0, 2100.0], [16.0, 2300.0]]),
            curve(2600.0, 2.9, &[[2.0, 2600.0], [8.0, 3000.0], [16.0, 3100.0]]),
        ];
        let pooled = merge_blocks(&raw, Some(3));
        let r = &pooled[0];
        let c = r.certainty.as_ref().unwrap();
        assert_eq!(c.kept_blocks(), vec![0, 1, 2]);
        let points = &r.series.as_ref().unwrap().points;
        assert_eq!(
            points,
            &vec![[2.0, 4010.0 / 3.0], [8.0, 2000.0], [16.0, 6400.0 / 3.0]]
        );
        // The curve's point at the headline's x is the headline.
        assert!((points[0][1] - c.estimate.estimate).abs() < 1e-9);
        // Every process alone: all kept.
        let pooled = merge_blocks(&raw[..3], None);
        assert_eq!(
            pooled[0].certainty.as_ref().unwrap().kept_blocks(),
            vec![0, 1, 2]
        );
        // The curve measured in the first block only, the others its
        // headline point; or a process without a curve: the first block's
        // curve stays.
        let mut first_only = raw[..3].to_vec();
        first_only[1].series.as_mut().unwrap().points.truncate(1);
        let kept_first = &merge_blocks(&first_only, None)[0];
        assert_eq!(kept_first.series, raw[0].series);
        assert!(!kept_first
            .warnings
            .iter()
            .any(|w| w == FIRST_PROCESS_CURVE_SHARED));
        // ... and when that first process is the shared one the value
        // leaves out, its curve stays but says so.
        let mut shared_first = vec![raw[3].clone()];
        for r in &raw[..3] {
            let mut r = r.clone();
            r.series.as_mut().unwrap().points.truncate(1);
            shared_first.push(r);
        }
        let left_out = &merge_blocks(&shared_first, Some(3))[0];
        assert_eq!(
            left_out.certainty.as_ref().unwrap().kept_blocks(),
            vec![1, 2, 3]
        );
        assert_eq!(left_out.series, raw[3].series);
        assert!(left_out
            .warnings
            .iter()
            .any(|w| w == FIRST_PROCESS_CURVE_SHARED));
        let mut bare = raw[..3].to_vec();
        bare[1].series = None;
        assert_eq!(merge_blocks(&bare, None)[0].series, raw[0].series);
    }

    #[test]
    fn repetitions_pool_and_name_the_one_that_failed() {
        let other = BenchResult::new("a.c", "a.c", "a", Unit::Nanoseconds, Mode::Hot, "t");
        let merged = merge_repetitions(&[
            rep(&[1.0, 2.0], Status::Ok),
            other.clone(),
            rep(&[3.0], Status::Failed),
            rep(&[4.0, 5.0], Status::Ok),
        ]);
        assert_eq!(merged.len(), 2);
        let m = &merged[0];
        assert_eq!(m.id, "a.b");
        assert_eq!(m.status, Status::Ok);
        assert_eq!(m.observations, vec![1.0, 2.0, 4.0, 5.0]);
        assert_eq!(m.summary.as_ref().unwrap().median, 3.0);
        assert_eq!(m.extra["repetitions"].as_array().unwrap().len(), 3);
        assert_eq!(m.evidence.len(), 2);
        assert!(m
            .warnings
            .iter()
            .any(|w| w.contains("repetition 2 of 3") && w.contains("crashed")));
        assert_eq!(merged[1], other);

        let all_failed = merge_repetitions(&[rep(&[], Status::Failed), rep(&[], Status::Failed)]);
        assert_eq!(all_failed[0].status, Status::Failed);
    }

    /// A block that ran on a shared core asks for one more, so that the
    /// pilot's count ran alone; the count follows the adds per cycle, not
    /// the values; blocks without the reading ask for nothing.
    #[test]
    fn a_shared_core_block_is_replaced() {
        // Blocks as (median, adds per cycle), and the count they want of
        // a pilot of 3.
        let wanted = |blocks: &[(f64, Option<f64>)]| {
            let rs: Vec<BenchResult> = blocks
                .iter()
                .map(|&(median, adds)| measured("a.b", median, adds))
                .collect();
            replacing_shared(&rs.iter().collect::<Vec<_>>(), 3, None)
        };
        let alone = [
            (1856.0, Some(3.74)),
            (2038.0, Some(3.73)),
            (1850.0, Some(3.70)),
        ];
        assert_eq!(wanted(&alone), 3);
        // ipc.ctxsw.pipe on the AMD EPYC guest: two of four shared.
        let ctxsw = [
            (2038.0, Some(3.73)),
            (2950.0, Some(2.42)),
            (1856.0, Some(3.74)),
            (2517.0, Some(2.21)),
        ];
        assert_eq!(wanted(&ctxsw), 5);
        // The same values with the shared readings moved: the count
        // moves with the readings, not with the values.
        let moved = [
            (2038.0, Some(2.42)),
            (2950.0, Some(3.73)),
            (1856.0, Some(3.74)),
            (2517.0, Some(3.70)),
        ];
        assert_eq!(wanted(&moved), 4);
        assert_eq!(wanted(&[(1856.0, None), (2950.0, Some(2.42))]), 0);
        // Every pilot block shared (net.tcp.rtt on the Zen 3 guest): they
        // agree with each other, and only the run's best tells them.
        let tcp = [2.38, 2.52, 2.64].map(|a| measured("a.tcp", 22.3, Some(a)));
        let tcp: Vec<&BenchResult> = tcp.iter().collect();
        assert_eq!(replacing_shared(&tcp, 3, None), 3);
        assert_eq!(replacing_shared(&tcp, 3, Some(3.75)), 6);
    }

    /// Replacing shared processes stops where a core alone is rare: a run
    /// with 4 of 100 readings at the core's best (4.82 adds per cycle,
    /// confirmed by each other) and the rest at 3.5–4.2 replaces none, a
    /// single reading far above the rest (6.6, confirmed by none) does not
    /// make the rest shared, a run alone half the time does replace, and
    /// too few readings do not judge. The note says which.
    #[test]
    fn shared_processes_are_not_replaced_where_a_core_alone_is_rare() {
        let run = |adds: &[f64]| -> Vec<BenchResult> {
            adds.iter()
                .map(|&a| measured("a.b", 100.0, Some(a)))
                .collect()
        };
        let mut zen5: Vec<f64> = (0..95).map(|i| 3.5 + (i % 8) as f64 * 0.1).collect();
        zen5.extend([4.82, 4.83, 4.82, 4.81, 6.6]);
        assert!(alone_is_rare(&zen5));
        assert!(shared_core_note(&run(&zen5), true)
            .unwrap()
            .contains("this run did not replace them"));
        // The note tells what the run decided from its pilot, not what
        // the whole run's readings would say.
        assert!(!shared_core_note(&run(&zen5), false)
            .unwrap()
            .contains("replace"));
        // Nine alone in a hundred is still rare; ten is not.
        let mut nine = vec![4.0; 91];
        nine.extend([6.6; 9]);
        assert!(alone_is_rare(&nine));
        let mut half = vec![4.0; 50];
        half.extend([6.6; 50]);
        assert!(!alone_is_rare(&half));
        let mut ten = vec![4.0; 90];
        ten.extend([6.6; 10]);
        assert!(!alone_is_rare(&ten));
        assert!(!shared_core_note(&run(&half), false)
            .unwrap()
            .contains("replace"));
        // Too few readings to say how often a core is alone.
        let mut few = vec![4.0; 27];
        few.extend([6.6, 6.6]);
        assert!(!alone_is_rare(&few));
        // A single high reading confirms nothing: against 6.6 the 4.0s
        // would all be shared; against the confirmed 4.0, none is.
        let mut lone = vec![4.0; 99];
        lone.push(6.6);
        assert!(!alone_is_rare(&lone));
        assert_eq!(shared_core_note(&run(&lone), false), None);
    }

    /// A result measured in one process (a quick run) is warned of when
    /// that process ran on a shared core against the run's best reading;
    /// pooled processes are judged against it too.
    #[test]
    fn the_run_s_best_reading_tells_a_shared_core() {
        let at = |id: &str, median: f64, adds: f64| measured(id, median, Some(adds));
        let raw = [
            at("a.getppid", 175.0, 3.75),
            at("a.tcp", 22300.0, 2.45),
            at("a.read", 230.0, 3.62),
        ];
        let quick = merge_blocks(&raw, None);
        let warned: Vec<&str> = quick
            .iter()
            .filter(|r| r.warnings.iter().any(|w| w.contains("shared core")))
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(warned, ["a.tcp"]);
        let note = shared_core_note(&raw, false).unwrap();
        assert!(
            note.starts_with("shared core: 1 of 3 measurements ran while another hardware thread used the core (below 90% of the run's best 3.75"),
            "{note}"
        );
        assert_eq!(shared_core_note(&raw[..1], false), None);
        assert_eq!(shared_core_note(&[rep(&[1.0], Status::Ok)], false), None);
        assert!(quick[1].warnings[0]
            .contains("ran on a shared core (2.5 adds per cycle against 3.8, the run's best"));
        // Precise: a.tcp's three processes all shared, the run's other
        // result alone.
        let mut precise = vec![at("a.getppid", 175.0, 3.75); 3];
        precise.extend([2.38, 2.52, 2.64].map(|a| at("a.tcp", 22300.0, a)));
        let pooled = merge_blocks(&precise, Some(3));
        let c = pooled[1].certainty.as_ref().unwrap();
        assert_eq!(c.shared_core, vec![0, 1, 2]);
        assert_eq!(c.core_adds_reference, Some(3.75));
        assert!(pooled[1]
            .warnings
            .iter()
            .any(|w| w.contains("describes a shared core")));
        assert!(pooled[0].certainty.as_ref().unwrap().shared_core.is_empty());
    }

    /// The replacements' time allowance counts the pilot's shared blocks
    /// only (not replacements that shared too), per result, the most of
    /// any result of the benchmark.
    #[test]
    fn the_pilot_s_shared_blocks_set_the_replacements_allowance() {
        let result = |key: &str, adds: &[f64]| -> Vec<BenchResult> {
            adds.iter().map(|&a| measured(key, 1.0, Some(a))).collect()
        };
        let mut all = result("a.b", &[3.7, 2.4, 3.7, 2.3, 2.2]);
        all.extend(result("a.b.libc", &[2.4, 2.4, 3.7]));
        let keyed = blocks_by_key(&all, "a.b", Mode::Hot);
        assert_eq!(keyed.len(), 2);
        // a.b: 1 of its first 3 shared (the 4th and 5th were replacements);
        // a.b.libc: 2 of 3 against the run's best — none against its own,
        // where the one 3.7 is confirmed by no other reading.
        assert_eq!(shared_in_pilot(&keyed, 3, Some(3.7)), 2);
        assert_eq!(shared_in_pilot(&keyed, 3, None), 1);
        let alone = result("a.b", &[3.7, 3.7, 3.6]);
        assert_eq!(
            shared_in_pilot(&blocks_by_key(&alone, "a.b", Mode::Hot), 3, None),
            0
        );
        assert_eq!(
            shared_in_pilot(&blocks_by_key(&alone, "x.y", Mode::Hot), 3, None),
            0
        );
        // A result whose three pilot blocks all shared counts three
        // against the run's best, none against its own.
        let all_shared = result("a.b", &[2.4, 2.5, 2.4]);
        let keyed = blocks_by_key(&all_shared, "a.b", Mode::Hot);
        assert_eq!(shared_in_pilot(&keyed, 3, None), 0);
        assert_eq!(shared_in_pilot(&keyed, 3, Some(3.75)), 3);
    }

    /// The second stage serves first a result that would describe a
    /// shared core with fewer than two processes alone: judged per
    /// result, against the run's best reading, and not once two ran
    /// alone or fewer than half shared.
    #[test]
    fn results_a_gate_could_not_decide_are_found() {
        let result = |key: &str, adds: &[f64]| -> Vec<BenchResult> {
            adds.iter().map(|&a| measured(key, 1.0, Some(a))).collect()
        };
        let short = |all: &[BenchResult]| short_of_alone(all, "a.b", Mode::Hot, Some(3.7));
        // Two of three shared, one alone.
        assert!(short(&result("a.b", &[2.4, 3.7, 2.3])));
        // Every one shared.
        assert!(short(&result("a.b", &[2.4, 2.4, 2.3])));
        // Two alone: a gate can compare them like with like.
        assert!(!short(&result("a.b", &[2.4, 3.7, 2.3, 3.6])));
        // One shared of three is not half: the value is the core's alone.
        assert!(!short(&result("a.b", &[2.4, 3.7, 3.6])));
        // Any result of the benchmark: a.b.libc's blocks shared.
        let mut all = result("a.b", &[3.7, 3.7, 3.6]);
        all.extend(result("a.b.libc", &[2.4, 2.4, 3.7]));
        assert!(short(&all));
        // Another benchmark's results do not count, nor a benchmark with
        // no adds readings.
        assert!(!short_of_alone(&all, "x.y", Mode::Hot, Some(3.7)));
        let unread = vec![measured("a.b", 1.0, None); 3];
        assert!(!short(&unread));
    }

    #[test]
    fn a_short_pilot_still_allows_extra_blocks() {
        use crate::bench::{EXTRA_FLOOR_S, EXTRA_SHARE};
        // One benchmark's pilot (~0.5 s): its share would buy no block.
        assert_eq!(extra_allowance(0.5, EXTRA_SHARE), EXTRA_FLOOR_S);
        // A whole suite's (~90 s): the share, above the floor.
        assert!((extra_allowance(90.0, EXTRA_SHARE) - 9.0).abs() < 1e-9);
        // No share, no extra blocks; a share beyond any run is bounded.
        assert_eq!(extra_allowance(90.0, 0.0), 0.0);
        assert_eq!(extra_allowance(2.0, f64::INFINITY), 2e6);
    }
}
