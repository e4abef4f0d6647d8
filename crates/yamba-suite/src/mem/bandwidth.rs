//! `mem.bandwidth.*`: P = one kernel pass over a block of its arrays
//! (`kernels.rs`), the arrays far larger than the last-level cache so the
//! bytes come from and go to memory. One thread: the loop method, F being
//! the same loop advancing the block index without touching memory, so the
//! loop's own cost is subtracted. One thread per CPU: each thread pinned,
//! with arrays of its own, timed from a common start to the last finish.
//! Results in GB/s, GB = 10^9 bytes.

use super::adapter::{self, nt};
use super::kernels::{Arrays, Kernel};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};
use yamba_core::harness::{measure_loop, Plan};
use yamba_core::machine::parse_size;
use yamba_core::results::Method;
use yamba_core::{BenchResult, Benchmark, Clock, Ctx, Mode, Replication, Unit};

macro_rules! bandwidth {
    ($name:ident, $id:literal, $kernel:expr, $what:literal) => {
        pub static $name: Benchmark = Benchmark {
            id: $id,
            area: "mem",
            unit: Unit::GigabytesPerSecond,
            description: concat!(
                $what,
                ", arrays ≫ last-level cache; GB/s with GB = 10^9 bytes"
            ),
            modes: &[Mode::Hot],
            adapter: adapter::NAME,
            replication: Replication::OneProcess {
                why: "arrays many times the last-level cache: costly to build again",
            },
            requires: |_, _| {
                if $kernel.non_temporal() {
                    nt::unavailable().map_or(Ok(()), Err)
                } else {
                    Ok(())
                }
            },
            run: |ctx| run(ctx, $kernel),
            ..Benchmark::TEMPLATE
        };
    };
}

bandwidth!(
    READ,
    "mem.bandwidth.read",
    Kernel::Read,
    "memory read bandwidth: sum of 64-bit words"
);
bandwidth!(
    WRITE,
    "mem.bandwidth.write",
    Kernel::Write,
    "memory write bandwidth: ordinary stores"
);
bandwidth!(
    COPY,
    "mem.bandwidth.copy",
    Kernel::Copy,
    "memory copy bandwidth (bytes read + written), checked by checksum"
);
bandwidth!(
    TRIAD,
    "mem.bandwidth.triad",
    Kernel::Triad,
    "STREAM triad a = b + s·c (3 arrays counted)"
);
bandwidth!(
    WRITE_NT,
    "mem.bandwidth.write_nt",
    Kernel::WriteNt,
    "memory write bandwidth with non-temporal stores"
);
bandwidth!(
    COPY_NT,
    "mem.bandwidth.copy_nt",
    Kernel::CopyNt,
    "memory copy bandwidth with non-temporal stores, checked by checksum"
);

/// Words per block: 64 KiB per array, or the whole array if smaller.
fn block_words(arrays: &Arrays) -> usize {
    arrays.words.min(8192)
}

/// One-thread bandwidth of `kernel` over arrays of `bytes_per_array`.
pub struct Outcome {
    /// GB/s per observation.
    pub gbps: Vec<f64>,
    pub method: Method,
    /// For copies: the destination's checksum matched the source pattern.
    pub verified: Option<bool>,
    pub blocks_done: u64,
    pub blocks: usize,
}

pub fn single(
    clock: &Clock,
    plan: &Plan,
    kernel: Kernel,
    bytes_per_array: usize,
) -> Result<Outcome, String> {
    let mut arr = Arrays::new(kernel, bytes_per_array)?;
    let bw = block_words(&arr);
    let blocks = arr.words / bw;
    let block_bytes = arr.bytes(bw) as f64;
    let (mut i, mut j, mut done) = (0usize, 0usize, 0u64);
    let mut sink = 0u64;
    let m = measure_loop(
        clock,
        plan,
        || {
            sink = sink.wrapping_add(arr.block(i * bw, (i + 1) * bw));
            i = if i + 1 == blocks { 0 } else { i + 1 };
            done += 1;
        },
        || {
            j = std::hint::black_box(if j + 1 == blocks { 0 } else { j + 1 });
        },
    );
    std::hint::black_box(sink);
    let verified = if kernel.copies() {
        // Blocks are copied in order from the first, wrapping around: those
        // done hold the pattern, the others are untouched.
        arr.copy_verified_to(bw * (done as usize).min(blocks))
    } else {
        arr.triad_verified()
    };
    Ok(Outcome {
        gbps: m
            .observations
            .iter()
            .filter(|&&ns| ns > 0.0)
            .map(|ns| block_bytes / ns)
            .collect(),
        method: m.method,
        verified,
        blocks_done: done,
        blocks,
    })
}

/// Aggregate bandwidth of one pinned thread per CPU in `cpus`, each over
/// its own arrays of `bytes_per_array / cpus`.
pub fn threaded(
    clock: &Clock,
    budget: Duration,
    min_rounds: usize,
    kernel: Kernel,
    bytes_per_array: usize,
    cpus: &[usize],
) -> Result<(Vec<f64>, bool), String> {
    let n = cpus.len();
    let per = bytes_per_array / n;
    let start = Barrier::new(n + 1);
    let end = Barrier::new(n + 1);
    let stop = AtomicBool::new(false);
    let passes = AtomicUsize::new(1);
    let ready = Barrier::new(n + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let (start, end, stop, passes, ready) = (&start, &end, &stop, &passes, &ready);
                s.spawn(move || -> Result<(usize, Option<bool>), String> {
                    let pinned = yamba_core::affinity::pin_current_thread(cpu);
                    let arr = Arrays::new(kernel, per);
                    ready.wait();
                    let mut arr = match (pinned, arr) {
                        (Ok(()), Ok(a)) => Some(a),
                        _ => None,
                    };
                    let mut sink = 0u64;
                    loop {
                        start.wait();
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        if let Some(a) = arr.as_mut() {
                            let bw = block_words(a);
                            for _ in 0..passes.load(Ordering::SeqCst) {
                                for b in 0..a.words / bw {
                                    sink = sink.wrapping_add(a.block(b * bw, (b + 1) * bw));
                                }
                            }
                        }
                        end.wait();
                    }
                    std::hint::black_box(sink);
                    let a = arr
                        .as_mut()
                        .ok_or(format!("thread on CPU {cpu}: not pinned or no memory"))?;
                    Ok((a.bytes(a.words), a.copy_verified().or(a.triad_verified())))
                })
            })
            .collect();
        ready.wait();
        let t0 = Instant::now();
        let mut obs = Vec::new();
        let mut bytes_per_pass = None;
        let round = |p: usize| -> f64 {
            passes.store(p, Ordering::SeqCst);
            start.wait();
            let a = clock.start();
            end.wait();
            clock.ticks_to_ns(clock.stop().wrapping_sub(a))
        };
        // Calibrate: passes per round so a round lasts ~20 ms.
        let one = round(1).max(1.0);
        let p = ((20e6 / one).ceil() as usize).clamp(1, 1000);
        let mut times = Vec::new();
        while times.len() < min_rounds || (t0.elapsed() < budget && times.len() < 10_000) {
            times.push((p, round(p)));
        }
        stop.store(true, Ordering::SeqCst);
        start.wait();
        let mut verified = true;
        let mut total = 0usize;
        for h in handles {
            let (b, v) = h
                .join()
                .map_err(|_| "bandwidth thread panicked".to_string())??;
            total += b;
            verified &= v.unwrap_or(true);
            bytes_per_pass = Some(total);
        }
        let bpp = bytes_per_pass.unwrap_or(0) as f64;
        for (p, ns) in times {
            obs.push(bpp * p as f64 / ns);
        }
        Ok((obs, verified))
    })
}

fn run(ctx: &mut Ctx, kernel: Kernel) -> Result<(), String> {
    let llc = ctx.machine().llc_bytes() as usize;
    let bytes = match ctx.setting("bw_size") {
        Some(s) => parse_size(s)
            .filter(|&v| v >= 4096)
            .map(|v| v as usize)
            .ok_or_else(|| format!("bad bw_size '{s}': expected bytes per array such as 256M"))
            .and_then(|b| {
                // Up to three arrays (triad), shared out among the threads.
                crate::shared::memory::check_fits("bw_size", s, b as u64, 3)?;
                Ok(b)
            })?,
        None => llc * if ctx.quick() { 4 } else { 8 },
    };
    let mut plan = ctx.plan();
    plan.min_observation_ns = 1e6;
    plan.warmup_ns = plan.warmup_ns.max(20e6);
    let o = single(ctx.clock(), &plan, kernel, bytes)?;
    let mut r = ctx.result(None);
    let one_thread = yamba_stats::Summary::of(&o.gbps).map(|s| s.median);
    r.set_observations(o.gbps);
    r.method = Some(o.method);
    describe(&mut r, kernel, bytes, llc, 1);
    verify(&mut r, kernel, o.verified);
    r.add_note_evidence(
        "every block was processed at least once",
        format!("≥ {} blocks", o.blocks),
        o.blocks_done.to_string(),
        o.blocks_done >= o.blocks as u64,
    );
    ctx.push(r);

    let cpus = yamba_core::affinity::allowed_cpus();
    let min_rounds = if ctx.quick() { 3 } else { 10 };
    let (obs, ok) = threaded(
        ctx.clock(),
        ctx.plan().budget,
        min_rounds,
        kernel,
        bytes,
        &cpus,
    )?;
    let mut r = ctx.result(Some("all_cpus"));
    r.description = format!(
        "{} — one pinned thread per CPU ({}), aggregate",
        r.description,
        cpus.len()
    );
    r.set_observations(obs);
    describe(&mut r, kernel, bytes, llc, cpus.len());
    r.param("cpus", &cpus);
    verify(
        &mut r,
        kernel,
        kernel
            .copies()
            .then_some(ok)
            .or((kernel == Kernel::Triad).then_some(ok)),
    );
    if let (Some(one), Some(all)) = (one_thread, r.median()) {
        r.add_note_evidence(
            "one thread per CPU moved at least as much as one thread (fails when other CPUs are busy)",
            format!("≥ {one:.2} GB/s"),
            format!("{all:.2} GB/s"),
            all >= one,
        );
    }
    r.add_note_evidence(
        "loop overhead is not subtracted in the threaded rounds",
        "negligible: one index step per 64 KiB block",
        "see the one-thread result's dummy loop",
        true,
    );
    ctx.push(r);
    Ok(())
}

fn describe(r: &mut BenchResult, kernel: Kernel, bytes: usize, llc: usize, threads: usize) {
    r.param("kernel", kernel.name())
        .param("bytes_per_array", bytes)
        .param("arrays", kernel.arrays())
        .param("threads", threads)
        .param("llc_bytes", llc)
        .param("gb", "10^9 bytes")
        .param(
            "bytes_counted",
            "each array element read or written once (STREAM); write-allocate reads not counted",
        );
    r.add_evidence(
        "the arrays are far larger than the last-level cache (≥ 4×)",
        format!("≥ {} bytes per array", 4 * llc),
        format!("{bytes} bytes per array"),
        bytes >= 4 * llc,
    );
}

fn verify(r: &mut BenchResult, kernel: Kernel, verified: Option<bool>) {
    if let Some(ok) = verified {
        let what = if kernel.copies() {
            "the destination holds every source word (checksum against the known pattern)"
        } else {
            "every triad element equals b + s·c"
        };
        r.add_evidence(what, "match", if ok { "match" } else { "mismatch" }, ok);
    }
}
