//! `yamba compare`'s text: the table of a [`Comparison`], its footers and
//! the gate's verdict in words. The comparison itself (which lines moved,
//! the gate's tests) is analysis, in [`yamba_analysis::compare`], re-exported
//! here so a reader of comparisons has one path.

use std::fmt::Write as _;
pub use yamba_analysis::compare::*;

/// The comparison as a text table, warnings first.
pub fn table(c: &Comparison) -> String {
    let mut out = String::new();
    for w in &c.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let ci_head = format!("{:.0}% CI", c.confidence * 100.0);
    let gated = c.gate.is_some();
    let mut lines = vec![vec![
        "benchmark".to_string(),
        "A".into(),
        "B".into(),
        "change".into(),
        ci_head,
        "p".into(),
        "q".into(),
        "processes".into(),
    ]];
    if gated {
        lines[0].push("gate".into());
    }
    lines[0].push("verdict".into());
    let p_fmt = |p: Option<f64>| match p {
        Some(p) if p < 0.001 => format!("{p:.0e}"),
        Some(p) => format!("{p:.3}"),
        None => "-".into(),
    };
    for r in &c.rows {
        let verdict = match (&r.note, r.verdict) {
            (Some(n), Verdict::NotCompared | Verdict::TooFew) => n.clone(),
            (Some(n), Verdict::Unconfirmed) => format!("? ({n})"),
            (Some(n), Verdict::Same) => format!("~ ({n})"),
            _ => r.verdict.as_str().to_string(),
        };
        let mut line = vec![
            r.key.clone(),
            fmt_val(r.median_a, &r.unit),
            fmt_val(r.median_b, &r.unit),
            r.change_pct.map(fmt_pct).unwrap_or_else(|| "-".into()),
            r.ci_pct
                .map(|(lo, hi)| format!("[{}, {}]", fmt_pct(lo), fmt_pct(hi)))
                .unwrap_or_else(|| "-".into()),
            p_fmt(r.p_value),
            p_fmt(r.q_value),
            format!("{}+{}", r.blocks_a, r.blocks_b),
        ];
        if gated {
            line.push(
                match r.gate {
                    Some(GateLine::Regression) => "REGRESSION",
                    Some(GateLine::Pass) => "pass",
                    Some(GateLine::Dismissed) => "pass (known)",
                    Some(GateLine::Undecided) => "undecided",
                    Some(GateLine::OneProcess) => "not gated",
                    None => "-",
                }
                .into(),
            );
        }
        line.push(verdict);
        lines.push(line);
    }
    let cols = lines[0].len();
    let mut widths = vec![0usize; cols];
    for l in &lines {
        for (w, cell) in widths.iter_mut().zip(l.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for l in &lines {
        let mut line = String::new();
        for (i, (cell, w)) in l.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i == 0 || i + 1 == cols || (gated && i + 2 == cols) {
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
    // Said only when there are any: a time that moved whose cycles could
    // neither confirm nor rule it out.
    let unconfirmed = match count(Verdict::Unconfirmed) {
        0 => String::new(),
        n => format!("{n} {}, ", Verdict::UNCONFIRMED_WORDS),
    };
    let _ = writeln!(
        out,
        "{} slower, {} faster, {} unchanged, {unconfirmed}{} with too few processes, {} not compared",
        count(Verdict::Slower),
        count(Verdict::Faster),
        count(Verdict::Same),
        count(Verdict::TooFew),
        count(Verdict::NotCompared),
    );
    let _ = writeln!(out, "{}", footer(c));
    if let Some(g) = &c.gate {
        let _ = writeln!(out, "{}", gate_footer(g));
    }
    out
}

/// The test, its sample unit, its correction and its minimum counts, in words.
pub fn footer(c: &Comparison) -> String {
    format!(
        "test: Welch's t on the logarithms of per-process values (one sample = one process of the run; \
         observations inside a process are not independent); change: ratio of geometric means, with its \
         {conf}% interval; valid from {min} processes a side (yamba run's default is {blocks}, more where they \
         spread; --quick runs have 1), where the interval is wide: with 3 a side about ±2.3–3.5 times the \
         processes' spread; which lines moved: Benjamini–Hochberg over the {m} compared lines at \
         false-discovery rate {q} (q: the adjusted p-value); a time is called only when its core cycles (the \
         processes' measured core clock) moved too; changes under {minc}% are not called; {states}",
        conf = c.confidence * 100.0,
        min = c.min_blocks,
        blocks = yamba_results::results::PRECISE_BLOCKS,
        m = c.compared,
        q = fmt_level(1.0 - c.confidence),
        minc = c.min_change_pct,
        states = states_footer(c)
    )
}

/// A level such as 0.05, without float noise.
fn fmt_level(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Why lines could not be tested, in words, with counts.
fn undecided_reasons(g: &Gate) -> String {
    let n = |why: TooFewWhy| g.undecided.iter().filter(|(_, w)| *w == why).count();
    let mut parts = Vec::new();
    let one = n(TooFewWhy::OneProcessRun);
    if one > 0 {
        parts.push(format!(
            "{one} measured in one process by a --quick or --repeat 1 run (batches inside one process \
             are not independent between runs)"
        ));
    }
    let shared = n(TooFewWhy::SharedCore);
    if shared > 0 {
        parts.push(format!(
            "{shared} left with fewer than {MIN_BLOCKS} processes a side in one state of the core (alone, or \
             shared with another hardware thread, which moves them)"
        ));
    }
    let other = n(TooFewWhy::Other);
    if other > 0 {
        parts.push(format!(
            "{other} with fewer than {MIN_BLOCKS} processes measured a side"
        ));
    }
    let unconfirmed = n(TooFewWhy::CyclesUnconfirmed);
    if unconfirmed > 0 {
        parts.push(format!(
            "{unconfirmed} whose time moved and whose core cycles, which the gate tests, went past the \
             threshold too unevenly to confirm or rule it out"
        ));
    }
    parts.join("; ")
}

/// What the gate tested, at what level, with which correction, and what
/// it could not test.
pub fn gate_footer(g: &Gate) -> String {
    let mut s = format!(
        "gate: {} lines tested against a {}% threshold ({} in core cycles): one-sided Welch on logs of \
         \"B is worse than A by at most {}%\", Holm–Bonferroni at family-wise α = {} (the chance that any \
         line of two runs without such a slowdown fails is at most α): {} regression(s)",
        g.tested,
        g.threshold_pct,
        g.tested_in_cycles,
        g.threshold_pct,
        fmt_level(g.alpha),
        g.regressions.len(),
    );
    if !g.dismissed.is_empty() {
        let _ = write!(
            s,
            ", {} rejected but not regressions (a known state of the machine, or the core clock)",
            g.dismissed.len()
        );
    }
    if g.undecided.is_empty() {
        s.push_str("; every line the runs replicated was tested");
    } else {
        let _ = write!(
            s,
            "; {} could not be tested: {}",
            g.undecided.len(),
            undecided_reasons(g)
        );
    }
    if let Some(power) = power_clause(g) {
        s.push_str(&power);
    }
    if !g.one_process.is_empty() {
        let _ = write!(
            s,
            "; {} not gated: measured in one process by design (curves and sweeps a precise run does not \
             replicate; they do not make the gate undecided)",
            g.one_process.len()
        );
    }
    let _ = write!(
        s,
        "; outcome: {} (exit {})",
        match g.outcome {
            GateOutcome::Pass => "pass",
            GateOutcome::Regression => "regression",
            GateOutcome::Undecided => "undecided",
        },
        g.outcome.exit_code()
    );
    s
}

/// The gate's power over the tested lines, as a clause of the footer
/// (`None` when nothing was tested): the slowdown each line's spread lets
/// the gate catch in at least 9 of 10 pairs — its median, and how many
/// lines need more than twice the threshold (a regression of the
/// threshold's size passes there; the JSON names them).
fn power_clause(g: &Gate) -> Option<String> {
    let mut c: Vec<f64> = g
        .catches
        .iter()
        .map(|c| c.1)
        .filter(|x| x.is_finite())
        .collect();
    if c.is_empty() {
        return None;
    }
    c.sort_by(f64::total_cmp);
    let median = c[c.len() / 2];
    let weak = c.iter().filter(|&&x| x > 2.0 * g.threshold_pct).count();
    // A line with 2 processes a side gets 1 degree of freedom (power_df),
    // and t at α/m is then in the hundreds: past 1000% the figure means
    // "nothing".
    let median = if median > 1000.0 {
        "over +1000%".to_string()
    } else {
        fmt_pct(median)
    };
    Some(format!(
        "; its power: a lone slowdown it catches in at least 9 of 10 pairs as spread as these is \
         {median} on the median line, above {} on {weak} of {} (per line: the JSON's gate.catches)",
        fmt_pct(2.0 * g.threshold_pct),
        c.len()
    ))
}

/// The one line a gate that could not decide says (`None` when it decided).
pub fn undecided_line(g: &Gate) -> Option<String> {
    (g.outcome == GateOutcome::Undecided).then(|| {
        let any = |w: &[TooFewWhy]| g.undecided.iter().any(|(_, why)| w.contains(why));
        let advice = if any(&[TooFewWhy::OneProcessRun, TooFewWhy::Other]) {
            format!(
                "Compare runs with ≥ {MIN_BLOCKS} processes a side (a precise run has {}) to decide",
                yamba_results::results::PRECISE_BLOCKS
            )
        } else if any(&[TooFewWhy::SharedCore]) {
            "Run again when no other hardware thread shares the pinned core, or with more processes \
             (--repeat), to decide"
                .to_string()
        } else {
            "Run again, or with more processes (--repeat), to decide".to_string()
        };
        format!(
            "undecided: {} line(s) could not be tested against the {}% threshold — {}; nothing was found \
             worse among the {} tested. {advice}",
            g.undecided.len(),
            g.threshold_pct,
            undecided_reasons(g),
            g.tested,
        )
    })
}

/// The line a failed gate adds when A's configuration had too few earlier
/// runs to tell a state of the machine from a change (`None` otherwise):
/// a host state that lasted the whole baseline run reads as a change of
/// the code. On an AMD EPYC guest with a busy neighbour, the first pair of
/// a fresh history failed on a line that, with six earlier runs of the same
/// build, passed as a known state (docs/certainty.md, "Where the time goes").
pub fn unknown_states_line(c: &Comparison) -> Option<String> {
    let g = c.gate.as_ref()?;
    (g.outcome == GateOutcome::Regression && c.earlier_runs < yamba_stats::MIN_KNOWN_RUNS).then(|| {
        format!(
            "the baseline's configuration had {} earlier run(s) (≥ {} needed to know this machine's states), \
             so a state of the machine that lasted A's run may have been called a change: run the baseline \
             again, or keep the history (`yamba run` stores each run), and compare again",
            c.earlier_runs,
            yamba_stats::MIN_KNOWN_RUNS
        )
    })
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
