//! P = overwrite a file in blocks (lmbench's lmdd, sysbench fileio),
//! sequentially (`fs.write.seq`) or at distinct random block offsets
//! (`fs.write.random`), by file and block size, four ways:
//! `.buffered` (write(2) into the page cache of a cached file),
//! `.buffered.fsync` (the same, fsync(2) ending each pass, timed),
//! `.direct` (O_DIRECT, to the device) and `.direct.fsync`. Each has its
//! bandwidth (GB/s) and, as `.latency`, the time per write call.
//!
//! What is claimed is checked: a buffered file stays wholly cached
//! (mincore); O_DIRECT leaves none of it cached; where a variant claims the
//! bytes reached the device (O_DIRECT, fsync), the block device behind the
//! scratch directory (its sysfs counters) wrote at least as many sectors
//! while the passes were timed — where no such device can be found the
//! claim is withheld, saying why; and every block written reads back as
//! written. Hot only: a write has no cold cache to miss; the device-bound
//! cases are `.direct` and `.fsync`.

use super::adapter::{self, BlockDevice};
use super::files::{self, ALIGN};
use super::point::{self, Pattern};
use super::write_point::{self, Point, Sink, Spec};
use serde_json::json;
use std::fs::File;
use std::path::Path;
use std::time::Duration;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Kind, Series, Setting, Status, Unit};

/// `--set fs.write_size`: the largest file written, the headline's.
pub const WRITE_SIZE: Setting = Setting {
    key: "fs.write_size",
    kind: Kind::Bytes {
        min: 64 << 10,
        max: 1 << 40,
    },
    default: "8 MiB",
    help: "largest file fs.write.* overwrites (the headline's); smaller files are 64 KiB and 1 MiB",
    aliases: &[],
};

pub static SEQ: Benchmark = Benchmark {
    id: "fs.write.seq",
    area: "fs",
    unit: Unit::GigabytesPerSecond,
    description: "sequential file overwrite: bandwidth and time per block, by file and block size; buffered and O_DIRECT, with and without fsync",
    adapter: adapter::NAME,
    timeout_s: 400,
    run: |ctx| run(ctx, Pattern::Seq),
    settings: &[WRITE_SIZE],
    cold: Cold::NotMeaningful(
        "a write has no cold cache to miss: .direct and .fsync are the device-bound cases",
    ),
    ..Benchmark::TEMPLATE
};

pub static RANDOM: Benchmark = Benchmark {
    id: "fs.write.random",
    area: "fs",
    unit: Unit::GigabytesPerSecond,
    description: "random-offset file overwrite: bandwidth and time per block, by file and block size; buffered and O_DIRECT, with and without fsync",
    adapter: adapter::NAME,
    timeout_s: 400,
    run: |ctx| run(ctx, Pattern::Random),
    settings: &[WRITE_SIZE],
    cold: Cold::NotMeaningful(
        "a write has no cold cache to miss: .direct and .fsync are the device-bound cases",
    ),
    ..Benchmark::TEMPLATE
};

/// The block size of the headline (fs.read's).
pub const REF_BLOCK: usize = super::read::REF_BLOCK;

/// The largest file by default: 4 KiB O_DIRECT writes run at about
/// 0.09 GB/s on this project's guest, so a pass of 8 MiB is 0.1 s.
pub const DEFAULT_SIZE: u64 = 8 << 20;

/// File sizes written, up to `largest`.
pub fn sizes(quick: bool, largest: u64) -> Vec<u64> {
    let smaller: &[u64] = if quick {
        &[1 << 20]
    } else {
        &[64 << 10, 1 << 20]
    };
    let mut v: Vec<u64> = smaller.iter().copied().filter(|&s| s < largest).collect();
    v.push(largest);
    v
}

/// Block sizes written to a file of `size` bytes (none larger than it).
pub fn blocks(quick: bool, size: u64) -> Vec<usize> {
    let all: &[usize] = if quick {
        &[4 << 10, REF_BLOCK, 64 << 10]
    } else {
        &[4 << 10, REF_BLOCK, 64 << 10, 256 << 10]
    };
    all.iter().copied().filter(|&b| b as u64 <= size).collect()
}

/// Random passes write at most this many distinct blocks.
fn random_writes(quick: bool) -> usize {
    if quick {
        256
    } else {
        1024
    }
}

/// One way of writing: where the bytes go, and whether fsync ends a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub sink: Sink,
    pub fsync: bool,
}

pub const VARIANTS: [Variant; 4] = [
    Variant {
        sink: Sink::Buffered,
        fsync: false,
    },
    Variant {
        sink: Sink::Buffered,
        fsync: true,
    },
    Variant {
        sink: Sink::Direct,
        fsync: false,
    },
    Variant {
        sink: Sink::Direct,
        fsync: true,
    },
];

impl Variant {
    /// The result id's suffix.
    pub fn label(self) -> &'static str {
        match (self.sink, self.fsync) {
            (Sink::Buffered, false) => "buffered",
            (Sink::Buffered, true) => "buffered.fsync",
            (Sink::Direct, false) => "direct",
            (Sink::Direct, true) => "direct.fsync",
        }
    }

    /// The bytes are claimed to have reached the device when a pass ends.
    pub fn claims_device(self) -> bool {
        self.sink == Sink::Direct || self.fsync
    }
}

/// Whether O_DIRECT writes work in `dir`: Err says why not (EINVAL).
fn direct_writes(dir: &Path, fs_name: &str) -> Result<(), String> {
    let probe = dir.join("direct-write-probe");
    files::write_file(&probe, ALIGN as u64)
        .map_err(|e| format!("cannot write a probe file: {e}"))?;
    let outcome = match adapter::open_direct_write(&probe) {
        Ok(Some(f)) => {
            let mut buf = files::AlignedBuf::new(ALIGN);
            match std::os::unix::fs::FileExt::write_at(&f, buf.as_mut_slice(), 0) {
                Ok(n) if n == ALIGN => Ok(()),
                Ok(n) => Err(format!("an O_DIRECT write of {ALIGN} bytes wrote {n}")),
                Err(e) => Err(format!("O_DIRECT write refused on {fs_name}: {e}")),
            }
        }
        Ok(None) => Err(format!("O_DIRECT refused (EINVAL) on {fs_name}")),
        Err(e) => Err(format!("cannot open a probe file with O_DIRECT: {e}")),
    };
    let _ = std::fs::remove_file(&probe);
    outcome
}

fn open_for(path: &Path, sink: Sink) -> std::io::Result<File> {
    match sink {
        Sink::Buffered => std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path),
        Sink::Direct => adapter::open_direct_write(path)?.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::Unsupported, "O_DIRECT refused (EINVAL)")
        }),
    }
}

/// A measured point with what one pass had to write.
pub struct Row {
    pub size: u64,
    pub block: usize,
    pub expected_pass_bytes: u64,
    pub point: Point,
}

fn run(ctx: &mut Ctx, pattern: Pattern) -> Result<(), String> {
    let quick = ctx.quick();
    let dir = ctx.scratch_dir().to_path_buf();
    let fs = adapter::fs_kind(&dir).map_err(|e| format!("statfs {}: {e}", dir.display()))?;
    let largest = ctx.bytes(WRITE_SIZE.key)?.unwrap_or(DEFAULT_SIZE);
    let device = adapter::block_device(&dir);
    let direct = if fs.memory_only {
        Err(format!(
            "scratch directory {} is on {}: file data lives only in memory, nothing \
             reaches a device (use --scratch on a disk-backed filesystem)",
            dir.display(),
            fs.name
        ))
    } else {
        direct_writes(&dir, fs.name)
    };
    // A precise run's replicating blocks write only the headline point:
    // the largest file at REF_BLOCK (or its largest block, when smaller).
    let curve = ctx.measures_curve();
    let mut paths = Vec::new();
    let measured_sizes = if curve {
        sizes(quick, largest)
    } else {
        vec![largest]
    };
    for size in measured_sizes {
        let path = dir.join(format!("write-{size}"));
        files::write_file(&path, size)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        paths.push((size, path));
    }
    for variant in VARIANTS {
        let unavailable = match (variant.sink, variant.fsync) {
            (Sink::Direct, _) => direct.as_ref().err().cloned(),
            (Sink::Buffered, true) if fs.memory_only => Some(format!(
                "{} keeps file data only in memory: fsync has no device to write to",
                fs.name
            )),
            _ => None,
        };
        if let Some(why) = unavailable {
            for suffix in [
                variant.label().to_string(),
                format!("{}.latency", variant.label()),
            ] {
                let mut r = ctx.result(Some(&suffix));
                r.status = Status::Skipped;
                r.reason = Some(why.clone());
                ctx.push(r);
            }
            continue;
        }
        let mut rows = Vec::new();
        for (size, path) in &paths {
            let file = open_for(path, variant.sink)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            let mut block_sizes = blocks(quick, *size);
            if !curve {
                let head = block_sizes
                    .iter()
                    .copied()
                    .find(|&b| b == REF_BLOCK)
                    .or(block_sizes.last().copied());
                block_sizes = head.into_iter().collect();
            }
            for block in block_sizes {
                let offsets =
                    files::random_offsets(*size, block, random_writes(quick), 0x3717 ^ *size);
                let expected_pass_bytes = match pattern {
                    Pattern::Seq => *size,
                    Pattern::Random => offsets.iter().map(|&o| (*size - o).min(block as u64)).sum(),
                };
                let spec = Spec {
                    file: &file,
                    path,
                    size: *size,
                    block,
                    pattern,
                    sink: variant.sink,
                    fsync: variant.fsync,
                    offsets: &offsets,
                    device: device.as_ref().ok(),
                    // Amounts: a quick pass's, at this block's effort.
                    target_ns: 1e6 * ctx.effort(),
                    min_obs: ctx.scaled(3),
                    max_obs: ctx.scaled(10),
                    budget: ctx.scaled_time(Duration::from_millis(30)),
                };
                let point = write_point::measure(ctx.clock(), ctx.base_ns(), &spec)?;
                rows.push(Row {
                    size: *size,
                    block,
                    expected_pass_bytes,
                    point,
                });
            }
        }
        push_results(ctx, pattern, variant, fs.name, &device, rows);
    }
    Ok(())
}

/// Builds the bandwidth and latency results of one variant from its points.
fn push_results(
    ctx: &mut Ctx,
    pattern: Pattern,
    variant: Variant,
    fs_name: &str,
    device: &Result<BlockDevice, String>,
    rows: Vec<Row>,
) {
    let table: Vec<_> = rows
        .iter()
        .map(|r| {
            let p = &r.point;
            json!({
                "file_bytes": r.size,
                "block_bytes": r.block,
                "gbps": point::median(&p.gbps),
                "ns_per_block": point::median(&p.ns_per_block),
                "cv": point::cv(&p.gbps),
                "observations": p.gbps.len(),
                "passes_per_observation": p.passes,
                "bytes_per_pass": p.pass_bytes,
                "bytes_written": p.tally.bytes,
                "device_sectors_written": p.device_sectors,
                "device_flushes": p.device_flushes,
                "resident_before": p.resident_before,
                "resident_after": p.resident_after,
                "blocks_not_read_back": p.readback_bad,
            })
        })
        .collect();
    let Some(ref_size) = rows.iter().map(|r| r.size).max() else {
        return;
    };
    let at_ref: Vec<&Row> = rows.iter().filter(|r| r.size == ref_size).collect();
    let Some(reference) = at_ref
        .iter()
        .find(|r| r.block == REF_BLOCK)
        .or_else(|| at_ref.last())
    else {
        return;
    };
    let curve = |f: &dyn Fn(&Point) -> f64| -> Vec<[f64; 2]> {
        at_ref
            .iter()
            .map(|r| [r.block as f64, f(&r.point)])
            .collect()
    };
    let order = match pattern {
        Pattern::Seq => "sequential",
        Pattern::Random => "random",
    };
    let label = variant.label();
    for latency in [false, true] {
        let mut r = ctx.result(Some(&if latency {
            format!("{label}.latency")
        } else {
            label.to_string()
        }));
        let p = &reference.point;
        r.set_observations(if latency {
            p.ns_per_block.clone()
        } else {
            p.gbps.clone()
        });
        if latency {
            r.unit = Unit::Nanoseconds;
        }
        r.param("file_bytes", ref_size)
            .param("block_bytes", reference.block)
            .param("order", order)
            .param("sink", variant.sink.as_str())
            .param("fsync", if variant.fsync { "each pass" } else { "none" })
            .param("filesystem", fs_name);
        if let Ok(d) = device {
            r.param("device", format!("{} ({})", d.name, d.kind));
        }
        r.method = Some(yamba_results::results::Method {
            iterations: p.passes,
            base_subtracted_ns: Some(ctx.base_ns()),
            ..yamba_results::results::Method::direct(
                p.passes,
                0.0,
                0.0,
                0.0,
                format!(
                    "each observation times {} whole pass(es) of {} bytes{}",
                    p.passes,
                    p.pass_bytes,
                    if variant.fsync {
                        ", each ended by fsync"
                    } else {
                        ""
                    }
                ),
            )
        });
        r.series = Some(Series {
            x_label: "block size".into(),
            x_unit: "B".into(),
            y_label: if latency {
                "time per write"
            } else {
                "write bandwidth"
            }
            .into(),
            y_unit: if latency { "ns" } else { "GB/s" }.into(),
            log_x: true,
            log_y: true,
            points: if latency {
                curve(&|p| point::median(&p.ns_per_block))
            } else {
                curve(&|p| point::median(&p.gbps))
            },
        });
        r.extra.insert("table".into(), json!(table));
        add_evidence(&mut r, variant, device, &rows);
        if variant.claims_device() && ctx.machine().hypervisor.is_some() {
            r.add_note_evidence(
                "writes reached a physical device",
                "no cache below this kernel",
                "virtual machine: the host may keep the virtual disk's writes in its own cache",
                false,
            );
        }
        ctx.push(r);
    }
}

/// Where the bytes went, checked over every point.
fn add_evidence(
    r: &mut BenchResult,
    variant: Variant,
    device: &Result<BlockDevice, String>,
    rows: &[Row],
) {
    let short = rows
        .iter()
        .filter(|w| {
            let p = &w.point;
            p.pass_bytes != w.expected_pass_bytes
                || p.tally.bytes != w.expected_pass_bytes * p.passes * p.gbps.len() as u64
        })
        .count();
    r.add_evidence(
        "every pass wrote exactly the bytes it asked for",
        "file size (sequential) or the blocks chosen (random) per pass",
        format!("{short} of {} points differ", rows.len()),
        short == 0,
    );
    let bad: u64 = rows.iter().map(|w| w.point.readback_bad).sum();
    r.add_evidence(
        "every block written reads back as written",
        "0 blocks differ",
        format!("{bad} blocks differ"),
        bad == 0,
    );
    match variant.sink {
        Sink::Buffered => {
            let lowest = rows
                .iter()
                .map(|w| w.point.resident_before.min(w.point.resident_after))
                .fold(1.0, f64::min);
            r.add_evidence(
                "the file was wholly in the page cache before and after the writes (mincore)",
                "100% of pages resident",
                format!("lowest {:.1}%", 100.0 * lowest),
                lowest >= 1.0,
            );
        }
        Sink::Direct => {
            let highest = rows
                .iter()
                .map(|w| w.point.resident_before.max(w.point.resident_after))
                .fold(0.0, f64::max);
            r.add_evidence(
                "O_DIRECT writes left none of the file in the page cache (mincore)",
                "0%",
                format!("at most {:.1}%", 100.0 * highest),
                highest == 0.0,
            );
        }
    }
    if !variant.claims_device() {
        r.add_note_evidence(
            "the bytes reached the device",
            "not claimed",
            "buffered without fsync: the kernel writes them back later, outside the timing",
            true,
        );
        return;
    }
    let written: u64 = rows.iter().map(|w| w.point.tally.bytes).sum();
    let sectors: Option<u64> = rows.iter().map(|w| w.point.device_sectors).sum();
    match (device, sectors) {
        (Ok(d), Some(sectors)) => {
            r.add_evidence(
                format!(
                    "the block device {} wrote at least the bytes written while the passes were timed (sysfs sectors written)",
                    d.name
                ),
                format!("≥ {} sectors of 512 bytes", written.div_ceil(512)),
                format!(
                    "{sectors} sectors ({:.2}× the bytes written)",
                    sectors as f64 * 512.0 / written.max(1) as f64
                ),
                sectors * 512 >= written,
            );
            if variant.fsync {
                let flushes: Option<u64> = rows.iter().map(|w| w.point.device_flushes).sum();
                let passes: u64 = rows
                    .iter()
                    .map(|w| w.point.passes * w.point.gbps.len() as u64)
                    .sum();
                r.add_note_evidence(
                    "fsync flushed the device's write cache",
                    format!(
                        "a flush per pass where the cache is \"write back\" ({})",
                        d.write_cache.as_deref().unwrap_or("unknown")
                    ),
                    match flushes {
                        Some(f) => format!("{f} flushes over {passes} passes"),
                        None => "no flush counter (kernel before 5.5)".into(),
                    },
                    flushes.is_some_and(|f| f >= passes),
                );
            }
        }
        (Ok(d), None) => {
            r.add_note_evidence(
                "the bytes reached the block device",
                "its sectors-written counter",
                format!(
                    "cannot read {}'s counters: device-level claim withheld",
                    d.name
                ),
                false,
            );
            r.warn(format!(
                "device-level claim withheld: {}'s counters could not be read",
                d.name
            ));
        }
        (Err(why), _) => {
            r.add_note_evidence(
                "the bytes reached the block device",
                "its sectors-written counter",
                format!("not checked: {why}"),
                false,
            );
            r.warn(format!("device-level claim withheld: {why}"));
        }
    }
}
