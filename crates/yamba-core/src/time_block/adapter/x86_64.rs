//! TIME_BLOCK on x86-64: the TSC, fenced (32-bit x86 too: the same
//! instructions).

#[cfg(target_arch = "x86")]
use std::arch::x86::{__rdtscp, _mm_lfence, _rdtsc};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};
pub const NAME: &str = "tsc";

#[inline(always)]
pub fn start() -> u64 {
    // SAFETY: lfence and rdtsc exist on every x86-64 CPU and every x86 one
    // with SSE2 (which the i686 target requires).
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

#[inline(always)]
pub fn stop() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp is on every x86-64 CPU Linux supports TSC timing on.
    unsafe {
        let t = __rdtscp(&mut aux);
        _mm_lfence();
        t
    }
}
