//! CLOCK_MONOTONIC_RAW: the reference every counter is calibrated against,
//! and the fallback clock.

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; these clock ids exist on every Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC_RAW in nanoseconds: not slewed by NTP.
#[inline]
pub fn monotonic_raw_ns() -> u64 {
    read(RAW)
}

#[cfg(target_os = "linux")]
const RAW: libc::clockid_t = libc::CLOCK_MONOTONIC_RAW;
/// Elsewhere there is no unslewed clock id: the closest is CLOCK_MONOTONIC.
#[cfg(not(target_os = "linux"))]
const RAW: libc::clockid_t = libc::CLOCK_MONOTONIC;

/// CLOCK_MONOTONIC in nanoseconds (what most programs call "the clock").
#[inline]
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}
