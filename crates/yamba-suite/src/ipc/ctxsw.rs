//! P = a context switch between two parties pinned to one CPU.
//!
//! Method (lmbench's lat_ctx, the 9front study's §3.6 made exact): the
//! parties pass a token back and forth, so each round trip is two switches
//! plus, on each side, one "send" and one "receive" of the token. The cost
//! of a send + receive that does not switch is measured alone in one party
//! (a byte written to a pipe and read back from it; for the futex, a wake
//! with no waiter and a wait that returns at once), and
//!
//!   switch = (round trip − 2 × (send + receive alone)) / 2.
//!
//! `ipc.ctxsw.pipe`: two processes and two pipes (an address-space change
//! at every switch). `ipc.ctxsw.futex`: two threads of one process and two
//! futex words (no address-space change). The wake-up path of a send that
//! finds a sleeper and the sleep path of a receive that blocks are counted
//! in the switch: they are what a switch costs a program.
//!
//! Evidence (gating): the kernel's own counts — each party gave up the CPU
//! once per round trip (getrusage RUSAGE_THREAD / /proc/<pid>/status,
//! voluntary + involuntary, since with wake-up preemption the sender may be
//! preempted before it blocks) — and both parties stayed on the pinned CPU.

use super::adapter;
use super::cold;
use super::rtt::{self, Placement};
use super::transport::{self, Transport};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use yamba_core::harness::Measured;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Unit};

/// Allowed switches per round trip per party: at least one; a few more
/// for preemptions by the rest of the (shared) machine.
const SWITCHES_PER_RT: std::ops::RangeInclusive<f64> = 0.97..=1.15;

pub static PIPE: Benchmark = Benchmark {
    id: "ipc.ctxsw.pipe",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "context switch between two processes on one CPU passing a token through pipes, pipe cost subtracted",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_pipe,
    ..Benchmark::TEMPLATE
};

pub static FUTEX: Benchmark = Benchmark {
    id: "ipc.ctxsw.futex",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "context switch between two threads on one CPU passing a token through futexes, futex cost subtracted",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_futex,
    ..Benchmark::TEMPLATE
};

fn run_pipe(ctx: &mut Ctx) -> Result<(), String> {
    let (r, w) = adapter::pipe()?;
    let mut short = 0u64;
    let (alone, _) = cold::measure(ctx, || {
        let mut b = [7u8];
        if !(adapter::write_all(w, &b) && adapter::read_exact(r, &mut b)) {
            short += 1;
        }
    });
    adapter::close(r);
    adapter::close(w);
    let run = rtt::measure(ctx, Transport::Pipe, Placement::SameCpu, 0.0)?;
    let parties = Parties {
        calls: run.calls,
        initiator: run.client_switches,
        peer: run.peer_switches,
        cpu_ok: run.client_cpu.0 == 0 && run.peer_cpu.0 == 0 && run.peer_cpu.1 > 0,
        cpu_seen: format!(
            "initiator {}/{} and peer {}/{} samples off CPU {}",
            run.client_cpu.0, run.client_cpu.1, run.peer_cpu.0, run.peer_cpu.1, run.cpus.0
        ),
        replies_ok: run.bad_replies == 0 && run.served == run.calls,
    };
    let r = switch_result(
        ctx,
        run.measured,
        alone,
        short,
        &parties,
        "write + read of 1 byte on a pipe to itself",
    );
    ctx.push(r);
    Ok(())
}

/// What the two parties reported.
struct Parties {
    calls: u64,
    initiator: (u64, u64),
    peer: Option<(u64, u64)>,
    cpu_ok: bool,
    cpu_seen: String,
    replies_ok: bool,
}

fn switch_result(
    ctx: &Ctx,
    round_trip: Measured,
    alone: Measured,
    alone_failed: u64,
    p: &Parties,
    alone_what: &str,
) -> BenchResult {
    let alone_med = alone.summary().map(|s| s.median).unwrap_or(f64::NAN);
    let rt_med = round_trip.summary().map(|s| s.median).unwrap_or(f64::NAN);
    let obs: Vec<f64> = round_trip
        .observations
        .iter()
        .map(|o| (o - 2.0 * alone_med) / 2.0)
        .collect();
    let mut method = round_trip.method.clone();
    method.kind = yamba_core::MethodKind::Direct;
    let mut r = ctx.result(None);
    r.set_observations(obs);
    r.method = Some(method);
    r.param("placement", "same_cpu").param("cpu", ctx.cpu());
    r.extra.insert(
        "method".into(),
        json!("switch = (round trip − 2 × (send + receive alone)) / 2, per round-trip observation; the median of the alone cost is subtracted"),
    );
    r.extra.insert("round_trip_median_ns".into(), json!(rt_med));
    r.extra.insert("alone_median_ns".into(), json!(alone_med));
    r.extra.insert("alone".into(), json!(alone_what));
    let per = |s: (u64, u64)| (s.0 + s.1) as f64 / p.calls.max(1) as f64;
    let ini = per(p.initiator);
    let peer = p.peer.map(per);
    r.add_evidence(
        "the kernel switched each party out once per round trip (voluntary + involuntary switches / round trips)",
        format!("{:.2}–{:.2} per party", SWITCHES_PER_RT.start(), SWITCHES_PER_RT.end()),
        format!(
            "initiator {ini:.3} ({} vol, {} invol), peer {} over {} round trips",
            p.initiator.0,
            p.initiator.1,
            match p.peer {
                Some(s) => format!("{:.3} ({} vol, {} invol)", per(s), s.0, s.1),
                None => "unknown".into(),
            },
            p.calls
        ),
        SWITCHES_PER_RT.contains(&ini) && peer.is_some_and(|x| SWITCHES_PER_RT.contains(&x)),
    );
    r.add_evidence(
        "both parties ran on the pinned CPU (sched_getcpu sampled in each)",
        "0 samples elsewhere",
        p.cpu_seen.clone(),
        p.cpu_ok,
    );
    r.add_evidence(
        "every token came back and every send + receive alone succeeded",
        "0 lost, 0 failed",
        format!(
            "replies ok: {}, alone failures: {alone_failed}",
            p.replies_ok
        ),
        p.replies_ok && alone_failed == 0,
    );
    r.add_evidence(
        "the switch is a positive share of the round trip",
        "0 < switch < round trip / 2",
        format!("round trip {rt_med:.0} ns, alone {alone_med:.0} ns"),
        rt_med > 2.0 * alone_med,
    );
    r
}

/// The futex party on the other thread, and what it saw.
#[derive(Default)]
struct ThreadStats {
    served: AtomicU64,
    vol: AtomicU64,
    invol: AtomicU64,
    samples: AtomicU64,
    wrong: AtomicU64,
    ready: AtomicBool,
    stop: AtomicBool,
}

fn run_futex(ctx: &mut Ctx) -> Result<(), String> {
    let cpu = ctx
        .cpu()
        .ok_or("needs pinning to keep both threads on one CPU (run without --no-pin)")?;
    // Alone: a wake with no waiter, and a wait on a word that does not hold
    // the expected value (returns EAGAIN at once).
    let word = AtomicU32::new(1);
    let mut failed = 0u64;
    let (alone, _) = cold::measure(ctx, || {
        let woke = adapter::futex_wake(&word);
        let waited = adapter::futex_wait(&word, 0);
        if woke != 0 || waited != -1 {
            failed += 1;
        }
    });

    let (mut client, mut server) = transport::open(Transport::Futex)?;
    let st = Arc::new(ThreadStats::default());
    let peer_st = st.clone();
    let peer = std::thread::spawn(move || {
        let pinned = yamba_core::affinity::pin_current_thread(cpu).is_ok();
        let s0 = adapter::thread_switches();
        peer_st.ready.store(pinned, Ordering::Release);
        let mut n = 0u64;
        if pinned {
            loop {
                let r = server.recv();
                if peer_st.stop.load(Ordering::Acquire) {
                    break;
                }
                server.send(r.unwrap_or(0).wrapping_add(1));
                n += 1;
                peer_st.served.store(n, Ordering::Relaxed);
                if n % 16 == 1 {
                    peer_st.samples.fetch_add(1, Ordering::Relaxed);
                    if yamba_core::affinity::current_cpu() != Some(cpu) {
                        peer_st.wrong.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        let s1 = adapter::thread_switches();
        peer_st.vol.store(s1.0 - s0.0, Ordering::Relaxed);
        peer_st.invol.store(s1.1 - s0.1, Ordering::Relaxed);
    });
    let t0 = std::time::Instant::now();
    while !st.ready.load(Ordering::Acquire) {
        if peer.is_finished() || t0.elapsed().as_secs() > 10 {
            return Err(format!("the peer thread could not pin itself to CPU {cpu}"));
        }
        std::thread::yield_now();
    }
    let mut v = 0u32;
    let mut calls = 0u64;
    let mut bad = 0u64;
    let (mut samples, mut wrong) = (0u64, 0u64);
    let sw0 = adapter::thread_switches();
    let (round_trip, outside) = cold::measure(ctx, || {
        v = v.wrapping_add(1);
        calls += 1;
        let sent = client.send(v);
        if !(sent && client.recv() == Some(v.wrapping_add(1))) {
            bad += 1;
        }
        if calls % 16 == 1 {
            samples += 1;
            if yamba_core::affinity::current_cpu() != Some(cpu) {
                wrong += 1;
            }
        }
    });
    let sw1 = adapter::thread_switches();
    st.stop.store(true, Ordering::Release);
    client.send(v.wrapping_add(7));
    peer.join().map_err(|_| "the peer thread panicked")?;
    let served = st.served.load(Ordering::Relaxed);
    // The peer's count includes one more wake-up: the stop message.
    let peer_sw = (
        st.vol.load(Ordering::Relaxed).saturating_sub(1),
        st.invol.load(Ordering::Relaxed),
    );
    let (pw, ps) = (
        st.wrong.load(Ordering::Relaxed),
        st.samples.load(Ordering::Relaxed),
    );
    let parties = Parties {
        calls,
        initiator: (
            (sw1.0 - sw0.0).saturating_sub(outside.0),
            (sw1.1 - sw0.1).saturating_sub(outside.1),
        ),
        peer: Some(peer_sw),
        cpu_ok: wrong == 0 && pw == 0 && ps > 0 && samples > 0,
        cpu_seen: format!("initiator {wrong}/{samples} and peer {pw}/{ps} samples off CPU {cpu}"),
        replies_ok: bad == 0 && served == calls,
    };
    let mut r = switch_result(
        ctx,
        round_trip,
        alone,
        failed,
        &parties,
        "FUTEX_WAKE with no waiter + FUTEX_WAIT that returns EAGAIN",
    );
    r.param("parties", "two threads of one process");
    ctx.push(r);
    Ok(())
}
