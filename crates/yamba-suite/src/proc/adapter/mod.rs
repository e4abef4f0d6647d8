//! Platform adapter for the `proc` area: how this kernel creates, runs and
//! reaps processes and threads. The generic templates only see what is
//! here.
//!
//! The interface every implementation provides: `NAME`; `Exit`, `fork`,
//! `wait`; `VforkStack`, `vfork_exit`; `Program`, `spawn`, `fork_exec`;
//! `thread_create_join`; `TouchedHeap`; `vm_rss_bytes`, `rss_anon_bytes`; `SharedPage`.
//!
//! `linux.rs` on Linux; `unsupported.rs` everywhere else (its `NAME` is
//! `NO_ADAPTER`: the runner skips this area's benchmarks with "no adapter
//! for this platform").

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;
