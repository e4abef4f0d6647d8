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
//! mappings), `placed` (samples in placed copies of measured code, named
//! as the function each copies), `syscall_return` (kernel time sampled at
//! a user address), `symbols` (naming addresses), `render` (the table);
//! [`profile_benchmark`] puts them together for `yamba run --profile`.

mod maps;
mod placed;
mod render;
#[cfg(target_os = "linux")]
mod symbols;
mod syscall_return;

pub use maps::{merge_maps, parse_maps, Mapping};
pub use placed::name_placed_copies;
pub use render::render;
#[cfg(target_os = "linux")]
pub use symbols::Symbolizer;
pub use syscall_return::{credit_syscall_returns, SYSCALL_RETURN};

use crate::bench::{Benchmark, Session};
pub use crate::placement::ledger::Role;
use crate::runner::run_one;
use std::collections::HashMap;
use std::time::Duration;
use yamba_results::results::{BenchResult, Mode, Status};

/// One sampled instruction pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub ip: u64,
    pub kernel: bool,
    /// Taken at the user instruction just after a system call, but the
    /// kernel's time: the timer fell due while the kernel, returning from
    /// the call, had interrupts masked, and fired on the way out
    /// (`syscall_return`). `kernel` is set; `ip` is the user address.
    pub at_syscall_return: bool,
    /// Taken in a placed copy of a function (code placement), of the
    /// measured code or of its dummy: `ip` is the address it copies in
    /// the function (`placed`).
    pub placed: Option<Role>,
    /// When it was taken, ns on CLOCK_MONOTONIC (0: not known).
    pub time_ns: u64,
}

impl Sample {
    /// A sample at `ip`, in the kernel or not, taken where it fell due.
    pub fn at(ip: u64, kernel: bool) -> Sample {
        Sample {
            ip,
            kernel,
            at_syscall_return: false,
            placed: None,
            time_ns: 0,
        }
    }

    /// The same, taken at `time_ns` (CLOCK_MONOTONIC).
    pub fn at_time(ip: u64, kernel: bool, time_ns: u64) -> Sample {
        Sample {
            time_ns,
            ..Sample::at(ip, kernel)
        }
    }
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
    /// Placed copies the child made that its ledger had no room for:
    /// samples in copies from the first of them on stay unnamed (`placed`).
    pub copies_unrecorded: u64,
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
