//! Area `fs`: local files — how big the file cache is, what reading a
//! file costs sequentially and at random, through the page cache and
//! around it, rereading a cached file through read(2) and a mapping, what
//! writing one costs (buffered or O_DIRECT, with or without fsync), what metadata operations cost (and files of a size created
//! and deleted per second), and how readers slow each other down.
//! Platform code (O_DIRECT, fadvise, mincore, cgroups, mmap, block-device counters) is in `adapter`.

pub mod adapter;
pub mod cache_size;
pub mod contention;
pub mod create_delete;
pub mod files;
pub mod meta;
pub mod point;
pub mod read;
pub mod remote;
pub mod reread;
pub mod write;
pub mod write_point;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &cache_size::CACHE_SIZE,
    &read::SEQ,
    &read::RANDOM,
    &reread::REREAD,
    &write::SEQ,
    &write::RANDOM,
    &meta::CREATE,
    &meta::OPEN_CLOSE,
    &meta::STAT,
    &meta::UNLINK,
    &meta::FSYNC,
    &create_delete::SIZE_0K,
    &create_delete::SIZE_1K,
    &create_delete::SIZE_4K,
    &create_delete::SIZE_10K,
    &contention::CONTENTION,
    &remote::REMOTE_READ,
    &remote::REMOTE_BLOCK,
];
