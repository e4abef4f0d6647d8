//! Every platform without an `fs` adapter. `NAME` is `NO_ADAPTER`, so the
//! runner skips this area's benchmarks with "no adapter for this platform";
//! the functions exist only so the generic code compiles: each fails with
//! that reason and measures nothing. Porting: copy this file to `<os>.rs`,
//! implement it, and select it in `mod.rs`.

use std::fs::File;
use std::io;
use std::path::Path;

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        yamba_core::bench::no_adapter_reason(),
    )
}

pub fn open_direct(_path: &Path) -> io::Result<Option<File>> {
    Err(unsupported())
}

pub fn evict(_file: &File) -> io::Result<()> {
    Err(unsupported())
}

pub fn resident_pages(_file: &File, _len: u64) -> io::Result<(usize, usize)> {
    Err(unsupported())
}

pub fn page_size() -> usize {
    4096
}

pub fn storage_read_bytes() -> Option<u64> {
    None
}

#[derive(Debug, Clone)]
pub struct FsKind {
    pub name: &'static str,
    pub magic: u64,
    pub memory_only: bool,
}

pub fn fs_kind(_path: &Path) -> io::Result<FsKind> {
    Err(unsupported())
}

pub fn free_bytes(_path: &Path) -> io::Result<u64> {
    Err(unsupported())
}

pub struct SharedCounters;

impl SharedCounters {
    pub fn new(_len: usize) -> io::Result<SharedCounters> {
        Err(unsupported())
    }
    pub fn add(&self, _i: usize, _v: u64) {}
    pub fn get(&self, _i: usize) -> u64 {
        0
    }
}

pub fn spawn_worker<F: FnOnce()>(_work: F) -> io::Result<i32> {
    Err(unsupported())
}

pub fn kill_worker(_pid: i32) {}

pub fn wait_worker(_pid: i32) -> bool {
    false
}

pub struct MemCgroup {
    pub version: u32,
}

impl MemCgroup {
    pub fn create(_limit_bytes: u64) -> Result<MemCgroup, String> {
        Err(yamba_core::bench::no_adapter_reason())
    }
    pub fn join(&self) -> Result<(), String> {
        Err(yamba_core::bench::no_adapter_reason())
    }
}

pub fn run_in_memory_cgroup<F: FnOnce() -> String>(
    _limit_bytes: u64,
    _work: F,
) -> Result<String, String> {
    Err(yamba_core::bench::no_adapter_reason())
}

pub fn open_direct_write(_path: &Path) -> io::Result<Option<File>> {
    Err(unsupported())
}

pub struct FileMap;

impl FileMap {
    pub fn as_slice(&self) -> &[u8] {
        &[]
    }
}

pub fn map_file(_file: &File, _len: usize) -> io::Result<FileMap> {
    Err(unsupported())
}

pub fn page_faults() -> (u64, u64) {
    (0, 0)
}

#[derive(Debug, Clone)]
pub struct BlockDevice {
    pub name: String,
    pub kind: &'static str,
    pub write_cache: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceIo {
    pub sectors_written: u64,
    pub flushes: Option<u64>,
}

pub fn block_device(_path: &Path) -> Result<BlockDevice, String> {
    Err(yamba_core::bench::no_adapter_reason())
}

pub fn ext4_has_journal(_path: &Path) -> Option<bool> {
    None
}

pub fn device_io(_dev: &BlockDevice) -> io::Result<DeviceIo> {
    Err(unsupported())
}

pub fn parse_device_stat(_text: &str) -> Option<DeviceIo> {
    None
}
