//! P = read a cached file again and sum its words (lmbench's bw_file_rd
//! and bw_mmap_rd): `fs.reread.read` (read(2) in 64 KiB blocks, lmbench's
//! XFERSIZE, each block summed), `fs.reread.mmap` (the file mapped once,
//! its words summed in place: lmbench's "Mmap reread"), and each
//! `.open2close`: the file opened (and mapped) and closed (and unmapped)
//! every pass, lmbench's open2close.
//!
//! Summing makes every byte count and proves it was read: each pass's sum
//! must equal the sum of the known pattern the file was written with. The
//! file must be wholly in the page cache before and after (mincore), no
//! pass may take a major fault, and passes over the mapping kept open may
//! take no fault at all (the first, untimed pass mapped every page). Hot
//! only: a cold reread is `fs.read.seq.uncached`.

use super::adapter;
use super::files::{self, AlignedBuf, PATTERN_PERIOD};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};
use yamba_core::{Benchmark, Cold, Ctx, Kind, Setting, Unit};

/// `--set fs.reread_size`: the file reread.
pub const SIZE: Setting = Setting {
    key: "fs.reread_size",
    kind: Kind::Bytes {
        min: 64 << 10,
        max: 1 << 40,
    },
    default: "64 MiB (16 MiB in a quick run)",
    help: "size of the cached file fs.reread.* reads (a multiple of 64 KiB)",
    aliases: &[],
};

pub static REREAD: Benchmark = Benchmark {
    id: "fs.reread",
    area: "fs",
    unit: Unit::GigabytesPerSecond,
    description: "reread a cached file, summing its words: read(2) in 64 KiB blocks and through a mapping, each also opening (and mapping) and closing the file every pass",
    adapter: adapter::NAME,
    run,
    settings: &[SIZE],
    cold: Cold::NotMeaningful(
        "a cold read of the file is fs.read.seq's .uncached result; this one measures the cached path",
    ),
    ..Benchmark::TEMPLATE
};

/// lmbench's XFERSIZE: the block of `bw_file_rd`.
pub const BLOCK: usize = 64 << 10;

/// How a pass gets at the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// read(2) in [`BLOCK`]s from a descriptor opened once.
    Read,
    /// open, read in blocks, close, every pass.
    ReadOpen2Close,
    /// Sum in place through a mapping made once.
    Mmap,
    /// open, mmap, sum, munmap, close, every pass.
    MmapOpen2Close,
}

impl Access {
    pub const ALL: [Access; 4] = [
        Access::Read,
        Access::ReadOpen2Close,
        Access::Mmap,
        Access::MmapOpen2Close,
    ];

    /// The result id's suffix.
    pub fn suffix(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::ReadOpen2Close => "read.open2close",
            Access::Mmap => "mmap",
            Access::MmapOpen2Close => "mmap.open2close",
        }
    }

    fn maps(self) -> bool {
        matches!(self, Access::Mmap | Access::MmapOpen2Close)
    }
}

/// The wrapping sum of a buffer's 64-bit words (native order), as
/// mem.bandwidth.read sums: the compiler may vectorise it. Never inlined:
/// a loop this short runs at a speed set by where its code falls (the same
/// one-line sum read L1 at 110 or 58 GB/s by its address on Zen 4), so
/// every caller — each access pattern here, and a test timing the same
/// sum — runs this one copy, not one compiled into each.
#[inline(never)]
pub fn word_sum(bytes: &[u8]) -> u64 {
    // Every buffer and mapping here is page-aligned with a length that is
    // a multiple of 8: no prefix or suffix.
    let (head, words, tail) = {
        // SAFETY: u64 has no invalid bit patterns; align_to splits off
        // any unaligned ends.
        unsafe { bytes.align_to::<u64>() }
    };
    let ends = head.iter().chain(tail).map(|&b| b as u64);
    words
        .iter()
        .fold(0u64, |s, &w| s.wrapping_add(w))
        .wrapping_add(ends.fold(0u64, |s, b| s.wrapping_add(b)))
}

/// The word sum a file of `size` bytes (a multiple of 8) written by
/// `files::write_file` must have, computed from the pattern, not the file.
pub fn expected_sum(size: u64) -> u64 {
    let period: Vec<u8> = (0..PATTERN_PERIOD).map(files::pattern_byte).collect();
    let whole = size / PATTERN_PERIOD;
    let rest = (size % PATTERN_PERIOD) as usize;
    word_sum(&period)
        .wrapping_mul(whole)
        .wrapping_add(word_sum(&period[..rest]))
}

/// One pass: the file's word sum, got the `access` way.
fn pass(
    access: Access,
    path: &Path,
    open: &File,
    map: Option<&adapter::FileMap>,
    size: u64,
    buf: &mut AlignedBuf,
) -> std::io::Result<u64> {
    match access {
        Access::Read => read_sum(open, size, buf),
        Access::ReadOpen2Close => read_sum(&File::open(path)?, size, buf),
        Access::Mmap => Ok(word_sum(map.expect("mapped once").as_slice())),
        Access::MmapOpen2Close => {
            let f = File::open(path)?;
            let m = adapter::map_file(&f, size as usize)?;
            Ok(word_sum(m.as_slice()))
        }
    }
}

fn read_sum(f: &File, size: u64, buf: &mut AlignedBuf) -> std::io::Result<u64> {
    let buf = &mut buf.as_mut_slice()[..BLOCK];
    let (mut off, mut sum) = (0u64, 0u64);
    while off < size {
        let want = (size - off).min(BLOCK as u64) as usize;
        f.read_exact_at(&mut buf[..want], off)?;
        sum = sum.wrapping_add(word_sum(&buf[..want]));
        off += want as u64;
    }
    Ok(sum)
}

fn run(ctx: &mut Ctx) -> Result<(), String> {
    let default = if ctx.quick() { 16 << 20 } else { 64 << 20 };
    let size = ctx.bytes(SIZE.key)?.unwrap_or(default);
    if size % BLOCK as u64 != 0 {
        return Err(format!("{}={size}: not a multiple of 64 KiB", SIZE.key));
    }
    let path = ctx.scratch_dir().join("reread");
    let open = files::write_file(&path, size)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let expected = expected_sum(size);
    let io = |e: std::io::Error| format!("rereading a {size}-byte file: {e}");
    let mut buf = AlignedBuf::new(BLOCK);
    for access in Access::ALL {
        // Untimed first pass: caches the file and, mapped once, maps every page.
        let map = if access == Access::Mmap {
            Some(adapter::map_file(&open, size as usize).map_err(io)?)
        } else {
            None
        };
        let first = pass(access, &path, &open, map.as_ref(), size, &mut buf).map_err(io)?;
        let resident_before = files::resident_fraction(&open, size).map_err(io)?;
        let t0 = ctx.clock().start();
        pass(access, &path, &open, map.as_ref(), size, &mut buf).map_err(io)?;
        let one = ctx
            .clock()
            .ticks_to_ns(ctx.clock().stop().wrapping_sub(t0))
            .max(1.0);
        let passes = ((1e6 * ctx.effort() / one).ceil() as u64).clamp(1, 1 << 20);
        let (min_obs, max_obs) = (ctx.scaled(5), ctx.scaled(30));
        let budget = ctx.scaled_time(Duration::from_millis(100));
        // Allocated up front: a growing vector's fresh heap pages would be
        // faults of our own, not the file's.
        let mut gbps = Vec::with_capacity(max_obs);
        let (mut wrong_sums, mut total_passes, mut minor, mut major) = (0u64, 0u64, 0, 0);
        let started = Instant::now();
        while gbps.len() < max_obs && (gbps.len() < min_obs || started.elapsed() < budget) {
            let faults0 = adapter::page_faults();
            let t0 = ctx.clock().start();
            for _ in 0..passes {
                let s = pass(access, &path, &open, map.as_ref(), size, &mut buf).map_err(io)?;
                wrong_sums += u64::from(s != expected);
            }
            let ns = (ctx.clock().ticks_to_ns(ctx.clock().stop().wrapping_sub(t0)) - ctx.base_ns())
                .max(1.0);
            let faults1 = adapter::page_faults();
            minor += faults1.0 - faults0.0;
            major += faults1.1 - faults0.1;
            total_passes += passes;
            gbps.push((passes * size) as f64 / ns);
        }
        let resident_after = files::resident_fraction(&open, size).map_err(io)?;

        let mut r = ctx.result(Some(access.suffix()));
        r.set_observations(gbps);
        r.param("file_bytes", size).param(
            "filesystem",
            adapter::fs_kind(ctx.scratch_dir()).map_or("?", |k| k.name),
        );
        if !access.maps() {
            r.param("block_bytes", BLOCK);
        }
        r.method = Some(yamba_results::results::Method {
            iterations: passes,
            base_subtracted_ns: Some(ctx.base_ns()),
            ..yamba_results::results::Method::direct(
                passes,
                0.0,
                0.0,
                0.0,
                format!("each observation times {passes} whole pass(es) over {size} bytes"),
            )
        });
        r.add_evidence(
            "every pass summed the file's words to the pattern's sum",
            format!("{expected:#x}, {} passes", total_passes + 2),
            format!(
                "{} wrong (first pass {})",
                wrong_sums,
                if first == expected { "right" } else { "wrong" }
            ),
            wrong_sums == 0 && first == expected,
        );
        let lowest = resident_before.min(resident_after);
        r.add_evidence(
            "the file was wholly in the page cache before and after timing (mincore)",
            "100% of pages resident",
            format!("lowest {:.1}%", 100.0 * lowest),
            lowest >= 1.0,
        );
        r.add_evidence(
            "the timed passes took no major page fault",
            "0",
            major.to_string(),
            major == 0,
        );
        match access {
            Access::Mmap => r.add_evidence(
                "passes over the mapping made once took no page fault (getrusage)",
                "0 minor faults",
                format!("{minor} over {total_passes} passes"),
                minor == 0,
            ),
            Access::MmapOpen2Close => r.add_note_evidence(
                "each fresh mapping faults its pages in (fault-around maps several a fault)",
                format!("> 0 per pass, ≤ {} (one per page)", size / 4096),
                format!(
                    "{:.1} minor faults per pass",
                    minor as f64 / total_passes as f64
                ),
                minor >= total_passes,
            ),
            _ => &mut r,
        };
        ctx.push(r);
    }
    Ok(())
}
