//! The numbers a reader came for, first: lmbench's headline primitives
//! (its summary's rows: system call, signal, fork, exec, context switch,
//! round trips, page fault, latency per cache level, bandwidth), one row
//! each with its interval and status, a column per run, and each later
//! run's verdict against the first as `yamba compare` gives it. The
//! details follow in the sections below.

use super::tables::value_cell;
use super::Run;
use crate::compare::{self, Verdict};
use crate::headline::{Headline, HEADLINES};
use std::fmt::Write as _;
use yamba_plot::svg::escape;
use yamba_results::units::format_sig;
use yamba_results::{BenchResult, Mode};

/// The hot result that fills `h` in `run`, if any.
fn find<'a>(run: &'a Run, h: &Headline) -> Option<&'a BenchResult> {
    h.ids
        .iter()
        .find_map(|id| super::tables::find(run, id, Mode::Hot))
}

/// The section; empty when no run has any headline result.
pub fn section(runs: &[Run], confidence: f64) -> String {
    let rows: Vec<&Headline> = HEADLINES
        .iter()
        .filter(|h| runs.iter().any(|run| find(run, h).is_some()))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let comparisons: Vec<compare::Comparison> = runs
        .iter()
        .skip(1)
        .map(|run| compare::compare(&runs[0].file, &run.file, confidence))
        .collect();
    let mut s = String::from(
        "<section id=\"key\"><h2>Key numbers</h2><table class=\"results key\"><caption>lmbench's headline primitives: each value with its interval, hot (best case)</caption><tr><th>primitive</th>",
    );
    for run in runs {
        let _ = write!(s, "<th class=\"num\">{}</th>", escape(&run.label));
    }
    for run in &runs[1..] {
        let _ = write!(
            s,
            "<th>{} vs {}</th>",
            escape(&run.label),
            escape(&runs[0].label)
        );
    }
    s += "</tr>";
    for h in rows {
        // One scale per row: the one its first value needs.
        let (unit, typical) = runs
            .iter()
            .filter_map(|run| find(run, h))
            .find_map(|r| r.value().map(|v| (r.unit, v)))
            .unwrap_or((yamba_results::Unit::Nanoseconds, 1.0));
        let (div, sym) = unit.scale_for(typical.abs());
        let _ = write!(
            s,
            "<tr><td class=\"id\" title=\"{}\">{} ({})</td>",
            escape(h.ids[0]),
            escape(h.name),
            escape(sym)
        );
        for (i, run) in runs.iter().enumerate() {
            s += &value_cell(i, find(run, h), div);
        }
        for c in &comparisons {
            let row = runs
                .first()
                .and_then(|first| find(first, h))
                .and_then(|r| c.rows.iter().find(|row| row.key == r.key()));
            s += &verdict_cell(row);
        }
        s += "</tr>";
    }
    s + "</table></section>"
}

/// A later run's verdict on one row, in words.
fn verdict_cell(row: Option<&compare::Row>) -> String {
    let Some(row) = row else {
        return "<td>not in both runs</td>".into();
    };
    let change = row
        .change_pct
        .map(|p| format!("{}{}%", if p >= 0.0 { "+" } else { "" }, format_sig(p)))
        .unwrap_or_default();
    let (class, words) = match row.verdict {
        Verdict::Faster => ("faster", format!("faster ({change})")),
        Verdict::Slower => ("slower", format!("slower ({change})")),
        Verdict::Same => ("same", format!("no significant change ({change})")),
        Verdict::TooFew => ("", format!("too few processes to test ({change})")),
        Verdict::Unconfirmed => ("", format!("{} ({change})", Verdict::UNCONFIRMED_WORDS)),
        Verdict::NotCompared => ("", "not compared".to_string()),
    };
    format!("<td class=\"{class}\">{}</td>", escape(&words))
}
