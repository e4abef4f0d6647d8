//! Area `net`: what a small message's round trip, a connection's setup and
//! a stream's bandwidth cost — on loopback by default, with the peer in a
//! thread of the benchmark's process pinned to another CPU, or against a
//! `yamba serve` agent when the run names one (`--remote HOST:PORT --token T`).
//! `--set net.peer_cpu=same` puts the local peer on the benchmark's own CPU
//! instead: no cross-CPU wake-ups, which in a VM can cost more than the
//! network stack itself.

pub mod adapter;
pub mod bandwidth;
pub mod connect;
pub mod connect_close;
pub(crate) mod peer;
pub mod rtt;

/// The agent's old path (it moved to [`crate::remote`]), kept while
/// branches that use it are in flight.
#[doc(hidden)]
pub use crate::remote as agent;

use std::time::{Duration, Instant};
use yamba_core::results::Method;
use yamba_core::{BenchResult, Benchmark, Ctx, RunConfig};

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &rtt::TCP_RTT,
    &rtt::UDP_RTT,
    &connect::TCP_CONNECT,
    &connect_close::CONNECT_CLOSE,
    &connect_close::REFUSED_NAIVE,
    &bandwidth::TCP_BW_1,
    &bandwidth::TCP_BW_N,
    &bandwidth::UNIX_BW,
];

/// Longest any single read or write may block when talking to an agent.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the other end is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A peer thread in this process, over loopback.
    Local,
    /// A `yamba serve` agent.
    Remote { addr: String, token: String },
}

impl Target {
    /// The run's target: `--remote` (which then needs `--token`) or loopback.
    pub fn of(config: &RunConfig) -> Result<Target, String> {
        match (&config.remote, &config.remote_token) {
            (None, _) => Ok(Target::Local),
            (Some(addr), Some(token)) => Ok(Target::Remote {
                addr: addr.clone(),
                token: token.clone(),
            }),
            (Some(addr), None) => Err(format!(
                "--remote {addr} needs the agent's --token (printed by 'yamba serve')"
            )),
        }
    }

    /// How the result's params name the endpoint.
    pub fn label(&self) -> String {
        match self {
            Target::Local => "loopback (peer thread)".into(),
            Target::Remote { addr, .. } => format!("agent at {addr}"),
        }
    }
}

/// A requirement for benchmarks that only make sense locally.
pub fn local_only(_: &yamba_core::Machine, config: &RunConfig) -> Result<(), String> {
    match config.remote {
        Some(_) => Err("local only: not measured against a remote agent".into()),
        None => Ok(()),
    }
}

/// Records the endpoint and, locally, where the peer ran.
pub(crate) fn label(ctx: &Ctx, r: &mut BenchResult, target: &Target) {
    r.param("endpoint", target.label());
    if *target == Target::Local {
        r.param("peer", peer::placement(ctx));
    }
}

/// A size setting such as `64`, `4k`, `8M`.
pub(crate) fn size_setting(ctx: &Ctx, key: &str) -> Result<Option<u64>, String> {
    match ctx.setting(key) {
        None => Ok(None),
        Some(v) => yamba_core::machine::parse_size(v)
            .filter(|&n| n > 0)
            .map(Some)
            .ok_or_else(|| format!("--set {key}={v}: not a size (e.g. 64, 4K, 8M)")),
    }
}

/// How a series of timed repetitions was taken: each observation is one
/// repetition the benchmark timed itself (`direct`).
pub(crate) fn direct_method(ctx: &Ctx, started: Instant, stopped: &str) -> Method {
    ctx.direct_method(1, started, stopped)
}
