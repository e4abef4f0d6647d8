//! What the page-fault benchmarks share besides their scratch file
//! (`adapter::ScratchFile`): one timed pass of touches with the kernel's
//! fault counts taken around it.

use super::adapter::{page_size, Faults};
use yamba_core::Clock;

/// One timed pass: P'' touched every target page once, F the same loop
/// again right after (every page now present, so no faults: the loop and
/// TLB cost that P'' also paid).
#[derive(Debug, Clone, Copy)]
pub struct Pass {
    pub ns: f64,
    pub dummy_ns: f64,
    pub faults: Faults,
    pub dummy_faults: Faults,
    /// Sum of the bytes read by P''.
    pub sum: u64,
}

impl Pass {
    /// (M(P'') − M(F)) / n.
    pub fn per(&self, n: u64) -> f64 {
        (self.ns - self.dummy_ns) / n.max(1) as f64
    }
}

/// Touches byte 0 of each target page of `base` (reads, or writes when
/// `write`), timing the pass and counting this thread's faults around it.
///
/// # Safety
/// `base` must start a live mapping that holds every target page, writable
/// when `write`.
pub unsafe fn touch_pass(clock: &Clock, base: *mut u8, targets: &[usize], write: bool) -> Pass {
    let ps = page_size();
    let run = |write: bool| -> (f64, Faults, u64) {
        let f0 = Faults::now();
        let mut sum = 0u64;
        let t0 = clock.start();
        for &i in targets {
            // SAFETY: the caller guarantees every target page is mapped.
            unsafe {
                let p = base.add(i * ps);
                if write {
                    p.write_volatile(1);
                } else {
                    sum += p.read_volatile() as u64;
                }
            }
        }
        let t1 = clock.stop();
        let f1 = Faults::now();
        (clock.ticks_to_ns(t1.wrapping_sub(t0)), f1.since(f0), sum)
    };
    let (ns, faults, sum) = run(write);
    let (dummy_ns, dummy_faults, _) = run(write);
    Pass {
        ns,
        dummy_ns,
        faults,
        dummy_faults,
        sum,
    }
}
