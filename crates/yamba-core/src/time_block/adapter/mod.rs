//! The counter TIME_BLOCK reads, per platform.
//!
//! The interface every implementation provides: `NAME`, `start()` and
//! `stop()` (raw counter values, ordered against the code between them);
//! `mono_ns()` here is the same everywhere.
//!
//! `x86_64.rs` reads the TSC, `aarch64.rs` the virtual counter; elsewhere
//! `unsupported.rs` falls back to clock_gettime.

#[cfg_attr(any(target_arch = "x86_64", target_arch = "x86"), path = "x86_64.rs")]
#[cfg_attr(target_arch = "aarch64", path = "aarch64.rs")]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")),
    path = "unsupported.rs"
)]
mod imp;

pub use imp::*;

pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
