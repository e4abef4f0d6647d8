//! No adapter moves machine code on this platform: the code runs where
//! the build put it, and results say so.

pub const STUB_BYTES: usize = 0;
// Linux's part (linux.rs) reads these; elsewhere nothing does.
#[allow(dead_code)]
pub const REACH: usize = 0;

#[allow(dead_code)]
pub fn sync(_addr: usize, _len: usize) {}

pub fn supported() -> Result<(), String> {
    relocate(&[], 0, 0).map(drop)
}

pub fn relocate(_code: &[u8], _from: u64, _to: u64) -> Result<Vec<u8>, String> {
    Err(format!(
        "code placement has no adapter for {}-{}: the code ran where the build put it",
        std::env::consts::OS,
        std::env::consts::ARCH
    ))
}

pub fn stub(_at: u64, _target: u64, _stack: u32) -> Result<Vec<u8>, String> {
    relocate(&[], 0, 0)
}
