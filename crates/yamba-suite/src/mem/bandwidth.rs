//! `mem.bandwidth.*`: P = one kernel pass over a block of its arrays
//! (`kernels.rs`; for libc's memset and memcpy, as lmbench's bzero and
//! bcopy, one call over the whole array), the arrays far larger than the
//! last-level cache so the bytes come from and go to memory. One thread: the loop method, F being
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
use yamba_core::settings::{Kind, Setting};
use yamba_core::{BenchResult, Benchmark, Clock, Cold, Ctx, Replication, Unit};
use yamba_results::results::Method;

/// `--set mem.bw_size`: bytes per array.
pub const SIZE: Setting = Setting {
    key: "mem.bw_size",
    kind: Kind::Bytes {
        min: 4096,
        max: 1 << 40,
    },
    default: "8× the effective last-level cache (4× with --quick), at least 32 MiB, all arrays at most MemAvailable/4",
    help: "bytes per array of the bandwidth kernels",
    aliases: &["bw_size"],
};

macro_rules! bandwidth {
    ($name:ident, $id:literal, $kernel:expr, $what:literal) => {
        bandwidth!($name, $id, $kernel, $what, true);
    };
    ($name:ident, $id:literal, $kernel:expr, $what:literal, $default:expr) => {
        pub static $name: Benchmark = Benchmark {
            id: $id,
            area: "mem",
            unit: Unit::GigabytesPerSecond,
            description: concat!(
                $what,
                ", arrays ≫ last-level cache; GB/s with GB = 10^9 bytes"
            ),
            cold: Cold::NotMeaningful(
                "arrays many times the last-level cache are already the uncached case, and a bandwidth is a rate over whole arrays, not one operation",
            ),
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
            settings: &[SIZE],
            default: $default,
            one_copy_only: Some(crate::shared::one_copy_only::EVERY_CPU),
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

bandwidth!(
    BCOPY,
    "mem.bandwidth.bcopy",
    Kernel::Bcopy,
    "libc memcpy of a whole array per call, as lmbench's bw_mem bcopy (bytes read + written), checked by checksum"
);
bandwidth!(
    BZERO,
    "mem.bandwidth.bzero",
    Kernel::Bzero,
    "libc memset to zero of a whole array per call, as lmbench's bw_mem bzero",
    false
);
bandwidth!(
    RDWR,
    "mem.bandwidth.rdwr",
    Kernel::Rdwr,
    "in-place read-modify-write a[i] += 1 (bytes read + written), checked word by word",
    false
);
bandwidth!(
    ADD,
    "mem.bandwidth.add",
    Kernel::Add,
    "STREAM add c = a + b (3 arrays counted)",
    false
);
bandwidth!(
    SCALE,
    "mem.bandwidth.scale",
    Kernel::Scale,
    "STREAM scale b = s·a (2 arrays counted), as the compiler vectorises it (lmbench's stream runs it scalar: docs/lmbench.md)",
    false
);

/// Words per block: 64 KiB per array, or the whole array if smaller; the
/// whole array for the kernels that are one libc call.
fn block_words(kernel: Kernel, arrays: &Arrays) -> usize {
    if kernel.whole_array() {
        arrays.words
    } else {
        arrays.words.min(8192)
    }
}

/// One-thread bandwidth of `kernel` over arrays of `bytes_per_array`.
pub struct Outcome {
    /// GB/s per observation.
    pub gbps: Vec<f64>,
    pub method: Method,
    /// For kernels with a known result (copies, triad, add, scale, rdwr,
    /// bzero): the arrays hold it.
    pub verified: Option<bool>,
    pub blocks_done: u64,
    pub blocks: usize,
    /// The arrays' pages that lie next to each other in physical memory,
    /// the least share over the arrays ([`Arrays::contiguous_share`]);
    /// read by [`single`] only.
    pub contiguous: Option<f64>,
}

pub fn single(
    clock: &Clock,
    plan: &Plan,
    kernel: Kernel,
    bytes_per_array: usize,
) -> Result<Outcome, String> {
    let mut arr = Arrays::new(kernel, bytes_per_array)?;
    let (words, bw) = (arr.words, block_words(kernel, &arr));
    let (mut o, _) = over(clock, plan, &mut arr, words, bw);
    // Read once here, not in `over`, which the read curve calls per size.
    o.contiguous = arr.contiguous_share();
    Ok(o)
}

/// One-thread bandwidth of the arrays' kernel over their first `words`
/// words (all of them for `single`; a prefix for the read curve) in blocks
/// of `bw` words (a divisor of `words`), and the wrapping sum of what the
/// blocks returned (the read kernel's checksum). The check of the
/// kernel's result (`verified`) is made for the whole arrays only.
pub fn over(
    clock: &Clock,
    plan: &Plan,
    arr: &mut Arrays,
    words: usize,
    bw: usize,
) -> (Outcome, u64) {
    let blocks = words / bw;
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
    let sink = std::hint::black_box(sink);
    // Blocks are processed in order from the first, wrapping around: those
    // done hold the kernel's result, the others are untouched.
    let verified = (words == arr.words).then(|| arr.verify(done, bw)).flatten();
    (
        Outcome {
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
            contiguous: None,
        },
        sink,
    )
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
    // Whole 64 KiB blocks per thread: a tail past the last whole block
    // would never be copied, and the copy's check would fail on it.
    let per = (bytes_per_array / n / (64 << 10)).max(1) * (64 << 10);
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
                    let mut blocks_done = 0u64;
                    loop {
                        start.wait();
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        if let Some(a) = arr.as_mut() {
                            let bw = block_words(kernel, a);
                            for _ in 0..passes.load(Ordering::SeqCst) {
                                for b in 0..a.words / bw {
                                    sink = sink.wrapping_add(a.block(b * bw, (b + 1) * bw));
                                    blocks_done += 1;
                                }
                            }
                        }
                        end.wait();
                    }
                    std::hint::black_box(sink);
                    let a = arr
                        .as_mut()
                        .ok_or(format!("thread on CPU {cpu}: not pinned or no memory"))?;
                    let bw = block_words(kernel, a);
                    Ok((a.bytes(a.words), a.verify(blocks_done, bw)))
                })
            })
            .collect();
        ready.wait();
        let t0 = Instant::now();
        let mut obs = Vec::new();
        let mut bytes_per_pass = None;
        // The clock is read before the threads are released: a thread on
        // this CPU, woken by the barrier, may do its passes before this one
        // runs again, and a round read after would miss them (seen: one
        // pass timed at a few µs, so 1000 passes a round, 30 s instead of
        // 0.2 s, and every round short by its first pass).
        let round = |p: usize| -> f64 {
            passes.store(p, Ordering::SeqCst);
            let a = clock.start();
            start.wait();
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

/// Bytes per array: 8× the effective last-level cache (4× in quick mode),
/// at least 32 MiB, all arrays together at most a quarter of MemAvailable
/// (`llc::Sizing`); `--set mem.bw_size=` overrides. Returns the LLC the
/// arrays are compared with, and how the size was chosen.
pub fn array_bytes(ctx: &Ctx, kernel: Kernel) -> Result<(usize, usize, serde_json::Value), String> {
    if let Some(bytes) = ctx.bytes(SIZE.key)? {
        // All the kernel's arrays, shared out among the threads.
        crate::shared::memory::check_fits(
            SIZE.key,
            &bytes.to_string(),
            bytes,
            kernel.arrays() as u64,
        )?;
        // Judged against the same LLC the default sizes come from (the
        // effective one), not sysfs's: a VM's sysfs may name a host's
        // 480 MiB L3 of which this guest reaches a few tens of MiB.
        let sizing = super::llc::Sizing::for_run(ctx);
        return Ok((
            bytes as usize,
            sizing.llc,
            sizing.describe("mem.bw_size setting"),
        ));
    }
    let sizing = super::llc::Sizing::for_run(ctx);
    let share = 0.25 / kernel.arrays() as f64;
    let (times, rule) = if ctx.quick() {
        (
            4,
            "4 × the LLC per array (quick), at least 32 MiB, all arrays at most MemAvailable/4",
        )
    } else {
        (
            8,
            "8 × the LLC per array, at least 32 MiB, all arrays at most MemAvailable/4",
        )
    };
    // Whole MiB (rounded up, so the arrays stay ≥ `times` × the LLC, as
    // the evidence checks), so every thread's share is whole 64 KiB blocks.
    let bytes = (sizing.bounded(times, 32 << 20, share) + (1 << 20) - 1) >> 20 << 20;
    Ok((bytes, sizing.llc, sizing.describe(rule)))
}

fn run(ctx: &mut Ctx, kernel: Kernel) -> Result<(), String> {
    let (bytes, llc, rule) = array_bytes(ctx, kernel)?;
    let mut plan = ctx.plan();
    plan.min_observation_ns = 1e6;
    plan.warmup_ns = plan.warmup_ns.max(20e6);
    let o = single(ctx.clock(), &plan, kernel, bytes)?;
    let mut r = ctx.result(None);
    let one_thread = yamba_stats::Summary::of(&o.gbps).map(|s| s.median);
    r.set_observations(o.gbps);
    r.method = Some(o.method);
    describe(&mut r, kernel, bytes, llc, 1);
    r.param("bytes_per_array_rule", &rule);
    verify(&mut r, kernel, o.verified);
    r.add_note_evidence(
        "every block was processed at least once",
        format!("≥ {} blocks", o.blocks),
        o.blocks_done.to_string(),
        o.blocks_done >= o.blocks as u64,
    );
    physical_pages(&mut r, o.contiguous);
    ctx.push(r);

    // Every CPU the run may use, not this process's own mask: the
    // benchmark is already pinned to one CPU by now.
    let cpus = yamba_core::affinity::usable_cpus().to_vec();
    let min_rounds = ctx.scaled(3);
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
    verify(&mut r, kernel, kernel.verifiable().then_some(ok));
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
        .param("accesses_per_element", kernel.accesses())
        .param(
            "call",
            if kernel.whole_array() {
                "one libc call over the whole array per operation"
            } else {
                "64 KiB blocks per array"
            },
        )
        .param("threads", threads)
        .param("llc_bytes", llc)
        .param("gb", "10^9 bytes")
        .param(
            "bytes_counted",
            "each array element read or written once (STREAM); write-allocate reads not counted",
        );
    r.add_evidence(
        "the arrays are far larger than the last-level cache (≥ 4× its effective capacity)",
        format!("≥ {} bytes per array", 4 * llc),
        format!("{bytes} bytes per array"),
        bytes >= 4 * llc,
    );
}

/// How the arrays' base pages lie in physical memory, said beside the
/// figure: a fresh process's first arrays may get scattered pages, and on
/// an AMD EPYC (Zen 3) guest a 128 MiB rdwr pass over pages none of which
/// followed another read 1.24× slower than over pages 97% in a row
/// (bench/rdwr-memory.c; huge pages read alike either way; SSE2 scale
/// moved a few percent at most, in bench/stream-witness.c). The machine's
/// memory decides it, not the benchmark, so it is a note, not a gate;
/// without root the frame numbers are hidden and the parameter says so.
fn physical_pages(r: &mut BenchResult, share: Option<f64>) {
    let Some(share) = share else {
        r.param(
            "pages_physically_contiguous",
            "unknown: /proc/self/pagemap shows frame numbers only to root",
        );
        return;
    };
    r.param("pages_physically_contiguous", share);
    r.add_note_evidence(
        "the arrays' base pages mostly follow each other in physical memory (on an AMD EPYC guest rdwr over scattered pages read 1.24× slower than over pages in a row, scale a few percent: bench/rdwr-memory.c)",
        "≥ 50% of neighbouring pages",
        format!("{:.0}%", 100.0 * share),
        share >= 0.5,
    );
}

fn verify(r: &mut BenchResult, kernel: Kernel, verified: Option<bool>) {
    if let Some(ok) = verified {
        let what = match kernel {
            k if k.copies() => {
                "the destination holds every source word (checksum against the known pattern)"
            }
            Kernel::Triad => "every triad element equals b + s·c",
            Kernel::Add => "every element processed equals a + b (1 + 2)",
            Kernel::Scale => "every element processed equals s·a (3 · 2)",
            Kernel::Bzero => "every word is zero after the calls",
            Kernel::Rdwr => {
                "every word grew by the number of passes over it (each read and written back)"
            }
            _ => "the kernel's result is as expected",
        };
        r.add_evidence(what, "match", if ok { "match" } else { "mismatch" }, ok);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yamba_core::Mode;

    fn result() -> BenchResult {
        BenchResult::new(
            "mem.x",
            "x",
            "mem",
            Unit::GigabytesPerSecond,
            Mode::Hot,
            "t",
        )
    }

    /// Scattered pages are a note beside the figure, pages in a row hold
    /// it, and where frame numbers are hidden the parameter says why and
    /// no check is claimed.
    #[test]
    fn physical_pages_are_a_note_never_a_gate() {
        let mut scattered = result();
        physical_pages(&mut scattered, Some(0.02));
        let e = scattered.evidence.last().unwrap();
        assert_eq!((e.ok, e.gating, e.observed.as_str()), (false, false, "2%"));
        assert_eq!(scattered.params["pages_physically_contiguous"], 0.02);

        let mut in_a_row = result();
        physical_pages(&mut in_a_row, Some(0.97));
        assert!(in_a_row.evidence.last().unwrap().ok);

        let mut hidden = result();
        physical_pages(&mut hidden, None);
        assert!(hidden.evidence.is_empty());
        assert!(hidden.params["pages_physically_contiguous"]
            .as_str()
            .unwrap()
            .starts_with("unknown"));
    }
}
