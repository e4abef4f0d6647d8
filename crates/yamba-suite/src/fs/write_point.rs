//! One point of a file-write curve: a file of one size overwritten in
//! blocks of one size, sequentially or at random, into the page cache or
//! around it (O_DIRECT), with or without an fsync ending each pass; timed
//! pass by pass, with what the kernel says about where the bytes went
//! (page-cache residency, the block device's sectors written) and the
//! file read back afterwards.

use super::adapter::{self, BlockDevice};
use super::files::{AlignedBuf, Tally};
use super::point::Pattern;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};
use yamba_core::Clock;

/// The byte every write stores. The scratch files' own pattern
/// (`files::write_file`) runs from 1 to 251, so a block that reads back as
/// all `FILL` was written by the benchmark.
pub const FILL: u8 = 0xFE;

/// Where written bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// write(2) into the page cache of a file already cached.
    Buffered,
    /// O_DIRECT: from the buffer to the device, around the page cache.
    Direct,
}

impl Sink {
    pub fn as_str(self) -> &'static str {
        match self {
            Sink::Buffered => "page cache",
            Sink::Direct => "O_DIRECT",
        }
    }
}

/// What to measure and for how long.
pub struct Spec<'a> {
    /// Opened for writing the `sink` way.
    pub file: &'a File,
    /// The same file's path, to read it back through the page cache.
    pub path: &'a Path,
    pub size: u64,
    pub block: usize,
    pub pattern: Pattern,
    pub sink: Sink,
    /// fsync(2) ends every pass (timed with it).
    pub fsync: bool,
    /// Random: block offsets of one pass.
    pub offsets: &'a [u64],
    /// The device whose counters are read around the timed passes.
    pub device: Option<&'a BlockDevice>,
    /// Shortest observation, in ns (passes are repeated to reach it).
    pub target_ns: f64,
    pub min_obs: usize,
    pub max_obs: usize,
    pub budget: Duration,
}

/// Observations of one point and the evidence gathered while taking them.
#[derive(Debug, Clone, Default)]
pub struct Point {
    /// Bandwidth of each observation, GB/s.
    pub gbps: Vec<f64>,
    /// Mean time per write call of each observation (fsync included), ns.
    pub ns_per_block: Vec<f64>,
    /// Passes per observation.
    pub passes: u64,
    /// Everything the timed passes wrote.
    pub tally: Tally,
    /// What one pass must write.
    pub pass_bytes: u64,
    /// Sectors (512 bytes) the device wrote while the passes were timed.
    pub device_sectors: Option<u64>,
    /// Flushes the device completed while the passes were timed.
    pub device_flushes: Option<u64>,
    /// Share of the file in the page cache before the first timed pass.
    pub resident_before: f64,
    /// … and after the last one.
    pub resident_after: f64,
    /// Blocks written that did not read back as [`FILL`].
    pub readback_bad: u64,
}

/// Writes the whole file of `size` bytes sequentially in `block`-byte
/// calls at known offsets. Err on any short write.
pub fn seq_write_pass(file: &File, size: u64, block: usize, buf: &[u8]) -> io::Result<Tally> {
    let mut t = Tally::default();
    let mut off = 0u64;
    while off < size {
        let want = (size - off).min(block as u64) as usize;
        t.bytes += write_block(file, &buf[..want], off)? as u64;
        t.calls += 1;
        off += block as u64;
    }
    Ok(t)
}

/// Writes one `block` at each of `offsets` (block-aligned, inside the file).
pub fn random_write_pass(
    file: &File,
    size: u64,
    block: usize,
    offsets: &[u64],
    buf: &[u8],
) -> io::Result<Tally> {
    let mut t = Tally::default();
    for &off in offsets {
        let want = (size - off).min(block as u64) as usize;
        t.bytes += write_block(file, &buf[..want], off)? as u64;
        t.calls += 1;
    }
    Ok(t)
}

fn write_block(file: &File, buf: &[u8], off: u64) -> io::Result<usize> {
    let got = file.write_at(buf, off)?;
    if got != buf.len() {
        return Err(io::Error::other(format!(
            "write at offset {off} wrote {got} bytes, expected {}",
            buf.len()
        )));
    }
    Ok(got)
}

fn one_pass(s: &Spec, buf: &[u8]) -> io::Result<Tally> {
    let t = match s.pattern {
        Pattern::Seq => seq_write_pass(s.file, s.size, s.block, buf)?,
        Pattern::Random => random_write_pass(s.file, s.size, s.block, s.offsets, buf)?,
    };
    if s.fsync {
        s.file.sync_all()?;
    }
    Ok(t)
}

fn device_now(s: &Spec) -> Option<adapter::DeviceIo> {
    s.device.and_then(|d| adapter::device_io(d).ok())
}

/// Times passes over the file until `min_obs` observations and the budget
/// are reached (or `max_obs`), then reads the written blocks back.
pub fn measure(clock: &Clock, base_ns: f64, s: &Spec) -> Result<Point, String> {
    let io = |e: io::Error| format!("writing a {}-byte file: {e}", s.size);
    let mut buf = AlignedBuf::new(s.block);
    buf.as_mut_slice().fill(FILL);
    let buf = &buf.as_mut_slice()[..s.block];
    let mut p = Point::default();
    match s.sink {
        // Overwrite a cached file: no read of the device under a partial write.
        Sink::Buffered => {
            let mut rbuf = AlignedBuf::new(1 << 16);
            let reader = File::open(s.path).map_err(io)?;
            super::files::seq_pass(&reader, s.size, 1 << 16, &mut rbuf).map_err(io)?;
        }
        // Nothing of the file cached: what is found cached afterwards was
        // put there by the writes.
        Sink::Direct => adapter::evict(s.file).map_err(io)?,
    }
    // Passes per observation: enough to last target_ns; the first pass
    // calibrates, untimed as it may include first-touch costs.
    let t0 = clock.start();
    one_pass(s, buf).map_err(io)?;
    let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0)).max(1.0);
    p.passes = ((s.target_ns / ns).ceil() as u64).clamp(1, 1 << 20);
    p.resident_before = super::files::resident_fraction(s.file, s.size).map_err(io)?;
    let (mut sectors, mut flushes) = (Some(0u64), Some(0u64));
    let started = Instant::now();
    while p.gbps.len() < s.max_obs && (p.gbps.len() < s.min_obs || started.elapsed() < s.budget) {
        if s.sink == Sink::Buffered && !s.fsync {
            // Untimed: each observation starts from clean cached pages, and
            // dirty data stays far below the kernel's writeback thresholds.
            s.file.sync_data().map_err(io)?;
        }
        let dev0 = device_now(s);
        let mut t = Tally::default();
        let t0 = clock.start();
        for _ in 0..p.passes {
            let one = one_pass(s, buf).map_err(io)?;
            t.bytes += one.bytes;
            t.calls += one.calls;
        }
        let ns = (clock.ticks_to_ns(clock.stop().wrapping_sub(t0)) - base_ns).max(1.0);
        let dev1 = device_now(s);
        match (dev0, dev1) {
            (Some(a), Some(b)) => {
                sectors = sectors.map(|x| x + b.sectors_written.saturating_sub(a.sectors_written));
                flushes = match (flushes, a.flushes, b.flushes) {
                    (Some(x), Some(fa), Some(fb)) => Some(x + fb.saturating_sub(fa)),
                    _ => None,
                };
            }
            _ => (sectors, flushes) = (None, None),
        }
        p.pass_bytes = t.bytes / p.passes;
        p.tally.bytes += t.bytes;
        p.tally.calls += t.calls;
        p.gbps.push(t.bytes as f64 / ns);
        p.ns_per_block.push(ns / t.calls.max(1) as f64);
    }
    p.device_sectors = sectors.filter(|_| s.device.is_some());
    p.device_flushes = flushes.filter(|_| s.device.is_some());
    p.resident_after = super::files::resident_fraction(s.file, s.size).map_err(io)?;
    p.readback_bad = read_back(s).map_err(io)?;
    // Leave nothing dirty behind for the next point's device counters.
    s.file.sync_all().map_err(io)?;
    Ok(p)
}

/// Blocks written by the passes that do not read back as [`FILL`] through
/// a plain descriptor (after O_DIRECT writes, from the device itself: the
/// file was out of the cache).
fn read_back(s: &Spec) -> io::Result<u64> {
    let f = File::open(s.path)?;
    let mut buf = vec![0u8; s.block];
    let all: Vec<u64>;
    let offsets = match s.pattern {
        Pattern::Seq => {
            all = (0..s.size.div_ceil(s.block as u64))
                .map(|i| i * s.block as u64)
                .collect();
            &all[..]
        }
        Pattern::Random => s.offsets,
    };
    let mut bad = 0;
    for &off in offsets {
        let want = (s.size - off).min(s.block as u64) as usize;
        f.read_exact_at(&mut buf[..want], off)?;
        if buf[..want].iter().any(|&b| b != FILL) {
            bad += 1;
        }
    }
    Ok(bad)
}
