//! Mapping memory: the one place the adapters (this crate's and
//! yamba-suite's areas') call mmap(2), each helper with the flags its name
//! says, and whether the kernel mapped a vDSO.
//!
//! The interface every implementation provides: `map_anon`, `reserve`,
//! `map_anon_at`, `map_file_read`, `map_shared`, `unmap`; `vdso_mapped`.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (each mapping
//! fails with "no adapter for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
