//! Platform adapters for the `mem` area: anonymous mappings with or
//! without huge pages, the kernel's fault counters, page-cache residency
//! (mincore), page-table presence (pagemap), causing page-outs of a file,
//! and non-temporal stores.
//!
//! The generic templates (latency, bandwidth, page faults) call only what
//! is here. All but the non-temporal stores is yamba-os's `mem` adapter
//! (shared with the language's stdlib; its interface and its `linux.rs` /
//! `unsupported.rs` are there). Non-temporal stores are instructions, so
//! they are chosen by architecture: `nt_x86_64.rs`, else
//! `nt_unsupported.rs`.

pub use yamba_os::mem::*;

/// Non-temporal (cache-bypassing) stores, where the CPU has them.
#[cfg_attr(target_arch = "x86_64", path = "nt_x86_64.rs")]
#[cfg_attr(not(target_arch = "x86_64"), path = "nt_unsupported.rs")]
pub mod nt;
