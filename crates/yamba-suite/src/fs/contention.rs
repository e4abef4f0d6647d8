//! Contention (the seed's §3.13, figure 15): one fixed process reads
//! random 4 KiB blocks of its own 1 MiB file while 0, 1, 3, 7, … 31 other
//! processes do the same on theirs; the curve is the bandwidth the fixed
//! process sees as processes are added.
//!
//! Done twice: through the page cache (contention for the CPUs and the
//! kernel's cache) and with O_DIRECT (contention for the device, the
//! seed's point). The fixed process stays on the benchmark's CPU; the
//! others may run on any CPU. Each process counts its reads in shared
//! memory, so the total bandwidth and the fact that every competitor was
//! really reading during the measurement are known, not assumed.

use super::adapter::{self, SharedCounters};
use super::files::{self, AlignedBuf, Caching};
use super::point;
use serde_json::json;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use yamba_core::{Benchmark, Cold, Ctx, Replication, Series, Status, Unit};

pub static CONTENTION: Benchmark = Benchmark {
    id: "fs.contention",
    replication: Replication::OneProcess {
        why: "a sweep of 1 to 32 contending processes: costly to repeat",
    },
    area: "fs",
    unit: Unit::GigabytesPerSecond,
    description: "random 4 KiB reads of one process's own file while 1..32 processes read theirs",
    adapter: adapter::NAME,
    timeout_s: 300,
    run,
    cold: Cold::NotMeaningful(
        "a curve over 1–32 competing readers: the competitors, not an eviction, are the experiment",
    ),
    one_copy_only: Some("it runs up to 32 contending processes of its own"),
    ..Benchmark::TEMPLATE
};

const BLOCK: usize = 4096;
const FILE_BYTES: u64 = 1 << 20;

/// Process counts measured, the fixed one included.
pub fn counts(quick: bool) -> Vec<usize> {
    if quick {
        vec![1, 2, 4, 8]
    } else {
        vec![1, 2, 4, 8, 16, 32]
    }
}

fn run(ctx: &mut Ctx) -> Result<(), String> {
    let quick = ctx.quick();
    let counts = counts(quick);
    let max = *counts.last().unwrap();
    let dir = ctx.scratch_dir().to_path_buf();
    let mut paths = Vec::new();
    for i in 0..max {
        let p = dir.join(format!("contend-{i}"));
        files::write_file(&p, FILE_BYTES)
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        paths.push(p);
    }
    let uncached = files::uncached_method(&dir).and_then(|m| match m {
        Caching::Direct => Ok(m),
        _ => Err(
            "O_DIRECT refused on this filesystem: eviction cannot keep many processes' \
                  files out of the cache while they read"
                .to_string(),
        ),
    });
    for (caching, label) in [(Ok(Caching::Cached), "cached"), (uncached, "uncached")] {
        let caching = match caching {
            Ok(c) => c,
            Err(why) => {
                let mut r = ctx.result(Some(label));
                r.status = Status::Skipped;
                r.reason = Some(why);
                ctx.push(r);
                continue;
            }
        };
        let levels = counts
            .iter()
            .map(|&n| level(ctx, &paths, n, caching))
            .collect::<Result<Vec<_>, _>>()?;
        push_result(ctx, label, caching, levels);
    }
    Ok(())
}

/// What the fixed process and the others did at one process count.
struct Level {
    processes: usize,
    /// Fixed process's bandwidth in each window, GB/s.
    fixed_gbps: Vec<f64>,
    fixed_reads: u64,
    /// Reads by each competitor during the windows.
    competitor_reads: Vec<u64>,
    /// Time the windows really lasted, ns.
    measured_ns: f64,
    storage_bytes: Option<u64>,
    fixed_bad: u64,
}

fn level(ctx: &Ctx, paths: &[PathBuf], n: usize, caching: Caching) -> Result<Level, String> {
    // Amounts: a quick pass's 3 windows, each longer at a higher effort
    // (90 ms in a precise run: where 32 processes share the CPUs, a
    // window spans several of the fixed process's time slices).
    let (windows, window) = (3, ctx.scaled_time(Duration::from_millis(30)));
    let open = |p: &PathBuf| {
        files::open_for(p, caching).map_err(|e| format!("cannot open {}: {e}", p.display()))
    };
    if caching == Caching::Cached {
        for p in &paths[..n] {
            let f = open(p)?;
            files::seq_pass(&f, FILE_BYTES, 1 << 16, &mut AlignedBuf::new(1 << 16))
                .map_err(|e| format!("warming {}: {e}", p.display()))?;
        }
    } else {
        for p in &paths[..n] {
            adapter::evict(&open(p)?).map_err(|e| format!("evicting {}: {e}", p.display()))?;
        }
    }
    let counters = SharedCounters::new(n).map_err(|e| format!("shared memory: {e}"))?;
    let mut pids = Vec::new();
    let spawned = (1..n).try_for_each(|i| {
        let file = open(&paths[i])?;
        let offsets = files::random_offsets(FILE_BYTES, BLOCK, usize::MAX, 17 + i as u64);
        let mut buf = AlignedBuf::new(BLOCK);
        let counters = &counters;
        let pid = adapter::spawn_worker(move || loop {
            for &off in &offsets {
                if file.read_at(buf.as_mut_slice(), off).ok() != Some(BLOCK) {
                    return;
                }
                counters.add(i, 1);
            }
        })
        .map_err(|e| format!("fork: {e}"))?;
        pids.push(pid);
        Ok::<(), String>(())
    });
    let measured =
        spawned.and_then(|()| fixed(ctx, &paths[0], caching, &counters, n, windows, window));
    for pid in pids {
        adapter::kill_worker(pid);
    }
    measured
}

/// The fixed process's windows, once every competitor has started reading.
fn fixed(
    ctx: &Ctx,
    path: &Path,
    caching: Caching,
    counters: &SharedCounters,
    n: usize,
    windows: usize,
    window: Duration,
) -> Result<Level, String> {
    let file = files::open_for(path, caching)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let offsets = files::random_offsets(FILE_BYTES, BLOCK, usize::MAX, 5);
    let mut buf = AlignedBuf::new(BLOCK);
    let started = Instant::now();
    while (1..n).any(|i| counters.get(i) == 0) {
        if started.elapsed() > Duration::from_secs(5) {
            return Err("competing readers did not start reading within 5 s".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let clock = ctx.clock();
    let window_ns = window.as_nanos() as f64;
    let mut measured_ns = 0.0;
    let before: Vec<u64> = (0..n).map(|i| counters.get(i)).collect();
    let storage0 = adapter::storage_read_bytes();
    let (mut gbps, mut reads, mut bad) = (Vec::new(), 0u64, 0u64);
    let mut k = 0usize;
    for _ in 0..windows {
        let t0 = clock.start();
        let mut count = 0u64;
        let ns = loop {
            let off = offsets[k % offsets.len()];
            k += 1;
            if file.read_at(buf.as_mut_slice(), off).ok() != Some(BLOCK) {
                bad += 1;
            }
            count += 1;
            let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0));
            if ns >= window_ns {
                break ns;
            }
        };
        reads += count;
        measured_ns += ns;
        gbps.push((count * BLOCK as u64) as f64 / ns);
    }
    let storage_bytes = match (storage0, adapter::storage_read_bytes()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    let competitor_reads = (1..n).map(|i| counters.get(i) - before[i]).collect();
    Ok(Level {
        processes: n,
        fixed_gbps: gbps,
        fixed_reads: reads,
        competitor_reads,
        measured_ns,
        storage_bytes,
        fixed_bad: bad,
    })
}

fn push_result(ctx: &mut Ctx, label: &str, caching: Caching, levels: Vec<Level>) {
    let table: Vec<_> = levels
        .iter()
        .map(|l| {
            let all_reads = l.fixed_reads + l.competitor_reads.iter().sum::<u64>();
            json!({
                "processes": l.processes,
                "fixed_gbps": point::median(&l.fixed_gbps),
                "fixed_cv": point::cv(&l.fixed_gbps),
                "aggregate_gbps": (all_reads * BLOCK as u64) as f64 / l.measured_ns,
                "fixed_reads": l.fixed_reads,
                "competitor_reads": l.competitor_reads,
                "storage_bytes": l.storage_bytes,
            })
        })
        .collect();
    let last = levels.last().expect("at least one level");
    let mut r = ctx.result(Some(label));
    r.set_observations(last.fixed_gbps.clone());
    r.param("processes", last.processes)
        .param("block_bytes", BLOCK)
        .param("file_bytes", FILE_BYTES)
        .param("caching", caching.as_str());
    r.series = Some(Series {
        x_label: "processes reading".into(),
        x_unit: "count".into(),
        y_label: "fixed process's read bandwidth".into(),
        y_unit: "GB/s".into(),
        log_x: true,
        log_y: true,
        points: levels
            .iter()
            .map(|l| [l.processes as f64, point::median(&l.fixed_gbps)])
            .collect(),
    });
    r.extra.insert("table".into(), json!(table));
    let bad: u64 = levels.iter().map(|l| l.fixed_bad).sum();
    r.add_evidence(
        "every read of the fixed process returned 4 KiB",
        "0 short or failed",
        format!("{bad}"),
        bad == 0,
    );
    // A competitor the scheduler starved for the whole measurement did not
    // contend; a few of many are tolerated (CPU-bound cached readers on a
    // small machine), and named.
    let idle: Vec<(usize, usize)> = levels
        .iter()
        .map(|l| {
            (
                l.processes,
                l.competitor_reads.iter().filter(|&&c| c == 0).count(),
            )
        })
        .filter(|&(_, idle)| idle > 0)
        .collect();
    let too_idle = levels
        .iter()
        .filter(|l| {
            let idle = l.competitor_reads.iter().filter(|&&c| c == 0).count();
            idle * 10 > l.competitor_reads.len()
        })
        .count();
    r.add_evidence(
        "the competing processes were reading during the measurement",
        "at least 90% of them made reads during the windows, at every count",
        if idle.is_empty() {
            "all did".to_string()
        } else {
            format!("idle competitors (processes, idle): {idle:?}")
        },
        too_idle == 0,
    );
    let read: u64 = levels.iter().map(|l| l.fixed_reads * BLOCK as u64).sum();
    if levels.iter().all(|l| l.storage_bytes.is_some()) {
        let fetched: u64 = levels.iter().filter_map(|l| l.storage_bytes).sum();
        let (check, want, ok) = match caching {
            Caching::Cached => (
                "cached reads fetched nothing from storage",
                "0 bytes".to_string(),
                fetched <= read / 1000,
            ),
            _ => (
                "O_DIRECT reads fetched every byte from storage",
                format!("≥ {read} bytes"),
                fetched >= read,
            ),
        };
        r.add_evidence(check, want, format!("{fetched} bytes"), ok);
    } else {
        r.add_note_evidence(
            "bytes fetched from storage",
            "known",
            "no task I/O accounting",
            false,
        );
    }
    ctx.push(r);
}
