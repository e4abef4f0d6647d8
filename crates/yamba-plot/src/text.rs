//! Figures as plain text for a terminal: ASCII only, so the plot survives
//! any pipe, log file or font, and a golden test can pin it byte for byte.

use super::{Figure, Marks};

/// Draws `fig` in `width` columns and about `height` lines (a histogram
/// takes one line per bin instead).
pub fn render(fig: &Figure, width: usize, height: usize) -> String {
    let mut out = format!("{}\n", fig.title);
    match &fig.marks {
        Marks::Histogram(bins) => histogram(&mut out, fig, bins, width),
        Marks::Sequence(v) => {
            let pts: Vec<(f64, f64)> = v.iter().enumerate().map(|(i, y)| (i as f64, *y)).collect();
            scatter(&mut out, fig, &[&pts], false, width, height);
        }
        Marks::Curves(lines) => {
            let pts: Vec<&[(f64, f64)]> = lines.iter().map(|l| l.points.as_slice()).collect();
            let legend = if lines.len() > 1 { lines.len() } else { 0 };
            scatter(
                &mut out,
                fig,
                &pts,
                true,
                width,
                height.saturating_sub(legend),
            );
            if lines.len() > 1 {
                for (i, l) in lines.iter().enumerate() {
                    out.push_str(&format!("{} {}\n", MARKS[i % MARKS.len()], l.label));
                }
            }
        }
    }
    for c in &fig.captions {
        out.push_str(c);
        out.push('\n');
    }
    out
}

/// The mark of each overlaid curve, in order.
const MARKS: [char; 6] = ['*', 'o', 'x', '+', '#', '@'];

fn median_label(fig: &Figure, m: f64) -> String {
    format!("median {}", fig.x_or_y_label(m))
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
    curves: &[&[(f64, f64)]],
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
    if let (Marks::Sequence(_), Some(m)) = (&fig.marks, fig.median) {
        if let Some((r, _)) = cell(fig, (fig.x.lo, m), rows, cols) {
            grid[r] = vec!['-'; cols];
        }
    }
    for (i, pts) in curves.iter().enumerate() {
        draw_points(&mut grid, fig, pts, join, MARKS[i % MARKS.len()]);
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
    // The median's line is named beside the axis label.
    let median = match (&fig.marks, fig.median) {
        (Marks::Sequence(_), Some(m)) => format!("   (--- {})", median_label(fig, m)),
        _ => String::new(),
    };
    let xlabel = format!("{:pad$}{}{median}", "", fig.x.label);
    let xlabel = if xlabel.chars().count() > width && !median.is_empty() {
        format!("{:pad$}{}", "", fig.x.label)
    } else {
        xlabel
    };
    out.push_str(&xlabel);
    out.push('\n');
}

/// Puts `pts` into the grid as `mark`s, joined by dots when `join`.
fn draw_points(grid: &mut [Vec<char>], fig: &Figure, pts: &[(f64, f64)], join: bool, mark: char) {
    let (rows, cols) = (grid.len(), grid[0].len());
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
                    if grid[r][c] == ' ' || grid[r][c] == '-' {
                        grid[r][c] = '.';
                    }
                }
            }
        }
    }
    for &p in pts {
        if let Some((r, c)) = cell(fig, p, rows, cols) {
            grid[r][c] = mark;
        }
    }
}

/// Bin edges with as many decimals as tell neighbours apart, all alike
/// (in scientific notation when they are very large or very small).
fn bin_edge_labels(bins: &[(f64, f64, usize)]) -> Vec<String> {
    let width = bins
        .iter()
        .map(|(lo, hi, _)| hi - lo)
        .fold(f64::INFINITY, f64::min);
    let decimals = if width.is_finite() && width > 0.0 {
        ((-width.log10()).ceil() as i64 + 1).clamp(0, 9) as usize
    } else {
        3
    };
    let big = bins.iter().any(|(lo, hi, _)| lo.abs().max(hi.abs()) >= 1e7);
    bins.iter()
        .map(|(lo, hi, _)| {
            if big || decimals > 6 {
                format!("{lo:.3e} - {hi:.3e}")
            } else {
                format!("{lo:.decimals$} - {hi:.decimals$}")
            }
        })
        .collect()
}

/// Marks the bin that holds the median.
const MEDIAN_MARK: &str = " <- median";

fn histogram(out: &mut String, fig: &Figure, bins: &[(f64, f64, usize)], width: usize) {
    let ranges = bin_edge_labels(bins);
    let counts: Vec<String> = bins.iter().map(|b| b.2.to_string()).collect();
    let rw = ranges
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .max(fig.x.label.chars().count());
    let cw = counts.iter().map(|s| s.len()).max().unwrap_or(0).max(5);
    let median_bin = fig
        .median
        .and_then(|m| bins.iter().position(|(lo, hi, _)| m >= *lo && m <= *hi));
    // The mark only where it fits beside a bar of at least one column.
    let median_bin = median_bin.filter(|_| rw + cw + 5 + MEDIAN_MARK.len() <= width);
    let mark_w = if median_bin.is_some() {
        MEDIAN_MARK.len()
    } else {
        0
    };
    let bar_width = width.saturating_sub(rw + cw + 4 + mark_w).max(1);
    let top = bins.iter().map(|b| b.2).max().unwrap_or(0).max(1);
    // The median's value in the heading; its bin marked.
    let median = fig
        .median
        .map(|m| format!("   ({})", median_label(fig, m)))
        .unwrap_or_default();
    out.push_str(&format!("{:>rw$}  {:>cw$}{median}\n", fig.x.label, "count"));
    for (i, ((range, count), b)) in ranges.iter().zip(&counts).zip(bins).enumerate() {
        let len = (b.2 as f64 / top as f64 * bar_width as f64).round() as usize;
        let bar = "#".repeat(if b.2 > 0 { len.max(1) } else { 0 });
        let mark = if median_bin == Some(i) {
            MEDIAN_MARK
        } else {
            ""
        };
        out.push_str(format!("{range:>rw$}  {count:>cw$} |{bar}{mark}").trim_end());
        out.push('\n');
    }
}
