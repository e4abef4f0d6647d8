//! Every platform without a `net` adapter. `NAME` is `NO_ADAPTER`, so the
//! runner skips this area's benchmarks with "no adapter for this platform";
//! the agent refuses to open files (it cannot promise not to follow links
//! or block). Porting: copy this file to `<os>.rs`, implement it, and
//! select it in `mod.rs`.

use std::fs::File;
use std::path::{Path, PathBuf};

pub const NAME: &str = yamba_core::bench::NO_ADAPTER;

pub fn open_read_nofollow(_p: &Path) -> std::io::Result<File> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        yamba_core::bench::no_adapter_reason(),
    ))
}

pub fn fd_path(_f: &File) -> Option<PathBuf> {
    None
}
