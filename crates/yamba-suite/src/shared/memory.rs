//! Settings that size buffers in memory, bounded by what the machine has
//! now: a `--set` that asks for more than that fails with one line before
//! anything is allocated, rather than swapping the machine or being killed.

/// Share of the memory available now (MemAvailable) a benchmark's buffers
/// may take: the rest is for the page cache, the peer and everyone else.
pub const MAX_SHARE: f64 = 0.5;

/// Refuses `--set KEY=VALUE` when `copies` buffers of `bytes` each would
/// take more than [`MAX_SHARE`] of the memory available now. Passes when
/// the available memory cannot be read (not Linux).
pub fn check_fits(key: &str, value: &str, bytes: u64, copies: u64) -> Result<(), String> {
    let Some(avail_kib) = yamba_core::machine::meminfo_kib("MemAvailable") else {
        return Ok(());
    };
    fits(key, value, bytes, copies, avail_kib.saturating_mul(1024))
}

fn fits(key: &str, value: &str, bytes: u64, copies: u64, available: u64) -> Result<(), String> {
    let need = bytes.saturating_mul(copies.max(1));
    let allowed = (available as f64 * MAX_SHARE) as u64;
    if need <= allowed {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let copies = match copies {
        0 | 1 => String::new(),
        n => format!(" ({n} buffers)"),
    };
    Err(format!(
        "--set {key}={value}: needs {:.2} GiB of memory{copies}, more than half of the {:.2} GiB available now (MemAvailable)",
        gib(need),
        gib(available)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_does_not_fit_in_one_line() {
        assert!(fits("k", "1M", 1 << 20, 2, 8 << 20).is_ok());
        let e = fits("fs.remote.size", "10G", 10 << 30, 2, 4 << 30).unwrap_err();
        assert!(
            e.contains("fs.remote.size=10G") && e.contains("20.00 GiB") && e.contains("4.00 GiB"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1);
        assert!(fits("k", "v", u64::MAX, u64::MAX, 1 << 30).is_err());
        // This machine: a petabyte never fits.
        assert!(check_fits("k", "1P", 1 << 50, 1).is_err() || cfg!(not(target_os = "linux")));
    }
}
