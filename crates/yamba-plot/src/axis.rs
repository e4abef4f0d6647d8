//! Axes: a value range, linear or logarithmic, with "nice" ticks and tick
//! labels in the benchmark's unit.

use yamba_stats::units::{format_sig, Unit};

/// How tick values are written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TickFormat {
    /// The number as is (values already scaled to the axis label's unit).
    Plain,
    /// Each tick auto-scaled in this unit (`4 KiB`, `1 MiB`): for log axes,
    /// which span many decades no single scale suits.
    Unit(Unit),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub format: TickFormat,
}

impl Axis {
    /// An axis covering `values` (ignoring non-finite ones, and for a log
    /// axis, those ≤ 0), widened to hold zero when `zero` is set on a linear
    /// axis, and never empty.
    pub fn covering(
        label: String,
        values: &[f64],
        log: bool,
        zero: bool,
        format: TickFormat,
    ) -> Axis {
        let usable = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (!log || *v > 0.0));
        let (mut lo, mut hi) = usable.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if lo > hi {
            (lo, hi) = if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if zero && !log {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        if lo == hi {
            if log {
                (lo, hi) = (lo / 2.0, hi * 2.0);
            } else {
                let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
                (lo, hi) = (lo - pad, hi + pad);
            }
        }
        Axis {
            label,
            lo,
            hi,
            log,
            format,
        }
    }

    /// Where `v` falls along the axis: 0 at `lo`, 1 at `hi`.
    pub fn fraction(&self, v: f64) -> f64 {
        if self.log {
            (v.max(f64::MIN_POSITIVE).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    /// At most `max` tick values inside the range.
    pub fn ticks(&self, max: usize) -> Vec<f64> {
        let max = max.max(2);
        if self.log {
            let base = if self.format == TickFormat::Unit(Unit::Bytes) {
                2.0
            } else {
                10.0
            };
            let t = log_ticks(self.lo, self.hi, base, max);
            if t.len() >= 2 {
                return t;
            }
            // Less than two powers inside: 1, 2, 5 × 10^k, still log-spaced.
            let t = log_125_ticks(self.lo, self.hi);
            if t.len() >= 2 && t.len() <= max {
                return t;
            }
        }
        nice_ticks(self.lo, self.hi, max)
    }

    /// Unlabelled ticks between the labelled ones of a log axis with base
    /// 10: 2…9 × 10^k inside the range. None on linear or base-2 axes.
    pub fn minor_ticks(&self) -> Vec<f64> {
        if !self.log || self.format == TickFormat::Unit(Unit::Bytes) || self.lo <= 0.0 {
            return Vec::new();
        }
        let first = self.lo.log10().floor() as i32;
        let last = self.hi.log10().ceil() as i32;
        if last - first > 30 {
            return Vec::new();
        }
        (first..=last)
            .flat_map(|e| (2..=9).map(move |m| m as f64 * 10f64.powi(e)))
            .filter(|t| *t > self.lo && *t < self.hi)
            .collect()
    }

    pub fn tick_label(&self, v: f64) -> String {
        match self.format {
            TickFormat::Plain => format_tick(v),
            TickFormat::Unit(u) => {
                let (div, sym) = u.scale_for(v);
                format!("{}{}", format_tick(v / div), unit_suffix(sym))
            }
        }
    }
}

fn unit_suffix(sym: &str) -> String {
    match sym {
        "count" | "ratio" => String::new(),
        s => format!(" {s}"),
    }
}

/// A tick value without noise digits (`0.30000000000000004` → `0.3`).
pub fn format_tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e7).contains(&a) {
        return format!("{v:.1e}");
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    let s = s.to_string();
    if s.len() > 9 {
        format_sig(v)
    } else {
        s
    }
}

/// Ticks at 1, 2 or 5 × 10^k spacing: at most `max`, at least two where
/// the range allows.
pub fn nice_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![];
    }
    let span = hi - lo;
    let raw = span / (max.max(2) - 1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    // The smallest 1-2-5 step whose multiples inside the range number
    // between one and `max`.
    let count = |step: f64| ((hi / step).floor() - (lo / step).ceil() + 1.0).max(0.0);
    let step = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| (1.0..=max as f64).contains(&count(*s)))
        .unwrap_or(mag);
    let first = (lo / step).ceil();
    let n = (count(step) as usize).min(max);
    (0..n)
        .map(|i| {
            let t = (first + i as f64) * step;
            // Snap to the step's decimals so 0.30000000000000004 reads 0.3.
            let decimals = (-step.log10().floor()).clamp(0.0, 300.0) as usize;
            let t: f64 = format!("{t:.decimals$}").parse().unwrap_or(t);
            if t == 0.0 {
                0.0
            } else {
                t
            }
        })
        .collect()
}

/// Powers of `base` inside [lo, hi], thinned to at most `max`.
fn log_ticks(lo: f64, hi: f64, base: f64, max: usize) -> Vec<f64> {
    if lo <= 0.0 || hi <= lo {
        return vec![];
    }
    let a = (lo.log(base) - 1e-9).ceil() as i32;
    let b = (hi.log(base) + 1e-9).floor() as i32;
    if b < a {
        return vec![];
    }
    let count = (b - a + 1) as usize;
    let stride = count.div_ceil(max).max(1) as i32;
    (a..=b)
        .filter(|e| (e - a) % stride == 0)
        .map(|e| base.powi(e))
        .collect()
}

/// 1, 2 and 5 × 10^k inside [lo, hi], for a log axis spanning about a decade.
fn log_125_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if lo <= 0.0 || hi <= lo {
        return vec![];
    }
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    (first..=last)
        .flat_map(|e| {
            [1.0, 2.0, 5.0].map(|m| format!("{m}e{e}").parse::<f64>().unwrap_or(f64::NAN))
        })
        .filter(|t| *t >= lo * (1.0 - 1e-9) && *t <= hi * (1.0 + 1e-9))
        .collect()
}
