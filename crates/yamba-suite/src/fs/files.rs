//! What the file benchmarks share: scratch files of known size and
//! content, aligned buffers (O_DIRECT needs them), and read passes that
//! count every byte so "read the whole file" is checked, not assumed.

use super::adapter;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Said of file creation on an ext4 without a journal (docs/lmbench.md,
/// lat_fs).
pub const NO_JOURNAL: &str = "ext4 without a journal: it skips inodes deleted in the last 1–6 minutes when it allocates one, so a create costs more after recent deletes by any process (a build's too; 830 µs against 12 µs measured on one guest): compare runs after the filesystem has been idle for 6 minutes, or on tmpfs";

/// Warns on a result that creates files in `dir` when `dir` is on an
/// ext4 without a journal, where a create's cost depends on what was
/// deleted there in the last minutes ([`NO_JOURNAL`]).
pub fn say_if_unjournaled(r: &mut yamba_core::BenchResult, dir: &Path) {
    if adapter::ext4_has_journal(dir) == Some(false) {
        r.param("ext4_journal", false).warn(NO_JOURNAL);
    }
}

/// Alignment of buffers, offsets and lengths: enough for O_DIRECT on any
/// device with logical blocks up to 4 KiB.
pub const ALIGN: usize = 4096;

/// A zeroed heap buffer aligned to [`ALIGN`].
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).next_multiple_of(ALIGN);
        let layout = std::alloc::Layout::from_size_align(len, ALIGN).expect("valid layout");
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory allocating {len} bytes");
        AlignedBuf { ptr, len }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr owns len initialised bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, ALIGN).expect("valid layout");
        // SAFETY: allocated with this layout in `new`.
        unsafe { std::alloc::dealloc(self.ptr, layout) };
    }
}

/// Creates (or truncates) `path` with `size` bytes of a non-zero pattern
/// (no holes: every block is really on the device), flushed to it.
pub fn write_file(path: &Path, size: u64) -> io::Result<File> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    append(&mut f, 0, size)?;
    Ok(f)
}

/// The pattern's period: it repeats every MiB.
pub const PATTERN_PERIOD: u64 = 1 << 20;

/// The byte [`write_file`] puts at `offset`: from 1 to 251, never 0.
pub fn pattern_byte(offset: u64) -> u8 {
    ((offset % PATTERN_PERIOD) % 251) as u8 + 1
}

/// Writes bytes `from..to` of the pattern at their offsets and syncs them,
/// so a file can grow by doubling without being rewritten. Each byte is
/// [`pattern_byte`] of its offset when `from` is a multiple of
/// [`PATTERN_PERIOD`] (as in [`write_file`]).
pub fn append(f: &mut File, from: u64, to: u64) -> io::Result<()> {
    let chunk: Vec<u8> = (0..PATTERN_PERIOD).map(pattern_byte).collect();
    let mut off = from;
    while off < to {
        let n = (to - off).min(chunk.len() as u64) as usize;
        f.write_all_at(&chunk[..n], off)?;
        off += n as u64;
        if off.is_multiple_of(16 << 20) {
            // Bounded dirty data: keeps writing sane in a small memory cgroup.
            f.sync_data()?;
        }
    }
    f.flush()?;
    f.sync_all()
}

/// Bytes read and read calls made by one or more passes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub bytes: u64,
    pub calls: u64,
}

/// Reads the whole file of `size` bytes sequentially in `block`-byte
/// calls (pread at known offsets, so no extra call to find the end).
/// Err when any call returns other than the bytes the file holds there.
pub fn seq_pass(file: &File, size: u64, block: usize, buf: &mut AlignedBuf) -> io::Result<Tally> {
    let buf = &mut buf.as_mut_slice()[..block];
    let mut t = Tally::default();
    let mut off = 0u64;
    while off < size {
        let want = (size - off).min(block as u64) as usize;
        let got = file.read_at(buf, off)?;
        if got != want {
            return Err(short_read(off, want, got));
        }
        t.bytes += got as u64;
        t.calls += 1;
        off += block as u64;
    }
    Ok(t)
}

/// Reads one `block` at each of `offsets` (block-aligned, inside the file).
pub fn random_pass(
    file: &File,
    size: u64,
    block: usize,
    offsets: &[u64],
    buf: &mut AlignedBuf,
) -> io::Result<Tally> {
    let buf = &mut buf.as_mut_slice()[..block];
    let mut t = Tally::default();
    for &off in offsets {
        let want = (size - off).min(block as u64) as usize;
        let got = file.read_at(buf, off)?;
        if got != want {
            return Err(short_read(off, want, got));
        }
        t.bytes += got as u64;
        t.calls += 1;
    }
    Ok(t)
}

fn short_read(off: u64, want: usize, got: usize) -> io::Error {
    io::Error::other(format!(
        "read at offset {off} returned {got} bytes, expected {want}"
    ))
}

/// `count` distinct block-aligned offsets within a file of `size` bytes,
/// in random order (seeded, so runs read the same blocks). Distinct, so an
/// uncached pass never re-reads a block it has just brought into the cache.
pub fn random_offsets(size: u64, block: usize, count: usize, seed: u64) -> Vec<u64> {
    use rand::seq::SliceRandom;
    let blocks = size.div_ceil(block as u64).max(1);
    let mut idx: Vec<u64> = (0..blocks).collect();
    let take = count.min(blocks as usize);
    let (chosen, _) = idx.partial_shuffle(&mut crate::shared::rng(seed), take);
    chosen.iter().map(|b| b * block as u64).collect()
}

/// How a pass gets its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// From the page cache: the file is read once first and checked resident.
    Cached,
    /// O_DIRECT: from the device, around the page cache.
    Direct,
    /// Buffered, after the file's pages were dropped from the cache
    /// (fsync + fadvise DONTNEED, checked with mincore) before each pass.
    Evicted,
}

impl Caching {
    pub fn as_str(self) -> &'static str {
        match self {
            Caching::Cached => "page cache",
            Caching::Direct => "O_DIRECT",
            Caching::Evicted => "fadvise DONTNEED before each pass",
        }
    }
}

/// How uncached reads can be done on the filesystem of `dir`: O_DIRECT
/// where it is accepted, else eviction; Err when neither can work
/// (a memory-only filesystem has nothing but its cache).
pub fn uncached_method(dir: &Path) -> Result<Caching, String> {
    let kind = adapter::fs_kind(dir).map_err(|e| format!("statfs {}: {e}", dir.display()))?;
    if kind.memory_only {
        return Err(format!(
            "scratch directory {} is on {}: file data lives only in memory, so no read \
             bypasses the cache (use --scratch on a disk-backed filesystem)",
            dir.display(),
            kind.name
        ));
    }
    let probe = dir.join("direct-probe");
    let f =
        write_file(&probe, ALIGN as u64).map_err(|e| format!("cannot write a probe file: {e}"))?;
    drop(f);
    let direct = adapter::open_direct(&probe);
    let method = match direct {
        Ok(Some(f)) => {
            let mut buf = AlignedBuf::new(ALIGN);
            match f.read_at(buf.as_mut_slice(), 0) {
                Ok(n) if n == ALIGN => Caching::Direct,
                _ => Caching::Evicted,
            }
        }
        Ok(None) => Caching::Evicted,
        Err(e) => {
            let _ = std::fs::remove_file(&probe);
            return Err(format!("cannot open a probe file: {e}"));
        }
    };
    let _ = std::fs::remove_file(&probe);
    Ok(method)
}

/// Opens `path` for reads that go the `caching` way.
pub fn open_for(path: &Path, caching: Caching) -> io::Result<File> {
    match caching {
        Caching::Direct => adapter::open_direct(path)?
            .ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, "O_DIRECT refused (EINVAL)")),
        _ => File::open(path),
    }
}

/// Fraction of the file's pages in the page cache (1.0 for an empty file).
pub fn resident_fraction(file: &File, size: u64) -> io::Result<f64> {
    let (r, t) = adapter::resident_pages(file, size)?;
    Ok(if t == 0 { 1.0 } else { r as f64 / t as f64 })
}
