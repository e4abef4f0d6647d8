//! The history as a person reads it: the list of runs, and one run.

use crate::store::RunSummary;
use yamba_results::ResultsFile;

/// `2026-11-23T14:05:09Z` as `2026-11-23 14:05`.
fn when(rfc3339: &str) -> String {
    let s = rfc3339.replace('T', " ");
    s.get(..16).map(str::to_string).unwrap_or(s)
}

/// What a run ran, with `(quick)` for a rough pass.
fn suite(r: &RunSummary) -> String {
    let mut s = r.suite.clone();
    if r.quick {
        s.push_str(" (quick)");
    }
    if !r.complete {
        s.push_str(" [interrupted]");
    }
    s
}

/// The subcommand that wrote the run (`run`, `stone`), and `imported` for
/// a file brought in.
fn command(r: &RunSummary) -> String {
    let sub = r.command.split_whitespace().next().unwrap_or("?");
    if r.origin == "import" {
        format!("{sub} (imported)")
    } else {
        sub.to_string()
    }
}

/// One line per run, newest first (UTC times).
pub fn list(runs: &[RunSummary]) -> String {
    let head = [
        "id",
        "started (UTC)",
        "machine",
        "kernel",
        "command",
        "suite",
        "ok",
        "withheld",
        "other",
    ];
    let rows: Vec<[String; 9]> = runs
        .iter()
        .map(|r| {
            [
                format!("@{}", r.id),
                when(&r.started),
                r.machine.clone(),
                r.kernel.clone(),
                command(r),
                suite(r),
                r.ok.to_string(),
                r.withheld.to_string(),
                (r.skipped + r.failed).to_string(),
            ]
        })
        .collect();
    let mut width = head.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
            let pad = w - c.chars().count();
            if i >= 6 {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            }
            s.push_str("  ");
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&head.map(String::from));
    for r in &rows {
        line(r);
    }
    out
}

/// One run: where it came from, its machine and its counts, then its
/// results as `table` renders them (the caller's presentation: the
/// history does not render results tables), then its notes.
pub fn show(r: &RunSummary, file: &ResultsFile, table: &str) -> String {
    let mut out = format!("run @{}: yamba {}\n", r.id, r.command);
    out.push_str(&format!(
        "  started {}, finished {}{}\n",
        r.started,
        r.finished.as_deref().unwrap_or("-"),
        if r.complete { "" } else { " (interrupted)" }
    ));
    out.push_str(&format!(
        "  machine {}, {} {}, kernel {}\n",
        r.machine, file.machine.os, file.machine.arch, r.kernel
    ));
    out.push_str(&format!(
        "  stored {} by `{}`{}\n",
        r.stored_at,
        r.origin,
        r.source
            .as_deref()
            .map(|s| format!(" from {s}"))
            .unwrap_or_default()
    ));
    out.push_str(&format!(
        "  {} results: {} ok, {} withheld, {} skipped, {} failed\n\n",
        r.results, r.ok, r.withheld, r.skipped, r.failed
    ));
    out.push_str(table);
    for note in &file.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// What pruning removed (or would): each run in a line, oldest first, then
/// how many runs and bytes, and what became of an SQLite file's size.
pub fn pruned(p: &crate::Pruned) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let verb = if p.dry_run { "would remove" } else { "removed" };
    for r in &p.runs {
        let _ = writeln!(o, "{verb} @{} {} {}", r.id, r.hostname, r.started);
    }
    let mut hosts: Vec<&str> = p.runs.iter().map(|r| r.hostname.as_str()).collect();
    hosts.sort();
    hosts.dedup();
    let _ = write!(
        o,
        "{verb} {} run(s) of {} machine(s): {} bytes stored",
        p.runs.len(),
        hosts.len(),
        p.bytes
    );
    match p.file_bytes {
        Some((before, after)) => {
            let _ = writeln!(
                o,
                "; the file went from {before} to {after} bytes (vacuumed)"
            );
        }
        None => {
            let _ = writeln!(o);
        }
    }
    o
}
