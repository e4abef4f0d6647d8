//! Platform adapter for the `fs` area: reading around the page cache
//! (O_DIRECT), pushing a file out of it (fsync + posix_fadvise DONTNEED),
//! seeing what is in it (mincore), what a process fetched from storage
//! (/proc/self/io), what filesystem a directory is on (statfs), worker
//! processes, memory-limited cgroups for the cache-size ground truth,
//! writing around the cache (O_DIRECT), mapping a file, page-fault counts,
//! and what the block device behind a file wrote (its sysfs counters).
//!
//! The interface every implementation provides: `NAME`; `open_direct`,
//! `evict`, `resident_pages`, `page_size`, `storage_read_bytes`; `FsKind`
//! and `fs_kind`, `free_bytes`; `SharedCounters` (`new`, `add`, `get`);
//! `spawn_worker`, `kill_worker`, `wait_worker`; `MemCgroup` and
//! `run_in_memory_cgroup`; `open_direct_write`; `FileMap` (`as_slice`) and
//! `map_file`; `page_faults`; `BlockDevice`, `DeviceIo`, `block_device`,
//! `device_io`, `parse_device_stat`.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
