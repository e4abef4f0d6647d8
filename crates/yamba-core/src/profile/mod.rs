//! Statistical profiling of a benchmark: where does the time go, kernel
//! and user, while it runs (the seed's kprof table, for Linux).
//!
//! The work runs in a forked child that waits until the parent has attached
//! a software `cpu-clock` sampling event to it (perf_event_open: it works
//! where hardware counters are missing, as in most VMs), one event per CPU
//! with `inherit` so threads and processes the benchmark starts are sampled
//! too (the kernel refuses ring buffers on inherited per-task events). The
//! parent drains the ring buffers until the child exits, then resolves each
//! sampled instruction pointer: kernel addresses through /proc/kallsyms,
//! user addresses through the child's /proc/PID/maps and the mapped file's
//! symbol table (`nm`, with its program headers read here to undo the load
//! bias). Kernel samples need perf_event_paranoid ≤ 1 or CAP_PERFMON/root;
//! without them the profile is user-only and says so.

mod maps;
mod render;
mod symbols;

pub use maps::{parse_maps, Mapping};
pub use render::render;
pub use symbols::{parse_kallsyms, SymbolTable, Symbolizer};

use std::collections::HashMap;
use std::time::Duration;

/// One sampled instruction pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub ip: u64,
    pub kernel: bool,
}

/// What the sampler collected.
#[derive(Debug, Clone)]
pub struct Samples {
    pub samples: Vec<Sample>,
    /// Sampling period, ns of CPU time per sample.
    pub period_ns: u64,
    /// Samples the kernel dropped (ring buffer full).
    pub lost: u64,
    /// Times the kernel throttled the sampling rate.
    pub throttled: u64,
    /// Kernel addresses were sampled (else: why not).
    pub kernel: Result<(), String>,
    /// The child's memory map, read while it ran.
    pub maps: Vec<Mapping>,
    /// The child's wait status.
    pub status: i32,
    /// CPU time the kernel accounted to the child (user + system, wait4):
    /// what the samples should add up to.
    pub child_cpu_ns: u64,
}

/// Runs `work` in a forked child sampled every `period_ns` of CPU time;
/// returns the samples when the child has exited. `work`'s return value is
/// the child's exit status. Err says why sampling is impossible here.
pub fn profile_child<F: FnOnce() -> i32>(
    period_ns: u64,
    timeout: Duration,
    work: F,
) -> Result<Samples, String> {
    sampler::profile_child(period_ns, timeout, work)
}

/// One line of the profile table.
#[derive(Debug, Clone, PartialEq)]
pub struct Hot {
    pub symbol: String,
    pub samples: u64,
    pub percent: f64,
}

/// Samples per symbol, most first (ties by name).
pub fn hot_symbols(samples: &Samples, sym: &mut Symbolizer) -> Vec<Hot> {
    let mut counts: HashMap<String, u64> = HashMap::new();
    for &s in &samples.samples {
        *counts.entry(sym.resolve(s)).or_default() += 1;
    }
    let total = samples.samples.len().max(1) as f64;
    let mut v: Vec<Hot> = counts
        .into_iter()
        .map(|(symbol, n)| Hot {
            symbol,
            samples: n,
            percent: 100.0 * n as f64 / total,
        })
        .collect();
    v.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then_with(|| a.symbol.cmp(&b.symbol))
    });
    v
}

/// The sampler, per platform: `ring.rs` (perf_event_open and its ring
/// buffer) on Linux, `unsupported.rs` elsewhere, where profiling says why
/// not. Interface: `profile_child(period, duration, child)`.
#[cfg_attr(target_os = "linux", path = "ring.rs")]
#[cfg_attr(not(target_os = "linux"), path = "unsupported.rs")]
mod sampler;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Runs `work` for about `seconds`, in batches.
    fn for_about<F: FnMut()>(seconds: f64, mut work: F) {
        let t0 = Instant::now();
        while t0.elapsed().as_secs_f64() < seconds {
            for _ in 0..1000 {
                work();
            }
        }
    }

    #[inline(never)]
    fn yamba_profile_known_spin() {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_millis(300) {
            for i in 0..1000u64 {
                std::hint::black_box(i);
            }
        }
    }

    /// Ground truth: work whose time is in known places, kernel and user.
    #[test]
    fn samples_land_in_the_known_kernel_and_user_functions() {
        let period = 100_000;
        let read = profile_child(period, Duration::from_secs(30), || {
            let f = std::fs::File::open("/dev/zero").unwrap();
            let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
            let mut b = [1u8; 1];
            // SAFETY: 1-byte reads into a valid buffer.
            for_about(0.3, || unsafe {
                libc::read(fd, b.as_mut_ptr().cast(), 1);
            });
            0
        });
        let samples = match read {
            Ok(s) => s,
            Err(why) => {
                eprintln!("SKIPPED: cannot sample here: {why}");
                return;
            }
        };
        assert_eq!(samples.status, 0);
        let mut sym = Symbolizer::new(samples.maps.clone());
        let hot = hot_symbols(&samples, &mut sym);
        eprintln!("{}", render(&samples, &hot, 12));
        // One sample per 100 µs of CPU: the samples add up to the CPU time
        // the kernel accounted to the child (however busy the machine is).
        assert!(
            samples.samples.len() > 100,
            "{} samples",
            samples.samples.len()
        );
        let covered = samples.samples.len() as f64 * period as f64 / samples.child_cpu_ns as f64;
        assert!(
            (0.6..1.4).contains(&covered),
            "samples cover {covered:.2} of the child's CPU time"
        );
        match (&samples.kernel, sym.kernel_problem()) {
            (Ok(()), None) => {
                let kernel_share = samples.samples.iter().filter(|s| s.kernel).count() as f64
                    / samples.samples.len() as f64;
                assert!(
                    kernel_share > 0.5,
                    "a read loop spends most time in the kernel: {kernel_share}"
                );
                let read_path = [
                    "read_zero",
                    "ksys_read",
                    "vfs_read",
                    "__x64_sys_read",
                    "entry_SYSCALL_64",
                    "do_syscall_64",
                ];
                let top: Vec<&str> = hot.iter().take(5).map(|h| h.symbol.as_str()).collect();
                assert!(
                    top.iter()
                        .any(|s| read_path.iter().any(|r| s.starts_with(&format!("{r} ")))),
                    "top symbols {top:?}"
                );
            }
            (k, s) => eprintln!("kernel part not checked: {k:?} {s:?}"),
        }

        let spin = profile_child(period, Duration::from_secs(30), || {
            yamba_profile_known_spin();
            0
        })
        .unwrap();
        let mut sym = Symbolizer::new(spin.maps.clone());
        let hot = hot_symbols(&spin, &mut sym);
        eprintln!("{}", render(&spin, &hot, 5));
        assert!(
            hot[0].symbol.contains("yamba_profile_known_spin") && hot[0].percent > 50.0,
            "user symbols resolve: {:?}",
            &hot[..hot.len().min(3)]
        );
    }
}
