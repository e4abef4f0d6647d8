//! Every platform without a mapping adapter: each mapping fails with "no
//! adapter for this platform", so what is built on it (`Shared`, the `mem`
//! and `space` adapters) fails the same way. Porting: copy this file to
//! `<os>.rs`, implement it, and select it in `mod.rs`.

fn why() -> std::io::Error {
    std::io::Error::other(crate::no_adapter_reason())
}

pub fn vdso_mapped() -> bool {
    false
}

pub fn map_anon(_len: usize) -> std::io::Result<*mut u8> {
    Err(why())
}

pub fn reserve(_len: usize) -> std::io::Result<*mut u8> {
    Err(why())
}

pub fn map_anon_at(_at: usize, _len: usize) -> std::io::Result<*mut u8> {
    Err(why())
}

pub fn map_file_read(_file: &std::fs::File, _len: usize) -> std::io::Result<*mut u8> {
    Err(why())
}

pub fn map_shared(_bytes: usize) -> Result<*mut u8, crate::OsError> {
    Err(crate::OsError::NoAdapter)
}

/// # Safety
/// As on Linux: `p`/`bytes` must be a mapping the caller owns and no longer uses.
pub unsafe fn unmap(_p: *mut u8, _bytes: usize) {}
