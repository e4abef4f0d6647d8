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
//!
//! Each reading also measures the core's **integer throughput** ([`Track::
//! adds_per_cycle`]): independent adds, as many as the core can retire
//! per cycle when this thread has it alone. A dependent multiply chain
//! does not notice another hardware thread on the same physical core; a
//! wide stream of independent adds does, and so does a system call's
//! busy path. On an AMD EPYC (Zen 4) KVM guest, 92 of 150 processes of a C
//! probe ran at 2.1–3.3 adds per cycle instead of 4.0, with getppid and a
//! read 25–44% slower in exactly those processes and the multiply chain
//! unchanged (±0.3%): the host ran something on the vCPU's sibling
//! hyper-thread. [`SHARED_CORE_SHARE`] turns that into a verdict.

use std::time::Instant;

/// Latency of one 64-bit multiply in core cycles, as assumed.
pub const MUL_LATENCY_CYCLES: f64 = 3.0;

/// Multiplies per chain of [`probe_mhz`]: ~50 µs at 3–4 GHz. Public for
/// tests/measure_clock.rs only.
#[doc(hidden)]
pub const CHAIN: u64 = 64 * 1024;

/// Multiplies per chain of a [`Track`]: ~25 µs at 3–4 GHz, so a 10 ns
/// clock quantum and the ~20 ns of reading it are ≤ 0.1% of a reading.
const SHORT_CHAIN: u64 = 32 * 1024;

/// Independent adds per throughput reading: ~32 000 cycles at 4 per
/// cycle (~9 µs at 3.7 GHz). Public for tests/measure_clock.rs only.
#[doc(hidden)]
pub const ADDS: u64 = 128 * 1024;

pub use yamba_results::results::{shared_core_blocks, SHARED_CORE_SHARE};

/// One chain's clock in MHz; `None` where no chain is written for this
/// architecture.
fn chain_mhz(n: u64) -> Option<f64> {
    let t0 = Instant::now();
    mul_chain(n)?;
    let s = t0.elapsed().as_secs_f64();
    (s > 0.0).then(|| n as f64 * MUL_LATENCY_CYCLES / s / 1e6)
}

/// Independent adds per core cycle at clock `mhz`, from one run of
/// [`ADDS`] adds.
fn adds_per_cycle(mhz: f64) -> Option<f64> {
    let t0 = Instant::now();
    add_streams(ADDS)?;
    let s = t0.elapsed().as_secs_f64();
    (s > 0.0 && mhz > 0.0).then(|| ADDS as f64 / (s * mhz * 1e6))
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

/// The core clock and integer throughput now, as a [`Track`] of 9
/// readings: for results timed by the benchmark itself, read right after
/// sampling.
pub fn probe() -> Track {
    let mut t = Track::default();
    for _ in 0..9 {
        t.read();
    }
    t
}

/// The lowest integer throughput, in adds per cycle, of the CPUs this
/// process may use: a [`probe`] on each, from a thread pinned there (the
/// caller's own thread is not moved). Below [`SHARED_CORE_SHARE`] of a
/// reading taken alone, another hardware thread was using one of them.
/// About 0.3 ms per CPU; `None` where no add stream is written for this
/// architecture or no CPU could be read. Measurement checks read it before
/// and after each attempt (`yamba_testkit::Check::on_own_core`).
pub fn lowest_adds_per_cycle() -> Option<f64> {
    // One CPU at a time: two probes at once on sibling threads of one core
    // would read each other.
    crate::affinity::usable_cpus()
        .iter()
        .filter_map(|&cpu| {
            std::thread::spawn(move || {
                crate::affinity::pin_current_thread(cpu).ok()?;
                probe().adds_per_cycle()
            })
            .join()
            .ok()
            .flatten()
        })
        .min_by(f64::total_cmp)
}

/// Sampling time per reading of a [`Track`]: a ~25 µs chain each
/// millisecond costs ~2.5% of the sampling time.
#[doc(hidden)]
pub const TRACK_EVERY: std::time::Duration = std::time::Duration::from_millis(1);

/// The core clock over a stretch of sampling: call [`Track::due`] between
/// observations, outside any timed region; it reads the clock (a ~25 µs
/// chain) once a millisecond. [`Track::mhz`] is the median of the readings.
#[derive(Debug, Default, Clone)]
pub struct Track {
    readings: Vec<f64>,
    adds: Vec<f64>,
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

    /// Reads the clock once, and the throughput at that clock (nothing
    /// where no chain is written).
    pub fn read(&mut self) {
        if let Some(mhz) = chain_mhz(SHORT_CHAIN) {
            self.readings.push(mhz);
            if let Some(a) = adds_per_cycle(mhz) {
                self.adds.push(a);
            }
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
        median(&self.readings)
    }

    /// The median integer throughput, in independent adds per core cycle,
    /// or `None` before the first reading.
    pub fn adds_per_cycle(&self) -> Option<f64> {
        median(&self.adds)
    }
}

fn median(v: &[f64]) -> Option<f64> {
    yamba_stats::Summary::of(v).map(|s| s.median)
}

/// `n` independent adds (16 per step, two on each of 8 registers); `None`
/// on an architecture with none here. The loop is the asm's own, so the
/// measured code is the same at every opt-level: with the loop in Rust, a
/// debug build stored the eight registers and called the range iterator
/// at every step, and measured 0.66 adds per cycle. On x86-64 each add
/// takes a 32-bit immediate (7 bytes, not 4): packed 16 to a 64-byte
/// line, a Zen 5 core ran the loop from its 4-wide decoder instead of its
/// op cache and read 4.0 adds per cycle alone where it reads 4.8 — at two
/// of eight placements of the loop, so a rebuild moved the reading, and
/// it saw less than half the sharing (sibling threads have decoders of
/// their own: 356 of 4800 interleaved readings low against 808 with the
/// wider adds, docs/certainty.md). The wider adds read 4.8 at all eight.
/// Public for tests/measure_clock.rs only.
#[doc(hidden)]
#[inline(never)]
pub fn add_streams(n: u64) -> Option<u64> {
    #[allow(unused_mut)]
    let (mut a, mut b, mut c, mut d) = std::hint::black_box((1u64, 2u64, 3u64, 4u64));
    #[allow(unused_mut)]
    let (mut e, mut f, mut g, mut h) = std::hint::black_box((5u64, 6u64, 7u64, 8u64));
    #[cfg(target_arch = "x86_64")]
    {
        let steps = n / 16;
        if steps > 0 {
            // SAFETY: register arithmetic and a loop of its own, no memory.
            unsafe {
                std::arch::asm!(
                    ".p2align 6",
                    "2:",
                    "add {a}, 0x1000", "add {b}, 0x1000", "add {c}, 0x1000", "add {d}, 0x1000",
                    "add {e}, 0x1000", "add {f}, 0x1000", "add {g}, 0x1000", "add {h}, 0x1000",
                    "add {a}, 0x1000", "add {b}, 0x1000", "add {c}, 0x1000", "add {d}, 0x1000",
                    "add {e}, 0x1000", "add {f}, 0x1000", "add {g}, 0x1000", "add {h}, 0x1000",
                    "dec {k}",
                    "jnz 2b",
                    k = inout(reg) steps => _,
                    a = inout(reg) a, b = inout(reg) b, c = inout(reg) c, d = inout(reg) d,
                    e = inout(reg) e, f = inout(reg) f, g = inout(reg) g, h = inout(reg) h,
                    options(nomem, nostack, pure)
                );
            }
        }
        return Some(std::hint::black_box(a ^ b ^ c ^ d ^ e ^ f ^ g ^ h));
    }
    #[cfg(target_arch = "aarch64")]
    {
        let steps = n / 16;
        if steps > 0 {
            // SAFETY: register arithmetic and a loop of its own, no memory.
            unsafe {
                std::arch::asm!(
                    "2:",
                    "add {a}, {a}, #1", "add {b}, {b}, #1", "add {c}, {c}, #1", "add {d}, {d}, #1",
                    "add {e}, {e}, #1", "add {f}, {f}, #1", "add {g}, {g}, #1", "add {h}, {h}, #1",
                    "add {a}, {a}, #1", "add {b}, {b}, #1", "add {c}, {c}, #1", "add {d}, {d}, #1",
                    "add {e}, {e}, #1", "add {f}, {f}, #1", "add {g}, {g}, #1", "add {h}, {h}, #1",
                    "subs {k}, {k}, #1",
                    "b.ne 2b",
                    k = inout(reg) steps => _,
                    a = inout(reg) a, b = inout(reg) b, c = inout(reg) c, d = inout(reg) d,
                    e = inout(reg) e, f = inout(reg) f, g = inout(reg) g, h = inout(reg) h,
                    options(nomem, nostack, pure)
                );
            }
        }
        return Some(std::hint::black_box(a ^ b ^ c ^ d ^ e ^ f ^ g ^ h));
    }
    #[allow(unreachable_code)]
    {
        let _ = (n, a, b, c, d, e, f, g, h);
        None
    }
}

/// `n` dependent multiplies (in groups of 8); `None` on an architecture
/// with no chain here. The loop is the asm's own, as in [`add_streams`].
/// Public for tests/measure_clock.rs only.
#[doc(hidden)]
#[inline(never)]
pub fn mul_chain(n: u64) -> Option<u64> {
    #[allow(unused_mut)]
    let mut x: u64 = std::hint::black_box(3);
    #[cfg(target_arch = "x86_64")]
    {
        let steps = n / 8;
        if steps > 0 {
            // SAFETY: register arithmetic and a loop of its own, no memory.
            unsafe {
                std::arch::asm!(
                    "2:",
                    "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}",
                    "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}", "imul {x}, {x}",
                    "dec {k}",
                    "jnz 2b",
                    k = inout(reg) steps => _,
                    x = inout(reg) x,
                    options(nomem, nostack, pure)
                );
            }
        }
        return Some(std::hint::black_box(x));
    }
    #[cfg(target_arch = "aarch64")]
    {
        let steps = n / 8;
        if steps > 0 {
            // SAFETY: register arithmetic and a loop of its own, no memory.
            unsafe {
                std::arch::asm!(
                    "2:",
                    "mul {x}, {x}, {x}", "mul {x}, {x}, {x}", "mul {x}, {x}, {x}", "mul {x}, {x}, {x}",
                    "mul {x}, {x}, {x}", "mul {x}, {x}, {x}", "mul {x}, {x}, {x}", "mul {x}, {x}, {x}",
                    "subs {k}, {k}, #1",
                    "b.ne 2b",
                    k = inout(reg) steps => _,
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

    /// The median of the readings (fixed data; the clock itself is
    /// measured in tests/measure_clock.rs).
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
    }

    /// Every usable CPU is read from a thread of its own: the caller's
    /// CPU set is left as it was, and the lowest reading is a throughput a
    /// core can have (none where no add stream is written).
    #[test]
    fn the_lowest_reading_leaves_the_caller_where_it_was() {
        let before = crate::affinity::allowed_cpus();
        let lowest = lowest_adds_per_cycle();
        assert_eq!(crate::affinity::allowed_cpus(), before);
        if add_streams(1).is_some() {
            let x = lowest.expect("a reading where add streams exist");
            assert!(x > 0.0 && x <= 16.0, "{x} adds per cycle");
        } else {
            assert_eq!(lowest, None);
        }
    }
}
