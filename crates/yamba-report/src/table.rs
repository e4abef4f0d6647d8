//! The human-readable results table `yamba run` prints: one row per
//! result, the median with its 95% interval auto-scaled to a unit that
//! suits it, and every warning, skip and failure spelled out in the notes.

use yamba_results::units::format_sig;
use yamba_results::{BenchResult, Status};

/// Renders results as an aligned text table.
pub fn render(results: &[BenchResult]) -> String {
    let header = [
        "benchmark",
        "mode",
        "value [95% CI]",
        "min",
        "CV",
        "n",
        "unit",
        "notes",
    ];
    let rows: Vec<[String; 8]> = side_by_side(results).into_iter().map(row).collect();
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r.iter()).take(7) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        for (i, c) in cells.iter().enumerate() {
            if i == 7 {
                out.push_str(c);
            } else {
                let pad = widths[i].saturating_sub(c.chars().count());
                // Numbers right-aligned, text left-aligned.
                if (2..=5).contains(&i) {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(c);
                } else {
                    out.push_str(c);
                    out.push_str(&" ".repeat(pad));
                }
                out.push_str("  ");
            }
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    };
    line(&header.map(String::from), &mut out);
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&rule, &mut out);
    for r in &rows {
        line(r, &mut out);
    }
    if rows.iter().any(|r| r[2].ends_with(WITHIN_MARK)) {
        out.push_str(&format!(
            "\n{WITHIN_MARK} interval from one process only (a quick run, --repeat 1, or a benchmark measured in one process): it does not include the variation between runs; value: the mean of the processes' medians, or of one process's batch medians\n"
        ));
    }
    if rows
        .iter()
        .any(|r| r[7].split("; ").any(|n| n.starts_with(BUSY_SHORT)))
    {
        out.push_str(&format!(
            "\n{BUSY_SHORT}N%: other processes used N% of all CPUs' time while the benchmark ran; its numbers may be disturbed\n"
        ));
    }
    out
}

/// Results in run order, except that the cold row of an id follows its
/// hot row, so best and worst case read side by side.
fn side_by_side(results: &[BenchResult]) -> Vec<&BenchResult> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, r) in results.iter().enumerate() {
        first.entry(r.id.as_str()).or_insert(i);
    }
    let mut v: Vec<&BenchResult> = results.iter().collect();
    v.sort_by_key(|r| (first[r.id.as_str()], r.mode));
    v
}

/// Tables some benchmarks attach to present related results together
/// (`extra.comparison`: rows with `id`, `median_ns`, `status` and
/// optionally `transport`/`row` and `placement`/`column`), rendered after
/// the main table as rows × columns. Results of one mode whose
/// `extra.comparison_table` title is the same share one table (the
/// syscall shapes of several calls); `extra.comparison_rows` names the
/// first column (default "transport").
pub fn render_comparisons(results: &[BenchResult]) -> String {
    let mut out = String::new();
    // (heading, first column's name, rows), in order of first appearance.
    let mut tables: Vec<(String, String, Vec<&serde_json::Value>)> = Vec::new();
    for r in results {
        let Some(rows) = r.extra.get("comparison").and_then(|v| v.as_array()) else {
            continue;
        };
        let extra_text = |k: &str| r.extra.get(k).and_then(|v| v.as_str());
        let heading = match extra_text("comparison_table") {
            Some(title) => format!("{title} ({})", r.mode.as_str()),
            None => format!("{} ({}): {}", r.id, r.mode.as_str(), r.description),
        };
        let first = extra_text("comparison_rows")
            .unwrap_or("transport")
            .to_string();
        match tables.iter_mut().find(|t| t.0 == heading) {
            Some(t) => t.2.extend(rows),
            None => tables.push((heading, first, rows.iter().collect())),
        }
    }
    for (heading, first, rows) in tables {
        out.push_str(&format!("\n{heading}\n"));
        let text = |row: &serde_json::Value, k: &str| {
            row.get(k).and_then(|v| v.as_str()).map(str::to_string)
        };
        let placement = |row: &serde_json::Value| {
            text(row, "placement")
                .or_else(|| text(row, "column"))
                .unwrap_or_else(|| "median".into())
        };
        let transport = |row: &serde_json::Value| {
            text(row, "transport")
                .or_else(|| text(row, "row"))
                .or_else(|| text(row, "id"))
                .unwrap_or_default()
        };
        let cell = |row: &serde_json::Value| {
            let status = text(row, "status").unwrap_or_else(|| "ok".into());
            match row.get("median_ns").and_then(|v| v.as_f64()) {
                Some(ns) if status == "ok" => {
                    let (div, sym) = yamba_results::Unit::Nanoseconds.scale_for(ns);
                    format!("{} {sym}", format_sig(ns / div))
                }
                _ => status,
            }
        };
        let mut placements: Vec<String> = Vec::new();
        let mut transports: Vec<String> = Vec::new();
        for row in &rows {
            let (p, t) = (placement(row), transport(row));
            if !placements.contains(&p) {
                placements.push(p);
            }
            if !transports.contains(&t) {
                transports.push(t);
            }
        }
        let tw = transports
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(first.len());
        out.push_str(&format!("{first:tw$}"));
        for p in &placements {
            out.push_str(&format!("  {p:>12}"));
        }
        out.push('\n');
        for t in &transports {
            out.push_str(&format!("{t:tw$}"));
            for p in &placements {
                let c = rows
                    .iter()
                    .find(|row| placement(row) == *p && transport(row) == *t)
                    .map(|row| cell(row))
                    .unwrap_or_else(|| "-".into());
                out.push_str(&format!("  {c:>12}"));
            }
            out.push('\n');
        }
    }
    out
}

const BUSY_SHORT: &str = "busy ";

/// Shortens the runner's per-benchmark busy-machine warning, which would
/// otherwise repeat a sentence on every row; the table explains it once.
fn abbreviate(w: &str) -> String {
    match w
        .strip_prefix("machine busy: ")
        .and_then(|r| r.split_once('%'))
    {
        Some((pct, _)) => format!("{BUSY_SHORT}{pct}%"),
        None => w.to_string(),
    }
}

/// Marks an interval that does not cover the variation between runs.
const WITHIN_MARK: &str = "‡";

fn scope_mark(r: &BenchResult) -> &'static str {
    match &r.certainty {
        Some(c) if c.between_processes() => "",
        _ => WITHIN_MARK,
    }
}

fn row(r: &BenchResult) -> [String; 8] {
    let mut notes: Vec<String> = Vec::new();
    match r.status {
        Status::Ok => {}
        Status::Withheld => notes.push(format!(
            "WITHHELD: {}",
            r.reason.as_deref().unwrap_or("an assumption failed")
        )),
        Status::Skipped => notes.push(format!(
            "skipped: {}",
            r.reason.as_deref().unwrap_or("not runnable here")
        )),
        Status::Failed => notes.push(format!(
            "FAILED: {}",
            r.reason.as_deref().unwrap_or("unknown reason")
        )),
    }
    if r.summary.is_none() && r.extra.contains_key("comparison") {
        notes.push("see the comparison table below".into());
    }
    notes.extend(r.warnings.iter().map(|w| abbreviate(w)));
    let blank = || String::from("-");
    let (median, min, cv, n, unit) = match (&r.summary, r.headline(), r.status) {
        (Some(s), Some((value, ci)), Status::Ok | Status::Withheld) => {
            let (div, sym) = r.unit.scale_for(value);
            let ci = ci
                .map(|c| format!(" [{}, {}]", format_sig(c.lo / div), format_sig(c.hi / div)))
                .unwrap_or_default();
            (
                format!("{}{ci}{}", format_sig(value / div), scope_mark(r)),
                format_sig(s.min / div),
                s.cv.map(|c| format!("{:.1}%", c * 100.0))
                    .unwrap_or_else(blank),
                s.n.to_string(),
                sym.to_string(),
            )
        }
        _ => (
            blank(),
            blank(),
            blank(),
            blank(),
            r.unit.symbol().to_string(),
        ),
    };
    [
        r.id.clone(),
        r.mode.as_str().to_string(),
        median,
        min,
        cv,
        n,
        unit,
        notes.join("; "),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use yamba_results::{Mode, Unit};

    fn result(id: &str, obs: Vec<f64>, status: Status) -> BenchResult {
        let mut r = BenchResult::new(id, id, "cpu", Unit::Nanoseconds, Mode::Hot, "test");
        r.status = status;
        r.reason = (status != Status::Ok).then(|| "needs root".to_string());
        r.set_observations(obs);
        r
    }

    #[test]
    fn scales_and_explains() {
        let obs: Vec<f64> = (0..20).map(|i| 1500.0 + i as f64).collect();
        let t = render(&[
            result("cpu.a", obs, Status::Ok),
            result("cpu.b", vec![], Status::Skipped),
        ]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 6, "{t}");
        assert!(
            lines[5].starts_with("‡ interval from one process only"),
            "{t}"
        );
        assert!(lines[0].starts_with("benchmark"));
        assert!(lines[2].contains("1.510 [1.505, 1.514]‡"), "{t}");
        assert!(lines[2].contains("µs"), "{t}");
        assert!(lines[3].contains("skipped: needs root"), "{t}");
    }

    /// Two results with the same table title make one table: one row per
    /// call, one column per shape, a withheld cell shown as withheld.
    #[test]
    fn results_sharing_a_title_share_one_comparison_table() {
        let table_of = |call: &str, ns: [f64; 3], status: &str| {
            let mut r = result(&format!("cpu.syscall.{call}"), vec![ns[0]], Status::Ok);
            let rows: Vec<serde_json::Value> = ["inline", "call", "libc"]
                .iter()
                .zip(ns)
                .map(|(shape, ns)| {
                    serde_json::json!({"row": call, "column": shape, "median_ns": ns,
                        "status": if *shape == "libc" { status } else { "ok" }})
                })
                .collect();
            r.extra.insert("comparison".into(), serde_json::json!(rows));
            r.extra
                .insert("comparison_table".into(), serde_json::json!("shapes"));
            r.extra
                .insert("comparison_rows".into(), serde_json::json!("call"));
            r
        };
        let t = render_comparisons(&[
            table_of("getppid", [117.0, 180.0, 181.0], "ok"),
            table_of("read_devzero", [150.0, 210.0, 1500.0], "withheld"),
        ]);
        let lines: Vec<&str> = t.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert_eq!(lines[0], "shapes (hot)");
        let cols: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(cols, ["call", "inline", "call", "libc"], "{t}");
        let row: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            row,
            ["getppid", "117.0", "ns", "180.0", "ns", "181.0", "ns"],
            "{t}"
        );
        assert!(
            lines[3].starts_with("read_devzero") && lines[3].ends_with("withheld"),
            "{t}"
        );
    }
}
