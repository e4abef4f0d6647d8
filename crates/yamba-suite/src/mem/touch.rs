//! What the page-fault benchmarks share: a scratch file of known content on
//! a real filesystem, and one timed pass of touches with the kernel's fault
//! counts taken around it.

use super::adapter::{page_size, Faults};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use yamba_core::Clock;

/// A file of `pages` pages; every byte of page i is [`ScratchFile::byte`]`(i)`,
/// so a touch can check it read the file and not a zero page.
pub struct ScratchFile {
    pub file: File,
    pub pages: usize,
    pub bytes: usize,
}

impl ScratchFile {
    /// The content of every byte of page `i` (never 0).
    pub fn byte(i: usize) -> u8 {
        (i % 251) as u8 + 1
    }

    /// Creates (truncating) and fills the file with writes of
    /// `pages_per_write` pages, then fsyncs it so its pages are clean and
    /// can be dropped. The write size matters while the pages stay cached:
    /// the page cache may keep a large write as one large folio, which a
    /// single fault then maps whole; page-sized writes give page-sized folios.
    pub fn create(
        path: &Path,
        pages: usize,
        pages_per_write: usize,
    ) -> Result<ScratchFile, String> {
        let per = pages_per_write.max(1);
        let ps = page_size();
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut chunk = Vec::with_capacity(per * ps);
        for start in (0..pages).step_by(per) {
            chunk.clear();
            for i in start..(start + per).min(pages) {
                chunk.extend(std::iter::repeat_n(Self::byte(i), ps));
            }
            file.write_all(&chunk)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        file.sync_all()
            .map_err(|e| format!("cannot fsync {}: {e}", path.display()))?;
        Ok(ScratchFile {
            file,
            pages,
            bytes: pages * ps,
        })
    }

    /// Sum of the bytes a pass over `targets` must read.
    pub fn expected_sum(targets: &[usize]) -> u64 {
        targets.iter().map(|&i| Self::byte(i) as u64).sum()
    }
}

/// One timed pass: P'' touched every target page once, F the same loop
/// again right after (every page now present, so no faults: the loop and
/// TLB cost that P'' also paid).
#[derive(Debug, Clone, Copy)]
pub struct Pass {
    pub ns: f64,
    pub dummy_ns: f64,
    pub faults: Faults,
    pub dummy_faults: Faults,
    /// Sum of the bytes read by P''.
    pub sum: u64,
}

impl Pass {
    /// (M(P'') − M(F)) / n.
    pub fn per(&self, n: u64) -> f64 {
        (self.ns - self.dummy_ns) / n.max(1) as f64
    }
}

/// Touches byte 0 of each target page of `base` (reads, or writes when
/// `write`), timing the pass and counting this thread's faults around it.
///
/// # Safety
/// `base` must start a live mapping that holds every target page, writable
/// when `write`.
pub unsafe fn touch_pass(clock: &Clock, base: *mut u8, targets: &[usize], write: bool) -> Pass {
    let ps = page_size();
    let run = |write: bool| -> (f64, Faults, u64) {
        let f0 = Faults::now();
        let mut sum = 0u64;
        let t0 = clock.start();
        for &i in targets {
            // SAFETY: the caller guarantees every target page is mapped.
            unsafe {
                let p = base.add(i * ps);
                if write {
                    p.write_volatile(1);
                } else {
                    sum += p.read_volatile() as u64;
                }
            }
        }
        let t1 = clock.stop();
        let f1 = Faults::now();
        (clock.ticks_to_ns(t1.wrapping_sub(t0)), f1.since(f0), sum)
    };
    let (ns, faults, sum) = run(write);
    let (dummy_ns, dummy_faults, _) = run(write);
    Pass {
        ns,
        dummy_ns,
        faults,
        dummy_faults,
        sum,
    }
}
