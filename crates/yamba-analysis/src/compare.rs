//! Comparing two runs, as benchstat does: one sample is one *process* (a
//! block of the run: see docs/certainty.md), never one observation.
//! Observations inside a process share its layout, its CPU placement and
//! the host's moment, so counting them as independent finds "significant"
//! differences between two runs of the same thing.
//!
//! For each result present in both runs: the blocks of each side (less
//! those a shared core moved, and those apart from most of both runs' —
//! a state of that process, as a code change moves every process),
//! Welch's t test on the logarithms of the block values — a change is a
//! ratio — giving the change (the ratio of the geometric means), its
//! interval and a two-sided p-value; the same test on the blocks in core
//! cycles, where both runs measured the clock.
//! Welch's test is valid from 2 blocks a side (the interval is wide then);
//! a rank test on 3 a side cannot call anything (its smallest p is 0.1).
//!
//! Which lines moved (the table's verdicts) is decided over the whole
//! comparison: Benjamini–Hochberg at false-discovery rate 1 − confidence
//! on every compared line's p-value, with the interval excluding zero and
//! the change at least [`MIN_CHANGE_PCT`]; a time is called only when its
//! cycles moved too, and a difference that lies in a state of the machine
//! earlier runs of A's configuration showed is not called.
//!
//! The gate ([`Comparison::gated`], `--threshold T`) asks another question
//! of every line: the one-sided test of "B is worse than A by at most T%"
//! (Welch on logs with the null shifted to log(1 + T/100), in core cycles
//! where the row has them), with Holm–Bonferroni over all lines tested at
//! α = 1 − confidence, so that the chance of any false alarm over the
//! whole suite is at most α. A line the runs could have replicated but
//! did not (a `--quick` run: one process) cannot be decided: the gate is
//! then undecided, never passed ([`GateOutcome::Undecided`], exit status
//! 3), unless a regression was found elsewhere. So is a line whose one
//! side ran on a shared core and the other alone, where a shared core
//! moves it and neither state has two processes a side to compare like
//! with like: a neighbour's doing must not fail a gate, nor hide a change.
//!
//! Results in only one run, and results that were not measured cleanly,
//! are listed rather than dropped: a comparison that silently loses a
//! benchmark hides the regression. A result whose stored statistics are
//! not those of its observations (an edited or damaged file:
//! [`yamba_results::consistency`]) is not compared, and a warning says
//! what disagrees.

use serde::Serialize;
use std::collections::BTreeMap;
use yamba_results::{BenchResult, BlockKind, Certainty, ResultsFile, Status};
use yamba_stats::Welch;

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
    /// Measured in both, but with too few processes a side for the test
    /// (fewer than [`MIN_BLOCKS`]).
    TooFew,
    /// The time moved significantly and its core cycles went the same way
    /// by at least half as much, but their processes spread too far to
    /// show it: neither a change nor its absence is shown, so neither is
    /// called.
    Unconfirmed,
}

impl Verdict {
    /// How [`Verdict::Unconfirmed`] is said in words, wherever it is said
    /// (the note, the table's count, the report).
    pub const UNCONFIRMED_WORDS: &'static str = "not confirmed in core cycles";

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "~",
            Verdict::NotCompared => "-",
            Verdict::TooFew => "?",
            Verdict::Unconfirmed => "unconfirmed",
        }
    }
}

/// Blocks (processes) a side Welch's test needs: one more than a mean
/// needs, for a spread.
pub const MIN_BLOCKS: usize = yamba_results::results::MIN_BLOCKS_A_SIDE;

/// Exit status of a gate that could not decide (`compare --threshold`,
/// `run --baseline … --threshold`): 0 passed, 1 a regression (or a
/// failure), 2 a usage error, 3 undecided.
pub const EXIT_UNDECIDED: i32 = 3;

/// What the gate concluded about one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateLine {
    /// Worse than A by more than the threshold (Holm-adjusted p ≤ α).
    Regression,
    /// Tested; not shown to be worse by more than the threshold.
    Pass,
    /// The test rejected, but B lies in a known state of the machine or
    /// its time only followed the core clock: not a regression.
    Dismissed,
    /// Too few processes on a side to test, where the runs could have
    /// replicated it.
    Undecided,
    /// Measured in one process by design (a curve or sweep a precise run
    /// does not replicate): not gated.
    OneProcess,
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
    /// Change of B relative to A, in percent: the ratio of the geometric
    /// means of the process values (Welch on logs); the difference of
    /// means relative to A's where a value is ≤ 0; the ratio of the
    /// headline values when there are too few processes for a test.
    pub change_pct: Option<f64>,
    /// Confidence interval of the change, in percent (Welch's interval,
    /// back-transformed).
    pub ci_pct: Option<(f64, f64)>,
    /// Two-sided Welch p-value of the time (or value).
    pub p_value: Option<f64>,
    /// The p-value the table's verdict is judged on after the
    /// Benjamini–Hochberg adjustment over every compared line (of the
    /// larger of the time's and the cycles' p-values, where both are).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q_value: Option<f64>,
    /// The change and p-value in core cycles (process medians times their
    /// measured core clock), where both runs measured the clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_cycles_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_cycles: Option<f64>,
    pub verdict: Verdict,
    /// By how many percent B is worse than A (positive: worse), whatever the
    /// unit's direction — for a rate, how much the time per unit of work
    /// grew (A/B − 1); what `--threshold` is judged against. In core cycles
    /// where both runs measured their core clock.
    pub worse_pct: Option<f64>,
    /// With `--threshold`: the one-sided p-value of "B is worse by at most
    /// the threshold", and the same after Holm's adjustment over all lines
    /// tested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_gate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_gate_holm: Option<f64>,
    /// With `--threshold`: what the gate concluded about this line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateLine>,
    /// Why the row was not compared, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What the tests need beyond the printed columns.
    #[serde(skip)]
    judged: Option<Judged>,
}

/// A compared line's tests, kept for the suite-wide corrections.
#[derive(Debug, Clone)]
struct Judged {
    /// Welch on the times (or values): log ratio, or relative difference.
    time: Welch,
    /// The same on core cycles, where both runs measured the clock.
    cycles: Option<Welch>,
    /// Whether `time` and `cycles` are on logs (else relative to A's mean).
    logs: bool,
    higher_better: bool,
    /// Where B lies in what earlier runs of A's configuration showed:
    /// the note that dismisses a difference, when it does.
    known_state: Option<String>,
    /// The core clocks of A and B, for the note when a time only followed it.
    clocks: Option<(String, String)>,
}

/// Why a line the runs could have replicated has too few processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TooFewWhy {
    /// A run measured it in one process: `--quick` or `--repeat 1`.
    OneProcessRun,
    /// Too few processes a side in one state of the core: those a shared
    /// core moved were left out, or one side's value describes a shared
    /// core and the other's the core alone.
    SharedCore,
    /// Fewer processes measured than the run asked for (some failed), or
    /// a file that does not say.
    Other,
    /// Enough processes, but the time moved significantly and its core
    /// cycles, which the gate tests, went the same way by more than the
    /// threshold too unevenly to confirm or rule it out
    /// ([`Verdict::Unconfirmed`]).
    CyclesUnconfirmed,
}

/// What the gate concluded over the whole comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// Every line tested, none worse than the threshold.
    Pass,
    /// At least one line worse than the threshold.
    Regression,
    /// Nothing worse found, but some lines could not be tested.
    Undecided,
}

impl GateOutcome {
    /// The exit status: 0, 1, or [`EXIT_UNDECIDED`].
    pub fn exit_code(self) -> i32 {
        match self {
            GateOutcome::Pass => 0,
            GateOutcome::Regression => 1,
            GateOutcome::Undecided => EXIT_UNDECIDED,
        }
    }
}

/// The gate over a comparison (`--threshold`).
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub threshold_pct: f64,
    /// Family-wise level: the chance that a comparison of two runs with
    /// no line worse than the threshold fails is at most this.
    pub alpha: f64,
    /// The multiple-testing correction: "holm".
    pub correction: &'static str,
    /// Lines tested.
    pub tested: usize,
    /// Of them, tested in core cycles.
    pub tested_in_cycles: usize,
    /// Keys of the lines worse than the threshold.
    pub regressions: Vec<String>,
    /// Keys of lines the test rejected that lie in a known state of the
    /// machine or whose time only followed the core clock.
    pub dismissed: Vec<String>,
    /// Keys of lines that could not be tested, and why.
    pub undecided: Vec<(String, TooFewWhy)>,
    /// Keys of lines measured in one process by design: not gated.
    pub one_process: Vec<String>,
    /// Per tested line, its key and the slowdown (percent) the gate would
    /// catch there in at least 9 of 10 comparisons of runs as spread as
    /// these two, were it the family's only change ([`catches_pct`]): the
    /// gate's power, said per line. Where the figure is far above the
    /// threshold, a regression of the threshold's size passes.
    pub catches: Vec<(String, f64)>,
    pub outcome: GateOutcome,
}

/// The slowdown, in percent, that a one-sided test of "worse by at most
/// `delta`" (in the test's units: logarithms when `logs`) at one-sided
/// level `level` rejects in 9 of 10 comparisons, for a difference with
/// standard error `se` and `df` degrees of freedom: delta + λ·se, where λ
/// is the noncentrality at which a noncentral t passes t₁₋ₗₑᵥₑₗ with
/// chance 0.9 (Johnson and Welch's normal approximation, 1940:
/// λ = t·(1 − 1/4df) + z₀.₉·√(1 + t²/2df)). For the gate, `level` is α/m,
/// Holm's first step (what a lone regression among m tested lines must
/// reach), and `df` is [`power_df`].
pub fn catches_pct(se: f64, df: f64, delta: f64, logs: bool, level: f64) -> f64 {
    const Z_90: f64 = 1.281_551_565_544_600_5;
    let df = df.max(1.0);
    let t = yamba_stats::t_quantile(1.0 - 2.0 * level, df);
    let lambda = t * (1.0 - 1.0 / (4.0 * df)) + Z_90 * (1.0 + t * t / (2.0 * df)).sqrt();
    let x = delta + lambda * se;
    if logs {
        x.exp_m1() * 100.0
    } else {
        x * 100.0
    }
}

/// The degrees of freedom [`catches_pct`] takes for the gate's Welch test
/// with `fewer` processes on the smaller side: 1.5·(n − 1) − 0.5. Welch's
/// own vary from pair to pair between n − 1 and 2n − 2, and one pair's
/// would promise 9 of 10 for a slowdown caught in 2 of 3 at 4 a side; this
/// effective count is calibrated by simulation — planted at the figure,
/// 3 to 10 a side, a slowdown is gated in 94–97% of pairs (yamba-report's
/// `the_gate_states_its_power_per_line`).
pub fn power_df(fewer: usize) -> f64 {
    1.5 * (fewer as f64 - 1.0) - 0.5
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
    /// Processes a side the test needs ([`MIN_BLOCKS`]).
    pub min_blocks: usize,
    /// Lines whose p-value entered the Benjamini–Hochberg correction.
    pub compared: usize,
    /// Earlier runs of A's configuration on A's machine whose states a
    /// difference was checked against (0: none were given or found).
    pub earlier_runs: usize,
    /// Where they came from, in words (e.g. the history's location).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub earlier_source: Option<String>,
    /// With `--threshold`: the gate ([`Comparison::gated`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
    /// Per row (by index): why a line that could have been replicated was
    /// not testable, or `None`.
    #[serde(skip)]
    too_few: Vec<Option<TooFewWhy>>,
    /// Per row: measured in one process by design.
    #[serde(skip)]
    one_process: Vec<bool>,
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
    /// The same processes in core cycles, one entry for each of
    /// `samples`' (`None` where that run did not measure their clocks): a
    /// gate that judged a line in cycles asks whether B lies in a state
    /// earlier runs showed in cycles, not in time, which also holds the
    /// host's clock steps.
    pub cycles: BTreeMap<String, Vec<Option<Vec<f64>>>>,
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
                if let Some(s) = earlier_samples(r) {
                    out.samples.entry(r.key()).or_default().push(s);
                    out.cycles
                        .entry(r.key())
                        .or_default()
                        .push(earlier_cycle_samples(r));
                }
            }
        }
        out
    }

    /// What these runs showed of the result `key`.
    fn of(&self, key: &str) -> Earlier<'_> {
        let time = self.samples.get(key).map_or(&[][..], Vec::as_slice);
        let cycles = self
            .cycles
            .get(key)
            .filter(|c| c.len() == time.len())
            .and_then(|c| c.iter().cloned().collect::<Option<Vec<_>>>());
        Earlier { time, cycles }
    }
}

impl Comparison {
    /// Rows the gate finds worse than A by more than `threshold_pct`
    /// percent ([`Comparison::gate`]).
    pub fn regressions(&self, threshold_pct: f64) -> Vec<&Row> {
        let g = self.gate(threshold_pct);
        self.rows
            .iter()
            .filter(|r| g.regressions.contains(&r.key))
            .collect()
    }

    /// The gate at `threshold_pct`: for every compared line, the one-sided
    /// Welch test (on logs, in core cycles where both runs measured the
    /// clock) of "B is worse than A by at most the threshold", with
    /// Holm–Bonferroni over all lines tested at α = 1 − confidence.
    pub fn gate(&self, threshold_pct: f64) -> Gate {
        self.evaluate_gate(threshold_pct).0
    }

    /// The comparison with its gate at `threshold_pct` applied: each
    /// row's gate p-values and conclusion filled in, and the gate kept
    /// (the table's footer then says what it tested).
    pub fn gated(mut self, threshold_pct: f64) -> Comparison {
        let (gate, lines) = self.evaluate_gate(threshold_pct);
        for (row, line) in self.rows.iter_mut().zip(lines) {
            if let Some((p, p_holm, verdict)) = line {
                row.p_gate = p;
                row.p_gate_holm = p_holm;
                row.gate = Some(verdict);
                if verdict == GateLine::Dismissed {
                    if let Some(note) = row.judged.as_ref().and_then(|j| j.known_state.clone()) {
                        if !row.note.as_deref().is_some_and(|n| n.contains(&note)) {
                            add_note(row, note);
                        }
                    }
                }
            }
        }
        self.gate = Some(gate);
        self
    }

    /// The gate, and per row what it says about the row.
    fn evaluate_gate(&self, threshold_pct: f64) -> (Gate, Vec<GateCell>) {
        let alpha = 1.0 - self.confidence;
        let mut lines: Vec<GateCell> = vec![None; self.rows.len()];
        let mut tested: Vec<(usize, f64)> = Vec::new();
        let mut power: Vec<(usize, Welch, f64, bool)> = Vec::new();
        let mut in_cycles = 0;
        for (i, row) in self.rows.iter().enumerate() {
            let Some(j) = &row.judged else { continue };
            let (w, cycles) = match j.cycles {
                Some(c) => (c, true),
                None => (j.time, false),
            };
            let worse = Welch {
                diff: if j.higher_better { -w.diff } else { w.diff },
                ..w
            };
            let delta = if j.logs {
                (1.0 + threshold_pct / 100.0).ln()
            } else {
                threshold_pct / 100.0
            };
            in_cycles += usize::from(cycles);
            tested.push((i, worse.p_greater(delta)));
            power.push((i, worse, delta, j.logs));
        }
        let level = alpha / tested.len().max(1) as f64;
        let catches = power
            .iter()
            .map(|(i, w, delta, logs)| {
                let row = &self.rows[*i];
                let df = power_df(row.blocks_a.min(row.blocks_b)).min(w.df);
                (row.key.clone(), catches_pct(w.se, df, *delta, *logs, level))
            })
            .collect();
        let p: Vec<f64> = tested.iter().map(|t| t.1).collect();
        let adjusted = yamba_stats::holm(&p);
        let (mut regressions, mut dismissed, mut undecided) = (Vec::new(), Vec::new(), Vec::new());
        for ((i, p), p_holm) in tested.iter().zip(&adjusted) {
            let row = &self.rows[*i];
            let j = row.judged.as_ref().expect("tested rows are judged");
            let rejected = *p_holm <= alpha;
            // A pass in cycles whose estimate is past the threshold, on a
            // line whose time moved and whose cycles could not confirm it,
            // decides nothing.
            let unconfirmed = row.verdict == Verdict::Unconfirmed
                && row.worse_pct.is_some_and(|w| w > threshold_pct);
            let line = if !rejected && unconfirmed {
                undecided.push((row.key.clone(), TooFewWhy::CyclesUnconfirmed));
                GateLine::Undecided
            } else if !rejected {
                GateLine::Pass
            } else if j.known_state.is_some() || followed_the_clock(row) {
                dismissed.push(row.key.clone());
                GateLine::Dismissed
            } else {
                regressions.push(row.key.clone());
                GateLine::Regression
            };
            lines[*i] = Some((Some(*p), Some(*p_holm), line));
        }
        let mut one_process = Vec::new();
        for (i, row) in self.rows.iter().enumerate() {
            if self.one_process.get(i).copied().unwrap_or(false) {
                one_process.push(row.key.clone());
                lines[i] = Some((None, None, GateLine::OneProcess));
            } else if let Some(Some(why)) = self.too_few.get(i) {
                undecided.push((row.key.clone(), *why));
                lines[i] = Some((None, None, GateLine::Undecided));
            }
        }
        let outcome = if !regressions.is_empty() {
            GateOutcome::Regression
        } else if !undecided.is_empty() {
            GateOutcome::Undecided
        } else {
            GateOutcome::Pass
        };
        (
            Gate {
                threshold_pct,
                alpha,
                correction: "holm",
                tested: tested.len(),
                tested_in_cycles: in_cycles,
                regressions,
                dismissed,
                undecided,
                one_process,
                catches,
                outcome,
            },
            lines,
        )
    }

    /// Benjamini–Hochberg over every compared line at q = 1 − confidence:
    /// the table's verdicts.
    fn call_moved_lines(&mut self) {
        let alpha = 1.0 - self.confidence;
        let judged: Vec<usize> = (0..self.rows.len())
            .filter(|&i| self.rows[i].judged.is_some())
            .collect();
        // A time is called only when its cycles moved too: the line's
        // p-value is the larger of the two (an intersection-union test).
        let p: Vec<f64> = judged
            .iter()
            .map(|&i| {
                let j = self.rows[i].judged.as_ref().unwrap();
                let pt = j.time.p_two_sided();
                j.cycles.map_or(pt, |c| pt.max(c.p_two_sided()))
            })
            .collect();
        let q = yamba_stats::benjamini_hochberg(&p);
        let m = judged.len().max(1) as f64;
        // The largest p-value BH rejected: what a time alone would have
        // had to reach (at least the level of a single discovery).
        let cutoff = p
            .iter()
            .zip(&q)
            .filter(|(_, q)| **q <= alpha)
            .map(|(p, _)| *p)
            .fold(alpha / m, f64::max);
        self.compared = judged.len();
        let (confidence, min_change) = (self.confidence, self.min_change_pct);
        for (k, &i) in judged.iter().enumerate() {
            let row = &mut self.rows[i];
            row.q_value = Some(q[k]);
            let j = row.judged.clone().unwrap();
            let est = row.change_pct.unwrap_or(0.0);
            let excludes_zero = |(lo, hi): (f64, f64)| lo > 0.0 || hi < 0.0;
            let ci_ok = row.ci_pct.is_some_and(excludes_zero);
            let mut called = q[k] <= alpha && ci_ok && est.abs() >= min_change;
            let mut unconfirmed = false;
            if let Some(c) = j.cycles {
                let est_c = row.change_cycles_pct.unwrap_or(0.0);
                let ci_c = pct_interval(&c, j.logs, confidence);
                let cycles_agree = excludes_zero(ci_c)
                    && est_c.signum() == est.signum()
                    && est_c.abs() >= min_change;
                let time_moved = j.time.p_two_sided() <= cutoff && ci_ok && est.abs() >= min_change;
                if time_moved && !cycles_agree {
                    let (ca, cb) = j.clocks.clone().unwrap_or_default();
                    // The cycles went the same way by as much, but their
                    // processes' clock readings spread too far to show it:
                    // not the clock's doing, only not confirmed.
                    unconfirmed = est_c.signum() == est.signum()
                        && est_c.abs() >= 0.5 * est.abs()
                        && !excludes_zero(ci_c);
                    let said = if unconfirmed {
                        format!(
                            "{UNCONFIRMED}: {est_c:+.1}% in cycles, interval [{:+.1}%, {:+.1}%] (clock {ca} in A, {cb} in B)",
                            ci_c.0, ci_c.1
                        )
                    } else {
                        format!(
                            "{FOLLOWS_CLOCK}: {est_c:+.1}% in cycles (clock {ca} in A, {cb} in B)"
                        )
                    };
                    add_note(row, said);
                }
                called &= cycles_agree;
            }
            // A difference in states the baseline's configuration has
            // shown on this machine before is not a change, confirmed in
            // cycles or not.
            if unconfirmed {
                if let Some(note) = j.known_state.clone() {
                    unconfirmed = false;
                    add_note(row, note);
                }
            }
            if called {
                if let Some(note) = j.known_state {
                    called = false;
                    add_note(row, note);
                }
            }
            row.verdict = if unconfirmed {
                Verdict::Unconfirmed
            } else if !called {
                Verdict::Same
            } else if (est > 0.0) != j.higher_better {
                Verdict::Slower
            } else {
                Verdict::Faster
            };
        }
    }
}

/// What the gate says about one row, where it says anything: the
/// one-sided p-value, the same after Holm's adjustment, the conclusion.
type GateCell = Option<(Option<f64>, Option<f64>, GateLine)>;

/// The start of the note on a time that moved only with the core clock.
const FOLLOWS_CLOCK: &str = "follows the core clock";

/// The start of the note on a time whose cycles moved as far but too
/// unevenly to be significant (a disturbed clock reading in a process).
const UNCONFIRMED: &str = Verdict::UNCONFIRMED_WORDS;

fn followed_the_clock(row: &Row) -> bool {
    row.note
        .as_deref()
        .is_some_and(|n| n.contains(FOLLOWS_CLOCK))
}

/// A Welch interval as a change in percent.
fn pct_interval(w: &Welch, logs: bool, confidence: f64) -> (f64, f64) {
    let (lo, hi) = w.ci(confidence);
    (to_pct(lo, logs), to_pct(hi, logs))
}

/// A log ratio (or a relative difference) as a change in percent.
fn to_pct(x: f64, logs: bool) -> f64 {
    if logs {
        x.exp_m1() * 100.0
    } else {
        x * 100.0
    }
}

/// Compares run `b` against run `a` at `confidence` (e.g. 0.95).
pub fn compare(a: &ResultsFile, b: &ResultsFile, confidence: f64) -> Comparison {
    compare_with(a, b, confidence, &EarlierRuns::default())
}

/// Whether a run replicated its results in fresh processes: a precise run
/// (not `--quick`) of at least 2 blocks, as its `config` records.
fn replicated_run(f: &ResultsFile) -> bool {
    let quick = f
        .config
        .get("quick")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let reps = f
        .config
        .get("repetitions")
        .and_then(|v| v.as_u64())
        .unwrap_or(1);
    !quick && reps >= 2
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
    let replicated = (replicated_run(a), replicated_run(b));
    let mut rows = Vec::new();
    let (mut too_few, mut one_process) = (Vec::new(), Vec::new());
    let mut seen = std::collections::BTreeSet::new();
    for ra in &a.results {
        let key = ra.key();
        if !seen.insert(key.clone()) {
            continue;
        }
        let (row, few, one) = match bs.get(&key) {
            Some(rb) => compare_one(ra, rb, confidence, &earlier.of(&key), replicated),
            None => (lone_row(ra, true), None, false),
        };
        rows.push(row);
        too_few.push(few);
        one_process.push(one);
    }
    for rb in &b.results {
        if seen.insert(rb.key()) {
            rows.push(lone_row(rb, false));
            too_few.push(None);
            one_process.push(false);
        }
    }
    let mut c = Comparison {
        confidence,
        min_change_pct,
        warnings,
        rows,
        min_blocks: MIN_BLOCKS,
        compared: 0,
        earlier_runs: earlier.runs,
        earlier_source: earlier.source.clone(),
        gate: None,
        too_few,
        one_process,
    };
    c.call_moved_lines();
    c
}

fn status_name(s: Status) -> String {
    s.as_str().to_string()
}

/// A row for a result present in only one run (`in_a`: which).
fn lone_row(r: &BenchResult, in_a: bool) -> Row {
    let status = Some(status_name(r.status));
    let (n, med) = (r.observations.len(), r.value());
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
        q_value: None,
        change_cycles_pct: None,
        p_cycles: None,
        verdict: Verdict::NotCompared,
        worse_pct: None,
        p_gate: None,
        p_gate_holm: None,
        gate: None,
        note: Some(if in_a { "only in A" } else { "only in B" }.into()),
        judged: None,
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

/// An earlier run's process medians as its own estimate stands on them:
/// those a shared core moved left out, as A's and B's are
/// ([`unshared_blocks`]). A result whose value describes a shared core
/// gives none: its processes show the core's state, not the machine's, and
/// a range stretched by them hides a real change (docs/certainty.md: a
/// planted 6% on getppid went uncalled in 5 of 10 pairs behind one earlier
/// run whose median of processes, counting one on a shared core, read
/// 7.5% high). `None` also with fewer than 2 processes.
pub fn earlier_samples(r: &BenchResult) -> Option<Vec<f64>> {
    let s = match r
        .certainty
        .as_ref()
        .filter(|c| c.block == BlockKind::Process)
    {
        Some(c) if c.describes_shared_core() => return None,
        Some(c) => finite(
            &c.kept_blocks()
                .iter()
                .map(|&i| c.medians[i])
                .collect::<Vec<_>>(),
        ),
        None => process_samples(r),
    };
    (s.len() > 1).then_some(s)
}

/// [`earlier_samples`] in core cycles: the same processes, each median
/// times its clock; `None` where a process's clock was not measured.
pub fn earlier_cycle_samples(r: &BenchResult) -> Option<Vec<f64>> {
    let c = r
        .certainty
        .as_ref()
        .filter(|c| c.block == BlockKind::Process && !c.describes_shared_core())?;
    c.cycles.as_ref()?;
    let all = c.block_cycles()?;
    let v = finite(&c.kept_blocks().iter().map(|&i| all[i]).collect::<Vec<_>>());
    (v.len() > 1).then_some(v)
}

/// The process medians in core cycles, where every process's clock was
/// measured.
pub fn cycle_samples(r: &BenchResult) -> Option<Vec<f64>> {
    let c = r
        .certainty
        .as_ref()
        .filter(|c| c.block == BlockKind::Process)?;
    c.cycles.as_ref()?;
    c.block_cycles()
}

/// The processes of each result to compare: all but those its own run
/// left out as moved by a shared core (`Certainty::kept_blocks`, judged
/// against that run's unshared processes). A run that spent half or more
/// of its processes on a shared core keeps them all, and its value
/// describes a shared core: against a side whose value is the core's
/// alone, such a side is compared on its processes alone where it has
/// [`MIN_BLOCKS`] of them — like with like (on a busy Zen 5 host the two
/// states of `fs.meta.stat` read 855–962 and 1056–1198 ns). With fewer,
/// the two states are compared only where the runs' own processes show
/// that a shared core does not move this benchmark
/// (`Certainty::shared_core_moves`). Where they show it does, and the
/// other side has [`MIN_BLOCKS`] processes that ran on a shared core, the
/// two are compared in that state: the shared processes of each side
/// (on the busy Zen 3 guest, 232 of the 253 lines six identical pairs
/// of precise runs left undecided). Otherwise the line is left with too
/// few processes and the gate is undecided: of 20 busy-hour runs on that
/// host, every line a 5% gate failed in their 10 identical pairs
/// compared a value on a shared core with one alone (docs/certainty.md).
/// `None` where neither side leaves anything out.
fn unshared_blocks(ra: &BenchResult, rb: &BenchResult) -> Option<Compared> {
    fn processes(r: &BenchResult) -> Option<&Certainty> {
        r.certainty
            .as_ref()
            .filter(|c| c.block == BlockKind::Process)
            .filter(|c| c.medians.iter().all(|m| m.is_finite()))
    }
    let (ca, cb) = (processes(ra)?, processes(rb)?);
    let mut c = Compared {
        a: ca.kept_blocks(),
        b: cb.kept_blocks(),
        shared_state: None,
    };
    // The side in the shared state, against one that is not.
    let shared_side = match (ca.describes_shared_core(), cb.describes_shared_core()) {
        (true, false) => Some(("A", ca, cb, &mut c.a, &mut c.b)),
        (false, true) => Some(("B", cb, ca, &mut c.b, &mut c.a)),
        _ => None,
    };
    if let Some((side, cert, other, kept, other_kept)) = shared_side {
        let alone = cert.alone_blocks();
        let moves = [ca.shared_core_moves(), cb.shared_core_moves()];
        let effect = if alone.len() >= MIN_BLOCKS {
            StateEffect::ComparedAlone
        } else if moves.contains(&Some(false)) && !moves.contains(&Some(true)) {
            StateEffect::DoesNotMove
        } else if other.shared_core.len() >= MIN_BLOCKS {
            StateEffect::ComparedShared
        } else if moves.contains(&Some(true)) {
            StateEffect::Moves
        } else {
            StateEffect::NotShown
        };
        let n = cert.medians.len();
        c.shared_state = Some(SharedState {
            side,
            shared: n - alone.len(),
            n,
            other_shared: other.shared_core.len(),
            effect,
        });
        match effect {
            StateEffect::DoesNotMove => {}
            StateEffect::ComparedShared => {
                *kept = cert.shared_core.clone();
                *other_kept = other.shared_core.clone();
            }
            _ => *kept = alone,
        }
    }
    let left_out = c.a.len() < ca.medians.len() || c.b.len() < cb.medians.len();
    (left_out || c.shared_state.is_some()).then_some(c)
}

/// Each side's processes to compare ([`unshared_blocks`]).
struct Compared {
    a: Vec<usize>,
    b: Vec<usize>,
    /// The side whose value describes a shared core, against one whose
    /// value is the core's alone.
    shared_state: Option<SharedState>,
}

/// A side whose value describes a shared core, against one whose value
/// is the core's alone.
struct SharedState {
    /// "A" or "B".
    side: &'static str,
    /// How many of its processes ran on a shared core, of how many.
    shared: usize,
    n: usize,
    /// How many of the other side's processes ran on a shared core.
    other_shared: usize,
    effect: StateEffect,
}

/// What is compared of the shared side, and why.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StateEffect {
    /// It has [`MIN_BLOCKS`] of them: like with like.
    ComparedAlone,
    /// Too few ran alone, but the other side has [`MIN_BLOCKS`] that
    /// ran on a shared core: both sides' shared processes compared, like
    /// with like in that state.
    ComparedShared,
    /// Too few ran alone, and a run's processes show that a shared core
    /// moves this benchmark.
    Moves,
    /// Too few ran alone, and neither run has processes in both states to
    /// show whether a shared core moves it.
    NotShown,
    /// Too few ran alone, and the runs' processes in both states show that
    /// a shared core does not move it: every process compared.
    DoesNotMove,
}

impl SharedState {
    /// What was compared, and why, in words.
    fn sentence(&self, left: (usize, usize)) -> String {
        let SharedState {
            side,
            shared,
            n,
            other_shared,
            effect,
        } = self;
        let head = format!(
            "{shared} of {side}'s {n} processes ran on a shared core (another hardware thread was using it), so {side}'s value describes a shared core"
        );
        let alone = n - shared;
        match effect {
            StateEffect::ComparedAlone => format!(
                "{head}: its {alone} processes alone compared, {} of A's and {} of B's left out",
                left.0, left.1
            ),
            StateEffect::ComparedShared => format!(
                "{head}, and too few ran alone to compare with the other's like with like: compared on a shared core in both, {side}'s {shared} against the other's {other_shared} that ran on one"
            ),
            StateEffect::Moves => format!(
                "{head}, and the runs' processes show a shared core moves this benchmark by more than {:.0}%: its {alone} alone cannot be compared with the other's like with like",
                yamba_results::results::SHARED_CORE_EFFECT * 100.0
            ),
            StateEffect::NotShown => format!(
                "{head}, and neither run has processes in both states to show whether that moves this benchmark: its {alone} alone cannot be compared with the other's like with like"
            ),
            StateEffect::DoesNotMove => format!(
                "{head}, which the runs' processes in both states show does not move this benchmark by more than {:.0}%: every process compared",
                yamba_results::results::SHARED_CORE_EFFECT * 100.0
            ),
        }
    }
}

/// The blocks' test on one side's samples: Welch on the logarithms when
/// every value is positive (timings, rates), else on the values with the
/// difference taken relative to A's mean (a loop time after subtracting
/// the dummy loop can be ≤ 0). `resolution`: the smallest step one block
/// value can show; its rounding (step²/12) floors each side's variance.
/// `None` when a side has fewer than 2 values, or A's mean is 0.
fn block_test(a: &[f64], b: &[f64], resolution: f64) -> Option<(Welch, bool)> {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    if a.iter().chain(b).all(|&v| v > 0.0) {
        let smaller = mean(a).min(mean(b));
        let floor = (resolution / smaller).powi(2) / 12.0;
        return Welch::of_logs(a, b, floor).map(|w| (w, true));
    }
    let ma = mean(a).abs();
    if ma == 0.0 || !ma.is_finite() {
        return None;
    }
    let w = Welch::with_variance_floor(a, b, resolution * resolution / 12.0)?;
    Some((
        Welch {
            diff: w.diff / ma,
            se: w.se / ma,
            df: w.df,
        },
        false,
    ))
}

/// One result in both runs: the row, why it could not be tested when the
/// runs could have replicated it, and whether it is measured in one
/// process by design. `replicated`: whether A's and B's runs replicated
/// their results in fresh processes.
fn compare_one(
    ra: &BenchResult,
    rb: &BenchResult,
    confidence: f64,
    earlier: &Earlier<'_>,
    replicated: (bool, bool),
) -> (Row, Option<TooFewWhy>, bool) {
    let mut s = Samples::unshared(ra, rb);
    s.leave_out_lone_processes(ra.unit.symbol());
    let mut row = Row::untested(ra, rb, &s);
    if let Some(note) = not_comparable(ra, rb, &s) {
        row.note = Some(note);
        return (row, None, false);
    }
    if s.a.len() < MIN_BLOCKS || s.b.len() < MIN_BLOCKS {
        let (why, by_design) = too_few(&mut row, ra, rb, &s, replicated);
        return (row, why, by_design);
    }
    row.note = s.shared_note.clone().or_else(|| s.state_note.clone());
    if let Some(lone) = &s.lone_note {
        add_note(&mut row, lone.clone());
    }
    let why = test_blocks(&mut row, ra, rb, &s, confidence, earlier);
    (row, why, false)
}

/// Each side's per-process samples, in time and (where measured) in core
/// cycles, less the processes a shared core moved.
struct Samples {
    a: Vec<f64>,
    b: Vec<f64>,
    cycles_a: Option<Vec<f64>>,
    cycles_b: Option<Vec<f64>>,
    /// What was left out for a shared core, in words.
    shared_note: Option<String>,
    /// A side in the shared state compared as measured, and why, in words.
    state_note: Option<String>,
    /// The processes left out as apart from most of their run, in words.
    lone_note: Option<String>,
}

impl Samples {
    fn unshared(ra: &BenchResult, rb: &BenchResult) -> Samples {
        let mut s = Samples {
            a: process_samples(ra),
            b: process_samples(rb),
            cycles_a: cycle_samples(ra),
            cycles_b: cycle_samples(rb),
            shared_note: None,
            state_note: None,
            lone_note: None,
        };
        let Some(c) = unshared_blocks(ra, rb) else {
            return s;
        };
        let left = (s.a.len() - c.a.len(), s.b.len() - c.b.len());
        if left != (0, 0) {
            let pick = |v: &[f64], k: &[usize]| k.iter().map(|&i| v[i]).collect::<Vec<f64>>();
            s.a = pick(&s.a, &c.a);
            s.b = pick(&s.b, &c.b);
            s.cycles_a = s.cycles_a.map(|v| pick(&v, &c.a));
            s.cycles_b = s.cycles_b.map(|v| pick(&v, &c.b));
            s.shared_note = Some(match &c.shared_state {
                Some(state) => state.sentence(left),
                None => format!(
                    "{} of A's and {} of B's processes ran on a shared core (another hardware thread was using it), which moved them: left out",
                    left.0, left.1
                ),
            });
        } else if let Some(state) = &c.shared_state {
            s.state_note = Some(state.sentence(left));
        }
        s
    }

    /// Leaves out of each side's test the processes that lie apart from
    /// most of their run ([`apart_from_most`]: [`LONE_MIN_SHARE`] from the
    /// group that holds more than half of them) and as far from most of the
    /// other run's. A change of the code moves every process of B; a few
    /// processes apart from their run's others and from the other run's are
    /// in a state of their own. On an AMD EPYC (Zen 4) guest about one
    /// process in ten of the inline getppid loop runs ~30% slow for its
    /// whole life, at any code address (docs/certainty.md, "Address or
    /// process?"), and one such process among four widened Welch's interval
    /// for a planted +3.6% to [−9.7, +34.9]: 4 of 10 planted pairs went
    /// uncalled, each with one. A process that lies where most of the other
    /// run's do is kept: it is evidence that nothing changed (a run mostly
    /// in a slow state whose one fast process reads as A does). The run's
    /// own value keeps every process (the mean over placements includes
    /// the state); the comparison asks whether the processes that agree
    /// moved. What it cannot see: a change that slows only a few of B's
    /// processes.
    fn leave_out_lone_processes(&mut self, unit: &str) {
        // A distance in percent means something for positive values only
        // (a loop time less the dummy's can be ≤ 0: tested as differences).
        if !self.a.iter().chain(&self.b).all(|&v| v > 0.0) {
            return;
        }
        let (cand_a, cand_b) = (apart_from_most(&self.a), apart_from_most(&self.b));
        let rest = |v: &[f64], out: &[usize]| -> Vec<f64> {
            (0..v.len())
                .filter(|i| !out.contains(i))
                .map(|i| v[i])
                .collect()
        };
        // ... left out only where they are far from the other run's most
        // too: a process that lies where the other run's do is evidence
        // that nothing changed.
        let far = |x: f64, from: &[f64]| {
            from.iter()
                .all(|y| (x - y).abs() >= LONE_MIN_SHARE * y.abs())
        };
        let (most_a, most_b) = (rest(&self.a, &cand_a), rest(&self.b, &cand_b));
        let lone_a: Vec<usize> = cand_a
            .into_iter()
            .filter(|&i| far(self.a[i], &most_b))
            .collect();
        let lone_b: Vec<usize> = cand_b
            .into_iter()
            .filter(|&i| far(self.b[i], &most_a))
            .collect();
        if lone_a.is_empty() && lone_b.is_empty() {
            return;
        }
        let said = |side: &str, v: &[f64], far: &[usize]| -> Option<String> {
            if far.is_empty() {
                return None;
            }
            let (lo, hi) = rest(v, far)
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            let values: Vec<String> = far
                .iter()
                .map(|&i| yamba_results::units::format_sig(v[i]))
                .collect();
            Some(format!(
                "{} of {side}'s at {} {unit} against {}–{} in its others",
                far.len(),
                values.join(", "),
                yamba_results::units::format_sig(lo),
                yamba_results::units::format_sig(hi),
            ))
        };
        let parts: Vec<String> = [said("A", &self.a, &lone_a), said("B", &self.b, &lone_b)]
            .into_iter()
            .flatten()
            .collect();
        self.lone_note = Some(format!(
            "processes apart from most of their run's and of the other run's left out as a state of the process (a change of the code moves every process): {}",
            parts.join("; ")
        ));
        self.a = rest(&self.a, &lone_a);
        self.b = rest(&self.b, &lone_b);
        self.cycles_a = self.cycles_a.take().map(|v| rest(&v, &lone_a));
        self.cycles_b = self.cycles_b.take().map(|v| rest(&v, &lone_b));
    }
}

/// How far, relative, processes must lie from most of their run, and of
/// the other run, to be left out of the test
/// ([`Samples::leave_out_lone_processes`]): beyond what placement and
/// layout move a process (a few percent), short of where the states it is
/// for lie (the slow state ~30%, a shared core 20–40%). With the run's own
/// outlier rule instead (4 robust σ and 3%), two identical runs of 6
/// processes spread 2% apart were called different in 32 of 400 pairs,
/// against at most 7% allowed.
pub const LONE_MIN_SHARE: f64 = 0.10;

/// Processes a side keeps after leaving out those apart from most of it
/// ([`Samples::leave_out_lone_processes`]): three, so that the rest can
/// still show a spread of their own.
pub const LONE_KEEPS: usize = 3;

/// The processes of one run that lie apart from most of its others: its
/// values split where sorted neighbours are [`LONE_MIN_SHARE`] apart, and
/// every group but the largest, where the largest holds more than half
/// of them and at least [`LONE_KEEPS`]; none otherwise (two groups alike
/// in size are two states, neither of them "most").
fn apart_from_most(v: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let starts = k == 0 || v[i] - v[order[k - 1]] >= LONE_MIN_SHARE * v[order[k - 1]].abs();
        if starts {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("a group was started").push(i);
    }
    let Some(most) = groups.iter().max_by_key(|g| g.len()) else {
        return Vec::new();
    };
    if most.len() < LONE_KEEPS || 2 * most.len() <= v.len() {
        return Vec::new();
    }
    let mut apart: Vec<usize> = (0..v.len()).filter(|i| !most.contains(i)).collect();
    apart.sort_unstable();
    apart
}

impl Row {
    /// The row before any test: what each side is, nothing called.
    fn untested(ra: &BenchResult, rb: &BenchResult, s: &Samples) -> Row {
        Row {
            key: ra.key(),
            unit: ra.unit.symbol().to_string(),
            status_a: Some(status_name(ra.status)),
            status_b: Some(status_name(rb.status)),
            n_a: ra.observations.len(),
            n_b: rb.observations.len(),
            blocks_a: s.a.len(),
            blocks_b: s.b.len(),
            median_a: ra.value(),
            median_b: rb.value(),
            change_pct: None,
            ci_pct: None,
            p_value: None,
            q_value: None,
            change_cycles_pct: None,
            p_cycles: None,
            verdict: Verdict::NotCompared,
            worse_pct: None,
            p_gate: None,
            p_gate_holm: None,
            gate: None,
            note: None,
            judged: None,
        }
    }
}

/// Why the two results cannot be compared at all — a damaged file, a
/// result not measured cleanly, different units, no observations — or
/// `None`.
fn not_comparable(ra: &BenchResult, rb: &BenchResult, s: &Samples) -> Option<String> {
    let tampered: Vec<&str> = [("A", ra), ("B", rb)]
        .iter()
        .filter(|(_, r)| yamba_results::check_result(r).is_err())
        .map(|(side, _)| *side)
        .collect();
    if !tampered.is_empty() {
        return Some(format!(
            "not compared: stored statistics disagree with the observations in {} (see the warning)",
            tampered.join(" and ")
        ));
    }
    let not_ok: Vec<String> = [("A", ra), ("B", rb)]
        .iter()
        .filter(|(_, r)| r.status != Status::Ok)
        .map(|(side, r)| format!("{} in {side}", status_name(r.status)))
        .collect();
    if !not_ok.is_empty() {
        return Some(not_ok.join(", "));
    }
    if ra.unit != rb.unit {
        return Some(format!(
            "unit {} in A, {} in B",
            ra.unit.symbol(),
            rb.unit.symbol()
        ));
    }
    if (s.a.is_empty() || s.b.is_empty()) && s.shared_note.is_none() {
        return Some("no observations".into());
    }
    None
}

/// Whether a larger value is the better one for a line: B's word (the
/// newer build's) where it says, else A's own reading
/// ([`BenchResult::higher_is_better`]: its word, else its unit's rule) — a
/// file from before results said so compared with one that does (a
/// parallelism read as a time called a rise "slower").
fn higher_is_better(ra: &BenchResult, rb: &BenchResult) -> bool {
    rb.better_higher.unwrap_or_else(|| ra.higher_is_better())
}

/// Fewer processes a side than the test needs: the change as it looks,
/// nothing called, and why — with whether it is one process by design.
fn too_few(
    row: &mut Row,
    ra: &BenchResult,
    rb: &BenchResult,
    s: &Samples,
    replicated: (bool, bool),
) -> (Option<TooFewWhy>, bool) {
    let higher_better = higher_is_better(ra, rb);
    // Say how large the change looks, but call nothing.
    if let (Some(a), Some(b)) = (row.median_a, row.median_b) {
        if a != 0.0 && b != 0.0 {
            let est = (b / a - 1.0) * 100.0;
            row.change_pct = Some(est);
            row.worse_pct = Some(if higher_better {
                (a / b - 1.0) * 100.0
            } else {
                est
            });
        }
    }
    row.verdict = Verdict::TooFew;
    // One process's interval: over its batches, or over the
    // placements its code ran at (a one-process curve of the harness).
    let batch = |r: &BenchResult| {
        r.certainty
            .as_ref()
            .is_some_and(|c| matches!(c.block, BlockKind::Batch | BlockKind::Placement))
    };
    // A precise run that replicates its results measured this one in
    // one process: a curve or sweep too costly to repeat.
    let by_design = batch(ra) && batch(rb) && (replicated.0 || replicated.1);
    let counts = format!("{} in A, {} in B", s.a.len(), s.b.len());
    if by_design {
        row.note = Some(format!(
            "measured in one process by design (a precise run does not replicate it): not tested ({counts})"
        ));
        return (None, true);
    }
    let why = if s.shared_note.is_some() {
        TooFewWhy::SharedCore
    } else if batch(ra) || batch(rb) || !replicated.0 || !replicated.1 {
        TooFewWhy::OneProcessRun
    } else {
        TooFewWhy::Other
    };
    row.note = Some(match &s.shared_note {
        Some(n) => format!(
            "too few processes on an unshared core: {counts}; the test needs ≥ {MIN_BLOCKS} a side ({n})"
        ),
        None => format!("too few processes: {counts}; the test needs ≥ {MIN_BLOCKS} a side"),
    });
    (Some(why), false)
}

/// Welch's test on the processes, in time and in cycles where both sides
/// measured them, filled into the row for the comparison-wide verdicts;
/// `Some` when no relative change exists (A's mean is zero).
fn test_blocks(
    row: &mut Row,
    ra: &BenchResult,
    rb: &BenchResult,
    s: &Samples,
    confidence: f64,
    earlier: &Earlier<'_>,
) -> Option<TooFewWhy> {
    let resolution = [ra, rb]
        .iter()
        .filter_map(|r| r.certainty.as_ref().map(|c| c.estimate.resolution))
        .fold(0.0, f64::max);
    let Some((time, logs)) = block_test(&s.a, &s.b, resolution) else {
        row.note = Some("A's mean is zero: no relative change".into());
        return Some(TooFewWhy::Other);
    };
    let pct = |w: &Welch| pct_interval(w, logs, confidence);
    row.change_pct = Some(to_pct(time.diff, logs));
    row.ci_pct = Some(pct(&time));
    row.p_value = Some(time.p_two_sided());
    // The cycles' test, on the same scale as the time's.
    let mhz = |r: &BenchResult| {
        r.certainty
            .as_ref()
            .map_or(0.0, |c| c.core_mhz.iter().copied().fold(0.0, f64::max))
    };
    let res_cycles = resolution * mhz(ra).max(mhz(rb)) / 1e3;
    let cycles = match (&s.cycles_a, &s.cycles_b) {
        (Some(ca), Some(cb)) => block_test(ca, cb, res_cycles)
            .filter(|(_, l)| *l == logs)
            .map(|(w, _)| w),
        _ => None,
    };
    if let Some(c) = &cycles {
        row.change_cycles_pct = Some(to_pct(c.diff, logs));
        row.p_cycles = Some(c.p_two_sided());
    }
    // What the threshold is judged against: the cycles where measured (a
    // time holds the host's clock step besides the code's change: a 2%
    // change measured 5–7% in time across a 2.7% turbo step).
    let judged_diff = cycles.as_ref().unwrap_or(&time).diff;
    let higher_better = higher_is_better(ra, rb);
    row.worse_pct = Some(to_pct(
        if higher_better {
            -judged_diff
        } else {
            judged_diff
        },
        logs,
    ));
    row.verdict = Verdict::Same;
    let clocks = cycles.as_ref().map(|_| {
        (
            fmt_mhz(&ra.certainty.as_ref().unwrap().core_mhz),
            fmt_mhz(&rb.certainty.as_ref().unwrap().core_mhz),
        )
    });
    row.judged = Some(Judged {
        time,
        cycles,
        logs,
        higher_better,
        // Judged where the threshold is: in cycles where the test was, and
        // every earlier run measured them too.
        known_state: match (&cycles, &s.cycles_a, &s.cycles_b, &earlier.cycles) {
            (Some(_), Some(ca), Some(cb), Some(ec)) => {
                known_state(ca, cb, ec, confidence, res_cycles, Scale::Cycles)
            }
            _ => known_state(
                &s.a,
                &s.b,
                earlier.time,
                confidence,
                resolution,
                Scale::Time(&ra.unit),
            ),
        },
        clocks,
    });
    None
}

/// Whether B's processes lie where A's and earlier runs of its
/// configuration lay (docs/certainty.md, "Machine states"): the note that
/// says so, or `None`.
fn known_state(
    sa: &[f64],
    sb: &[f64],
    earlier: &[Vec<f64>],
    confidence: f64,
    floor: f64,
    scale: Scale,
) -> Option<String> {
    if earlier.is_empty() {
        return None;
    }
    let known: Vec<Vec<f64>> = std::iter::once(sa.to_vec())
        .chain(earlier.iter().cloned())
        .collect();
    let b_value = yamba_stats::run_value(sb).unwrap_or(f64::NAN);
    if let Some((lo, hi, runs)) = yamba_stats::known_run_range(&known)
        .filter(|(lo, hi, _)| b_value >= lo - floor && b_value <= hi + floor)
    {
        return Some(format!(
            "within what identical runs give on this machine: medians of processes {} over A and {} earlier runs of its configuration",
            scale.range(lo, hi),
            runs - 1
        ));
    }
    if let Some(Ok(levels)) = yamba_stats::within_known_states(sb, &known, confidence, floor) {
        return Some(known_states_note(&levels, scale, earlier.len()));
    }
    None
}

/// What earlier runs of A's configuration showed of one result: each
/// run's process medians in time, and in core cycles where every one of
/// them measured its clocks.
struct Earlier<'r> {
    time: &'r [Vec<f64>],
    cycles: Option<Vec<Vec<f64>>>,
}

/// The scale a known state is read on, for its words.
#[derive(Clone, Copy)]
enum Scale<'u> {
    Time(&'u yamba_results::units::Unit),
    Cycles,
}

impl Scale<'_> {
    /// "lo–hi unit".
    fn range(self, lo: f64, hi: f64) -> String {
        use yamba_results::units::format_sig;
        match self {
            Scale::Time(unit) => {
                let (div, sym) = unit.scale_for(hi);
                format!("{}–{} {sym}", format_sig(lo / div), format_sig(hi / div))
            }
            Scale::Cycles => format!("{}–{} cycles", format_sig(lo), format_sig(hi)),
        }
    }
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
fn known_states_note(levels: &[yamba_stats::KnownLevel], scale: Scale, earlier: usize) -> String {
    let parts: Vec<String> = levels
        .iter()
        .map(|l| {
            format!(
                "{} of B's processes at {}, a level {} of {} runs of A's configuration reached",
                l.new_processes,
                scale.range(l.lo, l.hi),
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
        (
            "hypervisor",
            opt(&ma.hypervisor_name()),
            opt(&mb.hypervisor_name()),
        ),
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
