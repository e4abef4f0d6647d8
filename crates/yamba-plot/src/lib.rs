//! `yamba plot`: observations in the order taken, a histogram of them, or a
//! benchmark's curve, drawn in the terminal or to an SVG or PNG file.
//!
//! As in the seed's `plot`, `-o` removes a layer of outliers (values more
//! than two standard deviations from the mean, recomputed per layer) and
//! says how many each layer removed, and `-z` puts zero on the value axis.
//! Everything is first turned into [`Figure`]s; the three renderers
//! ([`text`], [`svg`], [`png`]) only draw figures, so what one shows the
//! others show too.
//!
//! The HTML report's charts ([`chart`]) are drawn here too, on the same
//! [`axis`] code, so a report's figure reads like `yamba plot`'s.
//!
//! A crate of its own: it draws numbers, and of yamba it needs only
//! yamba-stats (units, the median, the outlier layers). It reads no
//! results file: a reader turns what it read into a [`Source`]
//! (yamba-report's `plotting::source` does for a result), and whatever
//! draws (the CLI, the report, the history's trend) uses it without the
//! report's other dependencies.

pub mod axis;
pub mod chart;
mod draw;
mod font;
pub mod ids;
pub mod numbers;
pub mod png;
mod raster;
pub mod svg;
pub mod text;

use axis::{Axis, TickFormat};
use yamba_stats::units::Unit;

/// What to draw.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlotOptions {
    /// A histogram instead of the observations in order.
    pub hist: bool,
    /// Histogram bins; `None` picks Sturges' rule.
    pub bins: Option<usize>,
    /// Layers of outliers to remove (`-ooo` = 3).
    pub outlier_layers: usize,
    /// Include zero on the value axis.
    pub zero: bool,
}

/// What a figure shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Marks {
    /// Values in the order taken: x is the index.
    Sequence(Vec<f64>),
    /// Bins over the x axis: `(lo, hi, count)`.
    Histogram(Vec<(f64, f64, usize)>),
    /// Curves of (x, y) points joined in x order; more than one are
    /// overlaid on the same axes and named in a legend.
    Curves(Vec<Line>),
}

/// One curve of an overlay.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Its name in the legend.
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// One plot, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub title: String,
    pub marks: Marks,
    pub x: Axis,
    pub y: Axis,
    /// Lines under the plot: outliers removed, ignored options.
    pub captions: Vec<String>,
    /// The median of the values drawn (sequence: on the value axis;
    /// histogram: on the x axis), marked on the plot.
    pub median: Option<f64>,
}

impl Figure {
    /// A value on the axis the median is marked on, as its ticks read.
    pub fn x_or_y_label(&self, v: f64) -> String {
        let axis = match self.marks {
            Marks::Histogram(_) => &self.x,
            _ => &self.y,
        };
        let unit = axis
            .label
            .rsplit_once('(')
            .and_then(|(_, u)| u.strip_suffix(')'))
            .map(|u| format!(" {u}"))
            .unwrap_or_default();
        format!("{}{unit}", format_sig(v))
    }
}

/// The numbers to plot and what they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub title: String,
    /// `None` for plain numbers of unknown unit.
    pub unit: Option<Unit>,
    pub values: Vec<f64>,
    pub curve: Option<Curve>,
}

/// A curve to draw: (x, y) points and how to label and scale the axes
/// (what a results file's series holds).
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub x_label: String,
    /// The x values' unit symbol (`"B"`, `"ns"`, …): a [`Unit`]'s symbol
    /// scales the axis (B → KiB, ns → µs), any other is shown as it is.
    pub x_unit: String,
    pub y_label: String,
    pub y_unit: String,
    /// Whether the curve reads best on logarithmic axes.
    pub log_x: bool,
    pub log_y: bool,
    /// (x, y) points in x order.
    pub points: Vec<[f64; 2]>,
}

impl Source {
    pub fn from_numbers(title: &str, values: Vec<f64>) -> Source {
        Source {
            title: title.to_string(),
            unit: None,
            values,
            curve: None,
        }
    }
}

/// Default histogram bins: Sturges' rule, ⌈log2 n⌉ + 1.
pub fn sturges_bins(n: usize) -> usize {
    if n <= 1 {
        1
    } else {
        (n as f64).log2().ceil() as usize + 1
    }
}

/// Turns a source into a figure: its curve when it has one (log axes as
/// the curve asks), otherwise its observations, in order or binned.
pub fn figure(src: &Source, opts: &PlotOptions) -> Figure {
    match &src.curve {
        Some(s) if !s.points.is_empty() => curve_figure(src, s, opts),
        _ => observation_figure(src, opts),
    }
}

fn unit_from_symbol(symbol: &str) -> Option<Unit> {
    serde_json::from_value(serde_json::Value::String(symbol.to_string())).ok()
}

fn curve_figure(src: &Source, s: &Curve, opts: &PlotOptions) -> Figure {
    let mut captions = Vec::new();
    if opts.outlier_layers > 0 || opts.hist {
        captions.push("a curve: -o and --hist apply to observations and were ignored".into());
    }
    let points: Vec<(f64, f64)> = s
        .points
        .iter()
        .map(|p| (p[0], p[1]))
        .filter(|(x, y)| {
            x.is_finite() && y.is_finite() && (!s.log_x || *x > 0.0) && (!s.log_y || *y > 0.0)
        })
        .collect();
    if points.len() < s.points.len() {
        captions.push(format!(
            "{} points not drawable on these axes were left out",
            s.points.len() - points.len()
        ));
    }
    let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.1).collect();
    let (x, xd) = curve_axis(&s.x_label, &s.x_unit, s.log_x, &xs, false);
    let (y, yd) = curve_axis(&s.y_label, &s.y_unit, s.log_y, &ys, opts.zero);
    if opts.zero && s.log_y {
        captions.push("-z ignored: the value axis is logarithmic".into());
    }
    Figure {
        title: src.title.clone(),
        marks: Marks::Curves(vec![Line {
            label: src.title.clone(),
            points: points.iter().map(|(a, b)| (a / xd, b / yd)).collect(),
        }]),
        x,
        y,
        captions,
        median: None,
    }
}

/// One figure of several sources' curves on shared axes (the axes and
/// their labels of the first; sources without a curve, or whose curve is
/// in other units, are left out and said so in a caption). `None` when
/// fewer than one curve remains.
pub fn overlay(sources: &[Source], opts: &PlotOptions) -> Option<Figure> {
    let with_curve: Vec<(&Source, &Curve)> = sources
        .iter()
        .filter_map(|s| {
            s.curve
                .as_ref()
                .filter(|c| !c.points.is_empty())
                .map(|c| (s, c))
        })
        .collect();
    let (_, first) = *with_curve.first()?;
    let mut captions = Vec::new();
    let same_axes = |c: &Curve| {
        c.x_unit == first.x_unit
            && c.y_unit == first.y_unit
            && c.log_x == first.log_x
            && c.log_y == first.log_y
    };
    let kept: Vec<(&Source, &Curve)> = with_curve
        .iter()
        .copied()
        .filter(|(_, c)| same_axes(c))
        .collect();
    let left_out = sources.len() - kept.len();
    if left_out > 0 {
        captions.push(format!(
            "{left_out} of {} results left out: no curve, or a curve in other units",
            sources.len()
        ));
    }
    let mut all = first.clone();
    all.points = kept.iter().flat_map(|(_, c)| c.points.clone()).collect();
    let merged = Source {
        title: String::new(),
        unit: None,
        values: Vec::new(),
        curve: Some(all.clone()),
    };
    // The shared axes: the figure of every point at once.
    let frame = curve_figure(&merged, &all, opts);
    let (xd, yd) = (
        divisor(
            &first.x_unit,
            first.log_x,
            &all.points.iter().map(|p| p[0]).collect::<Vec<_>>(),
        ),
        divisor(
            &first.y_unit,
            first.log_y,
            &all.points.iter().map(|p| p[1]).collect::<Vec<_>>(),
        ),
    );
    let lines = kept
        .iter()
        .map(|(src, c)| Line {
            label: src.title.clone(),
            points: c
                .points
                .iter()
                .filter(|p| {
                    p[0].is_finite()
                        && p[1].is_finite()
                        && (!c.log_x || p[0] > 0.0)
                        && (!c.log_y || p[1] > 0.0)
                })
                .map(|p| (p[0] / xd, p[1] / yd))
                .collect(),
        })
        .collect();
    captions.extend(frame.captions);
    let title = kept
        .iter()
        .map(|(s, _)| s.title.as_str())
        .collect::<Vec<_>>()
        .join(" vs ");
    Some(Figure {
        title,
        marks: Marks::Curves(lines),
        x: frame.x,
        y: frame.y,
        captions,
        median: None,
    })
}

/// The divisor `curve_axis` shows an axis's values in.
fn divisor(unit: &str, log: bool, vals: &[f64]) -> f64 {
    if log {
        return 1.0;
    }
    unit_from_symbol(unit).map_or(1.0, |u| u.scale_for(median(vals)).0)
}

/// A curve's axis and the divisor its values are shown in: a linear axis
/// is scaled once (ns → µs) and labelled so; a log axis spans decades, so
/// its values stay in the base unit and each tick is scaled on its own.
fn curve_axis(label: &str, unit: &str, log: bool, vals: &[f64], zero: bool) -> (Axis, f64) {
    let u = unit_from_symbol(unit);
    let with_unit = |sym: &str| {
        if sym.is_empty() {
            label.to_string()
        } else {
            format!("{label} ({sym})")
        }
    };
    if log {
        let fmt = u.map_or(TickFormat::Plain, TickFormat::Unit);
        return (Axis::covering(with_unit(unit), vals, true, false, fmt), 1.0);
    }
    let (div, sym) = u.map_or((1.0, unit), |u| u.scale_for(median(vals)));
    let scaled: Vec<f64> = vals.iter().map(|v| v / div).collect();
    let axis = Axis::covering(with_unit(sym), &scaled, false, zero, TickFormat::Plain);
    (axis, div)
}

fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return 0.0;
    }
    s.sort_by(f64::total_cmp);
    yamba_stats::percentile_sorted(&s, 50.0)
}

fn observation_figure(src: &Source, opts: &PlotOptions) -> Figure {
    let finite: Vec<f64> = src
        .values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let mut captions = Vec::new();
    if finite.len() < src.values.len() {
        captions.push(format!(
            "{} non-finite observations left out",
            src.values.len() - finite.len()
        ));
    }
    let (kept, layers) = yamba_stats::remove_outlier_layers(&finite, opts.outlier_layers);
    for (i, l) in layers.iter().enumerate() {
        captions.push(format!(
            "-o layer {}: removed {} of {} (mean {}, sd {})",
            i + 1,
            l.removed,
            kept.len() + layers[i..].iter().map(|l| l.removed).sum::<usize>(),
            format_sig(l.mean),
            format_sig(l.stddev)
        ));
    }
    let (div, sym) = match src.unit {
        Some(u) => u.scale_for(median(&kept)),
        None => (1.0, ""),
    };
    let scaled: Vec<f64> = kept.iter().map(|v| v / div).collect();
    let value_label = if sym.is_empty() {
        "value".to_string()
    } else {
        format!("value ({sym})")
    };
    if opts.hist {
        let value_axis = Axis::covering(value_label, &scaled, false, opts.zero, TickFormat::Plain);
        let bins = opts
            .bins
            .unwrap_or_else(|| sturges_bins(scaled.len()))
            .max(1);
        let hist = histogram(&scaled, value_axis.lo, value_axis.hi, bins);
        let top = hist.iter().map(|b| b.2).max().unwrap_or(0) as f64;
        let count_axis = Axis::covering(
            "count".into(),
            &[0.0, top.max(1.0)],
            false,
            true,
            TickFormat::Plain,
        );
        Figure {
            title: src.title.clone(),
            marks: Marks::Histogram(hist),
            x: value_axis,
            y: count_axis,
            captions,
            median: (!scaled.is_empty()).then(|| median(&scaled)),
        }
    } else {
        let n = scaled.len();
        let x = Axis::covering(
            "observation".into(),
            &[0.0, n.saturating_sub(1) as f64],
            false,
            false,
            TickFormat::Plain,
        );
        let y = Axis::covering(value_label, &scaled, false, opts.zero, TickFormat::Plain);
        Figure {
            title: src.title.clone(),
            median: (!scaled.is_empty()).then(|| median(&scaled)),
            marks: Marks::Sequence(scaled),
            x,
            y,
            captions,
        }
    }
}

fn format_sig(v: f64) -> String {
    yamba_stats::units::format_sig(v)
}

/// Counts of `values` in `bins` equal bins over [lo, hi]; the last bin is
/// closed so the maximum is counted.
pub fn histogram(values: &[f64], lo: f64, hi: f64, bins: usize) -> Vec<(f64, f64, usize)> {
    let bins = bins.max(1);
    let w = (hi - lo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for &v in values {
        if !(lo..=hi).contains(&v) || w <= 0.0 {
            continue;
        }
        let i = (((v - lo) / w).floor() as usize).min(bins - 1);
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + w * i as f64, lo + w * (i + 1) as f64, c))
        .collect()
}
