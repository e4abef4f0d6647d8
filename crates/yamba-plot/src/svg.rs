//! Figures as SVG: text stays text (searchable, scalable), one `polyline`
//! per sequence or curve, one `rect` per histogram bin.

use super::draw::{self, Anchor, Painter, Rgb};
use super::Figure;
use std::fmt::Write as _;

/// An SVG document of `figs` stacked in panels of `width` × `height` pixels.
pub fn render(figs: &[Figure], width: u32, height: u32) -> String {
    let total = height as usize * figs.len().max(1);
    let mut s = Svg {
        body: String::new(),
    };
    draw::draw(&mut s, figs, width as f64, height as f64);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{total}\" viewBox=\"0 0 {width} {total}\" font-family=\"sans-serif\" font-size=\"12\">\n{}</svg>\n",
        s.body
    )
}

struct Svg {
    body: String,
}

fn color(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// Escapes text for XML character data and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 forbids.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

impl Painter for Svg {
    fn line(&mut self, a: (f64, f64), b: (f64, f64), c: Rgb) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\"/>",
            a.0,
            a.1,
            b.0,
            b.1,
            color(c)
        );
    }

    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: Rgb) {
        let _ = writeln!(
            self.body,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{}\"/>",
            color(fill)
        );
    }

    fn polyline(&mut self, points: &[(f64, f64)], c: Rgb) {
        let mut pts = String::new();
        for (x, y) in points {
            let _ = write!(pts, "{x:.1},{y:.1} ");
        }
        let _ = writeln!(
            self.body,
            "<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"1\" points=\"{}\"/>",
            color(c),
            pts.trim_end()
        );
    }

    fn marker(&mut self, at: (f64, f64), c: Rgb) {
        let _ = writeln!(
            self.body,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2\" fill=\"{}\"/>",
            at.0,
            at.1,
            color(c)
        );
    }

    fn text(&mut self, at: (f64, f64), s: &str, anchor: Anchor, vertical: bool) {
        let a = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let rotate = if vertical {
            format!(" transform=\"rotate(-90 {:.1} {:.1})\"", at.0, at.1)
        } else {
            String::new()
        };
        let _ = writeln!(
            self.body,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{a}\"{rotate}>{}</text>",
            at.0,
            at.1,
            escape(s)
        );
    }
}
