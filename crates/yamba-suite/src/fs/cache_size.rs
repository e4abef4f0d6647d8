//! Size of the file cache (the seed's §3.10, figure 11): read bandwidth of
//! a file read over and over in 16 KiB blocks, for file sizes doubling
//! from 1 KiB, until the reads stop coming from memory (the knee) or a
//! bound is reached: half of MemAvailable, half the free disk space, or
//! the time budget.
//!
//! "From memory" is not guessed from the bandwidth alone: the kernel's
//! count of bytes this process fetched from storage (/proc/self/io) says
//! whether a pass missed the cache. Without that count the bandwidth
//! falling below a quarter of the best seen is taken as the knee.
//! On a machine with lots of free memory no knee is reached in budget:
//! the result is then "at least" the largest size, with a warning.

use super::adapter;
use super::files::{self, AlignedBuf};
use super::point;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use yamba_core::{Benchmark, Clock, Cold, Ctx, Kind, Replication, Series, Setting, Unit};

/// `--set fs.cache_size.max_bytes`: the largest file tried.
pub const MAX_BYTES: Setting = Setting {
    key: "fs.cache_size.max_bytes",
    kind: Kind::Bytes {
        min: 1 << 20,
        max: 1 << 50,
    },
    default: "half of the available memory or free disk, whichever is less",
    help: "largest file the curve tries",
    aliases: &[],
};

pub static CACHE_SIZE: Benchmark = Benchmark {
    id: "fs.cache_size",
    replication: Replication::OneProcess {
        why: "a sweep of file sizes up to the page cache: costly to repeat",
    },
    area: "fs",
    unit: Unit::Bytes,
    description:
        "file cache size: largest file re-read from memory (knee of read bandwidth vs file size)",
    adapter: adapter::NAME,
    timeout_s: 300,
    run,
    settings: &[MAX_BYTES],
    cold: Cold::NotMeaningful(
        "the file sizes are the experiment: the knee where the page cache stops holding the file",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::WHOLE_MACHINE),
    ..Benchmark::TEMPLATE
};

/// Blocks read per call, as in the seed.
pub const BLOCK: usize = 16 << 10;
/// A pass counts as a cache miss when this share of its bytes came from storage.
pub const MISS_SHARE: f64 = 0.1;

/// One file size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CurvePoint {
    pub file_bytes: u64,
    /// Median bandwidth of the timed passes, GB/s.
    pub gbps: f64,
    pub observations: usize,
    /// Share of the bytes read that were fetched from storage, where known.
    pub storage_share: Option<f64>,
    /// Share of the file's pages resident after the timed passes (mincore).
    pub resident_after: f64,
    /// Whether these reads came from memory.
    pub from_memory: bool,
    /// Every pass read exactly the file's size.
    pub bytes_ok: bool,
}

/// The curve and what it says about the cache.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Curve {
    pub points: Vec<CurvePoint>,
    /// Largest size read from memory: the cache holds at least this much.
    pub cache_bytes: u64,
    /// First size whose reads missed the cache, if one was reached.
    pub knee_bytes: Option<u64>,
    /// What stopped the doubling when no knee was reached.
    pub bound: String,
    /// How misses were recognised.
    pub detection: String,
}

/// Measures the curve in `dir`, sizes up to `max_bytes`, spending about
/// `budget` (the next size is skipped if it would not fit). `llc_bytes`
/// (the last-level CPU cache) only matters without /proc/self/io: the
/// bandwidth drop from CPU cache to memory must not be taken for the knee.
pub fn measure_curve(
    clock: &Clock,
    dir: &Path,
    max_bytes: u64,
    budget: Duration,
    llc_bytes: u64,
) -> Result<Curve, String> {
    let path = dir.join("cache-size");
    let mut file = files::write_file(&path, 0)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut buf = AlignedBuf::new(BLOCK);
    let accounting = adapter::storage_read_bytes().is_some();
    let started = Instant::now();
    let (mut points, mut written) = (Vec::<CurvePoint>::new(), 0u64);
    let (mut knee, mut bound, mut last_cost) = (None, String::new(), Duration::ZERO);
    let mut size = 1u64 << 10;
    loop {
        if size > max_bytes {
            bound = format!("size bound {} (memory or disk space)", human(max_bytes));
            break;
        }
        if !points.is_empty() && started.elapsed() + last_cost * 5 / 2 > budget {
            bound = format!("time budget {:.1} s", budget.as_secs_f64());
            break;
        }
        let t = Instant::now();
        files::append(&mut file, written, size)
            .map_err(|e| format!("cannot grow the file to {size} bytes: {e}"))?;
        written = size;
        let io = |e: std::io::Error| format!("reading the {size}-byte file: {e}");
        files::seq_pass(&file, size, BLOCK, &mut buf).map_err(io)?;
        // Passes per observation: enough for ~1 ms.
        let t0 = clock.start();
        files::seq_pass(&file, size, BLOCK, &mut buf).map_err(io)?;
        let one = clock.ticks_to_ns(clock.stop().wrapping_sub(t0)).max(1.0);
        let passes = ((1e6 / one).ceil() as u64).clamp(1, 1 << 16);
        let storage0 = adapter::storage_read_bytes();
        let (mut gbps, mut read, mut bytes_ok) = (Vec::new(), 0u64, true);
        while gbps.len() < 3 {
            let t0 = clock.start();
            let mut bytes = 0;
            for _ in 0..passes {
                let tally = files::seq_pass(&file, size, BLOCK, &mut buf).map_err(io)?;
                bytes_ok &= tally.bytes == size;
                bytes += tally.bytes;
            }
            let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0)).max(1.0);
            gbps.push(bytes as f64 / ns);
            read += bytes;
        }
        let storage_share = match (storage0, adapter::storage_read_bytes()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / read as f64),
            _ => None,
        };
        let median = point::median(&gbps);
        let from_memory = match storage_share {
            Some(s) => s < MISS_SHARE,
            None => {
                // Best bandwidth of sizes past the CPU caches (from memory).
                let best = points
                    .iter()
                    .filter(|p| p.file_bytes > 2 * llc_bytes)
                    .map(|p| p.gbps)
                    .fold(median, f64::max);
                size <= 4 * llc_bytes || median >= best / 4.0
            }
        };
        points.push(CurvePoint {
            file_bytes: size,
            gbps: median,
            observations: gbps.len(),
            storage_share,
            resident_after: files::resident_fraction(&file, size).map_err(io)?,
            from_memory,
            bytes_ok,
        });
        last_cost = t.elapsed();
        if !from_memory {
            knee = Some(size);
            break;
        }
        size *= 2;
    }
    drop(file);
    let _ = std::fs::remove_file(&path);
    let cache_bytes = points
        .iter()
        .take_while(|p| p.from_memory)
        .last()
        .map(|p| p.file_bytes)
        .unwrap_or(0);
    Ok(Curve {
        points,
        cache_bytes,
        knee_bytes: knee,
        bound: if knee.is_some() { String::new() } else { bound },
        detection: if accounting {
            format!("a size missed when ≥ {:.0}% of its bytes were fetched from storage (/proc/self/io)", MISS_SHARE * 100.0)
        } else {
            "no /proc/self/io: a size missed when its bandwidth fell below a quarter of the best \
             past the CPU caches"
                .into()
        },
    })
}

/// Whether the sizes counted as read from memory were still in the page
/// cache after their passes. A size counts as cached when under
/// [`MISS_SHARE`] of its bytes came from storage, so its residency is held
/// to the same share: a busy machine's background reclaim takes a few pages
/// of a file read once or twice (0.4% of 256 MiB seen in a loaded CI) without
/// changing where its reads came from, while a cache too small for the size
/// leaves far less of it resident.
fn residency_verdict(mem_pts: &[&CurvePoint]) -> (String, bool) {
    let Some(least) = mem_pts
        .iter()
        .min_by(|a, b| a.resident_after.total_cmp(&b.resident_after))
    else {
        return ("no size was read from memory".into(), true);
    };
    let share = least.resident_after;
    if share >= 1.0 {
        return ("all resident".into(), true);
    }
    let ok = share >= 1.0 - MISS_SHARE;
    let observed = if ok {
        format!(
            "least resident: {:.1}% of the {} file (the kernel reclaimed a few of its pages meanwhile)",
            100.0 * share,
            human(least.file_bytes)
        )
    } else {
        format!(
            "only {:.1}% of the {} file still resident although its reads were counted as \
             from memory: the kernel was evicting it meanwhile (memory pressure?), so the \
             cache size found is not trustworthy",
            100.0 * share,
            human(least.file_bytes)
        )
    };
    (observed, ok)
}

fn human(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b => format!("{:.1} KiB", b as f64 / 1024.0),
    }
}

fn run(ctx: &mut Ctx) -> Result<(), String> {
    let dir = ctx.scratch_dir().to_path_buf();
    let kind = adapter::fs_kind(&dir).map_err(|e| format!("statfs {}: {e}", dir.display()))?;
    let avail = yamba_core::machine::meminfo_kib("MemAvailable").unwrap_or(0) * 1024;
    let free = adapter::free_bytes(&dir).map_err(|e| format!("statvfs {}: {e}", dir.display()))?;
    let mut max_bytes = (avail / 2).min(free / 2);
    if let Some(b) = ctx.bytes(MAX_BYTES.key)? {
        max_bytes = max_bytes.min(b);
    }
    // A time budget: a quick pass's at this block's effort. Where memory
    // is large it is what ends the doubling, and the result is "at least"
    // the last size, said so in a warning.
    let budget = ctx.scaled_time(Duration::from_millis(1500));
    let curve = measure_curve(
        ctx.clock(),
        &dir,
        max_bytes,
        budget,
        ctx.machine().llc_bytes(),
    )?;
    let mut r = ctx.result(None);
    r.set_observations(vec![curve.cache_bytes as f64]);
    r.param("block_bytes", BLOCK).param("filesystem", kind.name);
    r.series = Some(Series {
        x_label: "file size".into(),
        x_unit: "B".into(),
        y_label: "re-read bandwidth".into(),
        y_unit: "GB/s".into(),
        log_x: true,
        log_y: true,
        points: curve
            .points
            .iter()
            .map(|p| [p.file_bytes as f64, p.gbps])
            .collect(),
    });
    r.extra.insert("points".into(), json!(curve.points));
    r.extra.insert("knee_bytes".into(), json!(curve.knee_bytes));
    r.extra
        .insert("at_least".into(), json!(curve.knee_bytes.is_none()));
    r.extra.insert("detection".into(), json!(curve.detection));
    r.extra.insert("mem_available_bytes".into(), json!(avail));
    if curve.knee_bytes.is_none() {
        r.extra.insert("bound".into(), json!(curve.bound));
        r.warn(format!(
            "no knee reached: every size up to {} was re-read from memory before the {} stopped the search; the file cache is at least that large",
            human(curve.cache_bytes),
            curve.bound
        ));
    }
    if kind.memory_only {
        r.warn(format!(
            "scratch directory is on {}: files live only in memory, so no knee can exist",
            kind.name
        ));
    }
    let bad = curve.points.iter().filter(|p| !p.bytes_ok).count();
    r.add_evidence(
        "every pass read exactly the file's size",
        "all passes",
        format!("{bad} sizes with a short pass"),
        bad == 0,
    );
    let mem_pts: Vec<&CurvePoint> = curve.points.iter().filter(|p| p.from_memory).collect();
    let (observed, ok) = residency_verdict(&mem_pts);
    r.add_evidence(
        "sizes read from memory stayed in the page cache (mincore after their passes)",
        format!(
            "≥ {:.0}% of their pages resident (the share a size counted as cached may miss)",
            100.0 * (1.0 - MISS_SHARE)
        ),
        observed,
        ok,
    );
    if let (Some(k), Some(last)) = (
        curve.points.last().filter(|_| curve.knee_bytes.is_some()),
        mem_pts.last(),
    ) {
        r.add_note_evidence(
            "bandwidth fell at the knee",
            format!("below {:.3} GB/s (the last cached size's)", last.gbps),
            format!("{:.3} GB/s", k.gbps),
            k.gbps < last.gbps,
        );
    }
    ctx.push(r);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(file_bytes: u64, resident_after: f64) -> CurvePoint {
        CurvePoint {
            file_bytes,
            gbps: 5.0,
            observations: 3,
            storage_share: Some(0.0),
            resident_after,
            from_memory: true,
            bytes_ok: true,
        }
    }

    #[test]
    fn residency_tolerates_background_reclaim_but_not_eviction() {
        let whole = point(1 << 20, 1.0);
        let reclaimed = point(256 << 20, 0.996);
        let evicted = point(512 << 20, 0.6);
        assert_eq!(residency_verdict(&[&whole]), ("all resident".into(), true));
        let (said, ok) = residency_verdict(&[&whole, &reclaimed]);
        assert!(ok && said.contains("99.6% of the 256.0 MiB"), "{said}");
        let (said, ok) = residency_verdict(&[&whole, &reclaimed, &evicted]);
        assert!(
            !ok && said.contains("only 60.0% of the 512.0 MiB"),
            "{said}"
        );
        let edge = point(2 << 20, 1.0 - MISS_SHARE - 0.001);
        assert!(!residency_verdict(&[&edge]).1);
        assert!(residency_verdict(&[]).1);
    }
}
