//! Figures as plain text for a terminal: ASCII only, so the plot survives
//! any pipe, log file or font, and a golden test can pin it byte for byte.

use super::axis::format_tick;
use super::{Figure, Marks};

/// Draws `fig` in `width` columns and about `height` lines (a histogram
/// takes one line per bin instead).
pub fn render(fig: &Figure, width: usize, height: usize) -> String {
    let mut out = format!("{}\n", fig.title);
    match &fig.marks {
        Marks::Histogram(bins) => histogram(&mut out, fig, bins, width),
        Marks::Sequence(v) => {
            let pts: Vec<(f64, f64)> = v.iter().enumerate().map(|(i, y)| (i as f64, *y)).collect();
            scatter(&mut out, fig, &pts, false, width, height)
        }
        Marks::Curve(pts) => scatter(&mut out, fig, pts, true, width, height),
    }
    for c in &fig.captions {
        out.push_str(c);
        out.push('\n');
    }
    out
}

/// Cell of a point in a `rows` × `cols` grid, row 0 at the top.
fn cell(fig: &Figure, (x, y): (f64, f64), rows: usize, cols: usize) -> Option<(usize, usize)> {
    let fx = fig.x.fraction(x);
    let fy = fig.y.fraction(y);
    let inside = |f: f64| f.is_finite() && (-1e-9..=1.0 + 1e-9).contains(&f);
    if !(inside(fx) && inside(fy)) {
        return None;
    }
    let c = (fx.clamp(0.0, 1.0) * (cols - 1) as f64).round() as usize;
    let r = ((1.0 - fy.clamp(0.0, 1.0)) * (rows - 1) as f64).round() as usize;
    Some((r, c))
}

fn scatter(
    out: &mut String,
    fig: &Figure,
    pts: &[(f64, f64)],
    join: bool,
    width: usize,
    height: usize,
) {
    let rows = height.saturating_sub(5 + fig.captions.len()).max(3);
    let y_ticks: Vec<(usize, String)> = fig
        .y
        .ticks((rows / 3).max(2))
        .into_iter()
        .filter_map(|t| {
            let f = fig.y.fraction(t);
            (0.0..=1.0).contains(&f).then(|| {
                (
                    ((1.0 - f) * (rows - 1) as f64).round() as usize,
                    fig.y.tick_label(t),
                )
            })
        })
        .collect();
    let w = y_ticks
        .iter()
        .map(|(_, l)| l.chars().count())
        .max()
        .unwrap_or(0);
    let cols = width.saturating_sub(w + 2).max(10);
    out.push_str(&format!("{:w$} {}\n", "", fig.y.label));
    let mut grid = vec![vec![' '; cols]; rows];
    if join {
        for pair in pts.windows(2) {
            if let (Some(a), Some(b)) = (
                cell(fig, pair[0], rows, cols),
                cell(fig, pair[1], rows, cols),
            ) {
                let steps = a.0.abs_diff(b.0).max(a.1.abs_diff(b.1)).max(1);
                for s in 0..=steps {
                    let t = s as f64 / steps as f64;
                    let r = (a.0 as f64 + (b.0 as f64 - a.0 as f64) * t).round() as usize;
                    let c = (a.1 as f64 + (b.1 as f64 - a.1 as f64) * t).round() as usize;
                    grid[r][c] = '.';
                }
            }
        }
    }
    for &p in pts {
        if let Some((r, c)) = cell(fig, p, rows, cols) {
            grid[r][c] = '*';
        }
    }
    for (r, line) in grid.iter().enumerate() {
        let tick = y_ticks.iter().find(|(tr, _)| *tr == r);
        let (label, mark) = match tick {
            Some((_, l)) => (l.as_str(), '+'),
            None => ("", '|'),
        };
        let body: String = line.iter().collect();
        let row = format!("{label:>w$} {mark}{body}");
        out.push_str(row.trim_end());
        out.push('\n');
    }
    // The x axis, its ticks and their labels.
    let mut axis = vec!['-'; cols];
    let mut labels = vec![' '; cols + w + 2];
    let mut free_from = 0;
    for t in fig.x.ticks((cols / 10).max(2)) {
        let f = fig.x.fraction(t);
        if !(0.0..=1.0).contains(&f) {
            continue;
        }
        let c = (f * (cols - 1) as f64).round() as usize;
        axis[c] = '+';
        let label: Vec<char> = fig.x.tick_label(t).chars().collect();
        let start = (w + 2 + c)
            .saturating_sub(label.len() / 2)
            .min(labels.len().saturating_sub(label.len()));
        if start >= free_from && start + label.len() <= labels.len() {
            labels[start..start + label.len()].copy_from_slice(&label);
            free_from = start + label.len() + 1;
        }
    }
    out.push_str(&format!("{:w$} +{}\n", "", axis.iter().collect::<String>()));
    out.push_str(labels.iter().collect::<String>().trim_end());
    out.push('\n');
    let pad = w + 2 + cols.saturating_sub(fig.x.label.chars().count()) / 2;
    out.push_str(&format!("{:pad$}{}\n", "", fig.x.label));
}

fn histogram(out: &mut String, fig: &Figure, bins: &[(f64, f64, usize)], width: usize) {
    let ranges: Vec<String> = bins
        .iter()
        .map(|(lo, hi, _)| format!("{} - {}", format_tick(*lo), format_tick(*hi)))
        .collect();
    let counts: Vec<String> = bins.iter().map(|b| b.2.to_string()).collect();
    let rw = ranges
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .max(fig.x.label.chars().count());
    let cw = counts.iter().map(|s| s.len()).max().unwrap_or(0).max(5);
    let bar_width = width.saturating_sub(rw + cw + 4).max(1);
    let top = bins.iter().map(|b| b.2).max().unwrap_or(0).max(1);
    out.push_str(&format!("{:>rw$}  {:>cw$}\n", fig.x.label, "count"));
    for ((range, count), b) in ranges.iter().zip(&counts).zip(bins) {
        let len = (b.2 as f64 / top as f64 * bar_width as f64).round() as usize;
        let bar = "#".repeat(if b.2 > 0 { len.max(1) } else { 0 });
        out.push_str(format!("{range:>rw$}  {count:>cw$} |{bar}").trim_end());
        out.push('\n');
    }
}
