//! The report's tables: a table per area and unit (one unit per column,
//! hot and cold side by side, one column group per run), and the
//! predictions table in the 9front study's columns.

use super::{why_anchor, Run};
use crate::predict::{self, Agreement};
use std::fmt::Write as _;
use yamba_plot::svg::escape;
use yamba_results::units::format_sig;
use yamba_results::{BenchResult, Mode, Status, Unit};

/// A number as the tables print it: about four significant digits, and
/// thousands grouped from 10 000 up.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let s = format_sig(v);
    let (sign, rest) = match s.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", s.as_str()),
    };
    let (int, frac) = rest.split_once('.').unwrap_or((rest, ""));
    if int.len() < 5 {
        return s;
    }
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// What a unit measures, for a table's heading.
fn quantity(u: Unit) -> &'static str {
    match u {
        Unit::Nanoseconds => "Times",
        Unit::GigabytesPerSecond => "Bandwidths",
        Unit::Bytes => "Sizes",
        Unit::Count => "Counts",
        Unit::PerSecond => "Rates",
        Unit::Ratio => "Ratios",
    }
}

fn scope_mark(r: &BenchResult) -> &'static str {
    match &r.certainty {
        Some(c) if c.between_processes() => "",
        _ => "‡",
    }
}

/// One cell: the headline value and its interval, in `div` units.
pub(super) fn value_cell(run: usize, r: Option<&BenchResult>, div: f64) -> String {
    let Some(r) = r else {
        return "<td class=\"num\"></td>".into();
    };
    let badge = |r: &BenchResult| {
        format!(
            "<a class=\"badge {s}\" href=\"#{}\">{s}</a>",
            why_anchor(run, r),
            s = r.status.as_str()
        )
    };
    match (r.status, r.headline()) {
        (Status::Ok | Status::Withheld, Some((v, ci))) if v.is_finite() => {
            let ci = ci
                .map(|c| {
                    format!(
                        "<span class=\"ci\">[{}, {}]</span>",
                        num(c.lo / div),
                        num(c.hi / div)
                    )
                })
                .unwrap_or_else(|| "<span class=\"ci\">no interval</span>".into());
            let withheld = r.status == Status::Withheld;
            format!(
                "<td class=\"num{}\" title=\"{}\">{}{}{}{}</td>",
                if withheld { " withheld" } else { "" },
                escape(&r.description),
                num(v / div),
                scope_mark(r),
                if withheld { badge(r) } else { String::new() },
                ci
            )
        }
        _ => format!("<td class=\"num\">{}</td>", badge(r)),
    }
}

/// One cell of a cycles column: the headline in core cycles and its
/// interval, blank where the result recorded no core clock.
fn cycles_cell(r: Option<&BenchResult>) -> String {
    let cycles = r
        .filter(|r| matches!(r.status, Status::Ok | Status::Withheld))
        .and_then(BenchResult::headline_cycles)
        .filter(|(c, _)| c.is_finite());
    match cycles {
        Some((c, ci)) => format!(
            "<td class=\"num cycles\">{}{}</td>",
            num(c),
            ci.map(|i| format!("<span class=\"ci\">[{}, {}]</span>", num(i.lo), num(i.hi)))
                .unwrap_or_else(|| "<span class=\"ci\">no interval</span>".into())
        ),
        None => "<td class=\"num cycles\"></td>".into(),
    }
}

/// The tables of one area: one per unit, rows in run order, a column per
/// (run, mode) with hot and cold side by side.
pub fn area_tables(runs: &[Run], area: &str) -> String {
    // Result ids in order of appearance, with their unit.
    let mut ids: Vec<(String, Unit)> = Vec::new();
    let mut modes: Vec<Mode> = Vec::new();
    for run in runs {
        for r in run.file.results.iter().filter(|r| r.area == area) {
            if !ids.iter().any(|(id, _)| id == &r.id) {
                ids.push((r.id.clone(), r.unit));
            }
            if !modes.contains(&r.mode) {
                modes.push(r.mode);
            }
        }
    }
    modes.sort();
    let mut units: Vec<Unit> = Vec::new();
    for (_, u) in &ids {
        if !units.contains(u) {
            units.push(*u);
        }
    }
    let mut s = String::new();
    for unit in units {
        let rows: Vec<&String> = ids
            .iter()
            .filter(|(_, u)| *u == unit)
            .map(|(id, _)| id)
            .collect();
        // One scale for the whole table: the one its smallest value needs,
        // so no entry reads 0.00…; larger ones get their thousands grouped.
        let smallest = runs
            .iter()
            .flat_map(|run| run.file.results.iter())
            .filter(|r| r.area == area && r.unit == unit)
            .filter_map(|r| r.value())
            .filter(|v| v.is_finite() && *v != 0.0)
            .map(f64::abs)
            .fold(f64::INFINITY, f64::min);
        let (div, sym) = if smallest.is_finite() {
            unit.scale_for(smallest)
        } else {
            (1.0, unit.symbol())
        };
        let _ = write!(
            s,
            "<table class=\"results\" data-unit=\"{}\"><tr><th>{} ({})</th>",
            escape(unit.symbol()),
            quantity(unit),
            escape(sym)
        );
        // A cycles column beside each value column where some result of
        // the table recorded the core clock (times only).
        let with_cycles = runs.iter().any(|run| {
            run.file
                .results
                .iter()
                .any(|r| r.area == area && r.unit == unit && r.headline_cycles().is_some())
        });
        for run in runs {
            for m in &modes {
                let head = if runs.len() > 1 {
                    format!("{} {}", run.label, m.as_str())
                } else {
                    format!("{} ({sym})", mode_name(*m))
                };
                let _ = write!(s, "<th class=\"num\">{}</th>", escape(&head));
                if with_cycles {
                    let _ = write!(
                        s,
                        "<th class=\"num cycles\" title=\"the headline in core cycles: each block's value times the core clock measured while it ran\">cycles</th>"
                    );
                }
            }
            if modes.len() == 2 {
                let _ = write!(s, "<th class=\"num\">cold / hot</th>");
            }
        }
        s += "</tr>";
        for id in rows {
            let _ = write!(s, "<tr><td class=\"id\">{}</td>", escape(id));
            for (i, run) in runs.iter().enumerate() {
                for m in &modes {
                    s += &value_cell(i, find(run, id, *m), div);
                    if with_cycles {
                        s += &cycles_cell(find(run, id, *m));
                    }
                }
                if modes.len() == 2 {
                    let ratio = match (find(run, id, Mode::Hot), find(run, id, Mode::Cold)) {
                        (Some(h), Some(c)) if h.status == Status::Ok && c.status == Status::Ok => {
                            h.value().zip(c.value()).map(|(h, c)| c / h)
                        }
                        _ => None,
                    };
                    let _ = write!(
                        s,
                        "<td class=\"num\">{}</td>",
                        ratio
                            .filter(|r| r.is_finite())
                            .map(|r| format!("{}×", format_sig(r)))
                            .unwrap_or_default()
                    );
                }
            }
            s += "</tr>";
        }
        s += "</table>";
    }
    s
}

pub(super) fn find<'a>(run: &'a Run, id: &str, mode: Mode) -> Option<&'a BenchResult> {
    run.file
        .results
        .iter()
        .find(|r| r.id == id && r.mode == mode)
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Hot => "best case, hot",
        Mode::Cold => "worst case, cold",
    }
}

/// A value with the unit that suits `typical`.
fn scaled(v: f64, unit: Unit, typical: f64) -> String {
    let (div, sym) = unit.scale_for(typical);
    format!("{} {sym}", num(v / div))
}

fn range_text(r: predict::Range, unit: Unit) -> String {
    let (div, sym) = unit.scale_for(r.middle());
    format!("{} {sym}", predict::span(r.lo / div, r.hi / div))
}

/// The 9front study's table, per run: hardware guess, software
/// multiplier, prediction, measured, standard deviation, and the ratio.
pub fn predictions_section(runs: &[Run]) -> String {
    let mut s = format!(
        "<section id=\"predictions\"><h2>Predictions</h2><p class=\"lede\">A hardware guess from the machine's facts, times a software multiplier for what the system adds, set against the measured value (each part's basis on hover). Ratios are measured / the prediction's geometric middle; a result more than {}× outside its predicted range is flagged far. Models and their reasons: docs/predictions.md.</p>",
        predict::FAR
    );
    for run in runs {
        let preds = predict::predict(&run.file);
        if runs.len() > 1 {
            let _ = write!(s, "<h3>{}</h3>", escape(&run.label));
        }
        if preds.is_empty() {
            s += "<p>No result of this run has a model.</p>";
            continue;
        }
        let far = preds
            .iter()
            .filter(|p| p.agreement == Agreement::Far)
            .count();
        let _ = write!(
            s,
            "<p>{} results predicted; {} far from their prediction.</p>",
            preds.len(),
            far
        );
        s += "<table class=\"predictions\"><tr><th>result</th><th>Hardware guess</th><th>Software multiplier</th><th class=\"num\">Prediction</th><th class=\"num\">Measured</th><th class=\"num\">Std dev</th><th class=\"num\">measured / predicted</th><th></th></tr>";
        for p in &preds {
            let typical = p
                .measured
                .or(p.predicted.map(|r| r.middle()))
                .unwrap_or(1.0);
            // The basis of each part on hover: one line per row.
            let hw = match &p.hardware {
                Ok(t) => format!(
                    "<td title=\"{}\">{}</td>",
                    escape(&t.how),
                    escape(&range_text(t.range, p.unit))
                ),
                Err(why) => format!("<td title=\"{}\">unknown</td>", escape(why)),
            };
            let sw = format!(
                "<td title=\"{}\">×{}</td>",
                escape(&p.software.how),
                predict::span(p.software.range.lo, p.software.range.hi)
            );
            let class = match p.agreement {
                Agreement::Far => "far",
                Agreement::Near => "near",
                Agreement::Within | Agreement::LowerBound => "within",
                Agreement::Unknown => "",
            };
            let measured = match (p.measured, p.status) {
                (Some(m), Status::Ok) => scaled(m, p.unit, typical),
                (Some(m), st) => format!("{} ({})", scaled(m, p.unit, typical), st.as_str()),
                (None, st) => st.as_str().to_string(),
            };
            let _ = write!(
                s,
                "<tr data-agreement=\"{}\"><td class=\"id\" title=\"{}\">{}</td>{hw}{sw}<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num {class}\">{}</td><td class=\"{class}\">{}</td></tr>",
                p.agreement.as_str(),
                escape(p.model.rationale),
                escape(&p.id),
                p.predicted
                    .map(|r| escape(&range_text(r, p.unit)))
                    .unwrap_or_else(|| "—".into()),
                escape(&measured),
                p.stddev
                    .map(|sd| escape(&scaled(sd, p.unit, typical)))
                    .unwrap_or_else(|| "—".into()),
                p.ratio
                    .map(|r| format!("{}×", format_sig(r)))
                    .unwrap_or_else(|| "—".into()),
                match p.agreement {
                    Agreement::Far => "⚑ far".to_string(),
                    a => a.as_str().to_string(),
                }
            );
        }
        s += "</table>";
    }
    s + "</section>"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands_from_ten_thousand() {
        assert_eq!(num(1234.4), "1234");
        assert_eq!(num(8575359.9), "8,575,360");
        assert_eq!(num(-12345.0), "-12,345");
        assert_eq!(num(1.23456), "1.235");
        assert_eq!(num(f64::NAN), "—");
    }
}
