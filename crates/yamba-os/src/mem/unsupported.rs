//! Every platform without a `mem` adapter. `NAME` is `NO_ADAPTER`, so the
//! runner skips this area's benchmarks with "no adapter for this platform";
//! the functions exist only so the generic code compiles: every mapping
//! fails with that reason, and nothing is measured. Porting: copy this
//! file to `<os>.rs`, implement it, and select it in `mod.rs`.

use super::{Faults, Readahead};
use crate::OsError;
use std::fs::File;
use std::path::Path;

pub const NAME: &str = crate::NO_ADAPTER;
pub const HUGE_PAGE: usize = 2 << 20;

fn unsupported<T>() -> Result<T, OsError> {
    Err(OsError::NoAdapter)
}

pub fn page_size() -> usize {
    4096
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    Base,
    Huge,
}

pub struct Anon(Vec<u64>);

impl Anon {
    pub fn new(_len: usize, _pages: Pages, _populate: bool) -> Result<Anon, OsError> {
        unsupported()
    }
    pub fn as_ptr(&self) -> *mut u8 {
        self.0.as_ptr() as *mut u8
    }
    pub fn len(&self) -> usize {
        self.0.len() * 8
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn words(&mut self) -> &mut [u64] {
        &mut self.0
    }
}

pub fn thp_unavailable(_setting: Option<&str>) -> Option<String> {
    Some(crate::no_adapter_reason())
}

pub fn anon_huge_bytes() -> Option<u64> {
    None
}

impl Faults {
    pub fn now() -> Faults {
        Faults::default()
    }
}

pub struct FileMap(Vec<u8>);

impl FileMap {
    pub fn new(_file: &File, _len: usize, _ra: Readahead) -> Result<FileMap, OsError> {
        unsupported()
    }
    pub fn as_ptr(&self) -> *const u8 {
        self.0.as_ptr()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn msync_invalidate(&self) -> Result<(), OsError> {
        unsupported()
    }
    pub fn msync_sync(&self) -> Result<(), OsError> {
        unsupported()
    }
    pub fn resident_pages(&self) -> Result<usize, OsError> {
        unsupported()
    }
    pub fn mapped_pages(&self) -> Result<usize, OsError> {
        unsupported()
    }
}

pub fn resident_pages(_ptr: *const u8, _len: usize) -> Result<usize, OsError> {
    unsupported()
}

pub fn mapped_pages(_ptr: *const u8, _len: usize) -> Result<usize, OsError> {
    unsupported()
}

pub fn contiguous_share(_ptr: *const u8, _len: usize) -> Result<Option<f64>, OsError> {
    unsupported()
}

pub fn filesystem(_path: &Path) -> Result<(String, Option<String>), OsError> {
    unsupported()
}

#[derive(Debug, Clone, Default)]
pub struct PageOut {
    pub steps: Vec<String>,
    pub resident_after: usize,
}

pub fn page_out(_file: &File, _len: usize, _always_drop: bool) -> Result<PageOut, OsError> {
    unsupported()
}

pub fn drop_caches() -> Result<(), OsError> {
    unsupported()
}

pub fn is_root() -> bool {
    false
}

pub fn readahead_kb(_file: &File) -> Option<u64> {
    None
}

pub fn map_file_rw(_file: &File, _len: usize) -> Result<*mut u8, OsError> {
    unsupported()
}

/// # Safety
/// As on Linux: one whole mapping from `map_file_rw`, not used afterwards.
pub unsafe fn unmap_file(_ptr: *mut u8, _len: usize) -> bool {
    false
}
