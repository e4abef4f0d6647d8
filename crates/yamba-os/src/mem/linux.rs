//! Linux: mmap/madvise, getrusage(RUSAGE_THREAD), mincore, /proc/self/pagemap,
//! /proc/self/smaps_rollup, posix_fadvise and /proc/sys/vm/drop_caches.

use super::{Faults, Readahead};
use crate::OsError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::path::Path;

pub const NAME: &str = "linux";

/// Size of a PMD-level transparent huge page.
pub const HUGE_PAGE: usize = 2 << 20;

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE).max(1) as usize }
}

/// Whether anonymous memory should use transparent huge pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// MADV_NOHUGEPAGE: base pages only, whatever the system default.
    Base,
    /// MADV_HUGEPAGE on a 2 MiB-aligned region.
    Huge,
}

/// An anonymous private mapping, unmapped on drop.
pub struct Anon {
    base: *mut u8,
    total: usize,
    start: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned memory like a Vec<u8>.
unsafe impl Send for Anon {}

impl Anon {
    /// Maps `len` bytes (rounded up to a page). `populate` faults every page
    /// in now (MAP_POPULATE), so later passes do not pay first-touch faults.
    pub fn new(len: usize, pages: Pages, populate: bool) -> Result<Anon, OsError> {
        let ps = page_size();
        // A huge-page request covers whole huge pages, so even a small
        // working set lies inside one.
        let align = if pages == Pages::Huge { HUGE_PAGE } else { ps };
        let len = len.max(1).div_ceil(align) * align;
        let total = len + align - ps;
        // Populate after madvise, so a huge-page request is honoured.
        let base =
            crate::mmap::map_anon(total).map_err(OsError::call(format!("mmap of {len} bytes")))?;
        let start = ((base as usize).div_ceil(align) * align) as *mut u8;
        let a = Anon {
            base,
            total,
            start,
            len,
        };
        let advice = match pages {
            Pages::Base => libc::MADV_NOHUGEPAGE,
            Pages::Huge => libc::MADV_HUGEPAGE,
        };
        // SAFETY: advising our own mapping.
        if unsafe { libc::madvise(a.base.cast(), a.total, advice) } != 0 {
            return Err(OsError::last("madvise(huge page policy)"));
        }
        if populate {
            // MADV_POPULATE_WRITE (Linux 5.14+) faults pages in writable;
            // fall back to touching one byte per page.
            // SAFETY: our own mapping.
            let ok =
                unsafe { libc::madvise(a.start.cast(), a.len, libc::MADV_POPULATE_WRITE) } == 0;
            if !ok {
                let mut p = 0;
                while p < a.len {
                    // SAFETY: inside the mapping.
                    unsafe { a.start.add(p).write_volatile(0) };
                    p += ps;
                }
            }
        }
        Ok(a)
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.start
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mapping as 64-bit words.
    pub fn words(&mut self) -> &mut [u64] {
        // SAFETY: page-aligned, len a multiple of the page size, owned.
        unsafe { std::slice::from_raw_parts_mut(self.start as *mut u64, self.len / 8) }
    }
}

impl Drop for Anon {
    fn drop(&mut self) {
        // SAFETY: the whole mapping this Anon made and owns; dropped, so
        // no slice of it (borrowed from self) outlives it.
        unsafe { crate::mmap::unmap(self.base, self.total) };
    }
}

/// Whether transparent huge pages can be asked for with madvise.
pub fn thp_unavailable(setting: Option<&str>) -> Option<String> {
    match setting {
        None => Some(
            "kernel has no transparent huge pages (no /sys/kernel/mm/transparent_hugepage)".into(),
        ),
        Some(s) if s.contains("[never]") => Some(format!("transparent huge pages disabled ({s})")),
        Some(_) => None,
    }
}

/// AnonHugePages of this process, in bytes (/proc/self/smaps_rollup).
pub fn anon_huge_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    let line = text.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Faults {
    /// The calling thread's counts (RUSAGE_THREAD: other threads of the
    /// process, e.g. a test harness, do not disturb them).
    pub fn now() -> Faults {
        // SAFETY: ru is a valid rusage to fill.
        unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
            Faults {
                minor: ru.ru_minflt as u64,
                major: ru.ru_majflt as u64,
            }
        }
    }
}

/// A read-only shared mapping of a whole file, unmapped on drop.
pub struct FileMap {
    ptr: *mut u8,
    len: usize,
}

impl FileMap {
    pub fn new(file: &File, len: usize, ra: Readahead) -> Result<FileMap, OsError> {
        let ptr = crate::mmap::map_file_read(file, len)
            .map_err(OsError::call("mmap of the scratch file"))?;
        let m = FileMap { ptr, len };
        let advice = match ra {
            Readahead::Kernel => libc::MADV_NORMAL,
            Readahead::Off => libc::MADV_RANDOM,
        };
        // SAFETY: our own mapping.
        if unsafe { libc::madvise(m.ptr.cast(), len, advice) } != 0 {
            return Err(OsError::last("madvise(readahead)"));
        }
        Ok(m)
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// msync(MS_INVALIDATE), as lmbench's lat_pagefault does to "page out".
    pub fn msync_invalidate(&self) -> Result<(), OsError> {
        // SAFETY: our own mapping.
        if unsafe { libc::msync(self.ptr.cast(), self.len, libc::MS_INVALIDATE) } != 0 {
            return Err(OsError::last("msync(MS_INVALIDATE)"));
        }
        Ok(())
    }

    /// msync(MS_SYNC): write back anything dirty before eviction.
    pub fn msync_sync(&self) -> Result<(), OsError> {
        // SAFETY: our own mapping.
        if unsafe { libc::msync(self.ptr.cast(), self.len, libc::MS_SYNC) } != 0 {
            return Err(OsError::last("msync(MS_SYNC)"));
        }
        Ok(())
    }

    /// Pages of the file in memory (page cache), by mincore.
    pub fn resident_pages(&self) -> Result<usize, OsError> {
        resident_pages(self.ptr, self.len)
    }

    /// Pages with a present page-table entry (/proc/self/pagemap bit 63).
    pub fn mapped_pages(&self) -> Result<usize, OsError> {
        mapped_pages(self.ptr, self.len)
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        // SAFETY: the whole mapping this FileMap made and owns.
        unsafe { crate::mmap::unmap(self.ptr, self.len) };
    }
}

/// Pages of [ptr, ptr+len) in memory, by mincore(2).
pub fn resident_pages(ptr: *const u8, len: usize) -> Result<usize, OsError> {
    let ps = page_size();
    let mut vec = vec![0u8; len.div_ceil(ps)];
    // SAFETY: vec has one byte per page of the range.
    if unsafe { libc::mincore(ptr as *mut libc::c_void, len, vec.as_mut_ptr()) } != 0 {
        return Err(OsError::last("mincore"));
    }
    Ok(vec.iter().filter(|&&b| b & 1 != 0).count())
}

/// Pages of [ptr, ptr+len) whose page-table entry is present, from
/// /proc/self/pagemap (readable without privilege for the present bit).
pub fn mapped_pages(ptr: *const u8, len: usize) -> Result<usize, OsError> {
    Ok(pagemap(ptr, len)?.iter().filter(|&&e| e >> 63 == 1).count())
}

/// The share of [ptr, ptr+len)'s neighbouring pages that are neighbours
/// in physical memory too, in the same order (frame numbers from
/// /proc/self/pagemap), or `None` where they cannot be read: the kernel
/// shows frame numbers only with CAP_SYS_ADMIN (0 otherwise), and a page
/// not present has none. Streaming over base pages depends on it: on an
/// AMD EPYC (Zen 3) guest a fresh process's first arrays got scattered
/// pages (none next to another) and a 128 MiB rdwr pass over them read
/// 1.24× slower than over pages 97% contiguous, mapped after 640 MiB of
/// others (bench/rdwr-memory.c); with huge pages both read alike.
pub fn contiguous_share(ptr: *const u8, len: usize) -> Result<Option<f64>, OsError> {
    const FRAME: u64 = (1 << 55) - 1;
    let frames: Vec<u64> = pagemap(ptr, len)?.iter().map(|e| e & FRAME).collect();
    if frames.len() < 2 || frames.contains(&0) {
        return Ok(None);
    }
    let next = frames.windows(2).filter(|w| w[1] == w[0] + 1).count();
    Ok(Some(next as f64 / (frames.len() - 1) as f64))
}

/// The /proc/self/pagemap entries of the pages of [ptr, ptr+len).
fn pagemap(ptr: *const u8, len: usize) -> Result<Vec<u64>, OsError> {
    let ps = page_size();
    let pages = len.div_ceil(ps);
    const PAGEMAP: &str = "/proc/self/pagemap";
    let mut f = File::open(PAGEMAP).map_err(OsError::call(PAGEMAP))?;
    f.seek(SeekFrom::Start((ptr as usize / ps * 8) as u64))
        .map_err(OsError::call(PAGEMAP))?;
    let mut buf = vec![0u8; pages * 8];
    f.read_exact(&mut buf).map_err(OsError::call(PAGEMAP))?;
    Ok(buf
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// The filesystem holding `path`, and why its file pages cannot be paged
/// out if they cannot (tmpfs and ramfs keep them in memory by design).
pub fn filesystem(path: &Path) -> Result<(String, Option<String>), OsError> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| OsError::BadPath(path.to_path_buf()))?;
    // SAFETY: st is a valid statfs to fill; c is a valid C string.
    let magic = unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut st) != 0 {
            return Err(OsError::last(format!("statfs {}", path.display())));
        }
        st.f_type as u64
    };
    let name = match magic {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x8584_58f6 => "ramfs",
        0x794C_7630 => "overlay",
        0x6969 => "nfs",
        0x0102_1997 => "9p",
        0x6573_5546 => "fuse",
        _ => "other",
    };
    let why = matches!(name, "tmpfs" | "ramfs").then(|| {
        format!("scratch directory {} is on {name}: its file pages live in memory and cannot be paged out", path.display())
    });
    Ok((format!("{name} (0x{magic:x})"), why))
}

/// Which page-out steps were taken.
#[derive(Debug, Clone, Default)]
pub struct PageOut {
    pub steps: Vec<String>,
    /// Pages still in memory afterwards (mincore), on a fresh mapping.
    pub resident_after: usize,
}

/// Causes page-outs of `file` (no mapping of it may be alive):
/// fdatasync, posix_fadvise(DONTNEED), and — when pages survive that and we
/// are root, or `always_drop` — `echo 1 > /proc/sys/vm/drop_caches`.
/// Residency is then read with mincore on a fresh mapping.
pub fn page_out(file: &File, len: usize, always_drop: bool) -> Result<PageOut, OsError> {
    let fd = file.as_raw_fd();
    let mut out = PageOut::default();
    // SAFETY: fd is an open file.
    if unsafe { libc::fdatasync(fd) } != 0 {
        return Err(OsError::last("fdatasync"));
    }
    // SAFETY: fd is an open file.
    let rc = unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(OsError::Fadvise(rc));
    }
    out.steps.push("fdatasync + posix_fadvise(DONTNEED)".into());
    let count = || FileMap::new(file, len, Readahead::Off).and_then(|m| m.resident_pages());
    out.resident_after = count()?;
    if out.resident_after > 0 || always_drop {
        match drop_caches() {
            Ok(()) => {
                out.steps.push("echo 1 > /proc/sys/vm/drop_caches".into());
                out.resident_after = count()?;
            }
            Err(e) => out.steps.push(format!("drop_caches not possible: {e}")),
        }
    }
    Ok(out)
}

/// Drops the whole clean page cache (root only).
pub fn drop_caches() -> Result<(), OsError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(OsError::NeedsRoot);
    }
    const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";
    std::fs::write(DROP_CACHES, "1").map_err(OsError::call(DROP_CACHES))
}

/// Whether this process is root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The device readahead window (KiB) of the filesystem holding `file`:
/// how much the kernel's read-around may bring in on one fault.
pub fn readahead_kb(file: &File) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = file.metadata().ok()?.dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    [
        format!("/sys/class/bdi/{maj}:{min}/read_ahead_kb"),
        format!("/sys/dev/block/{maj}:{min}/queue/read_ahead_kb"),
        format!("/sys/dev/block/{maj}:{min}/../queue/read_ahead_kb"),
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok()?.trim().parse().ok())
}

/// Maps `len` bytes of `file` readable, writable and shared, as lmbench's
/// lat_mmap does; the timed operation itself, so nothing else is done
/// here (no madvise). Unmap with [`unmap_file`].
#[inline]
pub fn map_file_rw(file: &File, len: usize) -> Result<*mut u8, OsError> {
    // SAFETY: mapping a file we hold open; the caller unmaps it.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(OsError::last(
            "mmap(PROT_READ|PROT_WRITE, MAP_SHARED) of the scratch file",
        ));
    }
    Ok(p.cast())
}

/// Unmaps what [`map_file_rw`] mapped; false if munmap failed.
///
/// # Safety
/// `ptr`/`len` must be one whole mapping from [`map_file_rw`], not used
/// afterwards.
#[inline]
pub unsafe fn unmap_file(ptr: *mut u8, len: usize) -> bool {
    // SAFETY: the caller's contract above.
    unsafe { libc::munmap(ptr.cast(), len) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ground truth: a transparent huge page is 512 frames in a row, so
    /// its 511 neighbouring pairs are all neighbours in physical memory —
    /// where the kernel gave one (root reads frame numbers; the test
    /// process's AnonHugePages grew by it). Without root nothing is read.
    #[test]
    fn a_huge_page_is_wholly_contiguous() {
        let before = anon_huge_bytes().unwrap_or(0);
        let a = Anon::new(HUGE_PAGE, Pages::Huge, true).unwrap();
        let got_huge = anon_huge_bytes().unwrap_or(0) >= before + HUGE_PAGE as u64;
        let share = contiguous_share(a.as_ptr(), a.len()).unwrap();
        match share {
            None => assert!(!is_root(), "root reads frame numbers"),
            Some(s) if got_huge => assert_eq!(s, 1.0, "a huge page's frames are in a row"),
            Some(s) => assert!((0.0..=1.0).contains(&s), "{s}"),
        }
    }

    /// A page not faulted in has no frame, and one page has no neighbour:
    /// neither gives a share.
    #[test]
    fn pages_without_frames_or_neighbours_give_none() {
        let untouched = Anon::new(64 << 10, Pages::Base, false).unwrap();
        assert_eq!(
            contiguous_share(untouched.as_ptr(), untouched.len()).unwrap(),
            None
        );
        let one = Anon::new(page_size(), Pages::Base, true).unwrap();
        assert_eq!(contiguous_share(one.as_ptr(), one.len()).unwrap(), None);
    }
}
