//! Machinery several areas use, kept out of any one area so that none
//! reaches into another. (Linux helpers shared by the areas' adapters are
//! in `crate::os`; the remote agent is `crate::remote`.)

pub mod cpu_wait;
pub mod memory;

pub use cpu_wait::CpuWait;
