//! The human-readable results table `yamba run` prints: one row per
//! result, its headline value in a unit chosen for that row (so it reads
//! as "62.3 ns" or "1.51 ms", never "0.0000623 ms"), the 95% interval as a
//! ± share of it, and every warning, skip and failure spelled out in the
//! notes, wrapped or cut to the terminal (the results file keeps the full
//! text). Withheld, skipped and failed rows show no value: a number that
//! must not be quoted is not printed where it would be read as good.

use yamba_results::units::format_sig;
use yamba_results::{Base, BenchResult, ClockInfo, ClockKind, Machine, Status};

/// How to lay the table out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// The terminal's width in columns; `None` (output to a file or a
    /// pipe) never wraps or cuts.
    pub width: Option<usize>,
}

/// Notes longer than this many lines are cut, with a pointer to the file.
const MAX_NOTE_LINES: usize = 3;
/// Narrower than this, the notes go on lines of their own under the row.
const MIN_NOTE_COLUMN: usize = 28;

/// Renders results as an aligned text table, without a width limit.
pub fn render(results: &[BenchResult]) -> String {
    render_with(results, Layout::default())
}

/// Columns: benchmark, mode, value, unit, ±95%, cycles, min, CV, n, notes.
const HEADER: [&str; 10] = [
    "benchmark",
    "mode",
    "median",
    "",
    "±95%",
    "cycles",
    "min",
    "CV",
    "n",
    "notes",
];
/// Right-aligned (numeric) columns.
const NUMERIC: [usize; 6] = [2, 4, 5, 6, 7, 8];
/// The columns before the notes.
const COLUMNS: usize = 9;
/// The cycles column: shown when some row has a value in cycles.
const CYCLES: usize = 5;

/// Renders results as an aligned text table laid out for `layout`.
pub fn render_with(results: &[BenchResult], layout: Layout) -> String {
    let rows: Vec<Row> = side_by_side(results)
        .into_iter()
        .filter(|r| !is_placeholder(r))
        .map(row)
        .collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r.cells.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // The unit hugs its number; other columns are two spaces apart.
    let sep = |i: usize| if i == 2 { 1 } else { 2 };
    let mut hidden = [false; COLUMNS];
    hidden[CYCLES] = rows.iter().all(|r| r.cells[CYCLES].is_empty());
    let fixed = |hidden: &[bool; COLUMNS]| -> usize {
        (0..COLUMNS)
            .filter(|&i| !hidden[i])
            .map(|i| widths[i] + sep(i))
            .sum()
    };
    // On a narrow terminal, leave out what matters least first: a mode
    // column that says the same on every row, then n, min, CV and cycles.
    let mut left_out: Vec<&str> = Vec::new();
    if let Some(w) = layout.width {
        let uniform_mode = rows.iter().all(|r| r.cells[1] == rows[0].cells[1]);
        for col in [1, 8, 6, 7, CYCLES] {
            if fixed(&hidden) <= w {
                break;
            }
            if (col == 1 && !uniform_mode) || hidden[col] {
                continue;
            }
            hidden[col] = true;
            left_out.push(HEADER[col]);
        }
    }
    // Where the notes column starts, and how wide it may be.
    let notes_at: usize = fixed(&hidden);
    let notes_width = layout.width.map(|w| w.saturating_sub(notes_at));
    let (inline, room) = match notes_width {
        None => (true, None),
        Some(n) if n >= MIN_NOTE_COLUMN => (true, Some(n)),
        Some(_) => (false, layout.width.map(|w| w.saturating_sub(4).max(20))),
    };

    let mut out = String::new();
    let mut cut = false;
    let line = |cells: &[String], note: &str, out: &mut String| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if hidden[i] {
                continue;
            }
            let pad = " ".repeat(widths[i].saturating_sub(c.chars().count()));
            if NUMERIC.contains(&i) {
                s.push_str(&pad);
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&pad);
            }
            s.push_str(&" ".repeat(sep(i)));
        }
        s.push_str(note);
        out.push_str(s.trim_end());
        out.push('\n');
    };
    let header: Vec<String> = HEADER[..COLUMNS].iter().map(|s| s.to_string()).collect();
    // Notes on lines of their own need no column heading.
    let (notes_head, notes_rule) = if inline { ("notes", "-----") } else { ("", "") };
    line(&header, notes_head, &mut out);
    let rule: Vec<String> = widths[..COLUMNS].iter().map(|&w| "-".repeat(w)).collect();
    line(&rule, notes_rule, &mut out);
    for r in &rows {
        let (notes, was_cut) = match room {
            Some(w) => wrap(&r.notes, w, MAX_NOTE_LINES),
            None => (vec![r.notes.clone()], false),
        };
        cut |= was_cut;
        if inline {
            line(&r.cells, notes.first().map_or("", String::as_str), &mut out);
            for more in notes.iter().skip(1) {
                out.push_str(&" ".repeat(notes_at));
                out.push_str(more);
                out.push('\n');
            }
        } else {
            line(&r.cells, "", &mut out);
            for n in notes.iter().filter(|n| !n.is_empty()) {
                out.push_str("    ");
                out.push_str(n);
                out.push('\n');
            }
        }
    }
    out.push_str(&legend(&rows, cut, layout.width));
    if !left_out.is_empty() {
        out.push_str(&fit(
            &format!(
                "(left out to fit the terminal: {}; the results file has them)",
                left_out.join(", ")
            ),
            layout.width,
        ));
    }
    out
}

/// One row's cells (all but the notes) and its notes.
struct Row {
    cells: [String; COLUMNS],
    notes: String,
    status: Status,
    within: bool,
    /// The interval shown is the one for the runs, from this many earlier runs.
    runs: Option<usize>,
    busy: bool,
    shared: bool,
}

/// A result that only carries a comparison table (printed after the main
/// table) has nothing of its own to show.
fn is_placeholder(r: &BenchResult) -> bool {
    r.status == Status::Ok && r.summary.is_none() && r.extra.contains_key("comparison")
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

const BUSY_SHORT: &str = "busy ";
const SHARED_SHORT: &str = "shared core ";

/// Shortens the runner's per-benchmark busy-machine and shared-core
/// warnings, which would otherwise repeat a sentence on many rows; the
/// legend explains each once.
fn abbreviate(w: &str) -> String {
    if let Some((pct, _)) = w
        .strip_prefix("machine busy: ")
        .and_then(|r| r.split_once('%'))
    {
        return format!("{BUSY_SHORT}{pct}%");
    }
    match yamba_results::results::shared_core_warning_values(w) {
        Some((adds, best)) => format!("{SHARED_SHORT}{adds}/{best}"),
        None => w.to_string(),
    }
}

/// Marks an interval that does not cover the variation between runs.
const WITHIN_MARK: &str = "‡";

/// Marks the interval for the runs, shown where it is wider than the
/// run's own (`Certainty::between_runs`).
const RUNS_MARK: &str = "†";

fn row(r: &BenchResult) -> Row {
    let mut notes: Vec<String> = Vec::new();
    let reason = r.reason.as_deref();
    match r.status {
        Status::Ok => {}
        Status::Withheld => notes.push(reason.unwrap_or("an assumption failed").to_string()),
        Status::Skipped => notes.push(reason.unwrap_or("not runnable here").to_string()),
        Status::Failed => notes.push(reason.unwrap_or("unknown reason").to_string()),
    }
    let (mut busy, mut shared) = (false, false);
    for w in &r.warnings {
        let w = abbreviate(w);
        busy |= w.starts_with(BUSY_SHORT);
        shared |= w.starts_with(SHARED_SHORT);
        // Benchmarks sometimes say the same thing as a warning and in the reason.
        if !notes.contains(&w) {
            notes.push(w);
        }
    }
    let blank = String::new;
    let within = r.certainty.as_ref().is_none_or(|c| !c.between_processes());
    let runs = r.certainty.as_ref().and_then(|c| c.between_runs.as_ref());
    let mut widened = false;
    let cells = match (&r.summary, r.headline(), r.status) {
        (Some(s), Some((value, ci)), Status::Ok) => {
            let (div, sym) = r.unit.scale_for(value);
            let own = ci.as_ref().map(|c| c.reach_from(value));
            let for_runs = runs.map(|b| b.ci.reach_from(value));
            let pm = match (own, for_runs) {
                _ if value == 0.0 => String::new(),
                (own, Some(h)) if own.is_none_or(|o| h > o) => {
                    widened = true;
                    format!("{}%{RUNS_MARK}", percent(h / value.abs()))
                }
                (Some(h), _) => {
                    let mark = if within { WITHIN_MARK } else { "" };
                    format!("{}%{mark}", percent(h / value.abs()))
                }
                (None, _) => String::new(),
            };
            [
                r.id.clone(),
                r.mode.as_str().to_string(),
                format_sig(value / div),
                sym.to_string(),
                pm,
                cycles_cell(r),
                format_sig(s.min / div),
                s.cv.map(|c| format!("{}%", percent(c))).unwrap_or_default(),
                s.n.to_string(),
            ]
        }
        (_, _, status) => [
            r.id.clone(),
            r.mode.as_str().to_string(),
            status_word(status).to_string(),
            blank(),
            blank(),
            blank(),
            blank(),
            blank(),
            blank(),
        ],
    };
    Row {
        within: within && !widened && r.status == Status::Ok && r.summary.is_some(),
        runs: widened.then(|| runs.map_or(0, |b| b.runs)),
        cells,
        notes: notes.join("; "),
        status: r.status,
        busy,
        shared,
    }
}

/// The headline in core cycles with the half-width of its interval as a
/// share ("41.2 ±1.1%"), where the result recorded the core clock; blank
/// otherwise.
fn cycles_cell(r: &BenchResult) -> String {
    let Some((cycles, ci)) = r.headline_cycles().filter(|(c, _)| c.is_finite()) else {
        return String::new();
    };
    match ci.filter(|_| cycles != 0.0) {
        Some(c) => {
            let half = c.reach_from(cycles);
            format!("{} ±{}%", format_sig(cycles), percent(half / cycles.abs()))
        }
        None => format_sig(cycles),
    }
}

/// What a row without a value shows in its place.
fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "no data",
        Status::Withheld => "WITHHELD",
        Status::Skipped => "skipped",
        Status::Failed => "FAILED",
    }
}

/// A share as a percentage with about two significant digits.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    if !p.is_finite() {
        return "?".into();
    }
    match p.abs() {
        a if a >= 10.0 => format!("{p:.0}"),
        a if a >= 0.1 => format!("{p:.1}"),
        a if a >= 0.01 => format!("{p:.2}"),
        _ => "<0.01".into(),
    }
}

/// Splits `text` into lines of at most `width` characters at spaces
/// (a word longer than a line is cut), keeping at most `max_lines`; the
/// flag says whether anything was left out.
fn wrap(text: &str, width: usize, max_lines: usize) -> (Vec<String>, bool) {
    let width = width.max(8);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while word.chars().count() > width {
            let head: String = word.chars().take(width).collect();
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            lines.push(head);
            word = word.chars().skip(width).collect();
        }
        let need = cur.chars().count() + usize::from(!cur.is_empty()) + word.chars().count();
        if need > width && !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    if lines.len() <= max_lines {
        return (lines, false);
    }
    lines.truncate(max_lines);
    let last = lines.last_mut().unwrap();
    while last.chars().count() + 1 > width {
        last.pop();
    }
    last.push('…');
    (lines, true)
}

/// A few lines under the table for the columns and marks that need them.
fn legend(rows: &[Row], cut: bool, width: Option<usize>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if rows.iter().any(|r| r.status == Status::Ok) {
        parts.push(
            "median: the headline value (the median, or the mean of the processes' medians); \
             ±95%: half-width of its 95% interval; min: the fastest observation (in the row's unit); \
             CV: spread of single observations (a few slow ones make it large without moving the median); \
             n: observations"
                .into(),
        );
    }
    if rows.iter().any(|r| !r.cells[CYCLES].is_empty()) {
        parts.push(
            "cycles: the headline in core cycles (each block's value times the core clock measured \
             while it ran) and the half-width of its 95% interval; blank where no clock was recorded \
             (not a time, or not measured)"
                .into(),
        );
    }
    if rows.iter().any(|r| r.within) {
        parts.push(format!(
            "{WITHIN_MARK} interval from one process only (a quick run, --repeat 1, or a benchmark \
             measured in one process): it leaves out the variation between runs"
        ));
    }
    let earlier: Vec<usize> = rows.iter().filter_map(|r| r.runs).collect();
    if let (Some(lo), Some(hi)) = (earlier.iter().min(), earlier.iter().max()) {
        let n = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        };
        parts.push(format!(
            "{RUNS_MARK} interval for the runs: the run's own, widened to reach where the typical \
             run of this configuration lies — the 95% interval of the median of its earlier runs in \
             the history ({n}), which moved more than this run's processes did (docs/certainty.md, \
             \"An interval for the runs\")"
        ));
    }
    if rows.iter().any(|r| r.status == Status::Withheld) {
        parts.push(
            "WITHHELD: measured, but a check of what the number assumes failed; \
             the value is kept in the results file for diagnosis, do not quote it"
                .into(),
        );
    }
    if rows.iter().any(|r| r.busy) {
        parts.push(format!(
            "{BUSY_SHORT}N%: other processes used N% of all CPUs' time while the benchmark ran; \
             its numbers may be disturbed"
        ));
    }
    if rows.iter().any(|r| r.shared) {
        parts.push(format!(
            "{SHARED_SHORT}A/B: the benchmark's process read A independent adds per core cycle \
             against the run's best B: another hardware thread was using its core, which slows \
             system calls (25–44% on AMD EPYC guests) and dependent chains little or not at all"
        ));
    }
    if cut {
        parts.push("… notes cut to fit the terminal: the results file has them whole".into());
    }
    if parts.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n");
    for p in parts {
        out.push_str(&fit(&p, width));
    }
    out
}

/// The run's notes under the table, `note: …` each, wrapped to the width.
pub fn notes_text(notes: &[String], layout: Layout) -> String {
    notes
        .iter()
        .map(|n| fit(&format!("note: {n}"), layout.width))
        .collect()
}

/// Text whose lines wider than the layout are wrapped (headings of the
/// comparison tables); other lines are kept as they are.
pub fn fit_lines(text: &str, layout: Layout) -> String {
    text.lines()
        .map(|l| match layout.width {
            Some(w) if l.chars().count() > w => fit(l, Some(w)),
            _ => format!("{l}\n"),
        })
        .collect()
}

/// A paragraph wrapped to `width` (continuation lines indented by two),
/// or as it is without a width.
fn fit(text: &str, width: Option<usize>) -> String {
    let Some(w) = width else {
        return format!("{text}\n");
    };
    let (lines, _) = wrap(text, w.saturating_sub(2).max(20), usize::MAX);
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{}{l}\n", if i == 0 { "" } else { "  " }))
        .collect()
}

/// [`header`] wrapped to the layout's width.
pub fn header_with(
    machine: &Machine,
    clock: &ClockInfo,
    base: &Base,
    cpu: Option<usize>,
    layout: Layout,
) -> String {
    let h = header(machine, clock, base, cpu);
    let mut out: String = h
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| fit(l, layout.width))
        .collect();
    out.push('\n');
    out
}

/// The two lines above the table: the machine, and the clock and BASE the
/// run measured with, in words rather than the results file's raw fields.
pub fn header(machine: &Machine, clock: &ClockInfo, base: &Base, cpu: Option<usize>) -> String {
    let place = match machine.hypervisor_name() {
        Some(h) => format!("virtual machine: {h}"),
        None => "no hypervisor detected".into(),
    };
    let clock_name = match clock.kind {
        ClockKind::Tsc => "TSC",
        ClockKind::ArmVirtualCounter => "ARM virtual counter",
        ClockKind::MonotonicRaw => "CLOCK_MONOTONIC_RAW",
    };
    let freq = clock.calibration.frequency_hz / 1e6;
    let calibrated = match clock.kind {
        ClockKind::MonotonicRaw => String::new(),
        _ => format!(
            " at {freq:.1} MHz (calibrated to ±{}%)",
            one_digit(clock.calibration.relative_uncertainty * 100.0)
        ),
    };
    format!(
        "yamba {} on {} ({} CPUs, {place}), Linux {}\n\
         clock: {clock_name}{calibrated}, resolution {} ns; BASE (an empty timing) {} ns; {}\n\n",
        yamba_results::VERSION,
        machine.cpu_model.trim(),
        machine.online_cpus,
        machine.kernel,
        format_sig(clock.resolution_ns),
        format_sig(base.base_ns),
        cpu.map(|c| format!("pinned to CPU {c}"))
            .unwrap_or_else(|| "not pinned".into()),
    )
}

/// A number with one significant digit (0.0004, 0.02, 3), for
/// uncertainties whose second digit means nothing.
fn one_digit(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return "0".into();
    }
    let decimals = (-v.log10().floor()).max(0.0) as usize;
    format!("{v:.decimals$}")
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
    let mut tables: Vec<(String, String, yamba_results::Mode, Vec<&serde_json::Value>)> =
        Vec::new();
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
            Some(t) => t.3.extend(rows),
            None => tables.push((heading, first, r.mode, rows.iter().collect())),
        }
    }
    for (heading, first, mode, rows) in tables {
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
        // A row naming a result shows that result's headline, as the main
        // table does: the stored median is one process's (the process
        // that built the comparison) and a pooled run's differs.
        let headline = |row: &serde_json::Value| {
            let id = text(row, "id")?;
            results
                .iter()
                .find(|r| r.id == id && r.mode == mode)
                .filter(|r| r.status == Status::Ok)
                .and_then(|r| r.value())
        };
        let cell = |row: &serde_json::Value| {
            let status = text(row, "status").unwrap_or_else(|| "ok".into());
            match headline(row).or_else(|| row.get("median_ns").and_then(|v| v.as_f64())) {
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

/// Results measured as simultaneous copies (`yamba run --copies N`), after
/// the main table: each beside its one-copy value, where the copies ran,
/// and the scaling — the N copies' total throughput over one copy's (N:
/// perfect, 1: serialized). Empty when the run had no copies.
pub fn render_copies(results: &[BenchResult]) -> String {
    let value = |v: Option<f64>, unit: yamba_results::Unit| match v {
        Some(v) => {
            let (div, sym) = unit.scale_for(v);
            format!("{} {sym}", format_sig(v / div))
        }
        None => "-".to_string(),
    };
    let mut rows: Vec<[String; 6]> = Vec::new();
    for r in results {
        let Some(c) = &r.copies else { continue };
        let cpus = c.blocks.first().map_or(String::new(), |b| {
            b.cpus
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        });
        let (per_copy, scaling) = match r.status {
            Status::Ok => (
                value(r.value(), r.unit),
                c.scaling
                    .map_or("-".into(), |s| format!("×{s:.2} of {}", c.count)),
            ),
            s => (s.as_str().to_string(), r.reason.clone().unwrap_or_default()),
        };
        rows.push([
            format!("{} ({})", c.one_copy_id, r.mode.as_str()),
            c.count.to_string(),
            cpus,
            value(c.one_copy, r.unit),
            per_copy,
            scaling,
        ]);
    }
    if rows.is_empty() {
        return String::new();
    }
    let head = ["result", "copies", "CPUs", "1 copy", "per copy", "scaling"];
    let widths: Vec<usize> = (0..6)
        .map(|i| {
            rows.iter()
                .map(|row| row[i].chars().count())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: [&str; 6]| {
        let mut l = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i == 5 {
                l.push_str(cell);
            } else {
                l.push_str(&format!("{cell}{}  ", " ".repeat(pad)));
            }
        }
        format!("{}\n", l.trim_end())
    };
    let mut out = String::from(
        "\nsimultaneous copies, each pinned to a CPU of its own (scaling: the copies' total throughput over one copy's; N is perfect, 1 serialized)\n",
    );
    out.push_str(&line(head));
    for row in &rows {
        out.push_str(&line([
            &row[0], &row[1], &row[2], &row[3], &row[4], &row[5],
        ]));
    }
    out
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
        assert!(lines[0].starts_with("benchmark"), "{t}");
        assert!(lines[2].contains("1.510 µs"), "{t}");
        assert!(lines[2].contains("‡"), "{t}");
        assert!(
            lines[3].contains("skipped") && lines[3].contains("needs root"),
            "{t}"
        );
        assert!(t.contains("‡ interval from one process only"), "{t}");
    }

    /// A result measured at a known clock shows its value in cycles:
    /// blocks of 100 and 102 ns at 3000 MHz are 300 and 306 cycles, mean
    /// 303, interval ± t(0.975, 1) · s/√2 = 12.706 · 4.243/1.414 = 38.1
    /// cycles (12.6%); a result without a clock leaves the cell blank.
    #[test]
    fn cycles_are_shown_where_the_clock_was_recorded() {
        let mut timed = result("cpu.known", vec![100.0, 102.0], Status::Ok);
        timed.certainty = yamba_results::Certainty::from_blocks(
            yamba_results::BlockKind::Process,
            vec![100.0, 102.0],
            vec![1; 2],
            0.0,
            vec![3000.0, 3000.0],
        );
        let bare = result("cpu.unclocked", vec![50.0; 10], Status::Ok);
        let t = render(&[timed, bare]);
        let lines: Vec<Vec<char>> = t.lines().map(|l| l.chars().collect()).collect();
        let text = |l: &[char]| l.iter().collect::<String>();
        // The cycles column: right-aligned, ending where its heading ends.
        let head = text(&lines[0]);
        let end = head[..head.find("cycles").expect(&t)].chars().count() + "cycles".len();
        let want = "303.0 ±13%";
        let span = |l: &[char]| text(&l[end - want.chars().count()..end]);
        assert_eq!(span(&lines[2]), want, "{t}");
        assert!(text(&lines[3]).starts_with("cpu.unclocked"), "{t}");
        assert!(span(&lines[3]).trim().is_empty(), "{t}");
        assert!(t.contains("cycles: the headline in core cycles"), "{t}");
        // No row with a clock: no cycles column at all.
        let t = render(&[result("cpu.unclocked", vec![50.0; 10], Status::Ok)]);
        assert!(!t.lines().next().unwrap().contains("cycles"), "{t}");
    }

    /// The runner's busy-machine and shared-core warnings read as short
    /// notes, each explained once under the table; other warnings whole.
    #[test]
    fn busy_and_shared_core_warnings_are_abbreviated_and_explained() {
        let mut r = result("cpu.a", vec![175.0; 10], Status::Ok);
        r.warn("machine busy: 85% of CPU time went to other processes during this benchmark");
        r.warn(yamba_results::results::shared_core_warning(2.46, 3.75));
        r.warn("something else");
        let t = render(&[r]);
        let row = t.lines().nth(2).unwrap();
        assert!(row.contains("busy 85%"), "{t}");
        assert!(row.contains("shared core 2.5/3.8"), "{t}");
        assert!(row.contains("something else"), "{t}");
        assert!(!row.contains("another hardware thread"), "{t}");
        assert!(
            t.contains("shared core A/B: the benchmark's process read A"),
            "{t}"
        );
        assert!(t.contains("busy N%: other processes"), "{t}");
        let plain = render(&[result("cpu.a", vec![175.0; 10], Status::Ok)]);
        assert!(!plain.contains("shared core"), "{plain}");
    }

    #[test]
    fn withheld_rows_show_no_value() {
        let obs: Vec<f64> = (0..20).map(|i| 77.0 + i as f64 * 0.01).collect();
        let t = render(&[result("mem.x", obs, Status::Withheld)]);
        let row = t.lines().nth(2).unwrap();
        assert!(row.contains("WITHHELD"), "{t}");
        assert!(
            !row.contains("77"),
            "a withheld value must not be shown: {t}"
        );
        assert!(t.contains("do not quote it"), "{t}");
    }

    #[test]
    fn units_are_chosen_per_row() {
        let t = render(&[
            result("a", vec![62.0; 10], Status::Ok),
            result("b", vec![2.5e6; 10], Status::Ok),
        ]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[2].contains("62.00 ns"), "{t}");
        assert!(lines[3].contains("2.500 ms"), "{t}");
        // The unit column lines up.
        assert_eq!(lines[2].find("ns"), lines[3].find("ms"), "{t}");
    }

    #[test]
    fn notes_wrap_to_the_width() {
        let mut r = result("mem.latency", vec![5.0; 10], Status::Ok);
        let long = "a long note that says a great many things about the way the measurement went, \
                    and then some more words so that it cannot possibly fit on one line of a small terminal";
        r.warn(long);
        for width in [60, 100] {
            let t = render_with(std::slice::from_ref(&r), Layout { width: Some(width) });
            for l in t.lines() {
                assert!(l.chars().count() <= width, "{width}: {l:?} in\n{t}");
            }
            // Nothing of the note is lost until the cut.
            assert!(t.contains("a long note"), "{t}");
        }
        let wide = render(std::slice::from_ref(&r));
        assert!(wide.contains(long), "{wide}");
    }

    #[test]
    fn wrap_cuts_with_a_mark() {
        let (lines, cut) = wrap("one two three four five six seven", 10, 2);
        assert_eq!(lines.len(), 2);
        assert!(cut);
        assert!(lines[1].ends_with('…'));
        let (lines, cut) = wrap("one two", 10, 2);
        assert_eq!(lines, vec!["one two"]);
        assert!(!cut);
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

    /// A row that names a result shows that result's headline (a pooled
    /// run's mean of process medians), not the median of the one process
    /// that built the table: one run showed 231.4 ns there against a
    /// headline of 206.5 ns.
    #[test]
    fn a_comparison_row_naming_a_result_shows_its_headline() {
        let mut head = result("cpu.syscall.read_devzero", vec![231.4], Status::Ok);
        let rows = serde_json::json!([
            {"id": "cpu.syscall.read_devzero", "row": "read_devzero", "column": "inline",
             "median_ns": 231.4, "status": "ok"},
            {"id": "cpu.syscall.read_devzero.call", "row": "read_devzero", "column": "call",
             "median_ns": 222.6, "status": "ok"},
        ]);
        head.extra.insert("comparison".into(), rows);
        head.extra
            .insert("comparison_table".into(), serde_json::json!("shapes"));
        head.extra
            .insert("comparison_rows".into(), serde_json::json!("call"));
        // The pooled headline of the inline shape: several processes.
        head.certainty = yamba_results::Certainty::from_blocks(
            yamba_results::BlockKind::Process,
            vec![231.5, 201.2, 201.7, 201.5, 201.2, 201.7],
            vec![1; 6],
            0.0,
            vec![],
        );
        let call = result("cpu.syscall.read_devzero.call", vec![211.2], Status::Ok);
        let t = render_comparisons(&[head.clone(), call]);
        let row: Vec<&str> = t
            .lines()
            .filter(|l| l.starts_with("read_devzero"))
            .collect();
        assert_eq!(row.len(), 1, "{t}");
        let cells: Vec<&str> = row[0].split_whitespace().collect();
        assert_eq!(cells, ["read_devzero", "206.5", "ns", "211.2", "ns"], "{t}");
        // A result not in the list keeps the stored median.
        let t = render_comparisons(&[head]);
        assert!(t.contains("222.6 ns"), "{t}");
    }
}
