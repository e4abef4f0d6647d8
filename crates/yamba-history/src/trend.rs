//! One result across stored runs: its headline value and 95% interval per
//! run ([`yamba_results::BenchResult::headline`]), oldest first, with the
//! runs where the machine, the kernel or yamba changed marked — a step
//! there is not a regression of the code. As a table, and as an SVG drawn
//! on the plot module's axes.

use std::fmt::Write as _;
use yamba_plot::axis::{Axis, TickFormat};
use yamba_plot::svg::escape;
use yamba_results::{format_sig, Unit};

/// One run's value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrendPoint {
    /// The stored run (`@ID`).
    pub run: i64,
    pub started: String,
    pub machine: String,
    pub kernel: String,
    pub tool_version: String,
    /// `ok`, `withheld`, `skipped` or `failed`.
    pub status: String,
    /// The headline value; none when the result was not measured.
    pub value: Option<f64>,
    /// Its 95% interval.
    pub ci: Option<(f64, f64)>,
    pub observations: i64,
    /// What changed since the previous point's run (machine, kernel, yamba).
    pub changes: Vec<String>,
}

/// A result's values across runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Trend {
    /// `id@mode`.
    pub key: String,
    pub unit: Option<Unit>,
    pub points: Vec<TrendPoint>,
}

impl Trend {
    /// Points with a value to draw.
    pub fn valued(&self) -> impl Iterator<Item = &TrendPoint> {
        self.points.iter().filter(|p| p.value.is_some())
    }

    fn scale(&self) -> (f64, String) {
        let mut vals: Vec<f64> = self.valued().filter_map(|p| p.value).collect();
        vals.sort_by(f64::total_cmp);
        let typical = vals.get(vals.len() / 2).copied().unwrap_or(1.0);
        match self.unit {
            Some(u) => {
                let (d, s) = u.scale_for(typical);
                (d, s.to_string())
            }
            None => (1.0, String::new()),
        }
    }

    /// The trend as a table, one line per run, changes on their own lines.
    pub fn text(&self) -> String {
        let (div, sym) = self.scale();
        let mut out = format!(
            "{} ({}), {} run(s); 95% intervals between processes unless the run had one block\n",
            self.key,
            if sym.is_empty() { "no unit" } else { &sym },
            self.points.len()
        );
        let rows: Vec<[String; 6]> = self
            .points
            .iter()
            .map(|p| {
                [
                    format!("@{}", p.run),
                    p.started.clone(),
                    p.value
                        .map(|v| format_sig(v / div))
                        .unwrap_or_else(|| "-".into()),
                    p.ci.map(|(lo, hi)| {
                        format!("[{}, {}]", format_sig(lo / div), format_sig(hi / div))
                    })
                    .unwrap_or_default(),
                    p.status.clone(),
                    p.observations.to_string(),
                ]
            })
            .collect();
        let head = ["run", "started", "value", "95% CI", "status", "obs"];
        let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[&str]| {
            let mut s = String::new();
            for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
                let pad = w - c.chars().count();
                // Numbers right-aligned, words left.
                if i == 2 || i == 5 {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                } else {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                }
                s.push_str("  ");
            }
            s.trim_end().to_string() + "\n"
        };
        out.push_str(&line(&head));
        for (p, r) in self.points.iter().zip(&rows) {
            for c in &p.changes {
                let _ = writeln!(out, "  -- {c}");
            }
            let cells: Vec<&str> = r.iter().map(String::as_str).collect();
            out.push_str(&line(&cells));
        }
        if let Some(first) = self.points.first() {
            let _ = writeln!(out, "machine: {}, kernel {}", first.machine, first.kernel);
        }
        out
    }

    /// The trend as an SVG document: one dot per run with its interval as
    /// a bar, joined in run order; a dashed line before each run where the
    /// machine, kernel or yamba changed, labelled with what changed.
    pub fn svg(&self, width: u32, height: u32) -> String {
        let (div, sym) = self.scale();
        let (w, h) = (width as f64, height as f64);
        let valued: Vec<(usize, &TrendPoint)> = self
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.value.is_some())
            .collect();
        let mut ys: Vec<f64> = Vec::new();
        for (_, p) in &valued {
            ys.push(p.value.unwrap_or(0.0) / div);
            if let Some((lo, hi)) = p.ci {
                ys.extend([lo / div, hi / div]);
            }
        }
        let label = if sym.is_empty() {
            self.key.clone()
        } else {
            format!("{} ({sym})", self.key)
        };
        let y = Axis::covering(label, &ys, false, false, TickFormat::Plain);
        let (left, right, top, bottom) = (80.0, w - 20.0, 40.0, h - 60.0);
        let n = self.points.len().max(1) as f64;
        let px = |i: usize| left + (right - left) * (i as f64 + 0.5) / n;
        let py = |v: f64| top + (1.0 - y.fraction(v)) * (bottom - top);

        let mut s = String::new();
        let _ = writeln!(
            s,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">"
        );
        let _ = writeln!(
            s,
            "<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>"
        );
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"20\" text-anchor=\"middle\">{} across {} run(s)</text>",
            (left + right) / 2.0,
            escape(&self.key),
            self.points.len()
        );
        for t in y.ticks(6) {
            let yy = py(t);
            let _ = writeln!(
                s,
                "<line x1=\"{left:.1}\" y1=\"{yy:.1}\" x2=\"{right:.1}\" y2=\"{yy:.1}\" stroke=\"#dcdcdc\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left - 6.0,
                yy + 4.0,
                escape(&y.tick_label(t))
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"16\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {:.1})\">{}</text>",
            (top + bottom) / 2.0,
            (top + bottom) / 2.0,
            escape(&y.label)
        );
        let _ = writeln!(
            s,
            "<line x1=\"{left:.1}\" y1=\"{bottom:.1}\" x2=\"{right:.1}\" y2=\"{bottom:.1}\" stroke=\"#000000\"/>"
        );
        // Changes of machine, kernel or yamba: between the two runs.
        for (i, p) in self
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.changes.is_empty())
        {
            let x = px(i) - (right - left) / n / 2.0;
            let _ = writeln!(
                s,
                "<g class=\"change\"><line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#d62728\" font-size=\"10\">{}</text><title>{}</title></g>",
                x + 3.0,
                top + 10.0,
                escape(&short_change(&p.changes)),
                escape(&p.changes.join("; "))
            );
        }
        for (i, p) in self.points.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">@{}</text>",
                px(i),
                bottom + 18.0,
                p.run
            );
        }
        let line: Vec<String> = valued
            .iter()
            .map(|(i, p)| format!("{:.1},{:.1}", px(*i), py(p.value.unwrap_or(0.0) / div)))
            .collect();
        if line.len() > 1 {
            let _ = writeln!(
                s,
                "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1\" points=\"{}\"/>",
                line.join(" ")
            );
        }
        for (i, p) in &valued {
            let x = px(*i);
            let v = p.value.unwrap_or(0.0) / div;
            let ok = p.status == "ok";
            let color = if ok { "#1f77b4" } else { "#999999" };
            let ci_text = p
                .ci
                .map(|(lo, hi)| format!(" [{}, {}]", format_sig(lo / div), format_sig(hi / div)))
                .unwrap_or_default();
            let _ = write!(s, "<g class=\"point\" data-run=\"{}\">", p.run);
            if let Some((lo, hi)) = p.ci {
                let _ = write!(
                    s,
                    "<line class=\"ci\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{color}\"/>",
                    py(lo / div),
                    py(hi / div)
                );
            }
            let _ = writeln!(
                s,
                "<circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{}\" stroke=\"{color}\"/><title>@{} {}: {} {sym}{ci_text} ({})</title></g>",
                py(v),
                if ok { color } else { "#ffffff" },
                p.run,
                escape(&p.started),
                format_sig(v),
                escape(&p.status)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">stored run, oldest first; bars: 95% interval; hollow: not ok; dashed: machine, kernel or yamba changed</text>",
            (left + right) / 2.0,
            h - 16.0
        );
        s.push_str("</svg>\n");
        s
    }
}

/// A change's label on the plot: which things changed.
fn short_change(changes: &[String]) -> String {
    changes
        .iter()
        .map(|c| c.split(':').next().unwrap_or(c))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(run: i64, value: f64, kernel: &str) -> TrendPoint {
        TrendPoint {
            run,
            started: format!("2026-11-23T00:00:0{run}Z"),
            machine: "host (cpu, 2 CPUs, 24 GiB)".into(),
            kernel: kernel.into(),
            tool_version: "0.1.0".into(),
            status: "ok".into(),
            value: Some(value),
            ci: Some((value - 1.0, value + 1.0)),
            observations: 100,
            changes: vec![],
        }
    }

    #[test]
    fn the_svg_has_a_dot_and_a_bar_per_run_and_marks_changes() {
        let mut t = Trend {
            key: "cpu.syscall.getppid@hot".into(),
            unit: Some(Unit::Nanoseconds),
            points: vec![
                point(1, 80.0, "6.1"),
                point(2, 82.0, "6.1"),
                point(5, 90.0, "6.12"),
            ],
        };
        t.points[2].changes = vec!["kernel: 6.1 → 6.12".into()];
        let svg = t.svg(800, 400);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let count = |class: &str| {
            doc.descendants()
                .filter(|n| n.attribute("class") == Some(class))
                .count()
        };
        assert_eq!(count("point"), 3);
        assert_eq!(count("ci"), 3);
        assert_eq!(count("change"), 1);
        assert!(svg.contains("@5"));
        // Higher values are drawn higher up.
        let cy: Vec<f64> = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .map(|n| n.attribute("cy").unwrap().parse().unwrap())
            .collect();
        assert!(cy[0] > cy[1] && cy[1] > cy[2], "{cy:?}");
        let text = t.text();
        assert!(text.contains("-- kernel: 6.1 → 6.12"), "{text}");
        assert_eq!(
            text.lines().filter(|l| l.starts_with('@')).count(),
            3,
            "{text}"
        );
    }
}
