//! Moving AArch64 machine code (the words' arithmetic is in `a64.rs`);
//! written code is made visible to instruction fetch before it runs.

pub use super::a64::{relocate, stub, STUB_BYTES};

/// This adapter moves code.
pub fn supported() -> Result<(), String> {
    Ok(())
}

/// How far the copies may sit from the executable's code: BL reaches
/// ±128 MiB.
pub const REACH: usize = 96 << 20;

/// Cleans the data cache and invalidates the instruction cache over the
/// written code (AArch64 does not keep them coherent by itself).
pub fn sync(addr: usize, len: usize) {
    extern "C" {
        fn __clear_cache(start: *mut libc::c_char, end: *mut libc::c_char);
    }
    // SAFETY: the range is a mapping this process owns.
    unsafe { __clear_cache(addr as *mut libc::c_char, (addr + len) as *mut libc::c_char) };
}
