//! How far apart the clock reads on two CPUs: a bound on the offset,
//! needed before a time stamped on one CPU is subtracted from one stamped on
//! another.
//!
//! Ping-pong through shared memory: A reads its clock (a0), raises a flag;
//! B, spinning on the flag, reads its clock (b) and answers; A sees the
//! answer and reads again (a1). B's read happened between A's two reads,
//! so offset = B − A lies in [b − a1, b − a0]. Intersecting these intervals
//! over many rounds gives the tightest bound; an empty intersection means
//! the clocks are not consistent at all.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use yamba_core::Clock;

/// The offset of CPU B's clock from CPU A's, in ns, known to lie in [lo, hi].
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct OffsetBound {
    pub lo_ns: f64,
    pub hi_ns: f64,
    pub rounds: usize,
}

impl OffsetBound {
    /// The largest |offset| consistent with what was seen.
    pub fn abs_bound_ns(&self) -> f64 {
        self.lo_ns.abs().max(self.hi_ns.abs())
    }
}

#[repr(C, align(64))]
#[derive(Default)]
struct Slot {
    v: AtomicU64,
}

#[derive(Default)]
struct Pingpong {
    ask: Slot,
    answer: Slot,
    stamp: Slot,
}

/// Bounds B's clock offset from A's with `rounds` ping-pongs; the calling
/// thread is pinned to `cpu_a` for the duration (and left there), B is a
/// thread pinned to `cpu_b`. Err when the intervals do not intersect.
pub fn offset_bound(
    clock: &Clock,
    cpu_a: usize,
    cpu_b: usize,
    rounds: usize,
) -> Result<OffsetBound, String> {
    offset_bound_skewed(clock, cpu_a, cpu_b, rounds, 0)
}

/// [`offset_bound`] with `b_skew_ticks` added to every read on B: a known
/// offset, so a test can check that the bound finds it.
pub fn offset_bound_skewed(
    clock: &Clock,
    cpu_a: usize,
    cpu_b: usize,
    rounds: usize,
    b_skew_ticks: i64,
) -> Result<OffsetBound, String> {
    yamba_core::affinity::pin_current_thread(cpu_a)?;
    let pp = Arc::new(Pingpong::default());
    let b = {
        let pp = pp.clone();
        let clock = clock.clone();
        std::thread::spawn(move || -> Result<(), String> {
            yamba_core::affinity::pin_current_thread(cpu_b)?;
            for i in 1..=rounds as u64 {
                while pp.ask.v.load(Ordering::Acquire) != i {
                    std::hint::spin_loop();
                }
                let t = clock.stop().wrapping_add_signed(b_skew_ticks);
                pp.stamp.v.store(t, Ordering::Relaxed);
                pp.answer.v.store(i, Ordering::Release);
            }
            Ok(())
        })
    };
    let mut lo = i128::MIN;
    let mut hi = i128::MAX;
    for i in 1..=rounds as u64 {
        let a0 = clock.stop();
        pp.ask.v.store(i, Ordering::Release);
        while pp.answer.v.load(Ordering::Acquire) != i {
            std::hint::spin_loop();
        }
        let a1 = clock.stop();
        let tb = pp.stamp.v.load(Ordering::Relaxed) as i128;
        lo = lo.max(tb - a1 as i128);
        hi = hi.min(tb - a0 as i128);
    }
    b.join()
        .map_err(|_| "the clock-check thread panicked".to_string())??;
    let ns = |t: i128| t.signum() as f64 * clock.ticks_to_ns(t.unsigned_abs() as u64);
    if lo > hi {
        return Err(format!(
            "clock reads on CPUs {cpu_a} and {cpu_b} are inconsistent: no single offset explains them (interval [{:.0}, {:.0}] ns is empty)",
            ns(lo),
            ns(hi)
        ));
    }
    Ok(OffsetBound {
        lo_ns: ns(lo),
        hi_ns: ns(hi),
        rounds,
    })
}
