//! Worst case: before each single timed operation, push the benchmark's
//! data out of every cache level and scramble the branch predictor.

use crate::machine::Machine;
use std::sync::atomic::{AtomicU64, Ordering};

/// Evictions done in this process, by every evictor: what a test reads to
/// see that a cold benchmark did evict before its operations.
static EVICTIONS: AtomicU64 = AtomicU64::new(0);

/// How many times an [`Evictor`] of this process has evicted
/// ([`Evictor::evict`]).
pub fn evictions() -> u64 {
    EVICTIONS.load(Ordering::Relaxed)
}

/// Evicts caches by sweeping a buffer larger than the last-level cache and
/// disturbs branch history with data-dependent branches.
pub struct Evictor {
    sweep: Vec<u64>,
    line_words: usize,
    seed: u64,
}

impl Evictor {
    /// A sweep buffer of twice the last-level cache (at least 8 MiB).
    pub fn new(machine: &Machine) -> Evictor {
        let bytes = (2 * machine.llc_bytes()).max(8 << 20) as usize;
        let line = machine
            .caches
            .first()
            .and_then(|c| c.line_bytes)
            .unwrap_or(64) as usize;
        let mut sweep = vec![0u64; bytes / 8];
        // Touch every page now, so the sweep itself never faults.
        for (i, w) in sweep.iter_mut().enumerate().step_by(512) {
            *w = i as u64;
        }
        Evictor {
            sweep,
            line_words: (line / 8).max(1),
            seed: 0x9E37_79B9_7F4A_7C15,
        }
    }

    pub fn sweep_bytes(&self) -> usize {
        self.sweep.len() * 8
    }

    /// Reads one word per cache line of the sweep buffer, and writes every
    /// 16th line so dirty lines are displaced too.
    pub fn evict_caches(&mut self) {
        let mut acc = 0u64;
        let step = self.line_words;
        let mut i = 0;
        while i < self.sweep.len() {
            acc = acc.wrapping_add(self.sweep[i]);
            if (i / step).is_multiple_of(16) {
                self.sweep[i] = acc;
            }
            i += step;
        }
        std::hint::black_box(acc);
    }

    /// 64 Ki data-dependent branches on a xorshift stream: the predictor's
    /// history no longer reflects the benchmark's own branches.
    pub fn disturb_branches(&mut self) {
        let mut x = self.seed;
        let mut acc = 0u64;
        for _ in 0..65_536 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x & 1 == 0 {
                acc = acc.wrapping_add(x);
            } else if x & 2 == 0 {
                acc ^= x;
            } else {
                acc = acc.rotate_left(3);
            }
        }
        self.seed = x;
        std::hint::black_box(acc);
    }

    /// Both, as done before each cold observation.
    pub fn evict(&mut self) {
        self.evict_caches();
        self.disturb_branches();
        EVICTIONS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Flushes the cache lines of `data` (x86-64 and 32-bit x86: clflush;
/// elsewhere a no-op, the sweep doing the work).
pub fn flush_range(data: *const u8, len: usize) {
    #[cfg(target_arch = "x86")]
    use std::arch::x86 as x86_64;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64;
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    {
        let mut p = data as usize & !63;
        let end = data as usize + len;
        while p < end {
            // SAFETY: clflush on any mapped address is harmless; the caller
            // passes memory it owns.
            unsafe { x86_64::_mm_clflush(p as *const u8) };
            p += 64;
        }
        // SAFETY: mfence has no preconditions.
        unsafe { x86_64::_mm_mfence() };
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
    {
        let _ = (data, len);
    }
}
