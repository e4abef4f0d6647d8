//! Machinery several areas use, kept out of any one area so that none
//! reaches into another. (Linux helpers shared by the areas' adapters are
//! in `crate::os`; the remote agent is `crate::remote`.)

pub mod cpu_wait;
pub mod interleave;
pub mod memory;
pub mod peer;

pub use cpu_wait::CpuWait;

/// The generator behind every random order in the suite (a pointer
/// chain, file offsets, targets): random to the hardware, not
/// cryptographically, and the same from run to run for the same seed.
pub type Rng = rand::rngs::SmallRng;

/// A generator seeded with `seed`.
pub fn rng(seed: u64) -> Rng {
    rand::SeedableRng::seed_from_u64(seed)
}
