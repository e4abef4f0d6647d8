//! Platform adapters for the `mem` area: anonymous mappings with or
//! without huge pages, the kernel's fault counters, page-cache residency
//! (mincore), page-table presence (pagemap), causing page-outs of a file,
//! and non-temporal stores.
//!
//! The generic templates (latency, bandwidth, page faults) call only what
//! is here. The interface every implementation provides: `NAME`,
//! `HUGE_PAGE`, `page_size`; `Pages`, `Anon`; `thp_unavailable`,
//! `anon_huge_bytes`; `Faults`; `Readahead`, `FileMap`; `resident_pages`,
//! `mapped_pages`, `filesystem`; `PageOut`, `page_out`, `drop_caches`;
//! `is_root`, `readahead_kb`.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform"). Non-temporal stores are instructions, so they are
//! chosen by architecture: `nt_x86_64.rs`, else `nt_unsupported.rs`.

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;

/// Non-temporal (cache-bypassing) stores, where the CPU has them.
#[cfg_attr(target_arch = "x86_64", path = "nt_x86_64.rs")]
#[cfg_attr(not(target_arch = "x86_64"), path = "nt_unsupported.rs")]
pub mod nt;
