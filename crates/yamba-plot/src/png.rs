//! Figures as PNG: the same layout as SVG, rasterised here and encoded by
//! the `png` crate.

use super::raster::Canvas;
use super::{draw, Figure};

/// A PNG image of `figs` stacked in panels of `width` × `height` pixels.
pub fn render(figs: &[Figure], width: u32, height: u32) -> Result<Vec<u8>, String> {
    let total = height as usize * figs.len().max(1);
    if width == 0 || height == 0 || width as usize * total > 100_000_000 {
        return Err(format!("image size {width}x{total} is out of range"));
    }
    let mut canvas = Canvas::new(width as usize, total);
    draw::draw(&mut canvas, figs, width as f64, height as f64);
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, width, total as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(|e| e.to_string())?;
    w.write_image_data(&canvas.pixels)
        .map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;
    Ok(bytes)
}
