//! P = a signal round trip between two processes: we send SIGUSR1 to a
//! peer sleeping in sigsuspend; its handler runs, it sends SIGUSR1 back;
//! ours runs and our sigsuspend returns. Two deliveries, two wake-ups.
//! The observations are whole round trips; `extra.one_way_ns` is half the
//! median, labelled as such. Measured with the peer on our CPU (two
//! context switches) and on another CPU (two cross-CPU wake-ups).

use super::adapter::{self, Handler, SharedPage};
use super::check::exact_count;
use crate::shared::CpuWait;
use std::sync::atomic::Ordering;
use yamba_core::affinity::pin_current_thread;
use yamba_core::settings::{Kind, Setting};
use yamba_core::{Benchmark, Cold, Ctx, Unit};

/// `--set signal.peer_delay_us`: a known delay in the peer.
pub const PEER_DELAY_US: Setting = Setting {
    key: "signal.peer_delay_us",
    kind: Kind::Number { min: 0.0, max: 1e6 },
    default: "0",
    help: "µs the peer waits before replying (ground-truth tests)",
    aliases: &[],
};

pub static ROUNDTRIP: Benchmark = Benchmark {
    id: "signal.roundtrip",
    area: "signal",
    unit: Unit::Nanoseconds,
    description:
        "signal round trip to a peer process and back (.same_cpu, .other_cpu; one way = half)",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    timeout_s: 60,
    run: run_roundtrip,
    settings: &[PEER_DELAY_US],
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

fn run_roundtrip(ctx: &mut Ctx) -> Result<(), String> {
    let here = ctx.cpu();
    // Unpinned (--no-pin), the scheduler places both: one "unpinned" result.
    let first = if here.is_some() {
        "same_cpu"
    } else {
        "unpinned"
    };
    let mut placements = vec![(first, here)];
    match here.and_then(yamba_core::affinity::other_cpu) {
        Some(o) => placements.push(("other_cpu", Some(o))),
        None => {
            let mut r = ctx.result(Some("other_cpu"));
            r.status = yamba_core::Status::Skipped;
            r.reason = Some("needs pinning and a second allowed CPU".into());
            ctx.push(r);
        }
    }
    for (suffix, peer_cpu) in placements {
        one_placement(ctx, suffix, peer_cpu)?;
    }
    Ok(())
}

fn one_placement(ctx: &mut Ctx, suffix: &str, peer_cpu: Option<usize>) -> Result<(), String> {
    let _saved = adapter::install(libc::SIGUSR1, Handler::Counting)?;
    // Blocked except inside sigsuspend, so no signal is lost between the
    // send and the wait, in us or in the peer (which inherits the mask).
    let mask = adapter::block(libc::SIGUSR1);
    let shared = SharedPage::new()?;
    let (pid, tid) = (adapter::getpid(), adapter::gettid());
    let pin_failed = shared.slot(1);
    // A known delay in the peer before it replies (ground-truth tests).
    let delay_us = ctx.number(PEER_DELAY_US.key)?.unwrap_or(0.0);
    let clock = ctx.clock();
    let peer = adapter::fork_peer(|| {
        if let Some(c) = peer_cpu {
            if pin_current_thread(c).is_err() {
                pin_failed.store(1, Ordering::SeqCst);
            }
        }
        adapter::reset_handled();
        loop {
            mask.suspend();
            if delay_us > 0.0 {
                clock.spin_ns(delay_us * 1e3);
            }
            shared.slot(0).store(adapter::handled(), Ordering::SeqCst);
            adapter::send(pid, tid, libc::SIGUSR1);
        }
    })?;
    adapter::reset_handled();
    let mut trips = 0u64;
    let wait = CpuWait::start();
    let m = ctx.measure(|| {
        trips += 1;
        adapter::send(peer, peer, libc::SIGUSR1);
        mask.suspend();
    });
    let (ours, theirs) = (adapter::handled(), shared.slot(0).load(Ordering::SeqCst));
    let pinned = shared.slot(1).load(Ordering::SeqCst) == 0;
    adapter::kill_and_reap(peer);
    drop(mask);
    let mut r = ctx.measured_result(Some(suffix), m);
    wait.record(&mut r);
    r.description = format!(
        "signal round trip to a peer process and back, peer on {}",
        match suffix {
            "same_cpu" => "our CPU",
            "other_cpu" => "another CPU",
            _ => "whichever CPU the scheduler chose",
        }
    );
    r.param("peer_cpu", peer_cpu);
    if delay_us > 0.0 {
        r.param("peer_delay_us", delay_us);
    }
    r.param("our_cpu", ctx.cpu());
    r.param("reported", "round trip (two one-way deliveries)");
    if let Some(med) = r.median() {
        r.extra.insert("one_way_ns".into(), (med / 2.0).into());
    }
    exact_count(
        &mut r,
        "the peer's handler ran once per round trip",
        trips,
        theirs,
    );
    exact_count(&mut r, "our handler ran once per round trip", trips, ours);
    r.add_evidence(
        "the peer was pinned where intended",
        "pinned",
        if pinned { "pinned" } else { "not pinned" },
        pinned,
    );
    ctx.push(r);
    Ok(())
}
