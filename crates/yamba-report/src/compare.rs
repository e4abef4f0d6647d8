//! Comparing two runs, as benchstat does: one sample is one *process* (a
//! block of the run: see docs/certainty.md), never one observation.
//! Observations inside a process share its layout, its CPU placement and
//! the host's moment, so counting them as independent finds "significant"
//! differences between two runs of the same thing. For each result present
//! in both runs: the medians of its processes on each side, the change
//! (Hodges-Lehmann, on the process medians) with its interval, the exact
//! Mann-Whitney p-value on the process medians, and a verdict.
//!
//! A difference is called only when the p-value is below 1 − confidence
//! *and* the interval for the change excludes zero, so the verdict never
//! contradicts the interval printed beside it. With fewer processes a side
//! than the test needs to reach that confidence (4 at 95%, 5 at 99%), it
//! says so and calls nothing. Results in only one run, and results that
//! were not measured cleanly, are listed rather than dropped: a comparison
//! that silently loses a benchmark hides the regression. A result whose
//! stored statistics are not those of its observations (an edited or
//! damaged file: [`yamba_results::consistency`]) is not compared, and a
//! warning says what disagrees.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use yamba_results::{BenchResult, BlockKind, ResultsFile, Status};

/// What the comparison of one result concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly better in B (less time, or more bandwidth).
    Faster,
    /// Significantly worse in B.
    Slower,
    /// No significant difference at the stated confidence.
    Same,
    /// Not compared: in one run only, or not measured cleanly in both.
    NotCompared,
    /// Measured in both, but with too few processes a side for the test.
    TooFew,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "~",
            Verdict::NotCompared => "-",
            Verdict::TooFew => "?",
        }
    }
}

/// One row of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `id@mode`.
    pub key: String,
    pub unit: String,
    /// Status in A and B; `None` when the result is missing from that run.
    pub status_a: Option<String>,
    pub status_b: Option<String>,
    /// Observations in A and B.
    pub n_a: usize,
    pub n_b: usize,
    /// Samples the test used in A and B: one per process (block).
    pub blocks_a: usize,
    pub blocks_b: usize,
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    /// Change of B relative to A, in percent (Hodges-Lehmann estimate on
    /// the process medians; the ratio of the headline values when there
    /// are too few processes for a test).
    pub change_pct: Option<f64>,
    /// Confidence interval of the change, in percent.
    pub ci_pct: Option<(f64, f64)>,
    pub p_value: Option<f64>,
    /// The change and p-value in core cycles (process medians times their
    /// measured core clock), where both runs measured the clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_cycles_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_cycles: Option<f64>,
    pub verdict: Verdict,
    /// By how many percent B is worse than A (positive: worse), whatever the
    /// unit's direction; what `--threshold` is checked against. In cycles
    /// where both runs measured their core clock and the cycles moved.
    pub worse_pct: Option<f64>,
    /// Why the row was not compared, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub confidence: f64,
    /// Changes smaller than this (percent) are never called: the printed
    /// precision, or the two runs' clock calibration uncertainty if larger.
    pub min_change_pct: f64,
    /// Differences in machine or environment between the runs.
    pub warnings: Vec<String>,
    pub rows: Vec<Row>,
    /// Processes a side the test needs to reach the confidence.
    pub min_blocks: usize,
    /// Earlier runs of A's configuration on A's machine whose states a
    /// difference was checked against (0: none were given or found).
    pub earlier_runs: usize,
    /// Where they came from, in words (e.g. the history's location).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub earlier_source: Option<String>,
}

/// Earlier runs of the baseline's configuration on the baseline's
/// machine: per result key, each run's process medians. A difference
/// between A and B that lies where these runs' processes lay is a state of
/// the machine, not a change (docs/certainty.md, "Machine states").
#[derive(Debug, Clone, Default)]
pub struct EarlierRuns {
    /// How many runs.
    pub runs: usize,
    pub samples: BTreeMap<String, Vec<Vec<f64>>>,
    /// Where they came from, in words.
    pub source: Option<String>,
}

impl EarlierRuns {
    /// Of `candidates`, the runs that started before A and differ from it
    /// in nothing `compare` warns about but the core clock (machine,
    /// kernel, clock source, yamba's version, the run's settings, the
    /// pinned CPU) nor in its host name; A and B
    /// themselves are left out.
    /// Runs after A are left out on purpose: they may hold the very change
    /// being looked for.
    pub fn of_baseline<'f>(
        a: &ResultsFile,
        b: &ResultsFile,
        candidates: impl IntoIterator<Item = &'f ResultsFile>,
        source: Option<String>,
    ) -> EarlierRuns {
        let mut out = EarlierRuns {
            source,
            ..EarlierRuns::default()
        };
        for f in candidates {
            let same_file = |x: &ResultsFile| x.started == f.started && x.command == f.command;
            if same_file(a)
                || same_file(b)
                || f.started > a.started
                || f.machine.hostname != a.machine.hostname
                || !configuration_differences(a, f).is_empty()
            {
                continue;
            }
            out.runs += 1;
            for r in &f.results {
                if r.status != Status::Ok || yamba_results::check_result(r).is_err() {
                    continue;
                }
                let s = process_samples(r);
                if s.len() > 1 {
                    out.samples.entry(r.key()).or_default().push(s);
                }
            }
        }
        out
    }
}

impl Comparison {
    /// Rows significantly slower by more than `threshold_pct` percent.
    pub fn regressions(&self, threshold_pct: f64) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| {
                r.verdict == Verdict::Slower && r.worse_pct.is_some_and(|w| w > threshold_pct)
            })
            .collect()
    }
}

/// Compares run `b` against run `a` at `confidence` (e.g. 0.95).
pub fn compare(a: &ResultsFile, b: &ResultsFile, confidence: f64) -> Comparison {
    compare_with(a, b, confidence, &EarlierRuns::default())
}

/// [`compare`], with a difference not called when B's processes lie in
/// states `earlier` runs of A's configuration showed.
pub fn compare_with(
    a: &ResultsFile,
    b: &ResultsFile,
    confidence: f64,
    earlier: &EarlierRuns,
) -> Comparison {
    let mut bs: BTreeMap<String, &BenchResult> = BTreeMap::new();
    for r in &b.results {
        bs.entry(r.key()).or_insert(r);
    }
    let min_change_pct = MIN_CHANGE_PCT.max(
        100.0
            * (a.clock.calibration.relative_uncertainty + b.clock.calibration.relative_uncertainty),
    );
    let mut warnings = environment_warnings(a, b);
    for (side, f) in [("A", a), ("B", b)] {
        for bad in f.inconsistencies() {
            warnings.push(format!("in {side}, {bad}"));
        }
    }
    let mut rows = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for ra in &a.results {
        let key = ra.key();
        if !seen.insert(key.clone()) {
            continue;
        }
        rows.push(match bs.get(&key) {
            Some(rb) => compare_one(
                ra,
                rb,
                confidence,
                min_change_pct,
                earlier.samples.get(&key).map(Vec::as_slice).unwrap_or(&[]),
            ),
            None => lone_row(ra, true),
        });
    }
    for rb in &b.results {
        if seen.insert(rb.key()) {
            rows.push(lone_row(rb, false));
        }
    }
    Comparison {
        confidence,
        min_change_pct,
        warnings,
        rows,
        min_blocks: yamba_stats::min_blocks_for(confidence),
        earlier_runs: earlier.runs,
        earlier_source: earlier.source.clone(),
    }
}

fn status_name(s: Status) -> String {
    s.as_str().to_string()
}

/// A row for a result present in only one run (`in_a`: which).
fn lone_row(r: &BenchResult, in_a: bool) -> Row {
    let status = Some(status_name(r.status));
    let (n, med) = (r.observations.len(), r.median());
    Row {
        key: r.key(),
        unit: r.unit.symbol().to_string(),
        status_a: if in_a { status.clone() } else { None },
        status_b: if in_a { None } else { status },
        n_a: if in_a { n } else { 0 },
        n_b: if in_a { 0 } else { n },
        blocks_a: 0,
        blocks_b: 0,
        median_a: if in_a { med } else { None },
        median_b: if in_a { None } else { med },
        change_pct: None,
        ci_pct: None,
        p_value: None,
        change_cycles_pct: None,
        p_cycles: None,
        verdict: Verdict::NotCompared,
        worse_pct: None,
        note: Some(if in_a { "only in A" } else { "only in B" }.into()),
    }
}

/// The samples of a result for the test: one median per process when it
/// was measured in several, else its headline value alone (one run, one
/// sample). Files from before blocks were recorded keep each repetition's
/// median in `extra.repetitions`.
pub fn process_samples(r: &BenchResult) -> Vec<f64> {
    if let Some(c) = r
        .certainty
        .as_ref()
        .filter(|c| c.block == BlockKind::Process)
    {
        return finite(&c.medians);
    }
    let reps: Vec<f64> = r
        .extra
        .get("repetitions")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.get("median").and_then(|m| m.as_f64()))
                .collect()
        })
        .unwrap_or_default();
    if reps.len() > 1 {
        return finite(&reps);
    }
    r.value().filter(|v| v.is_finite()).into_iter().collect()
}

/// The process medians in core cycles, where every process's clock was
/// measured.
pub fn cycle_samples(r: &BenchResult) -> Option<Vec<f64>> {
    let c = r
        .certainty
        .as_ref()
        .filter(|c| c.block == BlockKind::Process)?;
    (c.cycles.is_some() && c.core_mhz.len() == c.medians.len()).then(|| {
        c.medians
            .iter()
            .zip(&c.core_mhz)
            .map(|(ns, mhz)| ns * mhz / 1e3)
            .collect()
    })
}

/// The processes of each result to compare: all but those its own run
/// left out as moved by a shared core (`Certainty::kept_blocks`, judged
/// against that run's unshared processes). A run that spent half or more
/// of its processes on a shared core keeps them all: whether the
/// neighbour or the code moved it is then for the earlier runs of A's
/// configuration to tell (docs/certainty.md). `None` where neither left
/// anything out.
fn unshared_blocks(ra: &BenchResult, rb: &BenchResult) -> Option<(Vec<usize>, Vec<usize>)> {
    let kept = |r: &BenchResult| {
        r.certainty
            .as_ref()
            .filter(|c| c.block == BlockKind::Process)
            .filter(|c| c.medians.iter().all(|m| m.is_finite()))
            .map(|c| c.kept_blocks())
    };
    let (ka, kb) = (kept(ra)?, kept(rb)?);
    let all = |r: &BenchResult| r.certainty.as_ref().map_or(0, |c| c.medians.len());
    (ka.len() < all(ra) || kb.len() < all(rb)).then_some((ka, kb))
}

/// (significant, change %, interval of the change %, p).
type Significance = (bool, f64, (f64, f64), Option<f64>);

/// Whether the change from `a` to `b` is significant: exact rank test on
/// the samples, an interval that excludes zero, and a change large enough
/// to print.
fn significance(
    a: &[f64],
    b: &[f64],
    confidence: f64,
    min_change_pct: f64,
) -> Option<Significance> {
    let (est, lo, hi) = relative_change(a, b, confidence)?;
    let p = yamba_stats::mann_whitney_exact_p(a, b)
        .or_else(|| yamba_stats::mann_whitney_u(a, b).map(|m| m.p_value));
    let significant = p.is_some_and(|p| p < 1.0 - confidence)
        && (lo > 0.0 || hi < 0.0)
        && est.abs() >= min_change_pct;
    Some((significant, est, (lo, hi), p))
}

fn compare_one(
    ra: &BenchResult,
    rb: &BenchResult,
    confidence: f64,
    min_change_pct: f64,
    earlier: &[Vec<f64>],
) -> Row {
    let (mut sa, mut sb) = (process_samples(ra), process_samples(rb));
    let (mut ca, mut cb) = (cycle_samples(ra), cycle_samples(rb));
    let unshared = unshared_blocks(ra, rb);
    let mut shared_note = None;
    if let Some((ka, kb)) = &unshared {
        let left = (sa.len() - ka.len(), sb.len() - kb.len());
        if left != (0, 0) {
            let pick = |v: &[f64], k: &[usize]| k.iter().map(|&i| v[i]).collect::<Vec<f64>>();
            sa = pick(&sa, ka);
            sb = pick(&sb, kb);
            ca = ca.map(|v| pick(&v, ka));
            cb = cb.map(|v| pick(&v, kb));
            shared_note = Some(format!(
                "{} of A's and {} of B's processes ran on a shared core (another hardware thread was using it), which moved them: left out",
                left.0, left.1
            ));
        }
    }
    let mut row = Row {
        key: ra.key(),
        unit: ra.unit.symbol().to_string(),
        status_a: Some(status_name(ra.status)),
        status_b: Some(status_name(rb.status)),
        n_a: ra.observations.len(),
        n_b: rb.observations.len(),
        blocks_a: sa.len(),
        blocks_b: sb.len(),
        median_a: ra.value(),
        median_b: rb.value(),
        change_pct: None,
        ci_pct: None,
        p_value: None,
        change_cycles_pct: None,
        p_cycles: None,
        verdict: Verdict::NotCompared,
        worse_pct: None,
        note: None,
    };
    let tampered: Vec<&str> = [("A", ra), ("B", rb)]
        .iter()
        .filter(|(_, r)| yamba_results::check_result(r).is_err())
        .map(|(side, _)| *side)
        .collect();
    if !tampered.is_empty() {
        row.note = Some(format!(
            "not compared: stored statistics disagree with the observations in {} (see the warning)",
            tampered.join(" and ")
        ));
        return row;
    }
    let not_ok: Vec<String> = [("A", ra), ("B", rb)]
        .iter()
        .filter(|(_, r)| r.status != Status::Ok)
        .map(|(side, r)| format!("{} in {side}", status_name(r.status)))
        .collect();
    if !not_ok.is_empty() {
        row.note = Some(not_ok.join(", "));
        return row;
    }
    if ra.unit != rb.unit {
        row.note = Some(format!(
            "unit {} in A, {} in B",
            ra.unit.symbol(),
            rb.unit.symbol()
        ));
        return row;
    }
    if (sa.is_empty() || sb.is_empty()) && shared_note.is_none() {
        row.note = Some("no observations".into());
        return row;
    }
    let higher_better = ra.unit.higher_is_better();
    let need = yamba_stats::min_blocks_for(confidence);
    if sa.len() < need || sb.len() < need {
        // Say how large the change looks, but call nothing.
        if let (Some(a), Some(b)) = (row.median_a, row.median_b) {
            if a != 0.0 {
                let est = (b / a - 1.0) * 100.0;
                row.change_pct = Some(est);
                row.worse_pct = Some(if higher_better { -est } else { est });
            }
        }
        row.verdict = Verdict::TooFew;
        row.note = Some(match &shared_note {
            Some(n) => format!(
                "too few processes on an unshared core: {} in A, {} in B; the test needs ≥ {need} a side ({n})",
                sa.len(),
                sb.len()
            ),
            None => format!(
                "too few processes: {} in A, {} in B; the test needs ≥ {need} a side",
                sa.len(),
                sb.len()
            ),
        });
        return row;
    }
    row.blocks_a = sa.len();
    row.blocks_b = sb.len();
    row.note = shared_note;
    let Some((mut significant, est, (lo, hi), p)) =
        significance(&sa, &sb, confidence, min_change_pct)
    else {
        row.note = Some("A's median is zero: no relative change".into());
        return row;
    };
    row.change_pct = Some(est);
    row.ci_pct = Some((lo, hi));
    row.p_value = p;
    row.worse_pct = Some(if higher_better { -est } else { est });
    // A time that moved only because the host ran the core at another
    // clock is not a change: the cycles must have moved too.
    if let (Some(ca), Some(cb)) = (ca, cb) {
        if let Some((sig_c, est_c, _, p_c)) = significance(&ca, &cb, confidence, min_change_pct) {
            row.change_cycles_pct = Some(est_c);
            row.p_cycles = p_c;
            // The size a gate judges is the cycles' change too: the time's
            // holds the host's clock step besides the code's change (a 2%
            // change measured 5–7% in time across a 2.7% turbo step).
            if sig_c && est_c.signum() == est.signum() {
                row.worse_pct = Some(if higher_better { -est_c } else { est_c });
            }
            if significant && !(sig_c && est_c.signum() == est.signum()) {
                significant = false;
                add_note(
                    &mut row,
                    format!(
                        "follows the core clock: {est_c:+.1}% in cycles (clock {} in A, {} in B)",
                        fmt_mhz(&ra.certainty.as_ref().unwrap().core_mhz),
                        fmt_mhz(&rb.certainty.as_ref().unwrap().core_mhz)
                    ),
                );
            }
        }
    }
    // A difference in states the baseline's configuration has shown on
    // this machine before is not a change.
    if significant && !earlier.is_empty() {
        let known: Vec<Vec<f64>> = std::iter::once(sa.clone())
            .chain(earlier.iter().cloned())
            .collect();
        let floor = [ra, rb]
            .iter()
            .filter_map(|r| r.certainty.as_ref().map(|c| c.estimate.resolution))
            .fold(0.0, f64::max);
        let b_value = yamba_stats::run_value(&sb).unwrap_or(f64::NAN);
        if let Some((lo, hi, runs)) = yamba_stats::known_run_range(&known)
            .filter(|(lo, hi, _)| b_value >= lo - floor && b_value <= hi + floor)
        {
            significant = false;
            let (div, sym) = ra.unit.scale_for(hi);
            add_note(&mut row, format!(
                "within what identical runs give on this machine: medians of processes {}–{} {sym} over A and {} earlier runs of its configuration",
                yamba_results::units::format_sig(lo / div),
                yamba_results::units::format_sig(hi / div),
                runs - 1
            ));
        } else if let Some(Ok(levels)) =
            yamba_stats::within_known_states(&sb, &known, confidence, floor)
        {
            significant = false;
            add_note(
                &mut row,
                known_states_note(&levels, &ra.unit, earlier.len()),
            );
        }
    }
    row.verdict = if !significant {
        Verdict::Same
    } else if (est > 0.0) != higher_better {
        Verdict::Slower
    } else {
        Verdict::Faster
    };
    row
}

/// Adds `text` to the row's note (after what is there).
fn add_note(row: &mut Row, text: String) {
    row.note = Some(match row.note.take() {
        Some(n) => format!("{n}; {text}"),
        None => text,
    });
}

/// "B's processes lie where A's configuration's did": each level with its
/// range and how many earlier runs reached it.
fn known_states_note(
    levels: &[yamba_stats::KnownLevel],
    unit: &yamba_results::units::Unit,
    earlier: usize,
) -> String {
    use yamba_results::units::format_sig;
    let parts: Vec<String> = levels
        .iter()
        .map(|l| {
            let (div, sym) = unit.scale_for(l.hi);
            format!(
                "{} of B's processes at {}–{} {sym}, a level {} of {} runs of A's configuration reached",
                l.new_processes,
                format_sig(l.lo / div),
                format_sig(l.hi / div),
                l.known_runs,
                earlier + 1,
            )
        })
        .collect();
    format!(
        "a state of the machine, not a change: {} (A and {earlier} earlier runs)",
        parts.join("; ")
    )
}

/// Below this change, in percent, no difference is called: it would
/// print as ±0.0%, and a change in a tick-quantised clock's calibration
/// between runs alone moves every value by about that much.
pub const MIN_CHANGE_PCT: f64 = 0.1;

fn finite(v: &[f64]) -> Vec<f64> {
    v.iter().copied().filter(|x| x.is_finite()).collect()
}

/// The change of `b` relative to `a` in percent, with its interval: from
/// the Hodges-Lehmann ratio when every value is positive (timings, rates),
/// otherwise from the Hodges-Lehmann shift relative to A's median (a loop
/// time after subtracting the dummy loop can be ≤ 0).
pub fn relative_change(a: &[f64], b: &[f64], confidence: f64) -> Option<(f64, f64, f64)> {
    if let Some((r, lo, hi)) = yamba_stats::hodges_lehmann_ratio_ci(a, b, confidence) {
        return Some(((r - 1.0) * 100.0, (lo - 1.0) * 100.0, (hi - 1.0) * 100.0));
    }
    let med_a = yamba_stats::Summary::of(a)?.median;
    if med_a == 0.0 {
        return None;
    }
    let (d, lo, hi) = hodges_lehmann_shift_ci(a, b, confidence)?;
    let pct = |x: f64| x / med_a.abs() * 100.0;
    Some((pct(d), pct(lo), pct(hi)))
}

/// Hodges-Lehmann estimate of the shift b − a with its distribution-free
/// interval (the Mann-Whitney null distribution, normal approximation):
/// the same construction as `yamba_stats::hodges_lehmann_ratio_ci`, on the
/// values rather than their logarithms.
pub fn hodges_lehmann_shift_ci(a: &[f64], b: &[f64], confidence: f64) -> Option<(f64, f64, f64)> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let mut diffs: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| y - x))
        .collect();
    diffs.sort_by(|x, y| x.total_cmp(y));
    let m = diffs.len();
    let est = yamba_stats::percentile_sorted(&diffs, 50.0);
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let z = yamba_stats::z_quantile(confidence);
    let k = (n1 * n2 / 2.0 - z * (n1 * n2 * (n1 + n2 + 1.0) / 12.0).sqrt()).floor();
    let k = (k.max(0.0) as usize).min(m - 1);
    Some((est, diffs[k], diffs[m - 1 - k]))
}

/// The median of some core-clock readings, in GHz.
fn fmt_mhz(v: &[f64]) -> String {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.get(s.len() / 2) {
        Some(m) => format!("{:.2} GHz", m / 1e3),
        None => "?".into(),
    }
}

/// The median core clock over every process of a run's results.
fn run_core_mhz(f: &ResultsFile) -> Option<f64> {
    let mut v: Vec<f64> = f
        .results
        .iter()
        .filter_map(|r| r.certainty.as_ref())
        .flat_map(|c| c.core_mhz.iter().copied())
        .collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Core clocks further apart than this (relative) are worth a warning.
pub const CORE_CLOCK_WARNING: f64 = 0.01;

/// Lines naming every difference in machine or environment between the
/// runs that can move a number by itself.
pub fn environment_warnings(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    let mut out = configuration_differences(a, b);
    out.extend(core_clock_warning(a, b));
    out
}

/// What differs in the machines, environments and settings the runs'
/// headers record; the CPUs their results were pinned to aside.
fn setup_warnings(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    let (ma, mb) = (&a.machine, &b.machine);
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "none".into());
    let mut pairs: Vec<(&str, String, String)> = vec![
        ("CPU model", ma.cpu_model.clone(), mb.cpu_model.clone()),
        ("kernel", ma.kernel.clone(), mb.kernel.clone()),
        (
            "online CPUs",
            ma.online_cpus.to_string(),
            mb.online_cpus.to_string(),
        ),
        ("hypervisor", opt(&ma.hypervisor), opt(&mb.hypervisor)),
        ("frequency governor", opt(&ma.governor), opt(&mb.governor)),
        (
            "frequency boost",
            format!("{:?}", ma.boost),
            format!("{:?}", mb.boost),
        ),
        ("clocksource", opt(&ma.clocksource), opt(&mb.clocksource)),
        (
            "clock",
            format!("{:?}", a.clock.kind),
            format!("{:?}", b.clock.kind),
        ),
        (
            "yamba version",
            a.tool.version.clone(),
            b.tool.version.clone(),
        ),
    ];
    for key in [
        "cpu", "no_pin", "realtime", "quick", "isolate", "budget_s", "settings",
    ] {
        let get = |f: &ResultsFile| {
            f.config
                .get(key)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "unset".into())
        };
        pairs.push((key, get(a), get(b)));
    }
    let mut out: Vec<String> = pairs
        .into_iter()
        .filter(|(_, x, y)| x != y)
        .map(|(what, x, y)| format!("{what} differs: {x:?} in A, {y:?} in B"))
        .collect();
    if ma.arch != mb.arch {
        out.insert(
            0,
            format!(
                "architectures differ: {} in A, {} in B — results are lined up by id, but each \
                 was measured on other hardware through its own platform's adapters: a change \
                 is the platforms' difference, not a regression",
                ma.arch, mb.arch
            ),
        );
    }
    out.extend(mitigation_warnings(ma, mb));
    // Files written before the build was kept say nothing about it.
    if let (Some(x), Some(y)) = (&a.tool.build, &b.tool.build) {
        if x != y {
            out.push(format!(
                "yamba build differs: {x} in A, {y} in B (the same version built again can place code where a system call costs 30% more)"
            ));
        }
    }
    out
}

fn configuration_warnings(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    let mut out = setup_warnings(a, b);
    let pinned = |f: &ResultsFile| {
        let mut cpus: Vec<usize> = f
            .results
            .iter()
            .filter_map(|r| r.accounting.as_ref()?.pinned_cpu)
            .collect();
        cpus.sort_unstable();
        cpus.dedup();
        cpus
    };
    let (pa, pb) = (pinned(a), pinned(b));
    if pa != pb {
        out.push(format!("pinned CPUs differ: {pa:?} in A, {pb:?} in B"));
    }
    out
}

/// The runs' core clocks differ by more than [`CORE_CLOCK_WARNING`].
fn core_clock_warning(a: &ResultsFile, b: &ResultsFile) -> Option<String> {
    let (ca, cb) = (run_core_mhz(a)?, run_core_mhz(b)?);
    ((cb / ca - 1.0).abs() > CORE_CLOCK_WARNING).then(|| {
        format!(
            "core clock differs: {:.2} GHz in A, {:.2} GHz in B ({:+.1}%): times of CPU-bound operations move with it, so a time is called slower or faster only when its cycles moved too",
            ca / 1e3,
            cb / 1e3,
            (cb / ca - 1.0) * 100.0
        )
    })
}

/// [`configuration_differences`] as far as a stored run's header (its
/// file without results) can tell: all but the CPUs the results were
/// pinned to.
pub fn header_differences(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    let mut out = setup_warnings(a, b);
    out.extend(incomplete(a, b));
    out
}

/// What differs between the runs' machines, environments and settings —
/// [`environment_warnings`] without the core clock, which the host moves
/// between identical runs.
pub fn configuration_differences(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    let mut out = configuration_warnings(a, b);
    out.extend(incomplete(a, b));
    out
}

/// Either run interrupted or not finished.
fn incomplete(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
    [("A", a), ("B", b)]
        .into_iter()
        .filter(|(_, f)| !f.complete || f.interrupted)
        .map(|(side, _)| format!("run {side} is incomplete (interrupted or still running)"))
        .collect()
}

/// The kernel's speculative-execution mitigations differ: they alone can
/// move a system call by tens of percent. Files written before yamba
/// recorded them say nothing, and nothing is claimed about them.
fn mitigation_warnings(ma: &yamba_results::Machine, mb: &yamba_results::Machine) -> Vec<String> {
    let mut out = Vec::new();
    if ma.mitigations != mb.mitigations {
        let show = |m: &Option<String>| m.clone().unwrap_or_else(|| "not given".into());
        out.push(format!(
            "kernel command line mitigations= differs: {:?} in A, {:?} in B",
            show(&ma.mitigations),
            show(&mb.mitigations)
        ));
    }
    let (va, vb) = (&ma.vulnerabilities, &mb.vulnerabilities);
    if va.is_empty() || vb.is_empty() {
        if va.is_empty() != vb.is_empty() {
            let side = if va.is_empty() { "A" } else { "B" };
            out.push(format!(
                "CPU vulnerability mitigations not recorded in {side}: cannot tell whether they differ"
            ));
        }
        return out;
    }
    let names: std::collections::BTreeSet<&String> = va.keys().chain(vb.keys()).collect();
    for name in names {
        let (a, b) = (va.get(name), vb.get(name));
        if a != b {
            let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "absent".into());
            out.push(format!(
                "CPU vulnerability mitigation {name} differs: {:?} in A, {:?} in B",
                show(a),
                show(b)
            ));
        }
    }
    out
}

fn fmt_pct(v: f64) -> String {
    format!("{v:+.1}%")
}

fn fmt_val(v: Option<f64>, unit: &str) -> String {
    match v {
        Some(v) => {
            let u = unit_of(unit);
            let (div, sym) = u.map_or((1.0, unit), |u| u.scale_for(v));
            format!("{} {sym}", yamba_results::units::format_sig(v / div))
        }
        None => "-".into(),
    }
}

fn unit_of(symbol: &str) -> Option<yamba_results::units::Unit> {
    serde_json::from_value(serde_json::Value::String(symbol.to_string())).ok()
}

/// The comparison as a text table, warnings first.
pub fn table(c: &Comparison) -> String {
    let mut out = String::new();
    for w in &c.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let ci_head = format!("{:.0}% CI", c.confidence * 100.0);
    let mut lines = vec![[
        "benchmark".to_string(),
        "A".into(),
        "B".into(),
        "change".into(),
        ci_head,
        "p".into(),
        "processes".into(),
        "verdict".into(),
    ]];
    for r in &c.rows {
        let verdict = match (&r.note, r.verdict) {
            (Some(n), Verdict::NotCompared | Verdict::TooFew) => n.clone(),
            (Some(n), Verdict::Same) => format!("~ ({n})"),
            _ => r.verdict.as_str().to_string(),
        };
        lines.push([
            r.key.clone(),
            fmt_val(r.median_a, &r.unit),
            fmt_val(r.median_b, &r.unit),
            r.change_pct.map(fmt_pct).unwrap_or_else(|| "-".into()),
            r.ci_pct
                .map(|(lo, hi)| format!("[{}, {}]", fmt_pct(lo), fmt_pct(hi)))
                .unwrap_or_else(|| "-".into()),
            r.p_value
                .map(|p| format!("{p:.3}"))
                .unwrap_or_else(|| "-".into()),
            format!("{}+{}", r.blocks_a, r.blocks_b),
            verdict,
        ]);
    }
    let mut widths = [0usize; 8];
    for l in &lines {
        for (w, cell) in widths.iter_mut().zip(l.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for l in &lines {
        let mut line = String::new();
        for (i, (cell, w)) in l.iter().zip(widths).enumerate() {
            let pad = w - cell.chars().count();
            if i == 0 || i == 7 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            line.push_str("  ");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let count = |v: Verdict| c.rows.iter().filter(|r| r.verdict == v).count();
    let _ = writeln!(
        out,
        "{} slower, {} faster, {} unchanged, {} with too few processes, {} not compared",
        count(Verdict::Slower),
        count(Verdict::Faster),
        count(Verdict::Same),
        count(Verdict::TooFew),
        count(Verdict::NotCompared),
    );
    let _ = writeln!(out, "{}", footer(c));
    out
}

/// The test, its sample unit and its minimum counts, in words.
pub fn footer(c: &Comparison) -> String {
    format!(
        "test: exact two-sided Mann-Whitney U at {}% on per-process medians (one sample = one process of the run; \
         observations inside a process are not independent); needs ≥ {} processes a side (yamba run's default is {}; \
         --quick runs have 1); change: Hodges-Lehmann on the process medians; a time is called only when its core cycles \
         (the processes' measured core clock) moved too; changes under {}% are not called; \
         --threshold fails only on a significant slowdown larger than it (in core cycles where they were measured); {}",
        c.confidence * 100.0,
        c.min_blocks,
        yamba_results::results::PRECISE_BLOCKS,
        c.min_change_pct,
        states_footer(c)
    )
}

/// What the machine-states check had to go on.
fn states_footer(c: &Comparison) -> String {
    let from = c
        .earlier_source
        .as_deref()
        .map(|s| format!(" from {s}"))
        .unwrap_or_default();
    if c.earlier_runs >= yamba_stats::MIN_KNOWN_RUNS {
        format!(
            "machine states: a difference whose B processes lie where {} earlier runs of A's configuration{from} and A \
             lay is not called (docs/certainty.md)",
            c.earlier_runs
        )
    } else {
        format!(
            "machine states: {} earlier runs of A's configuration{from} (≥ {} needed), so a state of the machine \
             that A's run did not see can be called a change — run the baseline a few times first",
            c.earlier_runs,
            yamba_stats::MIN_KNOWN_RUNS
        )
    }
}
