//! P = a null RPC: a 1-byte request to a peer process and its 1-byte
//! reply, the peer doing no work (Go!'s null-RPC round trip).
//!
//! The peer is a forked process pinned to the same CPU as the initiator or
//! to another one, serving in a loop: receive, (optionally spin a known
//! time), reply with the request + 1. Hot: the loop method over round
//! trips, T = (M(P'') − M(F))/n. Cold: one round trip at a time after the
//! initiator evicted the caches and disturbed branch history (on the same
//! CPU that also evicts the peer's data; across CPUs the peer's private
//! caches stay warm) and yielded once (see `cold`).
//!
//! Evidence: every reply is the request + 1 and the peer served exactly the
//! requests sent; both parties sampled sched_getcpu and stayed on their
//! CPUs; across CPUs, the peer had its CPU to itself (other tasks used
//! ≤ 10% of it: else the peer waits behind them and their time is in the
//! number). Informational: the kernel's switch
//! counts (how many times each party gave up the CPU per round trip; one
//! each on one CPU, except UNIX stream sockets, which take more).

use super::adapter;
use super::cold;
use super::peer::{
    add_cpu_evidence, add_pinned_evidence, CpuShare, OthersOnCpu, Peer, PeerStats, Shared,
};
use super::transport::{self, Transport};
use serde_json::json;
use std::sync::atomic::Ordering;
use yamba_core::harness::Measured;
use yamba_core::settings::{Kind, Setting};
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Status, Unit};

/// Where the peer runs relative to the initiator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    SameCpu,
    CrossCpu,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::SameCpu => "same_cpu",
            Placement::CrossCpu => "cross_cpu",
        }
    }

    /// (initiator CPU, peer CPU), or why this placement cannot be had.
    pub fn cpus(self, ctx: &Ctx) -> Result<(usize, usize), String> {
        let me = ctx
            .cpu()
            .ok_or("needs pinning to place the peer (run without --no-pin)")?;
        match self {
            Placement::SameCpu => Ok((me, me)),
            Placement::CrossCpu => yamba_core::affinity::other_cpu(me)
                .map(|o| (me, o))
                .ok_or_else(|| "only one CPU is available: no cross-CPU placement".into()),
        }
    }
}

/// Everything one round-trip measurement saw.
pub struct RttRun {
    pub transport: Transport,
    pub placement: Placement,
    pub cpus: (usize, usize),
    pub measured: Measured,
    pub calls: u64,
    pub bad_replies: u64,
    pub served: u64,
    pub peer_errors: u64,
    pub client_cpu: (u64, u64),
    pub peer_cpu: (u64, u64),
    /// Kernel-counted switches over the measurement: (voluntary, involuntary).
    pub client_switches: (u64, u64),
    pub peer_switches: Option<(u64, u64)>,
    /// What else ran on the peer's CPU meanwhile.
    pub peer_cpu_use: Option<OthersOnCpu>,
    pub delay_ns: f64,
}

/// Measures round trips over `t` with the peer placed as asked, the peer
/// spinning `delay_ns` before each reply (0 for a null RPC).
pub fn measure(
    ctx: &mut Ctx,
    t: Transport,
    placement: Placement,
    delay_ns: f64,
) -> Result<RttRun, String> {
    let cpus = placement.cpus(ctx)?;
    let (mut client, mut server) = transport::open(t)?;
    let stats = Shared::<PeerStats>::new_zeroed()?;
    let clock = ctx.clock().clone();
    let peer_cpu = cpus.1;
    let st: &PeerStats = &stats;
    let peer = Peer::spawn(peer_cpu, st, move || {
        let mut n = 0u64;
        loop {
            let Some(r) = server.recv() else {
                st.errors.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            if delay_ns > 0.0 {
                clock.spin_ns(delay_ns);
            }
            // Counted before replying, so the count is final when the
            // initiator has its last reply.
            n += 1;
            st.served.store(n, Ordering::Release);
            if !server.send(r.wrapping_add(1)) {
                st.errors.fetch_add(1, Ordering::Relaxed);
            }
            st.sample_cpu(n, peer_cpu);
        }
    })?;
    let me = cpus.0;
    let mut v = 0u32;
    let mut calls = 0u64;
    let mut bad = 0u64;
    let (mut samples, mut wrong) = (0u64, 0u64);
    let peer_before = peer.switches();
    let share = CpuShare::start(&peer, peer_cpu);
    let sw0 = adapter::thread_switches();
    let (measured, outside) = cold::measure(ctx, || {
        v = v.wrapping_add(1);
        calls += 1;
        let sent = client.send(v);
        let ok = matches!(client.recv(), Some(r) if r & 0xff == v.wrapping_add(1) & 0xff);
        if !(sent && ok) {
            bad += 1;
        }
        if calls % 16 == 1 {
            samples += 1;
            if yamba_core::affinity::current_cpu() != Some(me) {
                wrong += 1;
            }
        }
    });
    let sw1 = adapter::thread_switches();
    let peer_after = peer.switches();
    let peer_cpu_use = share.finish();
    let served = stats.served.load(Ordering::Acquire);
    let run = RttRun {
        transport: t,
        placement,
        cpus,
        measured,
        calls,
        bad_replies: bad,
        served,
        peer_errors: stats.errors.load(Ordering::Relaxed),
        client_cpu: (wrong, samples),
        peer_cpu: stats.wrong(),
        client_switches: (
            (sw1.0 - sw0.0).saturating_sub(outside.0),
            (sw1.1 - sw0.1).saturating_sub(outside.1),
        ),
        peer_switches: peer_before
            .zip(peer_after)
            .map(|(a, b)| (b.0 - a.0, b.1 - a.1)),
        peer_cpu_use,
        delay_ns,
    };
    drop(peer);
    Ok(run)
}

impl RttRun {
    /// A result with the run's observations and evidence.
    pub fn result(self, ctx: &Ctx, suffix: &str) -> BenchResult {
        let mut r = ctx.measured_result(Some(suffix), self.measured);
        r.description = format!("null-RPC round trip: {}", self.transport.describe());
        r.param("transport", self.transport.name())
            .param("placement", self.placement.name())
            .param("initiator_cpu", self.cpus.0)
            .param("peer_cpu", self.cpus.1)
            .param("peer", "forked process");
        if self.delay_ns > 0.0 {
            r.param("peer_delay_ns", self.delay_ns);
        }
        r.add_evidence(
            "every request got its reply (request + 1) and the peer served each once",
            format!(
                "{} replies, 0 wrong, peer served {}",
                self.calls, self.calls
            ),
            format!(
                "{} wrong, peer served {}, peer errors {}",
                self.bad_replies, self.served, self.peer_errors
            ),
            self.bad_replies == 0
                && self.served == self.calls
                && self.peer_errors == 0
                && self.calls > 0,
        );
        add_pinned_evidence(&mut r, "call", self.cpus, self.client_cpu, self.peer_cpu);
        if self.placement == Placement::CrossCpu {
            let mean = r.summary.as_ref().map_or(f64::NAN, |s| s.mean);
            add_cpu_evidence(&mut r, self.cpus.1, self.peer_cpu_use, self.calls, mean);
        }
        let per = |s: (u64, u64)| (s.0 + s.1) as f64 / self.calls.max(1) as f64;
        let observed = format!(
            "initiator {:.2} ({} voluntary, {} involuntary), peer {}",
            per(self.client_switches),
            self.client_switches.0,
            self.client_switches.1,
            match self.peer_switches {
                Some(p) => format!("{:.2} ({} voluntary, {} involuntary)", per(p), p.0, p.1),
                None => "unknown (/proc unreadable)".into(),
            }
        );
        if self.transport.blocks() && self.placement == Placement::SameCpu {
            let ok = (0.9..1.2).contains(&per(self.client_switches))
                && self
                    .peer_switches
                    .is_some_and(|p| (0.9..1.2).contains(&per(p)));
            r.add_note_evidence(
                "each party gave up the CPU once per round trip (kernel switch counts)",
                "≈ 1 switch per round trip per party",
                observed,
                ok,
            );
        } else {
            r.add_note_evidence(
                "context switches per round trip (kernel counts)",
                if self.transport.blocks() {
                    "≤ 1 per party (a party may find the reply ready)"
                } else {
                    "≈ 0 across CPUs (busy-waiting), ≥ 1 with sched_yield"
                },
                observed,
                true,
            );
        }
        r
    }
}

/// `--set ipc.transports`: which transports `ipc.rtt` measures.
pub const TRANSPORTS: Setting = Setting {
    key: "ipc.transports",
    kind: Kind::List(&Transport::NAMES),
    default: "all",
    help: "the transports to measure",
    aliases: &["transports"],
};

/// `--set ipc.delay_us`: the known delay of `ipc.rtt.peer_delay`'s peer.
pub const DELAY_US: Setting = Setting {
    key: "ipc.delay_us",
    kind: Kind::Number { min: 0.0, max: 1e6 },
    default: "50",
    help: "µs the peer waits before replying (the ground-truth check)",
    aliases: &["delay_us"],
};

pub static RTT: Benchmark = Benchmark {
    id: "ipc.rtt",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "null-RPC round trip (1-byte request and reply, peer process) over pipe, FIFO, UNIX stream/datagram sockets, eventfd, futex, POSIX mq, shared-memory spin; same CPU and across CPUs",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_rtt,
    timeout_s: 300,
    settings: &[TRANSPORTS],
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

/// The transports asked for with `--set transports=pipe,futex` (default all).
fn chosen(ctx: &Ctx) -> Result<Vec<Transport>, String> {
    match ctx.list(TRANSPORTS.key)? {
        None => Ok(Transport::ALL.to_vec()),
        Some(names) => Ok(names.into_iter().filter_map(Transport::parse).collect()),
    }
}

fn run_rtt(ctx: &mut Ctx) -> Result<(), String> {
    let mut rows = Vec::new();
    for placement in [Placement::SameCpu, Placement::CrossCpu] {
        for t in chosen(ctx)? {
            let t = if t == Transport::Spin && placement == Placement::SameCpu {
                Transport::SpinYield
            } else {
                t
            };
            let suffix = format!("{}.{}", t.name(), placement.name());
            let mut r = match measure(ctx, t, placement, 0.0) {
                Ok(run) => run.result(ctx, &suffix),
                Err(why) => {
                    let mut r = ctx.result(Some(&suffix));
                    r.status = Status::Skipped;
                    r.reason = Some(why);
                    r
                }
            };
            // Settle the status first, so a withheld number shows as withheld in the table too.
            r.apply_evidence();
            rows.push(row(&r, t));
            ctx.push(r);
        }
    }
    let mut table = ctx.result(None);
    table.description =
        "null-RPC round trips side by side (one row per transport, one column per placement)"
            .into();
    table.extra.insert("comparison".into(), json!(rows));
    ctx.push(table);
    Ok(())
}

fn row(r: &BenchResult, t: Transport) -> serde_json::Value {
    json!({
        "id": r.id,
        "transport": t.name(),
        "how": t.describe(),
        "placement": r.params.get("placement").cloned().unwrap_or_else(|| {
            json!(r.id.rsplit('.').next().unwrap_or(""))
        }),
        "median_ns": r.median(),
        "min_ns": r.summary.as_ref().map(|s| s.min),
        "cv": r.summary.as_ref().and_then(|s| s.cv),
        "status": r.status,
        "reason": r.reason,
    })
}

/// Test-only ground truth: a peer that spins a known X µs before replying
/// makes the round trip grow by X (pipe, same CPU).
pub static PEER_DELAY: Benchmark = Benchmark {
    id: "ipc.groundtruth.peer_delay",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "test only: pipe round trip with the peer spinning 0 and X µs (set delay_us, default 50) before replying",
    default: false,
    hidden: true,
    adapter: adapter::NAME,
    run: run_peer_delay,
    settings: &[DELAY_US],
    cold: Cold::NotMeaningful(
        "test only: ground truth for ipc.rtt's peer delay, hot by design",
    ),
    ..Benchmark::TEMPLATE
};

fn run_peer_delay(ctx: &mut Ctx) -> Result<(), String> {
    let x_us = ctx.number(DELAY_US.key)?.unwrap_or(50.0);
    let base = measure(ctx, Transport::Pipe, Placement::SameCpu, 0.0)?;
    let slow = measure(ctx, Transport::Pipe, Placement::SameCpu, x_us * 1e3)?;
    let r0 = base.result(ctx, "delay_0");
    let mut r1 = slow.result(ctx, "delay_x");
    let (m0, m1) = (
        r0.median().unwrap_or(f64::NAN),
        r1.median().unwrap_or(f64::NAN),
    );
    let grew = m1 - m0;
    let want = x_us * 1e3;
    r1.add_evidence(
        "the round trip grew by the peer's known delay (within 2%)",
        format!("{want:.0} ns ± 2%"),
        format!("{grew:.0} ns ({m0:.0} → {m1:.0} ns)"),
        ((grew - want) / want).abs() <= 0.02,
    );
    r1.extra.insert("growth_ns".into(), json!(grew));
    ctx.push(r0);
    ctx.push(r1);
    Ok(())
}
