//! The ASCII plot, reproduced with the original's memory layout.
//!
//! ministat's plot code has quirks that show in its output: the grid's
//! height is the *last* data set's stack height (not the tallest), a
//! shrinking `realloc` and a `memset` can wipe rows another set drew, and
//! the bars of later sets overwrite earlier ones. To print the same bytes,
//! this module keeps the same flat buffers and does the same writes.
//!
//! Where the original writes outside its buffers the result depends on the
//! heap: writes into the slack glibc's `malloc` leaves after a block, or
//! (at width 0, where rounding can give column -1) into the block's header,
//! are harmless and are ignored here; anything further (a width below 0, a
//! zero width with a later `realloc(p, 0)`, and on x86-64, where a NaN or
//! out-of-range column becomes `INT_MIN`, a width of 1 or infinite or NaN
//! data) makes the original crash, and gives a [`PlotError`] here instead.

use super::{Dataset, SYMBOLS};

/// Why the plot cannot be drawn (where the original would crash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlotError(pub &'static str);

/// The plot's scale: what `SetupPlot` and `AdjPlot` compute.
struct Scale {
    min: f64,
    max: f64,
    span: f64,
    dx: f64,
    x0: f64,
}

impl Scale {
    /// `SetupPlot` then `DimPlot` of every set: the range covers the data
    /// and mean ± one standard deviation; NaNs are ignored (they compare
    /// false), and if nothing but NaN came, the static zeros remain.
    fn new(datasets: &[Dataset], width: i32) -> Self {
        let mut scale = Scale {
            min: 999e99,
            max: -999e99,
            span: 0.0,
            dx: 0.0,
            x0: 0.0,
        };
        for ds in datasets {
            let (avg, sd) = (ds.mean(), ds.stddev());
            for a in [ds.min(), ds.max(), avg - sd, avg + sd] {
                scale.adjust(a, width);
            }
        }
        scale
    }

    /// `AdjPlot`: widen to `a` and recompute the derived values.
    fn adjust(&mut self, a: f64, width: i32) {
        if a < self.min {
            self.min = a;
        }
        if a > self.max {
            self.max = a;
        }
        self.span = self.max - self.min;
        self.dx = self.span / (f64::from(width) - 1.0);
        self.x0 = self.min - 0.5 * self.dx;
    }

    /// The column of `v`, converted to `int` as the machine does it
    /// (x86-64: `INT_MIN` for NaN or out of range, which crashes; arm64:
    /// saturated, 0 for NaN).
    fn column(&self, v: f64) -> i32 {
        super::machine::to_int((v - self.x0) / self.dx)
    }
}

/// The usable size glibc's `malloc(n)` gives on 64-bit: writes past `n`
/// but below this land in slack nobody reads.
fn usable_size(n: usize) -> usize {
    (n + 8 + 15).max(32) / 16 * 16 - 8
}

/// A `malloc`ed byte buffer, `None` standing for a NULL pointer.
struct Buffer(Option<Vec<u8>>);

impl Buffer {
    /// `buf[index] = f(buf[index])`, or the crash the original would have.
    fn update(&mut self, index: i64, f: impl FnOnce(u8) -> u8) -> Result<(), PlotError> {
        let bytes = self
            .0
            .as_mut()
            .ok_or(PlotError("would write through a freed buffer"))?;
        if (-8..0).contains(&index) {
            // Lands in the block's malloc header: harmless unless the
            // block is freed later, which only `realloc(p, 0)` does, and
            // that is a freed buffer the next write fails on.
            return Ok(());
        }
        let index =
            usize::try_from(index).map_err(|_| PlotError("would write before its buffer"))?;
        let len = bytes.len();
        match bytes.get_mut(index) {
            Some(b) => *b = f(*b),
            None if index < usable_size(len) => {}
            None => return Err(PlotError("would write past its buffer")),
        }
        Ok(())
    }

    fn get(&self, index: usize) -> u8 {
        self.0
            .as_ref()
            .and_then(|b| b.get(index).copied())
            .unwrap_or(0)
    }
}

/// A zeroed buffer of `width` bytes (`malloc` then `memset`), or the crash
/// a negative width gives.
fn zeroed(width: i32) -> Result<Buffer, PlotError> {
    let len = usize::try_from(width).map_err(|_| PlotError("the plot width is negative"))?;
    Ok(Buffer(Some(vec![0; len])))
}

/// The plot being drawn: the point grid (`height` rows of `width`, row 0
/// unused, stacked upwards) and one bar line per set with `-s`, else one.
struct Canvas {
    scale: Scale,
    width: i32,
    height: i32,
    data: Buffer,
    bars: Vec<Option<Buffer>>,
    separate_bars: bool,
}

/// Draws the plot of `datasets` as ministat's `DumpPlot` prints it.
pub fn render(
    datasets: &[Dataset],
    width: i32,
    separate_bars: bool,
    out: &mut Vec<u8>,
) -> Result<(), PlotError> {
    let mut canvas = Canvas {
        scale: Scale::new(datasets, width),
        width,
        height: 0,
        data: Buffer(None),
        bars: (0..datasets.len()).map(|_| None).collect(),
        separate_bars,
    };
    if canvas.scale.span == 0.0 {
        out.extend_from_slice(b"[no plot, span is zero width]\n");
        return Ok(());
    }
    for (i, ds) in datasets.iter().enumerate() {
        canvas
            .plot_set(ds, i as u8 + 1)
            .map_err(|crash| diagnose(&canvas.scale, width, crash))?;
    }
    canvas.dump(out);
    Ok(())
}

/// Says why the original would crash, in the user's terms when the cause
/// is clear.
fn diagnose(scale: &Scale, width: i32, crash: PlotError) -> PlotError {
    if width < 0 {
        PlotError("the plot width is negative")
    } else if width == 1 {
        PlotError("a plot 1 column wide has no scale (use -w 0, or 2 or more)")
    } else if width == 0 {
        PlotError("a plot 0 columns wide breaks on a later, taller data set (use -w 2 or more)")
    } else if !scale.dx.is_finite() || !scale.x0.is_finite() {
        PlotError("the data include inf or nan")
    } else {
        crash
    }
}

impl Canvas {
    /// `PlotSet`: stack the points of one set in the grid (marking it with
    /// bit `val`), then draw its bar: `|___|` over mean ± sd, `M`, `A`.
    fn plot_set(&mut self, ds: &Dataset, val: u8) -> Result<(), PlotError> {
        let bar = if self.separate_bars {
            usize::from(val) - 1
        } else {
            0
        };
        if self.bars[bar].is_none() {
            self.bars[bar] = Some(zeroed(self.width)?);
        }
        let columns: Vec<i32> = ds.points().iter().map(|&p| self.scale.column(p)).collect();
        let (rows, j) = tallest_stack(&columns);
        self.grow(rows)?;
        self.stack_points(&columns, j, val)?;
        self.draw_bar(ds, bar)
    }

    /// Makes the grid `rows` high: `realloc` plus `memset` of the new rows
    /// when it grows, and the height set even when it shrinks.
    fn grow(&mut self, rows: i32) -> Result<(), PlotError> {
        if rows > self.height {
            let len = self
                .width
                .checked_mul(rows)
                .ok_or(PlotError("the plot is too large"))?;
            let len = usize::try_from(len).map_err(|_| PlotError("the plot width is negative"))?;
            self.data = match self.data.0.take() {
                Some(_) if len == 0 => Buffer(None), // realloc(p, 0) frees.
                Some(mut bytes) => {
                    bytes.resize(len, 0);
                    Buffer(Some(bytes))
                }
                None => Buffer(Some(vec![0; len])),
            };
            let from = (self.height * self.width) as usize;
            if let Some(bytes) = self.data.0.as_mut() {
                bytes[from.min(len)..].fill(0);
            }
        }
        self.height = rows;
        Ok(())
    }

    /// Puts each point one row above the previous point of its column.
    fn stack_points(&mut self, columns: &[i32], mut j: i32, val: u8) -> Result<(), PlotError> {
        let mut previous = -1;
        for &x in columns {
            if x == previous {
                j += 1;
            } else {
                j = 1;
                previous = x;
            }
            let index = i64::from(j) * i64::from(self.width) + i64::from(x);
            self.data.update(index, |b| b | val)?;
        }
        Ok(())
    }

    fn draw_bar(&mut self, ds: &Dataset, bar: usize) -> Result<(), PlotError> {
        let (avg, sd) = (ds.mean(), ds.stddev());
        let scale = &self.scale;
        let line = self.bars[bar].as_mut().expect("allocated in plot_set");
        if !sd.is_nan() {
            let left = scale.column(avg - sd);
            let right = scale.column(avg + sd);
            line.update(right.into(), |_| b'|')?;
            line.update(left.into(), |_| b'|')?;
            for i in left.saturating_add(1)..right {
                line.update(i.into(), |b| if b == 0 { b'_' } else { b })?;
            }
        }
        line.update(scale.column(ds.median()).into(), |_| b'M')?;
        line.update(scale.column(avg).into(), |_| b'A')
    }

    /// `DumpPlot`: frame, grid rows from the top down to row 1, bars, frame.
    fn dump(&self, out: &mut Vec<u8>) {
        let width = usize::try_from(self.width).unwrap_or(0);
        let frame = |out: &mut Vec<u8>| {
            out.push(b'+');
            out.resize(out.len() + width, b'-');
            out.extend_from_slice(b"+\n");
        };
        frame(out);
        for row in (1..self.height.max(1) as usize).rev() {
            out.push(b'|');
            for col in 0..width {
                let k = self.data.get(row * width + col);
                match SYMBOLS.get(usize::from(k)) {
                    Some(&symbol) => out.push(symbol),
                    None => out.extend_from_slice(format!("[{k:02x}]").as_bytes()),
                }
            }
            out.extend_from_slice(b"|\n");
        }
        for line in self.bars.iter().flatten() {
            out.push(b'|');
            out.extend((0..width).map(|i| match line.get(i) {
                0 => b' ',
                c => c,
            }));
            out.extend_from_slice(b"|\n");
        }
        frame(out);
    }
}

/// The grid height one set needs: its tallest run of points in one column
/// plus one (row 0 is never used), and the run counter as the C loop
/// leaves it (the drawing loop starts from that value).
fn tallest_stack(columns: &[i32]) -> (i32, i32) {
    let (mut tallest, mut previous, mut j) = (1, -1, 0);
    for &x in columns {
        if x == previous {
            j += 1;
            tallest = tallest.max(j);
        } else {
            j = 1;
            previous = x;
        }
    }
    (tallest + 1, j)
}
