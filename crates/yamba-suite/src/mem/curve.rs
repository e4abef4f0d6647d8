//! The latency curve: the pointer chase measured at working-set sizes from
//! a few KiB to well past the last-level cache, within a time budget.

use super::adapter::{anon_huge_bytes, Pages};
use super::chase::{Chain, Order};
use std::time::{Duration, Instant};
use yamba_core::harness::{Measured, Plan};
use yamba_core::Clock;

/// What to measure.
#[derive(Debug, Clone)]
pub struct CurveConfig {
    pub min_bytes: usize,
    pub max_bytes: usize,
    /// Sizes per doubling (geometric steps of 2^(1/k)).
    pub points_per_octave: u32,
    pub stride: usize,
    pub order: Order,
    pub pages: Pages,
    /// Harness plan for each point (budget, precision).
    pub plan: Plan,
    /// No new point beyond `mandatory_bytes` is started once this much
    /// time has passed.
    pub total_budget: Duration,
    /// Sizes up to here are always measured, whatever the budget (they
    /// are what makes the curve reach memory).
    pub mandatory_bytes: usize,
    /// Longest warm-up of one point, in ns.
    pub max_warmup_ns: f64,
}

/// One working-set size.
#[derive(Debug, Clone)]
pub struct Point {
    /// Bytes the chain spans.
    pub bytes: usize,
    pub measured: Measured,
    pub median_ns: f64,
    /// Growth of the process's AnonHugePages while the chain was built.
    pub huge_bytes: Option<u64>,
    /// Bytes mapped for the chain (whole huge pages for the huge variant).
    pub mapped_bytes: usize,
    /// Whether following the chain `elements` steps came back to its start
    /// (checked where that is cheap: up to 2^20 elements).
    pub one_cycle: Option<bool>,
}

/// The measured curve, and why it stopped where it did.
#[derive(Debug, Clone)]
pub struct Curve {
    pub points: Vec<Point>,
    /// Set when the time budget ended the curve before `max_bytes`.
    pub stopped_early: Option<String>,
}

impl Curve {
    /// (bytes, median ns) of every point.
    pub fn xy(&self) -> Vec<[f64; 2]> {
        self.points
            .iter()
            .map(|p| [p.bytes as f64, p.median_ns])
            .collect()
    }

    /// Median latency at the point nearest `bytes` (log distance).
    pub fn at(&self, bytes: f64) -> Option<&Point> {
        self.points.iter().min_by(|a, b| {
            let da = (a.bytes as f64 / bytes).ln().abs();
            let db = (b.bytes as f64 / bytes).ln().abs();
            da.total_cmp(&db)
        })
    }
}

/// Sizes from `min` to `max` in geometric steps, multiples of `stride`;
/// `max` itself is the last (the steps need not land on it).
pub fn sizes(min: usize, max: usize, per_octave: u32, stride: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let step = 2f64.powf(1.0 / per_octave.max(1) as f64);
    let mut x = min.max(2 * stride) as f64;
    while x <= max as f64 * 1.0001 {
        let s = ((x / stride as f64).round() as usize).max(2) * stride;
        if out.last() != Some(&s) {
            out.push(s);
        }
        x *= step;
    }
    // The last step, when below `max`, gives way to it if it lies within
    // half a step of it (else `max` follows it): a curve whose evidence
    // asks for its largest size to be ≥ k × the LLC got the power of two
    // below `max` (64 MiB of 88) and was withheld.
    let top = (max / stride).max(2) * stride;
    match out.last().copied() {
        Some(l) if l >= top => {}
        Some(l) if (l as f64) >= top as f64 / step.sqrt() && out.len() > 1 => {
            *out.last_mut().unwrap() = top;
        }
        _ => out.push(top),
    }
    out
}

/// Measures the chase at every size, smallest first, until `max_bytes`
/// or the total budget.
pub fn measure_curve(clock: &Clock, cfg: &CurveConfig) -> Result<Curve, String> {
    let started = Instant::now();
    let mut points = Vec::new();
    let mut stopped_early = None;
    let mut last_ns = 1.0f64;
    for (k, bytes) in sizes(
        cfg.min_bytes,
        cfg.max_bytes,
        cfg.points_per_octave,
        cfg.stride,
    )
    .into_iter()
    .enumerate()
    {
        if bytes > cfg.mandatory_bytes && started.elapsed() >= cfg.total_budget {
            stopped_early = Some(format!(
                "time budget of {:.0} s spent before {} bytes",
                cfg.total_budget.as_secs_f64(),
                bytes
            ));
            break;
        }
        let huge_before = anon_huge_bytes();
        let chain = Chain::new(bytes, cfg.stride, cfg.order, cfg.pages, 0x5EED + k as u64)?;
        let huge_bytes = match (huge_before, anon_huge_bytes()) {
            (Some(b), Some(a)) => Some(a.saturating_sub(b)),
            _ => None,
        };
        let one_cycle =
            (chain.elements <= 1 << 20).then(|| chain.follow(chain.elements) == chain.start());
        // Warm up for about one trip round the cycle at the last latency,
        // so the caches hold what they can of this working set.
        let mut plan = cfg.plan.clone();
        plan.warmup_ns =
            (chain.elements as f64 * last_ns * 1.5).clamp(1e6, cfg.max_warmup_ns.max(1e6));
        let measured = chain.measure(clock, &plan);
        let median_ns = measured
            .summary()
            .map(|s| s.median)
            .ok_or("chase produced no observations")?;
        last_ns = median_ns.max(0.5);
        points.push(Point {
            bytes: chain.bytes,
            measured,
            median_ns,
            huge_bytes,
            mapped_bytes: chain.memory().len(),
            one_cycle,
        });
    }
    if points.is_empty() {
        return Err("no working-set size was measured".into());
    }
    Ok(Curve {
        points,
        stopped_early,
    })
}

#[cfg(test)]
mod tests {
    use super::sizes;

    #[test]
    fn sizes_end_at_max() {
        let v = sizes(4096, 960 << 20, 2, 64);
        assert_eq!(*v.last().unwrap(), 960 << 20);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        // A max the steps land on is not repeated.
        let v = sizes(4096, 1 << 20, 1, 64);
        assert_eq!(v.iter().filter(|&&s| s == 1 << 20).count(), 1);
        assert_eq!(*v.last().unwrap(), 1 << 20);
        // A max just above a step (88 MiB, one point per octave: 64 MiB
        // is the last step) ends the sizes, in the step's place.
        let v = sizes(8192, 88 << 20, 1, 4096);
        assert_eq!(*v.last().unwrap(), 88 << 20);
        assert!(!v.contains(&(64 << 20)), "{v:?}");
        assert_eq!(v[v.len() - 2], 32 << 20);
        // Just below a step (120 MiB, beyond 64·√2): after it.
        let v = sizes(8192, 120 << 20, 1, 4096);
        assert_eq!(v[v.len() - 2..], [64 << 20, 120 << 20]);
    }
}
