//! Machinery several areas use, kept out of any one area so that none
//! reaches into another. (Linux helpers shared by the areas' adapters are
//! in `crate::os`; the remote agent is `crate::remote`.)

pub mod cpu_wait;
pub mod interleave;
pub mod memory;
pub mod peer;

pub use cpu_wait::CpuWait;

/// Why a benchmark cannot run as simultaneous copies (`Benchmark::one_copy_only`).
pub mod one_copy_only {
    /// A peer (process, thread, server) runs on another CPU than the
    /// benchmark's: another copy holds that CPU.
    pub const PEER_ELSEWHERE: &str =
        "its peer runs on another CPU than its own, which another copy holds";
    /// A result of it already runs on every CPU.
    pub const EVERY_CPU: &str = "its .all_cpus result already runs one thread on every CPU";
    /// What it counts is the whole machine's, which other copies move.
    pub const WHOLE_MACHINE: &str =
        "it reads the whole machine's accounting, which the other copies' work would move";
}

/// The generator behind every random order in the suite (a pointer
/// chain, file offsets, targets): random to the hardware, not
/// cryptographically, and the same from run to run for the same seed.
pub type Rng = rand::rngs::SmallRng;

/// A generator seeded with `seed`.
pub fn rng(seed: u64) -> Rng {
    rand::SeedableRng::seed_from_u64(seed)
}

/// A generator of this process's own, seeded from the OS, for what must
/// differ between a run's processes (a per-process offset, random read
/// positions): a forked block inherits its parent's thread generator,
/// buffered values included, and when the parent had drawn from it every
/// block drew the same numbers.
pub fn process_rng() -> Rng {
    rand::SeedableRng::from_entropy()
}
