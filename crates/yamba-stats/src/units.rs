//! Units of results, and the auto-scaling used when printing them.

use serde::{Deserialize, Serialize};

/// The unit of a result's observations. Observations are always stored in
/// the base unit named here; only printing scales them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Time per operation, in nanoseconds.
    #[serde(rename = "ns")]
    Nanoseconds,
    /// Bandwidth in GB/s, where GB means 10^9 bytes.
    #[serde(rename = "GB/s")]
    GigabytesPerSecond,
    /// A size in bytes.
    #[serde(rename = "B")]
    Bytes,
    /// A count of events.
    #[serde(rename = "count")]
    Count,
    /// Events per second.
    #[serde(rename = "/s")]
    PerSecond,
    /// A pure number (a ratio, a share).
    #[serde(rename = "ratio")]
    Ratio,
}

impl Unit {
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "ns",
            Unit::GigabytesPerSecond => "GB/s",
            Unit::Bytes => "B",
            Unit::Count => "count",
            Unit::PerSecond => "/s",
            Unit::Ratio => "ratio",
        }
    }

    /// Whether a larger value is better (bandwidths, rates) or worse (times).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Unit::GigabytesPerSecond | Unit::PerSecond)
    }

    /// A divisor and display symbol that suit `typical` (a value in the base
    /// unit): ns → µs → ms → s, B → KiB → MiB → GiB.
    pub fn scale_for(self, typical: f64) -> (f64, &'static str) {
        let t = typical.abs();
        match self {
            Unit::Nanoseconds => match t {
                t if t >= 1e9 => (1e9, "s"),
                t if t >= 1e6 => (1e6, "ms"),
                t if t >= 1e3 => (1e3, "µs"),
                _ => (1.0, "ns"),
            },
            Unit::Bytes => match t {
                t if t >= (1u64 << 30) as f64 => ((1u64 << 30) as f64, "GiB"),
                t if t >= (1u64 << 20) as f64 => ((1u64 << 20) as f64, "MiB"),
                t if t >= 1024.0 => (1024.0, "KiB"),
                _ => (1.0, "B"),
            },
            other => (1.0, other.symbol()),
        }
    }
}

/// A size in the binary unit that suits it: "48 KiB", "2 MiB", "23.5 GiB".
pub fn format_size(bytes: u64) -> String {
    let b = bytes as f64;
    let (div, sym) = match bytes {
        n if n >= 1 << 40 => ((1u64 << 40) as f64, "TiB"),
        n if n >= 1 << 30 => ((1u64 << 30) as f64, "GiB"),
        n if n >= 1 << 20 => ((1u64 << 20) as f64, "MiB"),
        n if n >= 1 << 10 => (1024.0, "KiB"),
        _ => (1.0, "B"),
    };
    let v = b / div;
    if (v - v.round()).abs() < 0.05 {
        format!("{} {sym}", v.round())
    } else {
        format!("{v:.1} {sym}")
    }
}

/// Formats a value with about four significant digits.
pub fn format_sig(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    let decimals = match a {
        a if a >= 1000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        a if a >= 1.0 => 3,
        0.0 => 0,
        _ => 4,
    };
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_time_and_bytes() {
        assert_eq!(Unit::Nanoseconds.scale_for(512.0), (1.0, "ns"));
        assert_eq!(Unit::Nanoseconds.scale_for(1.5e4), (1e3, "µs"));
        assert_eq!(Unit::Nanoseconds.scale_for(2.5e6), (1e6, "ms"));
        assert_eq!(Unit::Bytes.scale_for(3.0 * 1048576.0).1, "MiB");
        assert_eq!(Unit::GigabytesPerSecond.scale_for(12.0), (1.0, "GB/s"));
        assert_eq!(format_sig(1234.56), "1235");
        assert_eq!(format_sig(12.3456), "12.35");
        assert_eq!(format_sig(0.012345), "0.0123");
    }

    #[test]
    fn serializes_as_symbols() {
        assert_eq!(
            serde_json::to_string(&Unit::GigabytesPerSecond).unwrap(),
            "\"GB/s\""
        );
        let u: Unit = serde_json::from_str("\"ns\"").unwrap();
        assert_eq!(u, Unit::Nanoseconds);
    }
}
