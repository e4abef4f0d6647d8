//! P = a contended lock's hand-off: the time from the owner's release to
//! the waiter, asleep in the kernel on another CPU, running as the new
//! owner — the futex wake path.
//!
//! Two threads pinned to two CPUs take `lock::FutexLock` in turns. The
//! waiter announces itself and sleeps in lock() (FUTEX_WAIT); the owner,
//! seeing the announcement, holds the lock a while longer (`HOLD_NS`, so
//! the waiter is asleep by then), reads its clock and releases it
//! (FUTEX_WAKE); the waiter reads its clock the moment lock() returns.
//! One observation is (waiter's stamp − owner's stamp − BASE). The stamps
//! come from two CPUs' clocks, so their offset is bounded first
//! (`clocksync`), as `ipc.oneway` does.
//!
//! Evidence (gating): the owners alternated (a turn counter each owner
//! checks on taking the lock; the hand-offs counted on both sides agree);
//! the waiter was asleep — every release's FUTEX_WAKE found it (else the
//! hand-off skipped the wake path), but for at most 1% of hand-offs whose
//! waiter had not slept yet, which are left out; both threads stayed on
//! their CPUs; the clocks' offset bound is under 10% of the median.

use super::adapter;
use super::clocksync;
use super::lock::{Calls, FutexLock};
use super::oneway::MAX_OFFSET_SHARE;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use yamba_core::{Benchmark, Clock, Cold, Ctx, Unit};
use yamba_results::results::Method;

/// How long the owner keeps the lock after the waiter announced itself:
/// time for the waiter to reach FUTEX_WAIT and sleep (a few µs).
pub const HOLD_NS: f64 = 30_000.0;

pub static HANDOFF: Benchmark = Benchmark {
    id: "ipc.lock.handoff",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "contended futex lock handed between two threads on two CPUs: from the owner's release (FUTEX_WAKE) to the sleeping waiter running as owner",
    adapter: adapter::NAME,
    run: run_handoff,
    cold: Cold::NotMeaningful(
        "the waiter's caches are on the other CPU, out of the eviction's reach",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

#[derive(Default)]
struct Shared {
    lock: FutexLock,
    /// Acquisitions so far (the initiator takes even ones, the peer odd).
    turn: AtomicU64,
    /// The acquisition the waiter announced it waits for.
    announced: AtomicU64,
    /// The owner's clock just before its release.
    released_at: AtomicU64,
    /// Set by a thread that gave up (its partner never came): the other
    /// stops waiting too.
    failed: AtomicBool,
}

/// What one thread saw.
#[derive(Default)]
struct Side {
    /// Hand-offs received through the wake path: (release stamp,
    /// acquisition stamp) in ticks.
    stamps: Vec<(u64, u64)>,
    /// Hand-offs received whose wait never slept: the waiter reached
    /// FUTEX_WAIT after the release (its CPU taken away for longer than
    /// `HOLD_NS`: a host's steal), so they timed no wake-up.
    awake: u64,
    taken: u64,
    out_of_turn: u64,
    calls: Calls,
    samples: u64,
    wrong_cpu: u64,
}

/// Spins until `done`, at most 5 s and only while the partner has not
/// given up; false otherwise, after saying so to the partner.
fn spin_until(s: &Shared, mut done: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while !done() {
        std::hint::spin_loop();
        if s.failed.load(Ordering::Relaxed) || t0.elapsed() > Duration::from_secs(5) {
            s.failed.store(true, Ordering::Relaxed);
            return false;
        }
    }
    true
}

/// One thread's part: acquisitions p, p + 2, … up to `last`.
fn play(s: &Shared, clock: &Clock, parity: u64, last: u64, cpu: usize) -> Result<Side, String> {
    let mut side = Side::default();
    let mut t = parity;
    while t <= last {
        if t > 0 {
            // Wait until the other owns it (it took acquisition t − 1),
            // then announce and sleep in lock().
            if !spin_until(s, || s.turn.load(Ordering::Acquire) >= t) {
                return Err(format!("acquisition {} never came", t - 1));
            }
            s.announced.store(t, Ordering::Release);
        }
        let calls = s.lock.lock();
        let got = clock.stop();
        side.calls.add(calls);
        if s.failed.load(Ordering::Relaxed) {
            s.lock.unlock();
            return Err("the partner gave up".into());
        }
        if t > 0 {
            if calls.slept > 0 {
                side.stamps
                    .push((s.released_at.load(Ordering::Acquire), got));
            } else {
                side.awake += 1;
            }
        }
        if s.turn.load(Ordering::Relaxed) != t {
            side.out_of_turn += 1;
        }
        s.turn.store(t + 1, Ordering::Release);
        side.taken += 1;
        side.samples += 1;
        if yamba_core::affinity::current_cpu() != Some(cpu) {
            side.wrong_cpu += 1;
        }
        if t < last {
            if !spin_until(s, || s.announced.load(Ordering::Acquire) == t + 1) {
                // Release it: a partner asleep in lock() wakes and stops.
                s.lock.unlock();
                return Err(format!("the waiter for acquisition {} never came", t + 1));
            }
            clock.spin_ns(HOLD_NS);
            s.released_at.store(clock.start(), Ordering::Release);
        }
        side.calls.add(s.lock.unlock());
        t += 2;
    }
    Ok(side)
}

fn run_handoff(ctx: &mut Ctx) -> Result<(), String> {
    let skip = |ctx: &mut Ctx, why: String| {
        let mut r = ctx.result(Some("cross_cpu"));
        r.status = yamba_core::Status::Skipped;
        r.reason = Some(why);
        ctx.push(r);
    };
    let Some(me) = ctx.cpu() else {
        skip(
            ctx,
            "needs pinning to place the two threads (run without --no-pin)".into(),
        );
        return Ok(());
    };
    let Some(other) = yamba_core::affinity::other_cpu(me) else {
        skip(
            ctx,
            "only one CPU is available: a hand-off between CPUs needs two".into(),
        );
        return Ok(());
    };
    let clock = ctx.clock().clone();
    // An amount, as ipc.oneway's.
    let offset = clocksync::offset_bound(&clock, me, other, ctx.scaled(2_000))?;
    // Hand-offs: an amount (each costs HOLD_NS and two wake-ups).
    let last = 2 * ctx.scaled(1_000) as u64;
    let sh = Arc::new(Shared::default());
    let (sp, cp) = (sh.clone(), clock.clone());
    let peer = std::thread::spawn(move || -> Result<Side, String> {
        yamba_core::affinity::pin_current_thread(other)?;
        play(&sp, &cp, 1, last, other)
    });
    let t0 = Instant::now();
    let mine = play(&sh, &clock, 0, last, me);
    let elapsed = t0.elapsed().as_secs_f64();
    let theirs = peer.join().map_err(|_| "the peer thread panicked")?;
    let (mine, theirs) = (mine?, theirs?);

    let base = ctx.base_ns();
    let to_ns = |&(rel, got): &(u64, u64)| clock.ticks_to_ns(got.wrapping_sub(rel)) - base;
    let obs: Vec<f64> = mine
        .stamps
        .iter()
        .chain(&theirs.stamps)
        .map(to_ns)
        .collect();
    let mut r = ctx.result(Some("cross_cpu"));
    r.set_observations(obs);
    r.method = Some(Method::direct(
        last,
        0.0,
        elapsed,
        elapsed,
        format!("{last} hand-offs"),
    ));
    r.param("initiator_cpu", me)
        .param("peer_cpu", other)
        .param("parties", "two threads of one process")
        .param("hold_ns", HOLD_NS);
    let median = r.median().unwrap_or(f64::NAN);
    let awake = mine.awake + theirs.awake;
    let handoffs = (mine.stamps.len() + theirs.stamps.len()) as u64 + awake;
    r.add_evidence(
        "the owners alternated: every owner found its turn, and the hand-offs counted on both sides agree",
        format!("{} acquisitions each side, {last} hand-offs, 0 out of turn", last / 2),
        format!(
            "initiator {} acquisitions, peer {}; {handoffs} hand-offs; out of turn: {}, {}",
            mine.taken, theirs.taken, mine.out_of_turn, theirs.out_of_turn
        ),
        mine.taken == last / 2 + 1
            && theirs.taken == last / 2
            && handoffs == last
            && mine.out_of_turn + theirs.out_of_turn == 0,
    );
    let mut all = mine.calls;
    all.add(theirs.calls);
    // A hand-off whose waiter had not slept yet took another path (no
    // wake-up): it is left out, and may be at most 1% of them. On the CI's
    // AMD EPYC guest, whose host took a vCPU away at times, 1 of 2000 was
    // such in 3 of a check's 15 attempts, and each withheld the result.
    let allowed = last / 100;
    r.add_evidence(
        "the waiter was asleep: every release's FUTEX_WAKE found it (the wake path), but for the hand-offs left out because their waiter had not slept yet (at most 1%)",
        format!(
            "≤ {allowed} of {last} left out, a wake that woke a sleeper for each of the others (and one more, waking nobody, at the end)"
        ),
        format!(
            "{awake} left out; {} FUTEX_WAKE, {} found a sleeper; {} FUTEX_WAIT, {} slept",
            all.wakes, all.woke, all.waits, all.slept
        ),
        awake <= allowed && all.woke + awake == last && all.wakes <= last + 1,
    );
    r.param("handoffs_left_out", awake);
    r.add_evidence(
        "both threads stayed on their pinned CPUs (sched_getcpu at every acquisition)",
        format!("initiator on CPU {me}, peer on CPU {other}"),
        format!(
            "initiator {}/{}, peer {}/{} elsewhere",
            mine.wrong_cpu, mine.samples, theirs.wrong_cpu, theirs.samples
        ),
        mine.wrong_cpu + theirs.wrong_cpu == 0,
    );
    r.extra.insert("clock_offset_bound".into(), json!(offset));
    r.add_evidence(
        "the two CPUs' clocks agree well enough to subtract their stamps",
        format!(
            "|offset| ≤ {:.0}% of the median ({:.0} ns)",
            MAX_OFFSET_SHARE * 100.0,
            MAX_OFFSET_SHARE * median
        ),
        format!(
            "offset in [{:.0}, {:.0}] ns over {} ping-pongs",
            offset.lo_ns, offset.hi_ns, offset.rounds
        ),
        offset.abs_bound_ns() <= MAX_OFFSET_SHARE * median,
    );
    r.extra.insert(
        "futex_calls".into(),
        json!({"waits": all.waits, "slept": all.slept, "wakes": all.wakes, "woke": all.woke}),
    );
    ctx.push(r);
    Ok(())
}
