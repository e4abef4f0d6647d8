//! Area `ipc`: switching and round trips between two parties — the
//! context switch, the null-RPC round trip over each kernel transport (and
//! over shared memory with no kernel at all), the one-way transfer,
//! semaphore round trips and locks (uncontended and handed between CPUs);
//! best case (hot loop) and worst case (caches evicted first) side by side.
//!
//! Generic templates (`rtt`, `ctxsw`, `oneway`) are written against the
//! [`transport::Half`] seam; everything Linux-specific is in `adapter`.

pub mod adapter;
pub mod clocksync;
pub mod cold;
pub mod ctx_sweep;
pub mod ctxsw;
pub mod handoff;
pub mod lock;
pub mod oneway;
pub mod peer;
pub mod pipe_bw;
pub mod rtt;
pub mod sem;
pub mod transport;

use yamba_core::Benchmark;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &ctxsw::PIPE,
    &ctxsw::FUTEX,
    &ctx_sweep::SWEEP,
    &rtt::RTT,
    &oneway::ONEWAY,
    &rtt::PEER_DELAY,
    &pipe_bw::PIPE_BW,
    &sem::SYSV,
    &sem::POSIX,
    &lock::MUTEX,
    &lock::FUTEX,
    &handoff::HANDOFF,
];
