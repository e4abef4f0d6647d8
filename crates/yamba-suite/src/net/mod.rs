//! Area `net`: what a small message's round trip, a connection's setup and
//! a stream's bandwidth cost — on loopback by default, with the peer in a
//! thread of the benchmark's process pinned to another CPU, or against a
//! `yamba serve` agent when the run names one (`--remote HOST:PORT`, the token
//! in `YAMBA_TOKEN` or `--token-file FILE`).
//! `--set net.peer_cpu=same` puts the local peer on the benchmark's own CPU
//! instead: no cross-CPU wake-ups, which in a VM can cost more than the
//! network stack itself.

pub mod adapter;
pub mod bandwidth;
pub mod connect;
pub mod connect_close;
pub mod http;
pub mod rtt;

pub use crate::remote::{Target, AGENT_TIMEOUT};
pub(crate) use crate::shared::peer;
pub use crate::shared::peer::PEER_CPU;

use std::time::Instant;
use yamba_core::{BenchResult, Benchmark, Ctx, Kind, RunConfig, Setting};
use yamba_results::results::Method;

/// This area's benchmarks, in suite order.
pub static BENCHMARKS: &[&Benchmark] = &[
    &rtt::TCP_RTT,
    &rtt::UDP_RTT,
    &connect::TCP_CONNECT,
    &connect_close::CONNECT_CLOSE,
    &connect_close::UNIX_CONNECT_CLOSE,
    &connect_close::REFUSED_NAIVE,
    &http::HTTP_GET,
    &bandwidth::TCP_BW_1,
    &bandwidth::TCP_BW_N,
    &bandwidth::UNIX_BW,
];

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

/// A connect that lasts this long waited out a SYN retransmission (Linux
/// retries a SYN after 1 s): no connection costs that much otherwise.
const SYN_RETRY_NS: f64 = 0.5e9;

/// Sockets already in TIME_WAIT below which a connection costs what it
/// costs on an idle machine.
const FEW_TIME_WAIT: u64 = 1000;

/// The sockets in TIME_WAIT as the connections began and ended, as
/// parameters and a note: a connection costs more with many of them (on
/// an AMD EPYC guest, `bench/connect-witness.c`: 21.8 µs with none, 28–32
/// µs from 5 000 on; past ~14 000, batches with 1 s SYN retransmissions),
/// so two runs, or yamba and lmbench's lat_connect, agree only when they
/// start from a like number — lmbench's own run leaves tens of thousands.
pub(crate) fn add_time_wait_note(r: &mut BenchResult, before: Option<u64>, after: Option<u64>) {
    let (Some(before), Some(after)) = (before, after) else {
        return;
    };
    r.param("time_wait_before", before)
        .param("time_wait_after", after);
    r.add_note_evidence(
        "few sockets in TIME_WAIT when the connections began (a connection costs more with many)",
        format!("< {FEW_TIME_WAIT}"),
        format!("{before} (then {after} after them)"),
        before < FEW_TIME_WAIT,
    );
}

/// Names connections that waited out a SYN retransmission, in a warning:
/// the median leaves them out, the mean does not (a peer that reports a
/// mean, as lmbench does, includes them), and they are a fact about the
/// run (a full listen backlog, a port still in TIME_WAIT), not noise.
pub(crate) fn warn_syn_retries(r: &mut BenchResult) {
    let slow = r
        .observations
        .iter()
        .filter(|&&ns| ns >= SYN_RETRY_NS)
        .count();
    if slow == 0 {
        return;
    }
    let n = r.observations.len();
    let mean_us = r.observations.iter().sum::<f64>() / n as f64 / 1e3;
    r.warn(format!(
        "{slow} of {n} connections took ≥ 0.5 s (a SYN retransmission: the listen backlog \
         was full or the port still in TIME_WAIT); the median leaves them out, the mean \
         ({mean_us:.1} µs) includes them"
    ));
}

/// `--set net.msg_bytes`: the round trips' message size.
pub const MSG_BYTES: Setting = Setting {
    key: "net.msg_bytes",
    kind: Kind::Bytes {
        min: 8,
        max: 60_000,
    },
    default: "64",
    help: "bytes of each round trip's message",
    aliases: &[],
};

/// `--set net.bytes`: a bandwidth repetition's size.
pub const BYTES: Setting = Setting {
    key: "net.bytes",
    kind: Kind::Bytes {
        min: 1,
        max: 1 << 40,
    },
    default: "grown from 256 KiB per stream to fill each repetition",
    help: "bytes per bandwidth repetition, all streams together (fixed)",
    aliases: &[],
};

/// `--set net.streams`: streams of `net.tcp.bandwidth.n`.
pub const STREAMS: Setting = Setting {
    key: "net.streams",
    kind: Kind::Integer { min: 1, max: 64 },
    default: "4",
    help: "TCP streams at once",
    aliases: &[],
};

/// How a series of timed repetitions was taken: each observation is one
/// repetition the benchmark timed itself (`direct`).
pub(crate) fn direct_method(ctx: &Ctx, started: Instant, stopped: &str) -> Method {
    ctx.direct_method(1, started, stopped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use yamba_core::Mode;

    fn result(obs: &[f64]) -> BenchResult {
        let mut r = BenchResult::new(
            "net.tcp.connect",
            "net.tcp.connect",
            "net",
            yamba_core::Unit::Nanoseconds,
            Mode::Hot,
            "linux",
        );
        r.observations = obs.to_vec();
        r
    }

    #[test]
    fn syn_retransmissions_are_named_with_the_mean_they_cost() {
        let mut quick = result(&[12_000.0; 1000]);
        warn_syn_retries(&mut quick);
        assert!(quick.warnings.is_empty(), "{:?}", quick.warnings);

        let mut obs = vec![12_000.0; 998];
        obs.extend([1.03e9, 1.02e9]);
        let mut r = result(&obs);
        warn_syn_retries(&mut r);
        assert_eq!(r.warnings.len(), 1);
        let w = &r.warnings[0];
        // (998 × 12 µs + 2.05 s) / 1000 = 2061.976 µs
        assert!(w.starts_with("2 of 1000 connections took ≥ 0.5 s"), "{w}");
        assert!(w.contains("(2062.0 µs)"), "{w}");
    }
}
