//! Pinning and scheduling policy: keeping a benchmark on one CPU and, when
//! permitted, above ordinary tasks.
//!
//! The platform part (`allowed_cpus`, `pin_current_thread`, `current_cpu`,
//! `set_realtime`) is `linux.rs` on Linux and `unsupported.rs` elsewhere,
//! where nothing is pinned and every attempt says why.

#[cfg_attr(target_os = "linux", path = "linux.rs")]
#[cfg_attr(not(target_os = "linux"), path = "unsupported.rs")]
mod imp;

pub use imp::*;

/// The CPUs this process was allowed when it first asked — before any
/// benchmark pinned itself to one of them. Every benchmark process is
/// forked after the session asked, so it sees the same set.
pub fn usable_cpus() -> &'static [usize] {
    static USABLE: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    USABLE.get_or_init(allowed_cpus)
}

/// The default CPU to pin to: the last usable one, since CPU 0 usually
/// takes more of the machine's interrupts.
pub fn default_cpu() -> usize {
    *usable_cpus().last().unwrap_or(&0)
}

/// Another usable CPU than `cpu`, for benchmarks across CPUs (works in a
/// process already pinned to `cpu`).
pub fn other_cpu(cpu: usize) -> Option<usize> {
    usable_cpus().iter().rev().copied().find(|&c| c != cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_cpu_survives_pinning() {
        let cpu = default_cpu();
        let expected = other_cpu(cpu);
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(other_cpu(cpu), expected);
        })
        .join()
        .unwrap();
        if usable_cpus().len() > 1 {
            assert!(expected.is_some_and(|c| c != cpu));
        }
    }

    #[test]
    fn pinning_moves_the_thread() {
        let cpu = default_cpu();
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(current_cpu(), Some(cpu));
        })
        .join()
        .unwrap();
        assert!(pin_current_thread(100_000).is_err());
    }
}
