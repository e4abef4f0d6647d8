//! Charts for the HTML report: several series on shared axes, vertical
//! markers (cache levels, a knee), fitted lines, histograms and grouped
//! bars, drawn as inline SVG. Axes, ticks and unit-aware tick labels come
//! from [`super::axis`], so a report's figure reads like `yamba plot`'s.
//!
//! Every data mark is an element of class `pt` inside a `g.series` that
//! says how many it holds (`data-n`), with the exact values in `data-tip`
//! for the page's hover read-out: a test (or a reader's script) can check
//! that each figure drew all its points.

use super::axis::Axis;
use super::svg::escape;
use std::fmt::Write as _;

/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// One data point and its hover text.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub tip: String,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Points joined by a line, each point marked.
    LineAndPoints,
    /// Points alone.
    Points,
    /// A line alone (a fitted model): its points are not data, so not `pt`s.
    Line,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: usize,
    pub dashed: bool,
    pub style: Style,
    pub points: Vec<Point>,
}

/// A vertical marker across the plot: a cache level, a knee.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub x: f64,
    pub label: String,
    pub color: usize,
    /// Dotted (a reference, e.g. the size sysfs reports) rather than solid.
    pub dotted: bool,
}

/// A horizontal segment: a plateau's latency over its sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub x0: f64,
    pub x1: f64,
    pub y: f64,
    pub color: usize,
    pub tip: String,
}

/// One histogram bin.
#[derive(Debug, Clone, PartialEq)]
pub struct Bin {
    pub lo: f64,
    pub hi: f64,
    pub count: usize,
    pub tip: String,
}

/// Bars of one kind (hot, cold, a run), one per category.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub color: usize,
    /// Value and hover text per category; `None` leaves a gap.
    pub values: Vec<Option<(f64, String)>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Xy {
        series: Vec<Series>,
        markers: Vec<Marker>,
        segments: Vec<Segment>,
    },
    Histogram {
        bins: Vec<Bin>,
        markers: Vec<Marker>,
    },
    Bars {
        categories: Vec<String>,
        series: Vec<BarSeries>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Names the figure in the page (`data-figure`).
    pub id: String,
    pub x: Axis,
    pub y: Axis,
    pub body: Body,
}

pub const WIDTH: f64 = 760.0;
pub const HEIGHT: f64 = 380.0;
const CHAR_W: f64 = 6.6;
const FONT: f64 = 11.0;

/// The pixel frame of the plot area.
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    fn px(&self, a: &Axis, v: f64) -> f64 {
        self.left + a.fraction(v) * (self.right - self.left)
    }
    fn py(&self, a: &Axis, v: f64) -> f64 {
        self.bottom - a.fraction(v) * (self.bottom - self.top)
    }
}

fn n(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "0".into()
    }
}

fn legend_names(body: &Body) -> Vec<(String, usize, bool)> {
    match body {
        Body::Xy { series, .. } => series
            .iter()
            .map(|s| (s.name.clone(), s.color, s.dashed))
            .collect(),
        Body::Bars { series, .. } => series
            .iter()
            .map(|s| (s.name.clone(), s.color, false))
            .collect(),
        Body::Histogram { .. } => vec![],
    }
}

/// A legend entry: name, palette index, dashed.
type LegendItem = (String, usize, bool);

/// The chart as an inline `<svg>` element.
pub fn render(c: &Chart) -> String {
    let legend = legend_names(&c.body);
    let rows = legend_rows(&legend);
    let f = frame(c, &legend, rows.len());
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" data-figure=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-size=\"{FONT}\" role=\"img\">",
        escape(&c.id)
    );
    let clip = crate::ids::id("clip-", &c.id);
    let _ = write!(
        s,
        "<defs><clipPath id=\"{clip}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath></defs>",
        n(f.left),
        n(f.top - 4.0),
        n(f.right - f.left + 4.0),
        n(f.bottom - f.top + 8.0)
    );
    if legend.len() >= 2 {
        draw_legend(&mut s, &f, &rows);
    }
    draw_axes(&mut s, c, &f);
    let _ = write!(s, "<g clip-path=\"url(#{clip})\">");
    match &c.body {
        Body::Xy {
            series,
            markers,
            segments,
        } => {
            draw_markers(&mut s, c, &f, markers);
            draw_plateaus(&mut s, c, &f, segments);
            for se in series {
                draw_series(&mut s, c, &f, se);
            }
        }
        Body::Histogram { bins, markers } => {
            draw_bins(&mut s, c, &f, bins);
            draw_markers(&mut s, c, &f, markers);
        }
        Body::Bars { categories, series } => draw_bars(&mut s, c, &f, categories, series),
    }
    s += "</g></svg>";
    s
}

/// Legend entries flow left to right in rows above the plot: each row's
/// entries with their x offsets.
fn legend_rows(legend: &[LegendItem]) -> Vec<Vec<(f64, &LegendItem)>> {
    let mut rows: Vec<Vec<(f64, &LegendItem)>> = vec![vec![]];
    let mut x = 0.0;
    for item in legend {
        let w = 28.0 + item.0.chars().count() as f64 * CHAR_W + 16.0;
        if x + w > WIDTH - 60.0 && x > 0.0 {
            rows.push(vec![]);
            x = 0.0;
        }
        rows.last_mut().unwrap().push((x, item));
        x += w;
    }
    rows
}

/// The plot's frame: room for the legend above, the y labels left, and
/// the x labels (slanted category names for bars) below.
fn frame(c: &Chart, legend: &[LegendItem], legend_rows: usize) -> Frame {
    let legend_h = if legend.len() > 1 {
        legend_rows as f64 * 16.0 + 4.0
    } else {
        0.0
    };
    let label_w =
        c.y.ticks(6)
            .iter()
            .map(|t| c.y.tick_label(*t).chars().count())
            .max()
            .unwrap_or(1) as f64
            * CHAR_W;
    let bottom_room = if matches!(c.body, Body::Bars { .. }) {
        96.0
    } else {
        44.0
    };
    Frame {
        left: label_w + 34.0,
        right: WIDTH - 16.0,
        top: 10.0 + legend_h,
        bottom: HEIGHT - bottom_room,
    }
}

fn draw_legend(s: &mut String, f: &Frame, rows: &[Vec<(f64, &LegendItem)>]) {
    for (row, entries) in rows.iter().enumerate() {
        for (x, (name, color, dashed)) in entries {
            let y = 14.0 + row as f64 * 16.0;
            let x0 = f.left + x;
            let _ = write!(
                s,
                "<g class=\"legend\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/><text x=\"{}\" y=\"{}\">{}</text></g>",
                n(x0),
                n(y - 4.0),
                n(x0 + 22.0),
                n(y - 4.0),
                PALETTE[color % PALETTE.len()],
                if *dashed { " stroke-dasharray=\"5 3\"" } else { "" },
                n(x0 + 28.0),
                n(y),
                escape(name)
            );
        }
    }
}

/// Grid lines with the y ticks (and x ticks but for bars), the two axes
/// and their labels.
fn draw_axes(s: &mut String, c: &Chart, f: &Frame) {
    for t in c.y.ticks(6) {
        let y = f.py(&c.y, t);
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(f.left),
            n(y),
            n(f.right),
            n(y),
            n(f.left - 5.0),
            n(y + 4.0),
            escape(&c.y.tick_label(t))
        );
    }
    if !matches!(c.body, Body::Bars { .. }) {
        let max_x_ticks = ((f.right - f.left) / 70.0) as usize;
        for t in c.x.ticks(max_x_ticks.max(2)) {
            let x = f.px(&c.x, t);
            let _ = write!(
                s,
                "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                n(x),
                n(f.top),
                n(x),
                n(f.bottom),
                n(x),
                n(f.bottom + 15.0),
                escape(&c.x.tick_label(t))
            );
        }
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/><line class=\"axis\" x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\"/>",
        l = n(f.left),
        r = n(f.right),
        t = n(f.top),
        b = n(f.bottom)
    );
    let _ = write!(
        s,
        "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        n((f.left + f.right) / 2.0),
        n(HEIGHT - 8.0),
        escape(&c.x.label)
    );
    let _ = write!(
        s,
        "<text class=\"label\" x=\"12\" y=\"{y}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {y})\">{}</text>",
        escape(&c.y.label),
        y = n((f.top + f.bottom) / 2.0)
    );
}

fn draw_plateaus(s: &mut String, c: &Chart, f: &Frame, segments: &[Segment]) {
    for seg in segments {
        let y = f.py(&c.y, seg.y);
        let _ = write!(
            s,
            "<line class=\"plateau\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" data-tip=\"{}\"/>",
            n(f.px(&c.x, seg.x0)),
            n(y),
            n(f.px(&c.x, seg.x1)),
            n(y),
            PALETTE[seg.color % PALETTE.len()],
            escape(&seg.tip)
        );
    }
}

fn draw_bins(s: &mut String, c: &Chart, f: &Frame, bins: &[Bin]) {
    let _ = write!(s, "<g class=\"series\" data-n=\"{}\">", bins.len());
    for b in bins {
        let (x0, x1) = (f.px(&c.x, b.lo), f.px(&c.x, b.hi));
        let y = f.py(&c.y, b.count as f64);
        let _ = write!(
            s,
            "<rect class=\"pt bin\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" data-tip=\"{}\"/>",
            n(x0 + 0.5),
            n(y),
            n((x1 - x0 - 1.0).max(1.0)),
            n((f.bottom - y).max(0.0)),
            PALETTE[0],
            escape(&b.tip)
        );
    }
    *s += "</g>";
}

/// Grouped bars, a group per category, then the categories' names
/// slanted under the axis (outside the clipped group).
fn draw_bars(s: &mut String, c: &Chart, f: &Frame, categories: &[String], series: &[BarSeries]) {
    let k = categories.len().max(1) as f64;
    let slot = (f.right - f.left) / k;
    let groups = series.len().max(1) as f64;
    let bw = (slot * 0.8 / groups).max(1.0);
    let base = f.py(&c.y, if c.y.log { c.y.lo } else { c.y.lo.max(0.0) });
    for (gi, se) in series.iter().enumerate() {
        let count = se.values.iter().filter(|v| v.is_some()).count();
        let _ = write!(
            s,
            "<g class=\"series\" data-series=\"{}\" data-n=\"{count}\">",
            escape(&se.name)
        );
        for (ci, v) in se.values.iter().enumerate() {
            let Some((v, tip)) = v else { continue };
            let x = f.left + slot * ci as f64 + slot * 0.1 + bw * gi as f64;
            let y = f.py(&c.y, *v).min(base);
            let _ = write!(
                s,
                "<rect class=\"pt bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" data-tip=\"{}\"/>",
                n(x),
                n(y),
                n(bw - 1.0),
                n((base - y).max(1.0)),
                PALETTE[se.color % PALETTE.len()],
                escape(tip)
            );
        }
        *s += "</g>";
    }
    *s += "</g><g>";
    for (ci, cat) in categories.iter().enumerate() {
        let x = f.left + slot * (ci as f64 + 0.5);
        let y = f.bottom + 10.0;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" transform=\"rotate(-35 {} {})\">{}</text>",
            n(x),
            n(y),
            n(x),
            n(y),
            escape(cat)
        );
    }
}

fn draw_markers(s: &mut String, c: &Chart, f: &Frame, markers: &[Marker]) {
    for (i, m) in markers.iter().enumerate() {
        if m.x < c.x.lo || m.x > c.x.hi {
            continue;
        }
        let x = f.px(&c.x, m.x);
        let color = PALETTE[m.color % PALETTE.len()];
        let _ = write!(
            s,
            "<line class=\"marker\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{color}\"{}/>",
            n(x),
            n(f.top),
            n(x),
            n(f.bottom),
            if m.dotted {
                " stroke-dasharray=\"2 3\""
            } else {
                " stroke-dasharray=\"6 3\""
            }
        );
        // Labels alternate between two heights so neighbours do not collide;
        // dotted (reference) markers label near the bottom.
        let y = if m.dotted {
            f.bottom - 6.0 - (i % 2) as f64 * 12.0
        } else {
            f.top + 12.0 + (i % 2) as f64 * 12.0
        };
        let _ = write!(
            s,
            "<text class=\"marker-label\" x=\"{}\" y=\"{}\" fill=\"{color}\">{}</text>",
            n(x + 3.0),
            n(y),
            escape(&m.label)
        );
    }
}

fn draw_series(s: &mut String, c: &Chart, f: &Frame, se: &Series) {
    let color = PALETTE[se.color % PALETTE.len()];
    let drawable: Vec<&Point> = se
        .points
        .iter()
        .filter(|p| {
            p.x.is_finite() && p.y.is_finite() && (!c.x.log || p.x > 0.0) && (!c.y.log || p.y > 0.0)
        })
        .collect();
    let is_data = se.style != Style::Line;
    let _ = write!(
        s,
        "<g class=\"{}\" data-series=\"{}\" data-n=\"{}\">",
        if is_data { "series" } else { "model" },
        escape(&se.name),
        if is_data { drawable.len() } else { 0 }
    );
    if se.style != Style::Points && drawable.len() > 1 {
        let mut pts = String::new();
        for p in &drawable {
            let _ = write!(pts, "{},{} ", n(f.px(&c.x, p.x)), n(f.py(&c.y, p.y)));
        }
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.6\"{} points=\"{}\"/>",
            if se.dashed {
                " stroke-dasharray=\"5 3\""
            } else {
                ""
            },
            pts.trim_end()
        );
    }
    if is_data {
        for p in &drawable {
            let _ = write!(
                s,
                "<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"2.8\" fill=\"{color}\" data-tip=\"{}\"/>",
                n(f.px(&c.x, p.x)),
                n(f.py(&c.y, p.y)),
                escape(&p.tip)
            );
        }
    }
    s.push_str("</g>");
}

/// An axis over `values` with a little room at both ends, so no point sits
/// on the frame: 5% of the span on a linear axis, 15% of a decade on a log one.
pub fn padded_axis(
    label: String,
    values: &[f64],
    log: bool,
    zero: bool,
    fmt: super::axis::TickFormat,
) -> Axis {
    let mut a = Axis::covering(label, values, log, zero, fmt);
    if log {
        let k = 10f64.powf(0.15);
        a.lo /= k;
        a.hi *= k;
    } else {
        let pad = (a.hi - a.lo) * 0.05;
        if !(zero && a.lo == 0.0) {
            a.lo -= pad;
        }
        a.hi += pad;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axis::TickFormat;

    fn xy(points: Vec<(f64, f64)>, log: bool) -> Chart {
        let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
        let ys: Vec<f64> = points.iter().map(|p| p.1).collect();
        Chart {
            id: "t".into(),
            x: padded_axis("x".into(), &xs, log, false, TickFormat::Plain),
            y: padded_axis("y".into(), &ys, log, false, TickFormat::Plain),
            body: Body::Xy {
                series: vec![Series {
                    name: "s".into(),
                    color: 0,
                    dashed: false,
                    style: Style::LineAndPoints,
                    points: points
                        .iter()
                        .map(|(x, y)| Point {
                            x: *x,
                            y: *y,
                            tip: format!("{x} → {y}"),
                        })
                        .collect(),
                }],
                markers: vec![],
                segments: vec![],
            },
        }
    }

    #[test]
    fn every_drawable_point_is_a_pt_inside_the_frame() {
        let svg = render(&xy(
            vec![(1.0, 1.0), (10.0, 5.0), (100.0, 2.0), (-1.0, 3.0)],
            true,
        ));
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let pts: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("pt"))
            .collect();
        // The negative x cannot sit on a log axis: three points drawn, and the group says so.
        assert_eq!(pts.len(), 3);
        assert!(svg.contains("data-n=\"3\""));
        for p in pts {
            let cx: f64 = p.attribute("cx").unwrap().parse().unwrap();
            let cy: f64 = p.attribute("cy").unwrap().parse().unwrap();
            assert!((0.0..=WIDTH).contains(&cx) && (0.0..=HEIGHT).contains(&cy));
        }
    }

    #[test]
    fn higher_values_draw_higher() {
        let svg = render(&xy(vec![(1.0, 1.0), (2.0, 4.0)], false));
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let cy: Vec<f64> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("pt"))
            .map(|n| n.attribute("cy").unwrap().parse().unwrap())
            .collect();
        assert!(cy[1] < cy[0], "{cy:?}");
    }
}
