//! The core clock, measured: how fast the CPU runs *now*.
//!
//! The timestamp counter ticks at a constant rate, but the core does not:
//! on the virtual machines yamba runs on, the host moves the core between
//! turbo bins (3.6, 3.7, 3.8 GHz here: steps of 2.7%) as its other cores
//! get busy, and every CPU-bound operation's time in nanoseconds moves
//! with it. Two runs minutes apart — even two processes a second apart —
//! can sit in different bins, and a comparison that does not know it calls
//! the host's frequency a regression. So each measured quantity records the
//! core clock right after it was sampled, from a dependent chain of 64-bit
//! multiplies whose latency is fixed in cycles (3 on x86-64 since Sandy
//! Bridge and Zen, and on the Arm cores yamba has met); `compare` uses it
//! to tell a change of the code from a change of the clock.

use std::time::Instant;

/// Latency of one 64-bit multiply in core cycles, as assumed.
pub const MUL_LATENCY_CYCLES: f64 = 3.0;

/// Multiplies per timed chain: ~0.2 ms at 3–4 GHz.
const CHAIN: u64 = 256 * 1024;

/// The core clock in MHz (the fastest of 5 chains, so an interruption
/// cannot lower it), or `None` where no chain is written for this
/// architecture. Costs about a millisecond.
pub fn probe_mhz() -> Option<f64> {
    let best = (0..5)
        .filter_map(|_| {
            let t0 = Instant::now();
            mul_chain(CHAIN)?;
            Some(t0.elapsed().as_secs_f64())
        })
        .min_by(f64::total_cmp)?;
    Some(CHAIN as f64 * MUL_LATENCY_CYCLES / best / 1e6)
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
}
