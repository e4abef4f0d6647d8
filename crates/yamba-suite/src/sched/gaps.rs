//! The gap recorder both `sched` benchmarks stand on: a tight loop that
//! does nothing but read the clock, and notes every step between two
//! consecutive reads longer than a threshold. Such a step is time the loop
//! did not have the CPU: an interrupt, a preemption, a hypervisor exit.

use super::adapter;
use serde::{Deserialize, Serialize};
use yamba_core::Clock;

/// One interruption: the last read before it and the first read after it,
/// in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    pub start: u64,
    pub end: u64,
}

impl Gap {
    pub fn ticks(&self) -> u64 {
        self.end.wrapping_sub(self.start)
    }
}

/// What one pass of the loop saw.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recording {
    pub gaps: Vec<Gap>,
    /// Clock reads taken.
    pub iterations: u64,
    pub first: u64,
    pub last: u64,
    pub threshold_ticks: u64,
    /// More gaps than room for them: later ones were not kept.
    pub overflowed: bool,
    /// sched_getcpu sampled after each gap (and at start and end), and how
    /// many samples were not `cpu`.
    pub cpu_samples: u64,
    pub wrong_cpu: u64,
    /// Kernel-counted switches of this thread over the pass.
    pub voluntary: u64,
    pub involuntary: u64,
}

impl Recording {
    pub fn span_ticks(&self) -> u64 {
        self.last.wrapping_sub(self.first)
    }

    /// Ticks not spent in gaps.
    pub fn ran_ticks(&self) -> u64 {
        self.span_ticks() - self.gaps.iter().map(Gap::ticks).sum::<u64>()
    }

    /// Mean step between reads outside gaps, in ticks.
    pub fn mean_step_ticks(&self) -> f64 {
        let steps = self
            .iterations
            .saturating_sub(self.gaps.len() as u64)
            .max(1);
        self.ran_ticks() as f64 / steps as f64
    }
}

/// The threshold to use: 10 × BASE, but at least 250 ns (the loop's own
/// step, a read and a compare, must stay well below it).
pub fn default_threshold_ns(base_ns: f64) -> f64 {
    (10.0 * base_ns).max(250.0)
}

/// Reads the clock in a tight loop for `duration_ns`, keeping at most
/// `max_gaps` gaps longer than `threshold_ns`. `hook(now)` runs once per
/// iteration, after the read; tests use it to inject a gap of known length
/// (it must be cheap otherwise: it is part of every step). `cpu` is the CPU
/// the thread is expected to stay on.
#[inline(never)]
pub fn record<H: FnMut(u64)>(
    clock: &Clock,
    duration_ns: f64,
    threshold_ns: f64,
    max_gaps: usize,
    cpu: Option<usize>,
    mut hook: H,
) -> Recording {
    let thr = clock.ns_to_ticks(threshold_ns).max(1);
    // Rounded up: the recording lasts at least the duration asked for.
    let dur = clock.ns_to_ticks(duration_ns) + 1;
    let mut gaps = Vec::with_capacity(max_gaps);
    // Touch the gap buffer so recording a gap never faults.
    gaps.resize(max_gaps, Gap { start: 0, end: 0 });
    gaps.clear();
    let (mut samples, mut wrong) = (0u64, 0u64);
    let mut sample = || {
        samples += 1;
        if cpu.is_some_and(|c| yamba_core::affinity::current_cpu() != Some(c)) {
            wrong += 1;
        }
    };
    sample();
    let mut overflowed = false;
    let sw0 = adapter::thread_switches();
    let first = clock.stop();
    let mut prev = first;
    let mut iterations = 0u64;
    loop {
        let now = clock.stop();
        iterations += 1;
        if now.wrapping_sub(prev) > thr {
            if gaps.len() < max_gaps {
                gaps.push(Gap {
                    start: prev,
                    end: now,
                });
            } else {
                overflowed = true;
            }
            sample();
        }
        prev = now;
        if now.wrapping_sub(first) >= dur {
            break;
        }
        hook(now);
    }
    let sw1 = adapter::thread_switches();
    sample();
    Recording {
        gaps,
        iterations,
        first,
        last: prev,
        threshold_ticks: thr,
        overflowed,
        cpu_samples: samples,
        wrong_cpu: wrong,
        voluntary: sw1.0 - sw0.0,
        involuntary: sw1.1 - sw0.1,
    }
}
