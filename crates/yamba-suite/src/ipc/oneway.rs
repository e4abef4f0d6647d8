//! P = a one-way transfer: the time from a send to the receiver running
//! (Go!'s xfer).
//!
//! The sender reads the clock and sends; the receiver, a peer process
//! blocked in its receive, reads the clock the moment the receive returns,
//! stores the stamp in shared memory, and acknowledges. Each observation is
//! (receiver's stamp − sender's stamp − BASE), the acknowledgement being
//! outside the timed span. Across CPUs the two stamps come from two CPUs'
//! clocks, so their offset is bounded first (`clocksync`) and the result
//! is withheld when that bound exceeds 10% of the median latency, or when
//! other tasks used more than 10% of the receiver's CPU (it then waits
//! behind them).
//! Cold: the sender evicts caches, disturbs branch history and yields once
//! (see `cold`) before each send.

use super::adapter;
use super::clocksync;
use super::cold;
use super::peer::{add_cpu_evidence, CpuShare, OthersOnCpu, Peer, PeerStats, Shared};
use super::rtt::Placement;
use super::transport::{self, Transport};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use yamba_core::cold::Evictor;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Mode, Status, Unit};
use yamba_results::results::Method;

/// Largest clock-offset bound accepted, as a share of the median latency.
pub const MAX_OFFSET_SHARE: f64 = 0.10;

pub static ONEWAY: Benchmark = Benchmark {
    id: "ipc.oneway",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "one-way transfer: from the send to the receiving process running (pipe, futex, shared-memory spin; same CPU and across CPUs)",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_oneway,
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

#[repr(C, align(64))]
#[derive(Default)]
struct Stamp {
    t: AtomicU64,
}

fn run_oneway(ctx: &mut Ctx) -> Result<(), String> {
    for placement in [Placement::SameCpu, Placement::CrossCpu] {
        for t in [Transport::Pipe, Transport::Futex, Transport::Spin] {
            let t = if t == Transport::Spin && placement == Placement::SameCpu {
                Transport::SpinYield
            } else {
                t
            };
            let suffix = format!("{}.{}", t.name(), placement.name());
            let r = match measure(ctx, t, placement, &suffix) {
                Ok(r) => r,
                Err(why) => {
                    let mut r = ctx.result(Some(&suffix));
                    r.status = Status::Skipped;
                    r.reason = Some(why);
                    r
                }
            };
            ctx.push(r);
        }
    }
    Ok(())
}

fn measure(
    ctx: &mut Ctx,
    t: Transport,
    placement: Placement,
    suffix: &str,
) -> Result<BenchResult, String> {
    let (me, peer_cpu) = placement.cpus(ctx)?;
    let clock = ctx.clock().clone();
    let offset = match placement {
        Placement::CrossCpu => Some(clocksync::offset_bound(
            &clock,
            me,
            peer_cpu,
            // An amount: 20,000 rounds bounded it no tighter than 2,000
            // (±70 ns on the KVM guest either way).
            ctx.scaled(2_000),
        )?),
        Placement::SameCpu => None,
    };
    let (mut tx, mut rx) = transport::open(t)?;
    let stats = Shared::<PeerStats>::new_zeroed()?;
    let stamp = Shared::<Stamp>::new_zeroed()?;
    let (st, sp): (&PeerStats, &Stamp) = (&stats, &stamp);
    let peer_clock = clock.clone();
    let peer = Peer::spawn(peer_cpu, st, move || {
        let mut n = 0u64;
        loop {
            let r = rx.recv();
            let t1 = peer_clock.stop();
            sp.t.store(t1, Ordering::Release);
            n += 1;
            st.served.store(n, Ordering::Release);
            match r {
                Some(r) => {
                    rx.send(r.wrapping_add(1));
                }
                None => {
                    st.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            st.sample_cpu(n, peer_cpu);
        }
    })?;

    let plan = ctx.plan();
    let base = ctx.base_ns();
    let mut evictor = (ctx.mode == Mode::Cold).then(|| Evictor::new(ctx.machine()));
    let mut v = 0u32;
    let mut bad = 0u64;
    let mut one = |v: &mut u32| -> Option<(u64, u64)> {
        *v = v.wrapping_add(1);
        let t0 = clock.start();
        let sent = tx.send(*v);
        let ok = matches!(tx.recv(), Some(r) if r & 0xff == v.wrapping_add(1) & 0xff);
        let t1 = sp.t.load(Ordering::Acquire);
        (sent && ok).then_some((t0, t1))
    };
    for _ in 0..200 {
        if one(&mut v).is_none() {
            bad += 1;
        }
    }
    let share = CpuShare::start(&peer, peer_cpu);
    let started = Instant::now();
    let mut obs = Vec::new();
    let (mut samples, mut wrong) = (0u64, 0u64);
    while obs.len() < plan.max_observations
        && (started.elapsed() < plan.budget || obs.len() < plan.min_observations)
    {
        cold::prepare(evictor.as_mut());
        match one(&mut v) {
            Some((t0, t1)) => {
                let d = t1 as i64 - t0 as i64;
                let ns = d.signum() as f64 * clock.ticks_to_ns(d.unsigned_abs());
                obs.push(ns - base);
            }
            None => bad += 1,
        }
        if obs.len() % 16 == 1 {
            samples += 1;
            if yamba_core::affinity::current_cpu() != Some(me) {
                wrong += 1;
            }
        }
    }
    let seen = Seen {
        peer_cpu_use: share.finish(),
        timed: obs.len() as u64,
        sent: v as u64,
        served: stats.served.load(Ordering::Acquire),
        bad,
        wrong: (wrong, samples),
        peer_wrong: stats.wrong(),
    };
    drop(peer);
    let mut r = ctx.result(Some(suffix));
    r.description = format!("one-way transfer to a peer process: {}", t.describe());
    r.set_observations(obs);
    r.method = Some(Method {
        base_subtracted_ns: Some(base),
        ..Method::direct(
            1,
            plan.target_precision,
            plan.budget.as_secs_f64(),
            started.elapsed().as_secs_f64(),
            "budget spent",
        )
    });
    r.param("transport", t.name())
        .param("placement", placement.name())
        .param("sender_cpu", me)
        .param("receiver_cpu", peer_cpu);
    add_evidence(&mut r, &seen, placement, (me, peer_cpu), offset);
    Ok(r)
}

/// What the sender and receiver saw while the transfers were timed.
struct Seen {
    peer_cpu_use: Option<OthersOnCpu>,
    /// Observations timed (the receiver's CPU share is per transfer).
    timed: u64,
    sent: u64,
    served: u64,
    bad: u64,
    /// (samples off the pinned CPU, samples) for the sender, the receiver.
    wrong: (u64, u64),
    peer_wrong: (u64, u64),
}

/// The checks: every message arrived, both stayed on their CPUs, the
/// receiver's CPU was its own (across CPUs), and the two clocks agree well
/// enough to subtract their stamps (across CPUs) or are one (same CPU).
fn add_evidence(
    r: &mut BenchResult,
    seen: &Seen,
    placement: Placement,
    (me, peer_cpu): (usize, usize),
    offset: Option<clocksync::OffsetBound>,
) {
    let (sent, served, bad) = (seen.sent, seen.served, seen.bad);
    let ((wrong, samples), (pw, ps)) = (seen.wrong, seen.peer_wrong);
    r.add_evidence(
        "every message arrived and was acknowledged",
        format!("{sent} sent, 0 lost"),
        format!("{bad} failed, receiver saw {served}"),
        bad == 0 && served == sent,
    );
    r.add_evidence(
        "sender and receiver stayed on their pinned CPUs (sched_getcpu sampled)",
        format!("sender on {me}, receiver on {peer_cpu}"),
        format!("sender {wrong}/{samples}, receiver {pw}/{ps} samples elsewhere"),
        wrong == 0 && pw == 0 && ps > 0,
    );
    let median = r.median().unwrap_or(f64::NAN);
    if placement == Placement::CrossCpu {
        let mean = r.summary.as_ref().map_or(f64::NAN, |s| s.mean);
        add_cpu_evidence(r, peer_cpu, seen.peer_cpu_use, seen.timed, mean);
    }
    match offset {
        Some(b) => {
            r.extra.insert("clock_offset_bound".into(), json!(b));
            r.add_evidence(
                "the two CPUs' clocks agree well enough to subtract their stamps",
                format!(
                    "|offset| ≤ {:.0}% of the median latency ({:.0} ns)",
                    MAX_OFFSET_SHARE * 100.0,
                    MAX_OFFSET_SHARE * median
                ),
                format!(
                    "offset in [{:.0}, {:.0}] ns over {} ping-pongs: |offset| ≤ {:.0} ns",
                    b.lo_ns,
                    b.hi_ns,
                    b.rounds,
                    b.abs_bound_ns()
                ),
                b.abs_bound_ns() <= MAX_OFFSET_SHARE * median,
            );
        }
        None => {
            r.add_note_evidence(
                "both stamps come from one CPU's clock",
                "same CPU",
                format!("CPU {me}"),
                true,
            );
        }
    }
}
