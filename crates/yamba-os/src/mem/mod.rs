//! Platform adapter for memory: anonymous mappings with or without huge
//! pages, the kernel's fault counters, page-cache residency (mincore),
//! page-table presence (pagemap), and causing page-outs of a file — the
//! `mem` area's adapter (yamba-suite's `mem::adapter`, which adds
//! non-temporal stores) and the language stdlib's `linux.page_out`. Beside
//! it, the scratch file of known content both fault in ([`ScratchFile`]).
//!
//! The interface every implementation provides: `NAME`, `HUGE_PAGE`,
//! `page_size`; `Pages`, `Anon`; `thp_unavailable`, `anon_huge_bytes`;
//! `Faults::now`; `FileMap` (by [`Readahead`]); `resident_pages`, `mapped_pages`,
//! `contiguous_share`, `filesystem`; `PageOut`, `page_out`, `drop_caches`;
//! `is_root`, `readahead_kb`; `map_file_rw`, `unmap_file`.
//!
//! The data both share ([`Faults`] and its arithmetic, [`Readahead`]) is
//! defined here once.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips the `mem` area's benchmarks with "no
//! adapter for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;
mod scratch;

pub use imp::*;
pub use scratch::ScratchFile;

/// Minor and major faults taken by the calling thread so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    pub minor: u64,
    pub major: u64,
}

impl Faults {
    /// The faults taken between `earlier` and `self`.
    pub fn since(self, earlier: Faults) -> Faults {
        Faults {
            minor: self.minor - earlier.minor,
            major: self.major - earlier.major,
        }
    }
}

/// How the kernel should read ahead on faults in a mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readahead {
    /// MADV_NORMAL: the kernel's own read-around.
    Kernel,
    /// MADV_RANDOM: no readahead, one page per fault.
    Off,
}
