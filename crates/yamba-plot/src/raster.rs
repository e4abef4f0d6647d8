//! An RGB canvas that the pixel layout paints on for PNG output: lines,
//! filled rectangles, dots and text in the built-in 5×7 font (doubled).

use super::draw::{Anchor, Painter, Rgb};
use super::font::glyph;

/// Font scale: each font pixel is a SCALE × SCALE square.
const SCALE: i64 = 2;
/// Horizontal advance per character, in pixels.
pub const ADVANCE: i64 = 6 * SCALE;

pub struct Canvas {
    pub width: usize,
    pub height: usize,
    /// Row-major RGB triples.
    pub pixels: Vec<u8>,
}

impl Canvas {
    pub fn new(width: usize, height: usize) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![255; width * height * 3],
        }
    }

    fn put(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            let i = (y as usize * self.width + x as usize) * 3;
            self.pixels[i..i + 3].copy_from_slice(&c);
        }
    }

    /// Bresenham between two points, clipped pixel by pixel.
    fn segment(&mut self, a: (f64, f64), b: (f64, f64), c: Rgb) {
        let finite = |p: (f64, f64)| p.0.is_finite() && p.1.is_finite();
        if !finite(a) || !finite(b) {
            return;
        }
        let lim = 1e6;
        let (mut x0, mut y0) = (
            a.0.clamp(-lim, lim).round() as i64,
            a.1.clamp(-lim, lim).round() as i64,
        );
        let (x1, y1) = (
            b.0.clamp(-lim, lim).round() as i64,
            b.1.clamp(-lim, lim).round() as i64,
        );
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let mut err = dx + dy;
        let mut steps = 0;
        loop {
            self.put(x0, y0, c);
            if (x0 == x1 && y0 == y1) || steps > 4 * lim as i64 {
                break;
            }
            steps += 1;
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x0 += sx;
            }
            if e2 <= dx {
                err += dx;
                y0 += sy;
            }
        }
    }
}

impl Painter for Canvas {
    fn line(&mut self, a: (f64, f64), b: (f64, f64), c: Rgb) {
        self.segment(a, b, c);
    }

    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: Rgb) {
        if ![x, y, w, h].iter().all(|v| v.is_finite()) {
            return;
        }
        let x0 = x.round().max(0.0) as usize;
        let y0 = y.round().max(0.0) as usize;
        let x1 = ((x + w).round().max(0.0) as usize).min(self.width);
        let y1 = ((y + h).round().max(0.0) as usize).min(self.height);
        for yy in y0..y1 {
            for xx in x0..x1 {
                self.put(xx as i64, yy as i64, fill);
            }
        }
    }

    fn polyline(&mut self, points: &[(f64, f64)], c: Rgb) {
        for w in points.windows(2) {
            self.segment(w[0], w[1], c);
        }
        if let [p] = points {
            self.marker(*p, c);
        }
    }

    fn marker(&mut self, at: (f64, f64), c: Rgb) {
        self.rect(at.0 - 1.5, at.1 - 1.5, 3.0, 3.0, c);
    }

    fn text(&mut self, at: (f64, f64), s: &str, anchor: Anchor, vertical: bool) {
        if !(at.0.is_finite() && at.1.is_finite()) {
            return;
        }
        let len = s.chars().count() as i64 * ADVANCE;
        let shift = match anchor {
            Anchor::Start => 0,
            Anchor::Middle => len / 2,
            Anchor::End => len,
        };
        // Glyph top-left, moving along the text direction; the anchor point is
        // on the baseline, as in SVG.
        let (ax, ay) = (at.0.round() as i64, at.1.round() as i64);
        let height = 7 * SCALE;
        for (i, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            let along = i as i64 * ADVANCE - shift;
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) == 0 {
                        continue;
                    }
                    for dy in 0..SCALE {
                        for dx in 0..SCALE {
                            let u = along + col as i64 * SCALE + dx; // along the text
                            let v = row as i64 * SCALE + dy - height; // up from the baseline
                            let (x, y) = if vertical {
                                (ax + v, ay - u)
                            } else {
                                (ax + u, ay + v)
                            };
                            self.put(x, y, [0, 0, 0]);
                        }
                    }
                }
            }
        }
    }
}
