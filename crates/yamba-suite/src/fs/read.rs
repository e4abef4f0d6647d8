//! P = read a file in blocks (the seed's §3.11), sequentially
//! (`fs.read.seq`) or at random block offsets (`fs.read.random`), by file
//! size (1 B to 64 MiB) and block size, through the page cache and around
//! it (O_DIRECT, or eviction before each pass where O_DIRECT is refused).
//!
//! Files smaller than a block are read again and again until an
//! observation is long enough, as the seed did. Each result carries the
//! bandwidth (GB/s) and, as a second result, the time per read call.
//! Where the bytes came from is checked, not assumed: page-cache passes
//! must fetch nothing from storage and find the file resident (mincore);
//! uncached passes must fetch what they read from storage
//! (/proc/self/io read_bytes) and leave (O_DIRECT) or find (eviction) the
//! file out of the cache.

use super::adapter;
use super::files::{self, Caching};
use super::point::{self, Pattern, Point, Spec};
use serde_json::json;
use std::time::Duration;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Kind, Series, Setting, Status, Unit};

/// `--set fs.uncached`: how an uncached pass avoids the page cache.
pub const UNCACHED: Setting = Setting {
    key: "fs.uncached",
    kind: Kind::Choice(&["auto", "evict"]),
    default: "auto",
    help: "uncached passes: O_DIRECT where the file system allows it (auto), or always evict the file's pages",
    aliases: &[],
};

pub static SEQ: Benchmark = Benchmark {
    id: "fs.read.seq",
    area: "fs",
    unit: Unit::GigabytesPerSecond,
    description: "sequential file read: bandwidth and time per block, by file and block size, cached and uncached",
    adapter: adapter::NAME,
    timeout_s: 400,
    run: |ctx| run(ctx, Pattern::Seq),
    settings: &[UNCACHED],
    cold: Cold::NotMeaningful(
        "its uncached results (.uncached: O_DIRECT, or the file evicted before each pass) are the cold case, by file and block size",
    ),
    ..Benchmark::TEMPLATE
};

pub static RANDOM: Benchmark = Benchmark {
    id: "fs.read.random",
    area: "fs",
    unit: Unit::GigabytesPerSecond,
    description: "random-offset file read: bandwidth and time per block, by file and block size, cached and uncached",
    adapter: adapter::NAME,
    timeout_s: 400,
    run: |ctx| run(ctx, Pattern::Random),
    settings: &[UNCACHED],
    cold: Cold::NotMeaningful(
        "its uncached results (.uncached: O_DIRECT, or the file evicted before each pass) are the cold case, by file and block size",
    ),
    ..Benchmark::TEMPLATE
};

/// The block size of the headline and of the curves (the seed's 16 KiB).
pub const REF_BLOCK: usize = 16 << 10;

/// File sizes measured.
pub fn sizes(quick: bool) -> Vec<u64> {
    if quick {
        vec![1, 64 << 10, 1 << 20, 16 << 20]
    } else {
        vec![
            1,
            1 << 10,
            4 << 10,
            16 << 10,
            64 << 10,
            256 << 10,
            1 << 20,
            4 << 20,
            16 << 20,
            64 << 20,
        ]
    }
}

/// The largest file read uncached. Uncached reads go at the device's pace
/// per request whatever the file's size (4 KiB O_DIRECT on this project's
/// guest: 0.075, 0.083, 0.075, 0.071 GB/s for 1, 4, 16, 64 MiB), so a
/// 64 MiB pass — a second per observation at 4 KiB — added time, not
/// information.
pub const UNCACHED_MAX: u64 = 16 << 20;

/// Block sizes measured for a file of `size` bytes: blocks much larger
/// than the file would all make the same single short read.
pub fn blocks(quick: bool, size: u64) -> Vec<usize> {
    let all: &[usize] = if quick {
        &[4 << 10, REF_BLOCK]
    } else {
        &[4 << 10, REF_BLOCK, 256 << 10]
    };
    all.iter()
        .copied()
        .filter(|&b| b <= REF_BLOCK || b as u64 <= size)
        .collect()
}

/// Random passes read at most this many blocks (distinct, in random
/// order): a size, the part of the file one pass touches.
fn random_reads(quick: bool) -> usize {
    if quick {
        256
    } else {
        1024
    }
}

fn run(ctx: &mut Ctx, pattern: Pattern) -> Result<(), String> {
    let quick = ctx.quick();
    let dir = ctx.scratch_dir().to_path_buf();
    let fs = adapter::fs_kind(&dir).map_err(|e| format!("statfs {}: {e}", dir.display()))?;
    // `--set fs.uncached=evict` forces the fallback used where O_DIRECT is refused.
    let uncached = match ctx.choice(UNCACHED.key)? {
        Some("evict") => files::uncached_method(&dir).map(|_| Caching::Evicted),
        _ => files::uncached_method(&dir),
    };
    // A precise run's replicating blocks read only the headline points:
    // the largest file at REF_BLOCK, cached and uncached.
    let curve = ctx.measures_curve();
    let all_sizes = sizes(quick);
    let headline = |largest: u64| all_sizes.iter().copied().filter(|&s| s <= largest).max();
    let wanted: Vec<u64> = if curve {
        all_sizes.clone()
    } else {
        [headline(UNCACHED_MAX), headline(u64::MAX)]
            .into_iter()
            .flatten()
            .collect()
    };
    let mut paths = Vec::new();
    for &size in &wanted {
        let path = dir.join(format!("read-{size}"));
        files::write_file(&path, size)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        paths.push((size, path));
    }
    let cachings = [Some(Caching::Cached), uncached.as_ref().ok().copied()];
    for (caching, label) in cachings.into_iter().zip(["cached", "uncached"]) {
        let Some(caching) = caching else {
            let why = uncached.as_ref().err().cloned().unwrap_or_default();
            for suffix in [label.to_string(), format!("{label}.latency")] {
                let mut r = ctx.result(Some(&suffix));
                r.status = Status::Skipped;
                r.reason = Some(why.clone());
                ctx.push(r);
            }
            continue;
        };
        let mut rows = Vec::new();
        let largest = if caching == Caching::Cached {
            u64::MAX
        } else {
            UNCACHED_MAX
        };
        let measured = |size: u64| size <= largest && (curve || Some(size) == headline(largest));
        for (size, path) in paths.iter().filter(|(size, _)| measured(*size)) {
            let file = files::open_for(path, caching)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            let block_sizes = if curve {
                blocks(quick, *size)
            } else {
                vec![REF_BLOCK]
            };
            for block in block_sizes {
                let offsets =
                    files::random_offsets(*size, block, random_reads(quick), 0x5eed ^ *size);
                let spec = Spec {
                    file: &file,
                    size: *size,
                    block,
                    pattern,
                    caching,
                    offsets: &offsets,
                    // Amounts (passes per observation, observations,
                    // time): a quick pass's, at this block's effort.
                    target_ns: 1e6 * ctx.effort(),
                    min_obs: ctx.scaled(3),
                    max_obs: ctx.scaled(10),
                    budget: ctx.scaled_time(Duration::from_millis(30)),
                };
                let p = point::measure(ctx.clock(), ctx.base_ns(), &spec)?;
                rows.push((*size, block, p));
            }
        }
        push_results(ctx, pattern, caching, label, fs.name, rows);
    }
    Ok(())
}

/// Builds the bandwidth and latency results of one caching mode from its points.
fn push_results(
    ctx: &mut Ctx,
    pattern: Pattern,
    caching: Caching,
    label: &str,
    fs_name: &str,
    rows: Vec<(u64, usize, Point)>,
) {
    let table: Vec<_> = rows
        .iter()
        .map(|(size, block, p)| {
            json!({
                "file_bytes": size,
                "block_bytes": block,
                "gbps": point::median(&p.gbps),
                "ns_per_block": point::median(&p.ns_per_block),
                "cv": point::cv(&p.gbps),
                "observations": p.gbps.len(),
                "passes_per_observation": p.passes,
                "bytes_per_pass": p.pass_bytes,
                "storage_bytes": p.storage_bytes,
                "bytes_read": p.tally.bytes,
                "resident": p.resident,
            })
        })
        .collect();
    let curve = |f: &dyn Fn(&Point) -> f64| -> Vec<[f64; 2]> {
        rows.iter()
            .filter(|(_, b, _)| *b == REF_BLOCK)
            .map(|(s, _, p)| [*s as f64, f(p)])
            .collect()
    };
    let bw_points = curve(&|p| point::median(&p.gbps));
    let lat_points = curve(&|p| point::median(&p.ns_per_block));
    let Some((ref_size, _, reference)) = rows
        .iter()
        .filter(|(_, b, _)| *b == REF_BLOCK)
        .max_by_key(|(s, _, _)| *s)
    else {
        return;
    };
    let order = match pattern {
        Pattern::Seq => "sequential",
        Pattern::Random => "random",
    };
    for latency in [false, true] {
        let mut r = ctx.result(Some(&if latency {
            format!("{label}.latency")
        } else {
            label.to_string()
        }));
        r.set_observations(if latency {
            reference.ns_per_block.clone()
        } else {
            reference.gbps.clone()
        });
        if latency {
            r.unit = Unit::Nanoseconds;
        }
        r.param("file_bytes", ref_size)
            .param("block_bytes", REF_BLOCK)
            .param("order", order)
            .param("caching", caching.as_str())
            .param("filesystem", fs_name);
        r.method = Some(yamba_results::results::Method {
            // Kept as counted, even 0 (`Method::direct` would raise 0 to 1).
            iterations: reference.passes,
            base_subtracted_ns: Some(ctx.base_ns()),
            ..yamba_results::results::Method::direct(
                reference.passes,
                0.0,
                0.0,
                0.0,
                format!(
                    "each observation times {} whole pass(es) of {} bytes",
                    reference.passes, reference.pass_bytes
                ),
            )
        });
        r.series = Some(Series {
            x_label: "file size".into(),
            x_unit: "B".into(),
            y_label: if latency {
                "time per read"
            } else {
                "read bandwidth"
            }
            .into(),
            y_unit: if latency { "ns" } else { "GB/s" }.into(),
            log_x: true,
            log_y: true,
            points: if latency {
                lat_points.clone()
            } else {
                bw_points.clone()
            },
        });
        r.extra.insert("table".into(), json!(table));
        add_evidence(&mut r, caching, &rows);
        if caching == Caching::Evicted {
            r.warn("O_DIRECT refused here: uncached passes are buffered reads after evicting the file (readahead included)");
        }
        if caching != Caching::Cached && ctx.machine().hypervisor.is_some() {
            r.add_note_evidence(
                "reads reached a physical device",
                "no cache below this kernel",
                "virtual machine: the host may serve the virtual disk from its own cache",
                false,
            );
        }
        ctx.push(r);
    }
}

/// Where the bytes came from, checked over every point.
fn add_evidence(r: &mut BenchResult, caching: Caching, rows: &[(u64, usize, Point)]) {
    let short = rows
        .iter()
        .filter(|(_, _, p)| p.tally.bytes != p.pass_bytes * p.passes * p.gbps.len() as u64)
        .count();
    r.add_evidence(
        "every pass read exactly the bytes it asked for",
        "file size (sequential) or the blocks chosen (random) per pass",
        format!("{short} of {} points differ", rows.len()),
        short == 0,
    );
    let storage: Vec<(u64, u64)> = rows
        .iter()
        .filter_map(|(_, _, p)| p.storage_bytes.map(|s| (s, p.tally.bytes)))
        .collect();
    if storage.len() < rows.len() {
        r.add_note_evidence(
            "bytes fetched from storage (/proc/self/io)",
            "available",
            "not available (no task I/O accounting)",
            false,
        );
    }
    let fetched: u64 = storage.iter().map(|s| s.0).sum();
    let read: u64 = storage.iter().map(|s| s.1).sum();
    match caching {
        Caching::Cached => {
            let min_res = rows.iter().map(|(_, _, p)| p.resident).fold(1.0, f64::min);
            r.add_evidence(
                "each file was wholly in the page cache before timing (mincore)",
                "100% of pages resident",
                format!("lowest {:.1}%", 100.0 * min_res),
                min_res >= 1.0,
            );
            r.add_evidence(
                "cached passes fetched nothing from storage",
                "0 bytes",
                format!("{fetched} bytes while reading {read}"),
                fetched <= read / 1000,
            );
        }
        Caching::Direct | Caching::Evicted => {
            let max_res = rows.iter().map(|(_, _, p)| p.resident).fold(0.0, f64::max);
            let (check, need) = if caching == Caching::Direct {
                (
                    "O_DIRECT passes left none of the file in the page cache (mincore)",
                    "0%",
                )
            } else {
                (
                    "every pass started with none of the file in the page cache (mincore)",
                    "0%",
                )
            };
            r.add_evidence(
                check,
                need,
                format!("at most {:.1}%", 100.0 * max_res),
                max_res == 0.0,
            );
            // Buffered reads after eviction may be served partly by readahead.
            let need = if caching == Caching::Direct {
                read
            } else {
                read / 2
            };
            r.add_evidence(
                "uncached passes fetched what they read from storage",
                format!("≥ {need} bytes"),
                format!("{fetched} bytes"),
                storage.is_empty() || fetched >= need,
            );
        }
    }
}
