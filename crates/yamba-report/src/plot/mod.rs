//! `yamba plot`: observations in the order taken, a histogram of them, or a
//! benchmark's curve, drawn in the terminal or to an SVG or PNG file.
//!
//! As in the seed's `plot`, `-o` removes a layer of outliers (values more
//! than two standard deviations from the mean, recomputed per layer) and
//! says how many each layer removed, and `-z` puts zero on the value axis.
//! Everything is first turned into [`Figure`]s; the three renderers
//! ([`text`], [`svg`], [`png`]) only draw figures, so what one shows the
//! others show too.

pub mod axis;
pub mod chart;
mod draw;
mod font;
pub mod numbers;
pub mod png;
mod raster;
pub mod svg;
pub mod text;

use axis::{Axis, TickFormat};
use yamba_results::units::Unit;
use yamba_results::{BenchResult, Series};

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
    /// (x, y) points joined in x order.
    Curve(Vec<(f64, f64)>),
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
}

/// The numbers to plot and what they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub title: String,
    /// `None` for plain numbers of unknown unit.
    pub unit: Option<Unit>,
    pub values: Vec<f64>,
    pub series: Option<Series>,
}

impl Source {
    pub fn from_result(r: &BenchResult) -> Source {
        Source {
            title: format!("{} ({})", r.key(), r.status.as_str()),
            unit: Some(r.unit),
            values: r.observations.clone(),
            series: r.series.clone(),
        }
    }

    pub fn from_numbers(title: &str, values: Vec<f64>) -> Source {
        Source {
            title: title.to_string(),
            unit: None,
            values,
            series: None,
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
/// the series asks), otherwise its observations, in order or binned.
pub fn figure(src: &Source, opts: &PlotOptions) -> Figure {
    match &src.series {
        Some(s) if !s.points.is_empty() => curve_figure(src, s, opts),
        _ => observation_figure(src, opts),
    }
}

fn unit_from_symbol(symbol: &str) -> Option<Unit> {
    serde_json::from_value(serde_json::Value::String(symbol.to_string())).ok()
}

fn curve_figure(src: &Source, s: &Series, opts: &PlotOptions) -> Figure {
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
        marks: Marks::Curve(points.iter().map(|(a, b)| (a / xd, b / yd)).collect()),
        x,
        y,
        captions,
    }
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
            marks: Marks::Sequence(scaled),
            x,
            y,
            captions,
        }
    }
}

fn format_sig(v: f64) -> String {
    yamba_results::units::format_sig(v)
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
