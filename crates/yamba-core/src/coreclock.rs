//! The core clock, measured: how fast the CPU runs *now*.
//!
//! The timestamp counter ticks at a constant rate, but the core does not:
//! on the virtual machines yamba runs on, the host moves the core between
//! turbo bins (3.6, 3.7, 3.8 GHz here: steps of 2.7%) as its other cores
//! get busy, and every CPU-bound operation's time in nanoseconds moves
//! with it. Two runs minutes apart — even two processes a second apart —
//! can sit in different bins, and a comparison that does not know it calls
//! the host's frequency a regression. So each measured quantity records the
//! core clock it was sampled at, from dependent chains of 64-bit multiplies
//! whose latency is fixed in cycles (3 on x86-64 since Sandy Bridge and
//! Zen, and on the Arm cores yamba has met); `compare` uses it to tell a
//! change of the code from a change of the clock.
//!
//! The clock is read *during* sampling where the harness can ([`Track`]:
//! a short chain between observations, the median of them all), because
//! the bin moves within a second: in `bench/clock-track.c`, getppid blocks
//! of 73.6 and 72.0 ns (ratio 1.022) had interleaved chains at 4091 and
//! 4183 MHz (1.022), while the fastest of five chains right after each
//! block said 4191 and 4091 — a momentary boost, and the wrong way round.

use std::time::Instant;

/// Latency of one 64-bit multiply in core cycles, as assumed.
pub const MUL_LATENCY_CYCLES: f64 = 3.0;

/// Multiplies per chain of [`probe_mhz`]: ~50 µs at 3–4 GHz.
const CHAIN: u64 = 64 * 1024;

/// Multiplies per chain of a [`Track`]: ~25 µs at 3–4 GHz, so a 10 ns
/// clock quantum and the ~20 ns of reading it are ≤ 0.1% of a reading.
const SHORT_CHAIN: u64 = 32 * 1024;

/// One chain's clock in MHz; `None` where no chain is written for this
/// architecture.
fn chain_mhz(n: u64) -> Option<f64> {
    let t0 = Instant::now();
    mul_chain(n)?;
    let s = t0.elapsed().as_secs_f64();
    (s > 0.0).then(|| n as f64 * MUL_LATENCY_CYCLES / s / 1e6)
}

/// The core clock in MHz now: the median of 9 chains (an interruption
/// lowers one chain, a momentary boost raises one; neither moves the
/// median), or `None` where no chain is written for this architecture.
/// About half a millisecond. For the clock a quantity was sampled at,
/// prefer a [`Track`] read during the sampling.
pub fn probe_mhz() -> Option<f64> {
    let mut t = Track::default();
    for _ in 0..9 {
        t.readings.push(chain_mhz(CHAIN)?);
    }
    t.mhz()
}

/// Sampling time per reading of a [`Track`]: a ~25 µs chain each
/// millisecond costs ~2.5% of the sampling time.
const TRACK_EVERY: std::time::Duration = std::time::Duration::from_millis(1);

/// The core clock over a stretch of sampling: call [`Track::due`] between
/// observations, outside any timed region; it reads the clock (a ~25 µs
/// chain) once a millisecond. [`Track::mhz`] is the median of the readings.
#[derive(Debug, Default, Clone)]
pub struct Track {
    readings: Vec<f64>,
    last: Option<Instant>,
}

impl Track {
    /// Reads the clock if the last reading is a millisecond old (or there
    /// is none yet).
    pub fn due(&mut self) {
        if self.last.is_none_or(|t| t.elapsed() >= TRACK_EVERY) {
            self.read();
        }
    }

    /// Reads the clock once (nothing where no chain is written).
    pub fn read(&mut self) {
        if let Some(mhz) = chain_mhz(SHORT_CHAIN) {
            self.readings.push(mhz);
        }
        self.last = Some(Instant::now());
    }

    /// Readings so far.
    pub fn len(&self) -> usize {
        self.readings.len()
    }

    /// No reading yet.
    pub fn is_empty(&self) -> bool {
        self.readings.is_empty()
    }

    /// The median reading, or `None` before the first.
    pub fn mhz(&self) -> Option<f64> {
        let mut v = self.readings.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let k = v.len();
        Some(if k % 2 == 1 {
            v[k / 2]
        } else {
            (v[k / 2 - 1] + v[k / 2]) / 2.0
        })
    }
}

/// `n` dependent multiplies (in groups of 8); `None` on an architecture
/// with no chain here.
#[inline(never)]
fn mul_chain(n: u64) -> Option<u64> {
    #[allow(unused_mut)]
    let mut x: u64 = std::hint::black_box(3);
    #[cfg(target_arch = "x86_64")]
    {
        for _ in 0..n / 8 {
            // SAFETY: register arithmetic only.
            unsafe {
                std::arch::asm!(
                    "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}",
                    "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}",
                    x = inout(reg) x,
                    options(nomem, nostack, pure)
                );
            }
        }
        return Some(std::hint::black_box(x));
    }
    #[cfg(target_arch = "aarch64")]
    {
        for _ in 0..n / 8 {
            // SAFETY: register arithmetic only.
            unsafe {
                std::arch::asm!(
                    "mul {x}, {x}, {x}", "mul {x}, {x}, {x}", "mul {x}, {x}, {x}", "mul {x}, {x}, {x}",
                    "mul {x}, {x}, {x}", "mul {x}, {x}, {x}", "mul {x}, {x}, {x}", "mul {x}, {x}, {x}",
                    x = inout(reg) x,
                    options(nomem, nostack, pure)
                );
            }
        }
        return Some(std::hint::black_box(x));
    }
    #[allow(unreachable_code)]
    {
        let _ = (n, x);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twice_the_chain_takes_twice_as_long() {
        // The probe's premise: the chain's time is linear in its length
        // (no shortcut taken by the core), measured here against itself.
        if mul_chain(8).is_none() {
            eprintln!("skipped: no multiply chain for this architecture");
            return;
        }
        let time = |n: u64| {
            (0..7)
                .map(|_| {
                    let t0 = Instant::now();
                    mul_chain(n);
                    t0.elapsed().as_secs_f64()
                })
                .min_by(f64::total_cmp)
                .unwrap()
        };
        let mut seen = Vec::new();
        for _ in 0..3 {
            let r = time(2 * CHAIN) / time(CHAIN);
            if (r - 2.0).abs() < 0.1 {
                let mhz = probe_mhz().unwrap();
                assert!((200.0..10_000.0).contains(&mhz), "{mhz} MHz");
                return;
            }
            seen.push(r);
        }
        panic!("2× the chain did not take 2× the time: {seen:?}");
    }

    #[test]
    fn a_track_is_the_median_of_its_readings() {
        let mut t = Track::default();
        assert_eq!(t.mhz(), None);
        // An interrupted chain (low) and a momentary boost (high) do not
        // move the median.
        t.readings = vec![3600.0, 1200.0, 3600.0, 3700.0, 9000.0];
        assert_eq!(t.mhz(), Some(3600.0));
        t.readings = vec![3600.0, 3700.0];
        assert_eq!(t.mhz(), Some(3650.0));
        if mul_chain(8).is_some() {
            let before = t.len();
            t.read();
            assert_eq!(t.len(), before + 1);
            // Not due again until a millisecond has passed.
            t.due();
            assert_eq!(t.len(), before + 1);
            std::thread::sleep(TRACK_EVERY);
            t.due();
            assert_eq!(t.len(), before + 2);
        }
    }
}
