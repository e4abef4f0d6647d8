//! x86-64 adapter: the time-stamp counter. 32-bit x86 (i686) uses it too:
//! rdtsc, rdtscp and lfence are the same instructions in 32-bit mode.

#[cfg(target_arch = "x86")]
use std::arch::x86::{__rdtscp, _mm_lfence, _rdtsc};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{__rdtscp, _mm_lfence, _rdtsc};

/// `lfence; rdtsc; lfence`: earlier instructions complete before the read,
/// later ones do not start before it (Intel's and AMD's recommended
/// sequence; on AMD, Linux makes LFENCE dispatch-serializing).
#[inline(always)]
pub fn tsc_start() -> u64 {
    // SAFETY: rdtsc and lfence exist on every x86-64 CPU and every x86 one
    // with SSE2 (which the i686 target requires).
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// `rdtscp; lfence`: rdtscp waits for the timed code to retire.
#[inline(always)]
pub fn tsc_stop() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp is checked present (cpuinfo flag) before the TSC is chosen.
    unsafe {
        let t = __rdtscp(&mut aux);
        _mm_lfence();
        t
    }
}

/// Ok when the kernel reports an invariant TSC that user space may read.
pub fn invariant_tsc() -> Result<(), String> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo")
        .map_err(|e| format!("cannot read /proc/cpuinfo: {e}"))?;
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .ok_or("no flags line in /proc/cpuinfo")?;
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    let missing: Vec<&str> = ["tsc", "rdtscp", "constant_tsc", "nonstop_tsc"]
        .into_iter()
        .filter(|f| !has(f))
        .collect();
    if !missing.is_empty() {
        return Err(format!("CPU flags lack {}", missing.join(", ")));
    }
    // The kernel may have marked the TSC unstable and switched away from it.
    if let Ok(src) =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    {
        let src = src.trim();
        if src != "tsc" && !src.is_empty() {
            let available = std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/available_clocksource",
            )
            .unwrap_or_default();
            if !available.split_whitespace().any(|s| s == "tsc") {
                return Err(format!(
                    "the kernel does not offer tsc as a clocksource (current: {src})"
                ));
            }
        }
    }
    Ok(())
}
