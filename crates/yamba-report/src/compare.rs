//! Comparing two runs, as benchstat does: for each result present in both,
//! the medians, the change with a confidence interval (Hodges-Lehmann), a
//! p-value (Mann-Whitney U on the raw observations) and a verdict.
//!
//! A difference is called only when the p-value is below 1 − confidence
//! *and* the interval for the change excludes zero, so the verdict never
//! contradicts the interval printed beside it. Results in only one run, and
//! results that were not measured cleanly, are listed rather than dropped:
//! a comparison that silently loses a benchmark hides the regression.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use yamba_core::results::{BenchResult, ResultsFile, Status};

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
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "~",
            Verdict::NotCompared => "-",
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
    pub n_a: usize,
    pub n_b: usize,
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    /// Change of B relative to A, in percent (Hodges-Lehmann estimate).
    pub change_pct: Option<f64>,
    /// Confidence interval of the change, in percent.
    pub ci_pct: Option<(f64, f64)>,
    pub p_value: Option<f64>,
    pub verdict: Verdict,
    /// By how many percent B is worse than A (positive: worse), whatever the
    /// unit's direction; what `--threshold` is checked against.
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
    let mut bs: BTreeMap<String, &BenchResult> = BTreeMap::new();
    for r in &b.results {
        bs.entry(r.key()).or_insert(r);
    }
    let min_change_pct = MIN_CHANGE_PCT.max(
        100.0
            * (a.clock.calibration.relative_uncertainty + b.clock.calibration.relative_uncertainty),
    );
    let mut rows = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for ra in &a.results {
        let key = ra.key();
        if !seen.insert(key.clone()) {
            continue;
        }
        rows.push(match bs.get(&key) {
            Some(rb) => compare_one(ra, rb, confidence, min_change_pct),
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
        warnings: environment_warnings(a, b),
        rows,
    }
}

fn status_name(s: Status) -> String {
    crate::export::status_str(s).to_string()
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
        median_a: if in_a { med } else { None },
        median_b: if in_a { None } else { med },
        change_pct: None,
        ci_pct: None,
        p_value: None,
        verdict: Verdict::NotCompared,
        worse_pct: None,
        note: Some(if in_a { "only in A" } else { "only in B" }.into()),
    }
}

fn compare_one(ra: &BenchResult, rb: &BenchResult, confidence: f64, min_change_pct: f64) -> Row {
    let mut row = Row {
        key: ra.key(),
        unit: ra.unit.symbol().to_string(),
        status_a: Some(status_name(ra.status)),
        status_b: Some(status_name(rb.status)),
        n_a: ra.observations.len(),
        n_b: rb.observations.len(),
        median_a: ra.median(),
        median_b: rb.median(),
        change_pct: None,
        ci_pct: None,
        p_value: None,
        verdict: Verdict::NotCompared,
        worse_pct: None,
        note: None,
    };
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
    let (xa, xb) = (finite(&ra.observations), finite(&rb.observations));
    if xa.is_empty() || xb.is_empty() {
        row.note = Some("no observations".into());
        return row;
    }
    if row.median_a.is_none() {
        row.median_a = yamba_stats::Summary::of(&xa).map(|s| s.median);
    }
    if row.median_b.is_none() {
        row.median_b = yamba_stats::Summary::of(&xb).map(|s| s.median);
    }
    let Some((est, lo, hi)) = relative_change(&thin(&xa), &thin(&xb), confidence) else {
        row.note = Some("A's median is zero: no relative change".into());
        return row;
    };
    row.change_pct = Some(est);
    row.ci_pct = Some((lo, hi));
    let p = yamba_stats::mann_whitney_u(&xa, &xb).map(|m| m.p_value);
    row.p_value = p;
    let higher_better = ra.unit.higher_is_better();
    row.worse_pct = Some(if higher_better { -est } else { est });
    let significant = p.is_some_and(|p| p < 1.0 - confidence)
        && (lo > 0.0 || hi < 0.0)
        && est.abs() >= min_change_pct;
    row.verdict = if !significant {
        Verdict::Same
    } else if (est > 0.0) != higher_better {
        Verdict::Slower
    } else {
        Verdict::Faster
    };
    row
}

/// Below this change, in percent, no difference is called: it would
/// print as ±0.0%, and a change in a tick-quantised clock's calibration
/// between runs alone moves every value by about that much.
pub const MIN_CHANGE_PCT: f64 = 0.1;

/// At most this many values per side enter the Hodges-Lehmann interval,
/// which looks at every pair: 20 000 observations a side would be 4·10^8
/// pairs (3 GB). The p-value still uses every observation.
pub const HL_MAX_PER_SIDE: usize = 1500;

/// A sample reduced to [`HL_MAX_PER_SIDE`] evenly spaced order statistics:
/// the same distribution, so the same location estimate, with an interval
/// computed for the smaller n (wider, so conservative).
fn thin(v: &[f64]) -> Vec<f64> {
    if v.len() <= HL_MAX_PER_SIDE {
        return v.to_vec();
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let k = HL_MAX_PER_SIDE;
    (0..k).map(|i| s[i * (s.len() - 1) / (k - 1)]).collect()
}

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

/// Lines naming every difference in machine or environment between the
/// runs that can move a number by itself.
pub fn environment_warnings(a: &ResultsFile, b: &ResultsFile) -> Vec<String> {
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
    for (side, f) in [("A", a), ("B", b)] {
        if !f.complete || f.interrupted {
            out.push(format!(
                "run {side} is incomplete (interrupted or still running)"
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
            format!("{} {sym}", yamba_core::units::format_sig(v / div))
        }
        None => "-".into(),
    }
}

fn unit_of(symbol: &str) -> Option<yamba_core::units::Unit> {
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
        "n".into(),
        "verdict".into(),
    ]];
    for r in &c.rows {
        let verdict = match (&r.note, r.verdict) {
            (Some(n), Verdict::NotCompared) => n.clone(),
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
            format!("{}+{}", r.n_a, r.n_b),
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
        "{} slower, {} faster, {} unchanged, {} not compared (confidence {}%, changes under {}% not called)",
        count(Verdict::Slower),
        count(Verdict::Faster),
        count(Verdict::Same),
        count(Verdict::NotCompared),
        c.confidence * 100.0,
        c.min_change_pct
    );
    out
}
