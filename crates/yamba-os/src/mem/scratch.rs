//! A scratch file of known content on a real filesystem: what the `mem`
//! area's page-fault benchmarks and the language stdlib's `linux.map_file`
//! fault in, and page out.

use super::page_size;
use crate::OsError;
use std::fs::File;
use std::io::Write;
use std::path::Path;

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
    ) -> Result<ScratchFile, OsError> {
        let per = pages_per_write.max(1);
        let ps = page_size();
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(file_error("create", path))?;
        let mut chunk = Vec::with_capacity(per * ps);
        for start in (0..pages).step_by(per) {
            chunk.clear();
            for i in start..(start + per).min(pages) {
                chunk.extend(std::iter::repeat_n(Self::byte(i), ps));
            }
            file.write_all(&chunk).map_err(file_error("write", path))?;
        }
        file.sync_all().map_err(file_error("fsync", path))?;
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

/// `map_err` for a failed `action` on the file at `path`.
fn file_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> OsError {
    let path = path.to_path_buf();
    move |error| OsError::File {
        action,
        path,
        error,
    }
}
