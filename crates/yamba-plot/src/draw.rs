//! Pixel layout of figures, shared by the SVG and PNG renderers: one
//! layout, two painters, so both files show the same plot.

use super::{Figure, Marks};

pub type Rgb = [u8; 3];

pub const BLACK: Rgb = [0, 0, 0];
pub const GRID: Rgb = [220, 220, 220];
pub const INK: Rgb = [31, 119, 180];
pub const WHITE: Rgb = [255, 255, 255];
/// The median marker.
pub const MEDIAN: Rgb = [214, 39, 40];

/// Colours of overlaid curves, in order (INK first).
pub const PALETTE: [Rgb; 6] = [
    INK,
    [255, 127, 14],
    [44, 160, 44],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
];

/// Where a text's anchor point is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

/// The drawing operations the layout needs.
pub trait Painter {
    fn line(&mut self, a: (f64, f64), b: (f64, f64), color: Rgb);
    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: Rgb);
    fn polyline(&mut self, points: &[(f64, f64)], color: Rgb);
    fn marker(&mut self, at: (f64, f64), color: Rgb);
    /// Text with its baseline-middle at `at`; `vertical` reads bottom to top.
    fn text(&mut self, at: (f64, f64), s: &str, anchor: Anchor, vertical: bool);
}

/// Nominal character size the layout reserves room for.
pub const CHAR_W: f64 = 12.0;
pub const CHAR_H: f64 = 14.0;

/// Draws `figs` stacked in panels of `w` × `h` pixels.
pub fn draw(p: &mut dyn Painter, figs: &[Figure], w: f64, h: f64) {
    p.rect(0.0, 0.0, w, h * figs.len() as f64, WHITE);
    for (i, f) in figs.iter().enumerate() {
        panel(p, f, h * i as f64, w, h);
    }
}

fn panel(p: &mut dyn Painter, fig: &Figure, top: f64, w: f64, h: f64) {
    let y_ticks = fig.y.ticks(6);
    let y_labels: Vec<String> = y_ticks.iter().map(|t| fig.y.tick_label(*t)).collect();
    let label_w = y_labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1) as f64
        * CHAR_W;
    let left = label_w + 2.0 * CHAR_H + 10.0;
    let right = w - 20.0;
    let plot_top = top + 2.0 * CHAR_H + 6.0;
    let bottom = top + h - (3.0 + fig.captions.len() as f64) * (CHAR_H + 4.0) - 6.0;
    let (pw, ph) = ((right - left).max(10.0), (bottom - plot_top).max(10.0));
    let px = |x: f64| left + fig.x.fraction(x) * pw;
    let py = |y: f64| plot_top + (1.0 - fig.y.fraction(y)) * ph;

    p.text(
        (left + pw / 2.0, top + CHAR_H + 4.0),
        &fig.title,
        Anchor::Middle,
        false,
    );
    for (t, l) in y_ticks.iter().zip(&y_labels) {
        let y = py(*t);
        p.line((left, y), (right, y), GRID);
        p.text((left - 6.0, y + CHAR_H / 3.0), l, Anchor::End, false);
    }
    let x_ticks = fig.x.ticks(((pw / (CHAR_W * 12.0)) as usize).max(2));
    for t in &x_ticks {
        let x = px(*t);
        p.line((x, plot_top), (x, bottom), GRID);
        p.text(
            (x, bottom + CHAR_H + 4.0),
            &fig.x.tick_label(*t),
            Anchor::Middle,
            false,
        );
    }
    // Minor ticks on log axes: 2…9 × 10^k, short marks on the axis lines.
    for t in fig.x.minor_ticks() {
        let x = px(t);
        p.line((x, bottom), (x, bottom + 4.0), BLACK);
    }
    for t in fig.y.minor_ticks() {
        let y = py(t);
        p.line((left - 4.0, y), (left, y), BLACK);
    }
    for t in &x_ticks {
        let x = px(*t);
        p.line((x, bottom), (x, bottom + 7.0), BLACK);
    }
    for t in &y_ticks {
        let y = py(*t);
        p.line((left - 7.0, y), (left, y), BLACK);
    }
    p.line((left, bottom), (right, bottom), BLACK);
    p.line((left, plot_top), (left, bottom), BLACK);
    p.text(
        (left + pw / 2.0, bottom + 2.0 * (CHAR_H + 4.0)),
        &fig.x.label,
        Anchor::Middle,
        false,
    );
    p.text(
        (CHAR_H + 4.0, plot_top + ph / 2.0),
        &fig.y.label,
        Anchor::Middle,
        true,
    );
    for (i, c) in fig.captions.iter().enumerate() {
        let y = bottom + (3.0 + i as f64) * (CHAR_H + 4.0);
        p.text((left, y), c, Anchor::Start, false);
    }

    match &fig.marks {
        Marks::Sequence(v) => {
            let pts: Vec<(f64, f64)> = v
                .iter()
                .enumerate()
                .map(|(i, y)| (px(i as f64), py(*y)))
                .collect();
            p.polyline(&pts, INK);
            if pts.len() <= 200 {
                for q in &pts {
                    p.marker(*q, INK);
                }
            }
        }
        Marks::Curves(lines) => {
            for (i, l) in lines.iter().enumerate() {
                let c = PALETTE[i % PALETTE.len()];
                let pts: Vec<(f64, f64)> = l.points.iter().map(|(x, y)| (px(*x), py(*y))).collect();
                p.polyline(&pts, c);
                for q in &pts {
                    p.marker(*q, c);
                }
            }
            if lines.len() > 1 {
                legend(p, lines, (left + 10.0, plot_top + 6.0));
            }
        }
        Marks::Histogram(bins) => {
            for (lo, hi, n) in bins {
                let (x0, x1) = (px(*lo), px(*hi));
                let y = py(*n as f64);
                p.rect(x0 + 0.5, y, (x1 - x0 - 1.0).max(1.0), bottom - y, INK);
            }
        }
    }
    // The median: a line across the plot, labelled.
    if let Some(m) = fig.median {
        let label = format!("median {}", fig.x_or_y_label(m));
        match &fig.marks {
            Marks::Histogram(_) => {
                let x = px(m);
                p.line((x, plot_top), (x, bottom), MEDIAN);
                p.text((x + 4.0, plot_top + CHAR_H), &label, Anchor::Start, false);
            }
            Marks::Sequence(_) => {
                let y = py(m);
                p.line((left, y), (right, y), MEDIAN);
                p.text((right - 4.0, y - 4.0), &label, Anchor::End, false);
            }
            Marks::Curves(_) => {}
        }
    }
}

/// A box in the plot's top-left corner: a swatch and a name per curve.
fn legend(p: &mut dyn Painter, lines: &[super::Line], at: (f64, f64)) {
    let row = CHAR_H + 4.0;
    let width = lines
        .iter()
        .map(|l| l.label.chars().count())
        .max()
        .unwrap_or(0) as f64
        * CHAR_W
        * 0.6
        + 40.0;
    let height = row * lines.len() as f64 + 6.0;
    p.rect(at.0, at.1, width, height, GRID);
    p.rect(at.0 + 1.0, at.1 + 1.0, width - 2.0, height - 2.0, WHITE);
    for (i, l) in lines.iter().enumerate() {
        let y = at.1 + 4.0 + row * (i as f64 + 0.5);
        let c = PALETTE[i % PALETTE.len()];
        p.line((at.0 + 6.0, y), (at.0 + 26.0, y), c);
        p.marker((at.0 + 16.0, y), c);
        p.text(
            (at.0 + 32.0, y + CHAR_H / 3.0),
            &l.label,
            Anchor::Start,
            false,
        );
    }
}
