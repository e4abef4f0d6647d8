//! Statistical profiling of a benchmark: where does the time go, kernel
//! and user, while it runs (the seed's kprof table, for Linux).
//!
//! The work runs in a forked child that waits until the parent has attached
//! a software `cpu-clock` sampling event to it (perf_event_open: it works
//! where hardware counters are missing, as in most VMs), one event per CPU
//! with `inherit` so threads and processes the benchmark starts are sampled
//! too (the kernel refuses ring buffers on inherited per-task events). The
//! parent drains the ring buffers until the child exits (reading the
//! child's /proc/PID/maps as it goes), then names each sampled instruction
//! pointer with blazesym ([`Symbolizer`]): kernel addresses through
//! /proc/kallsyms, user addresses through the mapped file at the sampled
//! offset, DWARF and inlined functions included where the file has them.
//! Kernel samples need perf_event_paranoid ≤ 1 or CAP_PERFMON/root;
//! without them the profile is user-only and says so.
//!
//! Modules: `ring` (the sampler and its ring buffers), `maps` (the child's
//! mappings), `symbols` (naming addresses), `render` (the table);
//! [`profile_benchmark`] puts them together for `yamba run --profile`.

mod maps;
mod render;
#[cfg(target_os = "linux")]
mod symbols;

pub use maps::{merge_maps, parse_maps, Mapping};
pub use render::render;
#[cfg(target_os = "linux")]
pub use symbols::Symbolizer;

use crate::bench::{Benchmark, Session};
use crate::results::{BenchResult, Mode, Status};
use crate::runner::run_one;
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

/// One sample per this many ns of CPU time (20 kHz) in [`profile_benchmark`].
pub const PERIOD_NS: u64 = 50_000;
/// A profiled benchmark is repeated until this much time has passed
/// (seconds; quick, precise), so that even one that stops early on
/// precision gives enough samples for the shares to mean something.
pub const MIN_SAMPLING_S: (f64, f64) = (0.5, 2.0);

/// A benchmark's profile: what it measured, and where its time went.
pub struct BenchProfile {
    pub mode: Mode,
    /// The results of its last run.
    pub results: Vec<BenchResult>,
    /// How many times it ran to be sampled long enough.
    pub times: u32,
    pub min_sampling_s: f64,
    pub samples: Samples,
    /// Samples per symbol, most first.
    pub hot: Vec<Hot>,
    /// Why kernel addresses are left unnamed, when they are.
    pub kernel_problem: Option<String>,
}

/// Runs `bench` (first mode of the session's config) in a forked child
/// under the sampler, as usual otherwise (pinned, same harness, same
/// session), so the profile shows the measurement loop as well as the
/// operation it measures; repeated until [`MIN_SAMPLING_S`] has passed.
pub fn profile_benchmark(
    session: &Session,
    bench: &'static Benchmark,
) -> Result<BenchProfile, String> {
    let mode = session.config.modes.first().copied().unwrap_or(Mode::Hot);
    let parent = session
        .config
        .scratch_dir
        .clone()
        .unwrap_or_else(|| ".".into());
    let scratch = parent.join(format!(".yamba-profile-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let results_path = scratch.join("results.json");
    let times_path = scratch.join("times");
    let min_s = if session.config.quick {
        MIN_SAMPLING_S.0
    } else {
        MIN_SAMPLING_S.1
    };
    let timeout = Duration::from_secs(session.config.timeout_s.unwrap_or(bench.timeout_s));
    let sampled = profile_child(PERIOD_NS, timeout, || {
        // Already in a child of our own: no second fork.
        let mut here = session.clone();
        here.config.isolate = false;
        let t0 = std::time::Instant::now();
        let mut times = 0u32;
        let results = loop {
            let r = run_one(&here, bench, mode, &scratch);
            times += 1;
            if t0.elapsed().as_secs_f64() >= min_s || r.iter().any(|x| x.status != Status::Ok) {
                break r;
            }
        };
        let _ = std::fs::write(&times_path, times.to_string());
        match serde_json::to_vec(&results) {
            Ok(bytes) if std::fs::write(&results_path, &bytes).is_ok() => 0,
            _ => 1,
        }
    });
    let results: Vec<BenchResult> = std::fs::read(&results_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let times = std::fs::read_to_string(&times_path)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    let _ = std::fs::remove_dir_all(&scratch);
    let samples = sampled.map_err(|why| format!("cannot profile {}: {why}", bench.id))?;
    let mut sym = Symbolizer::new(samples.maps.clone());
    let hot = hot_symbols(&samples, &mut sym);
    Ok(BenchProfile {
        mode,
        results,
        times,
        min_sampling_s: min_s,
        kernel_problem: sym.kernel_problem().map(str::to_string),
        samples,
        hot,
    })
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
    for name in sym.resolve_all(&samples.samples) {
        *counts.entry(name).or_default() += 1;
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

/// Where no symbolizer is built in: addresses stay numbers.
#[cfg(not(target_os = "linux"))]
pub struct Symbolizer;

#[cfg(not(target_os = "linux"))]
impl Symbolizer {
    pub fn new(_: Vec<Mapping>) -> Symbolizer {
        Symbolizer
    }
    pub fn kernel_problem(&self) -> Option<&str> {
        Some("no symbolizer on this platform")
    }
    pub fn resolve_all(&mut self, samples: &[Sample]) -> Vec<String> {
        samples.iter().map(|s| format!("{:#x}", s.ip)).collect()
    }
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
    use std::path::PathBuf;
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
        // The user side of the loop is libc's read wrapper: the libc name
        // with most samples is read, not whatever symbol precedes it in a
        // stripped libc (yamba 0.1.0 said __nss_database_lookup).
        if let Some(libc) = hot.iter().find(|h| h.symbol.contains("[libc.so")) {
            assert!(
                libc.symbol.starts_with("read ") || libc.symbol.starts_with("__libc_read "),
                "libc's share named {:?}",
                libc.symbol
            );
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

    /// A C program whose time is, by construction, three parts in one
    /// function and one part in another (the same loop, 3n and n times),
    /// compiled here; `strip` leaves only what the loader needs.
    const KNOWN_PROGRAM: &str = r#"
#include <stdint.h>
#include <stdlib.h>
__attribute__((noinline)) uint64_t yamba_hot_function(uint64_t n) {
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < n; i++) x += i * 2654435761u;
    return x;
}
__attribute__((noinline)) uint64_t yamba_cool_function(uint64_t n) {
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < n; i++) x += i * 2654435761u;
    return x;
}
int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 1000;
    uint64_t s = yamba_hot_function(3 * n) + yamba_cool_function(n);
    return (int)(s & 0);
}
"#;

    /// Builds KNOWN_PROGRAM (with `extra` cc flags) in `dir`; None when
    /// there is no C compiler here.
    fn build_known(dir: &std::path::Path, name: &str, extra: &[&str]) -> Option<PathBuf> {
        let src = dir.join("known.c");
        std::fs::write(&src, KNOWN_PROGRAM).unwrap();
        let exe = dir.join(name);
        let out = std::process::Command::new("cc")
            .args(["-O2", "-g", "-o"])
            .arg(&exe)
            .arg(&src)
            .args(extra)
            .output()
            .ok()?;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(exe)
    }

    /// Profiles `exe N` (exec'd in the sampled child) and returns its table.
    fn profile_program(exe: &std::path::Path, n: u64) -> Option<Vec<Hot>> {
        use std::os::unix::process::CommandExt;
        let exe = exe.to_path_buf();
        let sampled = profile_child(100_000, Duration::from_secs(60), move || {
            let e = std::process::Command::new(&exe).arg(n.to_string()).exec();
            eprintln!("cannot exec: {e}");
            127
        });
        let samples = match sampled {
            Ok(s) => s,
            Err(why) => {
                eprintln!("SKIPPED: cannot sample here: {why}");
                return None;
            }
        };
        assert_eq!(samples.status, 0);
        let mut sym = Symbolizer::new(samples.maps.clone());
        let hot = hot_symbols(&samples, &mut sym);
        eprintln!("{}", render(&samples, &hot, 8));
        Some(hot)
    }

    fn share(hot: &[Hot], name: &str) -> f64 {
        hot.iter()
            .filter(|h| h.symbol.starts_with(name))
            .map(|h| h.percent)
            .sum()
    }

    /// Ground truth for the symbolizer: a program with known hot functions
    /// (3 : 1 by construction) — the hot one is the top symbol, the cool one
    /// second, in about that ratio; stripped, the same addresses are left
    /// as offsets in the file rather than credited to a wrong name.
    #[test]
    fn a_program_with_known_hot_functions_is_profiled_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let Some(exe) = build_known(dir.path(), "known", &[]) else {
            eprintln!("SKIPPED: no C compiler (cc) here");
            return;
        };
        // About 0.1 s per n = 10^8 on current CPUs.
        let n = 100_000_000;
        let Some(hot) = profile_program(&exe, n) else {
            return;
        };
        assert!(
            hot[0].symbol.starts_with("yamba_hot_function [known]"),
            "top symbols {:?}",
            &hot[..hot.len().min(4)]
        );
        let (h, c) = (
            share(&hot, "yamba_hot_function"),
            share(&hot, "yamba_cool_function"),
        );
        assert!(h + c > 80.0, "hot {h}% + cool {c}% of the samples");
        let ratio = h / c.max(1e-9);
        assert!(
            (2.0..4.5).contains(&ratio),
            "hot/cool = {ratio:.2}, built as 3"
        );

        let stripped = build_known(dir.path(), "known-stripped", &["-s"]).unwrap();
        let hot = profile_program(&stripped, n).unwrap();
        let named: Vec<&Hot> = hot
            .iter()
            .filter(|h| h.symbol.ends_with("[known-stripped]"))
            .collect();
        assert!(
            named.iter().map(|h| h.percent).sum::<f64>() < 5.0,
            "a stripped program's loops were credited to names: {named:?}"
        );
        assert!(
            share(&hot, "known-stripped+0x") > 80.0,
            "top symbols {:?}",
            &hot[..hot.len().min(4)]
        );
    }
}
