//! `yamba report`: one self-contained HTML page for a person who was not
//! there. The machine, the run's configuration and notes, what was
//! withheld and why in words, the predictions (hardware guess × software
//! multiplier against the measured value), then a section per area with
//! its tables and figures, and with several runs a column per run and a
//! comparison using `compare`'s verdicts.
//!
//! Nothing on the page is fetched: styles, the few lines of script (hover
//! read-out) and every figure (inline SVG from [`yamba_plot::chart`]) are
//! in the file; text uses the reader's installed sans-serif font.
//!
//! [`render`] takes runs already read, whatever they were read from (a
//! results file, a history store), so every source of runs shares it.

mod figures;
mod key;
pub(crate) mod safe;
mod tables;

use crate::compare::{self, Verdict};
use std::fmt::Write as _;
use std::path::Path;
use yamba_plot::svg::escape;
use yamba_results::units::format_sig;
use yamba_results::{BenchResult, ResultsFile, Status};

pub use figures::Figure;
pub use tables::num;

/// One run in the report, with the name its column carries.
#[derive(Debug, Clone)]
pub struct Run {
    pub label: String,
    pub file: ResultsFile,
}

/// What to put in the report beyond what every report has.
#[derive(Debug, Clone)]
pub struct Options {
    /// Results to draw a histogram of their observations for: `all`, or
    /// result ids, `id@mode` keys, benchmark or area names.
    pub histograms: Vec<String>,
    /// Confidence of the comparison's verdicts.
    pub confidence: f64,
    /// Title at the top of the page.
    pub title: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            histograms: Vec::new(),
            confidence: 0.95,
            title: None,
        }
    }
}

/// Reads results files (`-` for standard input) as runs, labelled by file
/// name, made unique.
pub fn read_runs(paths: &[String]) -> Result<Vec<Run>, String> {
    let mut files = Vec::new();
    for p in paths {
        let file = yamba_results::read_results(p).map_err(|e| e.to_string())?;
        files.push((p.clone(), file));
    }
    Ok(label_runs(files))
}

/// Runs named after where they came from (a file's name, `@ID` for a
/// stored run), made unique.
pub fn label_runs(files: Vec<(String, yamba_results::ResultsFile)>) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (p, file) in files {
        let p = p.as_str();
        let name = Path::new(p)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|_| p != "-")
            .unwrap_or_else(|| "stdin".into());
        let stem = name.strip_suffix(".json").unwrap_or(&name).to_string();
        let mut label = stem.clone();
        let mut k = 2;
        while runs.iter().any(|r| r.label == label) {
            label = format!("{stem} ({k})");
            k += 1;
        }
        runs.push(Run { label, file });
    }
    runs
}

/// The whole page.
pub fn render(runs: &[Run], opts: &Options) -> String {
    let mut body = String::new();
    let areas = areas(runs);
    let key = key::section(runs, opts.confidence);
    let mut toc: Vec<(String, String)> = Vec::new();
    if !key.is_empty() {
        toc.push(("key".into(), "Key numbers".into()));
    }
    toc.extend::<[(String, String); 5]>([
        ("runs".into(), "Runs".into()),
        ("machine".into(), "Machine".into()),
        ("config".into(), "Configuration and notes".into()),
        ("withheld".into(), "Withheld and why".into()),
        ("predictions".into(), "Predictions".into()),
    ]);
    toc.extend(
        areas
            .iter()
            .map(|a| (safe::id("area-", a), area_title(a).to_string())),
    );
    if runs.len() > 1 {
        toc.push(("comparison".into(), "Comparison".into()));
    }

    let figs = figures::all(runs, opts);
    body += &key;
    body += &runs_section(runs);
    body += &machine_section(runs);
    body += &config_section(runs);
    // The run's own figures (BASE) close its configuration.
    body.truncate(body.len() - "</section>".len());
    for f in figs.iter().filter(|f| f.area == "run") {
        body += &f.html();
    }
    body += "</section>";
    body += &withheld_section(runs);
    body += &tables::predictions_section(runs);
    for a in &areas {
        body += &format!(
            "<section id=\"{}\"><h2>{}</h2>",
            safe::id("area-", a),
            escape(area_title(a))
        );
        body += &tables::area_tables(runs, a);
        for f in figs.iter().filter(|f| &f.area == a && !f.on_request) {
            body += &f.html();
        }
        let hists: Vec<&Figure> = figs
            .iter()
            .filter(|f| &f.area == a && f.on_request)
            .collect();
        if !hists.is_empty() {
            body += &format!(
                "<details class=\"hists\" open><summary>Histograms of the observations ({})</summary>",
                hists.len()
            );
            for f in hists {
                body += &f.html();
            }
            body += "</details>";
        }
        body += "</section>";
    }
    if runs.len() > 1 {
        body += &comparison_section(runs, opts.confidence);
    }

    let title = opts.title.clone().unwrap_or_else(|| {
        format!(
            "yamba report: {}",
            runs.iter()
                .map(|r| r.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    let mut page = String::with_capacity(body.len() + 8192);
    let (css, js) = (include_str!("page.css"), include_str!("page.js"));
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t}</title><style>{css}</style></head><body><main><header class=\"top\"><h1>{t}</h1><p>{sub}</p></header><nav class=\"toc\">{toc}</nav>{body}<footer>{foot}</footer></main><div id=\"tip\" hidden></div><script>{js}</script></body></html>\n",
        t = escape(&title),
        policy = safe::csp(js, css),
        sub = escape(&subtitle(runs)),
        toc = toc
            .iter()
            .map(|(id, name)| format!("<a href=\"#{id}\">{}</a>", escape(name)))
            .collect::<String>(),
        foot = footer(),
    );
    page
}

fn subtitle(runs: &[Run]) -> String {
    let n: usize = runs.iter().map(|r| r.file.results.len()).sum();
    match runs {
        [one] => format!(
            "{} results measured on {} ({}), {}",
            n, one.file.machine.hostname, one.file.machine.cpu_model, one.file.started
        ),
        _ => format!(
            "{} runs, {} results; the first run ({}) is the baseline the others are compared with",
            runs.len(),
            n,
            runs[0].label
        ),
    }
}

fn footer() -> String {
    "Values are each result's headline: the mean of its blocks' medians, with a 95% interval \
     (docs/certainty.md). ‡ marks an interval from one process only (a quick run, --repeat 1, or \
     a benchmark measured in one process): it does not include the variation between runs. Hover \
     a point in a figure for its exact values. Written by yamba; nothing on this page is fetched."
        .to_string()
}

/// Areas in the order their first result appears.
fn areas(runs: &[Run]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        for res in &r.file.results {
            if !out.contains(&res.area) {
                out.push(res.area.clone());
            }
        }
    }
    out
}

pub fn area_title(area: &str) -> &str {
    match area {
        "cpu" => "CPU and timing",
        "mem" => "Memory",
        "fs" => "File system",
        "proc" => "Processes and threads",
        "ipc" => "Inter-process communication",
        "signal" => "Signals",
        "sched" => "Scheduling",
        "net" => "Network",
        "space" => "Space (memory, and time to create and destroy, per object)",
        other => other,
    }
}

/// A table with a header row of run labels and one row per (heading, cells).
fn run_table(runs: &[Run], class: &str, rows: &[(String, Vec<String>)]) -> String {
    let mut s = format!("<table class=\"{class}\"><tr><th></th>");
    for r in runs {
        let _ = write!(s, "<th>{}</th>", escape(&r.label));
    }
    s += "</tr>";
    for (h, cells) in rows {
        let _ = write!(s, "<tr><th>{}</th>", escape(h));
        for c in cells {
            let _ = write!(s, "<td>{c}</td>");
        }
        s += "</tr>";
    }
    s + "</table>"
}

fn runs_section(runs: &[Run]) -> String {
    let count = |r: &Run, st: Status| r.file.results.iter().filter(|x| x.status == st).count();
    let rows = vec![
        (
            "Started".into(),
            runs.iter().map(|r| escape(&r.file.started)).collect(),
        ),
        (
            "Finished".into(),
            runs.iter()
                .map(|r| {
                    let state = if r.file.interrupted {
                        "interrupted"
                    } else if r.file.complete {
                        "complete"
                    } else {
                        "incomplete"
                    };
                    format!(
                        "{} ({state})",
                        escape(r.file.finished.as_deref().unwrap_or("—"))
                    )
                })
                .collect(),
        ),
        (
            "Command".into(),
            runs.iter()
                .map(|r| format!("<code>{}</code>", escape(&r.file.command.join(" "))))
                .collect(),
        ),
        (
            "Results".into(),
            runs.iter()
                .map(|r| {
                    format!(
                        "{} ok, {} withheld, {} failed, {} skipped",
                        count(r, Status::Ok),
                        count(r, Status::Withheld),
                        count(r, Status::Failed),
                        count(r, Status::Skipped)
                    )
                })
                .collect(),
        ),
        (
            "yamba".into(),
            runs.iter()
                .map(|r| escape(&format!("{} {}", r.file.tool.name, r.file.tool.version)))
                .collect(),
        ),
    ];
    format!(
        "<section id=\"runs\"><h2>Runs</h2>{}</section>",
        run_table(runs, "runs", &rows)
    )
}

fn machine_section(runs: &[Run]) -> String {
    let facts: Vec<Vec<crate::machine::Fact>> = runs
        .iter()
        .map(|r| crate::machine::facts(&r.file.machine))
        .collect();
    let mut headings: Vec<&'static str> = Vec::new();
    for f in facts.iter().flatten() {
        if !headings.contains(&f.heading) {
            headings.push(f.heading);
        }
    }
    let rows: Vec<(String, Vec<String>)> = headings
        .iter()
        .map(|h| {
            (
                h.to_string(),
                facts
                    .iter()
                    .map(|fs| {
                        fs.iter()
                            .find(|f| f.heading == *h)
                            .map(|f| {
                                f.lines
                                    .iter()
                                    .map(|l| escape(l))
                                    .collect::<Vec<_>>()
                                    .join("<br>")
                            })
                            .unwrap_or_else(|| "—".into())
                    })
                    .collect(),
            )
        })
        .collect();
    let host: Vec<String> = runs
        .iter()
        .map(|r| escape(&r.file.machine.hostname))
        .collect();
    let mut all = vec![("Host".to_string(), host)];
    all.extend(rows);
    format!(
        "<section id=\"machine\"><h2>Machine</h2><p class=\"lede\">What was measured: processor, clock, caches, memory, disks, network and system, read from the host when the run started (<code>yamba machine</code> prints the same).</p>{}</section>",
        run_table(runs, "facts", &all)
    )
}

/// A configuration value in a few words.
fn config_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "—".into(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a.iter().map(config_value).collect::<Vec<_>>().join(", "),
        serde_json::Value::Object(o) if o.is_empty() => "—".into(),
        other => other.to_string(),
    }
}

fn config_section(runs: &[Run]) -> String {
    let mut keys: Vec<String> = Vec::new();
    for r in runs {
        if let Some(o) = r.file.config.as_object() {
            for k in o.keys() {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
    }
    let mut rows: Vec<(String, Vec<String>)> = keys
        .iter()
        .map(|k| {
            (
                k.clone(),
                runs.iter()
                    .map(|r| escape(&r.file.config.get(k).map(config_value).unwrap_or_default()))
                    .collect(),
            )
        })
        .collect();
    rows.push((
        "clock".into(),
        runs.iter()
            .map(|r| {
                let c = &r.file.clock;
                escape(&format!(
                    "{:?}: {}; tick {} ns, resolution {} ns; calibrated against {} to ±{:.2e}",
                    c.kind,
                    c.reason,
                    format_sig(c.tick_ns),
                    format_sig(c.resolution_ns),
                    c.calibration.reference,
                    c.calibration.relative_uncertainty
                ))
            })
            .collect(),
    ));
    rows.push((
        "BASE".into(),
        runs.iter()
            .map(|r| {
                let b = &r.file.base;
                escape(&format!(
                    "minimum {} ns, subtracted {} ns, {:.1}% of {} readings within 2× the minimum",
                    format_sig(b.base_ns),
                    format_sig(b.subtract_ns()),
                    b.share_within_2x_min * 100.0,
                    b.observations.len()
                ))
            })
            .collect(),
    ));
    let mut s = format!(
        "<section id=\"config\"><h2>Configuration and notes</h2>{}",
        run_table(runs, "facts", &rows)
    );
    for r in runs {
        if r.file.notes.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            "<h3>Notes on {}</h3><ul class=\"words\">",
            escape(&r.label)
        );
        for n in &r.file.notes {
            let _ = write!(s, "<li>{}</li>", escape(n));
        }
        s += "</ul>";
    }
    s + "</section>"
}

/// Anchor of a result's entry in the withheld section.
pub(crate) fn why_anchor(run: usize, r: &BenchResult) -> String {
    safe::id(&format!("why-{run}-"), &r.key())
}

/// What became of a result that was not measured cleanly, in words.
pub fn in_words(r: &BenchResult) -> String {
    let reason = r.reason.as_deref().unwrap_or("no reason recorded");
    match r.status {
        Status::Ok => format!("{} ({}) was measured cleanly.", r.id, r.mode.as_str()),
        Status::Withheld => format!(
            "{} ({}) was measured but is withheld, because an assumption it relies on did not hold: {}. Its number stays in the file for diagnosis and must not be quoted.",
            r.id,
            r.mode.as_str(),
            reason.trim_start_matches("assumption failed: ")
        ),
        Status::Skipped => format!(
            "{} ({}) was not measured here: {}.",
            r.id,
            r.mode.as_str(),
            reason
        ),
        Status::Failed => format!(
            "{} ({}) failed: {}. Nothing it measured is reported.",
            r.id,
            r.mode.as_str(),
            reason
        ),
    }
}

fn withheld_section(runs: &[Run]) -> String {
    let mut s = String::from(
        "<section id=\"withheld\"><h2>Withheld, failed and skipped — and why</h2><p class=\"lede\">A result is withheld when a check of what it assumes fails; the checks that failed are quoted with what was expected and what was seen.</p>",
    );
    for (i, run) in runs.iter().enumerate() {
        let bad: Vec<&BenchResult> = run
            .file
            .results
            .iter()
            .filter(|r| r.status != Status::Ok)
            .collect();
        if runs.len() > 1 {
            let _ = write!(s, "<h3>{}</h3>", escape(&run.label));
        }
        if bad.is_empty() {
            s += "<p>Every result was measured cleanly.</p>";
            continue;
        }
        s += "<ul class=\"words\">";
        for r in bad {
            let _ = write!(
                s,
                "<li id=\"{}\">{}",
                why_anchor(i, r),
                escape(&in_words(r))
            );
            // What the reason already says is not said again: a check it
            // quotes whole is left out, and one it names (files written
            // before reasons quoted the values) gets only its values.
            let reason = r.reason.as_deref().unwrap_or("");
            let failed: Vec<_> = r
                .evidence
                .iter()
                .filter(|e| e.gating && !e.ok && !reason.contains(&e.failure_text()))
                .collect();
            if !failed.is_empty() {
                s += "<ul>";
                for e in failed {
                    let what = if reason.contains(&e.check) {
                        String::new()
                    } else {
                        format!("assumed {}: ", escape(&e.check))
                    };
                    let _ = write!(
                        s,
                        "<li class=\"check\">{what}expected {}, observed {}</li>",
                        escape(&e.expected),
                        escape(&e.observed)
                    );
                }
                s += "</ul>";
            }
            s += "</li>";
        }
        s += "</ul>";
    }
    s + "</section>"
}

fn comparison_section(runs: &[Run], confidence: f64) -> String {
    let mut s = format!(
        "<section id=\"comparison\"><h2>Comparison</h2><p class=\"lede\">Each run against the first ({}), as <code>yamba compare</code> judges it: one sample per process, the change (ratio of geometric means, Welch's t on the logarithms) with its {:.0}% interval and p-value, and a verdict only where Benjamini–Hochberg over all results calls it and the interval agrees.</p>",
        escape(&runs[0].label),
        confidence * 100.0
    );
    for run in &runs[1..] {
        let c = compare::compare(&runs[0].file, &run.file, confidence);
        let tally = |v: Verdict| c.rows.iter().filter(|r| r.verdict == v).count();
        let _ = write!(
            s,
            "<h3>{} vs {}</h3><p>{} faster, {} slower, {} without a significant change, {} {}, {} with too few processes to test (fewer than {} a side), {} not compared.</p>",
            escape(&run.label),
            escape(&runs[0].label),
            tally(Verdict::Faster),
            tally(Verdict::Slower),
            tally(Verdict::Same),
            tally(Verdict::Unconfirmed),
            Verdict::UNCONFIRMED_WORDS,
            tally(Verdict::TooFew),
            c.min_blocks,
            tally(Verdict::NotCompared)
        );
        if !c.warnings.is_empty() {
            s += "<ul class=\"words\">";
            for w in &c.warnings {
                let _ = write!(s, "<li>{}</li>", escape(w));
            }
            s += "</ul>";
        }
        s += "<table class=\"compare\"><tr><th>result</th><th class=\"num\">A</th><th class=\"num\">B</th><th class=\"num\">change</th><th class=\"num\">p</th><th>verdict</th><th>note</th></tr>";
        for row in &c.rows {
            let unit = serde_json::from_value::<yamba_results::Unit>(serde_json::Value::String(
                row.unit.clone(),
            ))
            .ok();
            let val = |v: Option<f64>| match (v, unit) {
                (Some(v), Some(u)) => {
                    let (div, sym) = u.scale_for(v);
                    format!("{} {sym}", tables::num(v / div))
                }
                (Some(v), None) => tables::num(v),
                _ => "—".into(),
            };
            let change = match (row.change_pct, row.ci_pct) {
                (Some(ch), Some((lo, hi))) => {
                    format!("{ch:+.1}%<span class=\"ci\">[{lo:+.1}%, {hi:+.1}%]</span>")
                }
                (Some(ch), None) => format!("{ch:+.1}%"),
                _ => "—".into(),
            };
            let class = match row.verdict {
                Verdict::Faster => "faster",
                Verdict::Slower => "slower",
                _ => "",
            };
            let _ = write!(
                s,
                "<tr><td class=\"id\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"{class}\">{}</td><td class=\"note\">{}</td></tr>",
                escape(&row.key),
                val(row.median_a),
                val(row.median_b),
                change,
                row.p_value.map(|p| format!("{p:.3}")).unwrap_or_else(|| "—".into()),
                escape(match row.verdict {
                    Verdict::Same => "no change",
                    Verdict::TooFew => "too few processes",
                    Verdict::Unconfirmed => Verdict::UNCONFIRMED_WORDS,
                    Verdict::NotCompared => "not compared",
                    v => v.as_str(),
                }),
                escape(row.note.as_deref().unwrap_or(""))
            );
        }
        s += "</table>";
    }
    s + "</section>"
}
