//! P = a semaphore round trip between two processes: the token goes to
//! the peer through one semaphore and comes back through another.
//!
//! `ipc.sem.sysv` is lmbench's lat_sem: two System V semaphores, and each
//! party's whole step is one semop(2) of two operations done atomically —
//! take the token from its semaphore (−1, blocking while it is 0) and give
//! it to the other's (+1). The peer starts with one +1 to the initiator's
//! semaphore. An initiator's step completes only after the peer's
//! previous one, and the peer's only after the initiator's, so steps
//! alternate, one system call per hand-off. lmbench prints the time per
//! hand-off (its loop's time / 2n); yamba reports the round trip (two
//! hand-offs), as `ipc.rtt` does.
//!
//! `ipc.sem.posix`: two process-shared POSIX semaphores in shared memory,
//! sem_post to send and sem_wait to receive (glibc: a futex each, entering
//! the kernel only to sleep or to wake a sleeper), measured by `ipc.rtt`'s
//! template with its evidence (each reply is the request + 1, carried in
//! a shared word the semaphores order).
//!
//! Both on one CPU and across two (`.same_cpu`, `.cross_cpu`), hot and
//! cold as `ipc.rtt`.
//!
//! Evidence (gating) for `sysv`: the hand-offs counted on both sides
//! agree — the peer completed exactly as many steps as the initiator —
//! and the token was conserved (the two semaphores hold 0 and 1 at the
//! end: a step that gave without taking, or took twice, leaves another
//! sum); both parties stayed on their CPUs; across CPUs, the peer had its
//! CPU to itself. Informational: the kernel's switch counts per round trip.

use super::adapter;
use super::cold;
use super::peer::{add_cpu_evidence, add_pinned_evidence, CpuShare, Peer, PeerStats, Shared};
use super::rtt::{self, Placement};
use super::transport::Transport;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use yamba_core::harness::Measured;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Kind, Setting, Status, Unit};

/// The initiator's semaphore (lmbench's 1) and the peer's (lmbench's 0).
const INITIATOR: u16 = 1;
const PEER: u16 = 0;

/// `--set ipc.sem.plant=give_twice` (test only): the peer's step gives
/// the token twice, a planted defect the hand-off counts must catch.
pub const PLANT: Setting = Setting {
    key: "ipc.sem.plant",
    kind: Kind::Choice(&["none", "give_twice"]),
    default: "none",
    help: "test only: a planted defect (give_twice: the peer's semop gives the token twice)",
    aliases: &[],
};

pub static SYSV: Benchmark = Benchmark {
    id: "ipc.sem.sysv",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "System V semaphore round trip between two processes, lmbench's lat_sem: each step one semop taking the token and giving it on; same CPU and across CPUs",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_sysv,
    settings: &[PLANT],
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

pub static POSIX: Benchmark = Benchmark {
    id: "ipc.sem.posix",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "POSIX semaphore round trip between two processes (process-shared sem_t, sem_post / sem_wait); same CPU and across CPUs",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_posix,
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

fn skipped(ctx: &Ctx, suffix: &str, why: String) -> BenchResult {
    let mut r = ctx.result(Some(suffix));
    r.status = Status::Skipped;
    r.reason = Some(why);
    r
}

fn run_posix(ctx: &mut Ctx) -> Result<(), String> {
    for placement in [Placement::SameCpu, Placement::CrossCpu] {
        let suffix = placement.name();
        let mut r = match rtt::measure(ctx, Transport::PosixSem, placement, 0.0) {
            Ok(run) => run.result(ctx, suffix),
            Err(why) => skipped(ctx, suffix, why),
        };
        r.description = format!(
            "POSIX semaphore round trip: {}",
            Transport::PosixSem.describe()
        );
        ctx.push(r);
    }
    Ok(())
}

fn run_sysv(ctx: &mut Ctx) -> Result<(), String> {
    let give_twice = ctx.choice(PLANT.key)? == Some("give_twice");
    for placement in [Placement::SameCpu, Placement::CrossCpu] {
        let suffix = placement.name();
        let mut r = match measure_sysv(ctx, placement, give_twice) {
            Ok(run) => run.result(ctx, suffix),
            Err(why) => skipped(ctx, suffix, why),
        };
        if give_twice {
            r.warn("test only: a planted defect — the peer's step gives the token twice");
        }
        ctx.push(r);
    }
    Ok(())
}

/// What one lat_sem-shaped measurement saw.
pub struct SysvRun {
    placement: Placement,
    cpus: (usize, usize),
    measured: Measured,
    /// The initiator's completed steps (round trips) and failed semops.
    steps: u64,
    failed: u64,
    /// The peer's completed steps after the initiator stopped.
    served: u64,
    peer_errors: u64,
    /// The semaphores' values at the end: (initiator's, peer's).
    values: (Option<i32>, Option<i32>),
    client_cpu: (u64, u64),
    peer_cpu: (u64, u64),
    client_switches: (u64, u64),
    peer_switches: Option<(u64, u64)>,
    peer_cpu_use: Option<super::peer::OthersOnCpu>,
}

fn measure_sysv(ctx: &mut Ctx, placement: Placement, give_twice: bool) -> Result<SysvRun, String> {
    let cpus = placement.cpus(ctx)?;
    let sems = adapter::SysvSems::new(2)?;
    let stats = Shared::<PeerStats>::new_zeroed()?;
    let st: &PeerStats = &stats;
    let sems_ref = &sems;
    let peer_cpu = cpus.1;
    let give: i16 = if give_twice { 2 } else { 1 };
    let peer = Peer::spawn(peer_cpu, st, move || {
        if !sems_ref.op(&[(INITIATOR, 1)]) {
            st.errors.fetch_add(1, Ordering::Relaxed);
        }
        let mut n = 0u64;
        loop {
            if !sems_ref.op(&[(PEER, -1), (INITIATOR, give)]) {
                st.errors.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            n += 1;
            st.served.store(n, Ordering::Release);
            st.sample_cpu(n, peer_cpu);
        }
    })?;
    let me = cpus.0;
    let (mut steps, mut failed) = (0u64, 0u64);
    let (mut samples, mut wrong) = (0u64, 0u64);
    let peer_before = peer.switches();
    let share = CpuShare::start(&peer, peer_cpu);
    let sw0 = adapter::thread_switches();
    let (measured, outside) = cold::measure(ctx, || {
        if sems.op(&[(INITIATOR, -1), (PEER, 1)]) {
            steps += 1;
        } else {
            failed += 1;
        }
        if steps % 16 == 1 {
            samples += 1;
            if yamba_core::affinity::current_cpu() != Some(me) {
                wrong += 1;
            }
        }
    });
    let sw1 = adapter::thread_switches();
    let peer_after = peer.switches();
    let peer_cpu_use = share.finish();
    // The peer's last step needs only the initiator's last: wait for it
    // (or for a second, if it never comes).
    let t0 = Instant::now();
    while stats.served.load(Ordering::Acquire) < steps && t0.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_micros(100));
    }
    // Let a planted extra step (or any step too many) happen before counting.
    std::thread::sleep(Duration::from_millis(2));
    let served = stats.served.load(Ordering::Acquire);
    let values = (sems.value(INITIATOR), sems.value(PEER));
    let run = SysvRun {
        placement,
        cpus,
        measured,
        steps,
        failed,
        served,
        peer_errors: stats.errors.load(Ordering::Relaxed),
        values,
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
    };
    drop(peer);
    Ok(run)
}

impl SysvRun {
    fn result(self, ctx: &Ctx, suffix: &str) -> BenchResult {
        let mut r = ctx.measured_result(Some(suffix), self.measured);
        r.description =
            "System V semaphore round trip (lat_sem): one two-operation semop per step".into();
        r.param("placement", self.placement.name())
            .param("initiator_cpu", self.cpus.0)
            .param("peer_cpu", self.cpus.1)
            .param("peer", "forked process")
            .param("hand_offs_per_round_trip", 2);
        if let Some(m) = r.median() {
            r.param("lmbench_per_hand_off_ns", m / 2.0);
        }
        r.add_evidence(
            "the hand-offs counted on both sides agree and the token was conserved",
            format!(
                "initiator {} steps, peer {} steps, 0 failed; semaphores (initiator's, peer's) = (1, 0)",
                self.steps, self.steps
            ),
            format!(
                "initiator {} steps ({} failed), peer {} steps ({} failed); semaphores = ({}, {})",
                self.steps,
                self.failed,
                self.served,
                self.peer_errors,
                self.values.0.map_or("?".into(), |v| v.to_string()),
                self.values.1.map_or("?".into(), |v| v.to_string()),
            ),
            self.steps > 0
                && self.failed == 0
                && self.peer_errors == 0
                && self.served == self.steps
                && self.values == (Some(1), Some(0)),
        );
        add_pinned_evidence(&mut r, "step", self.cpus, self.client_cpu, self.peer_cpu);
        if self.placement == Placement::CrossCpu {
            let mean = r.summary.as_ref().map_or(f64::NAN, |s| s.mean);
            add_cpu_evidence(&mut r, self.cpus.1, self.peer_cpu_use, self.steps, mean);
        }
        let per = |s: (u64, u64)| (s.0 + s.1) as f64 / self.steps.max(1) as f64;
        r.add_note_evidence(
            "context switches per round trip (kernel counts)",
            match self.placement {
                Placement::SameCpu => "≈ 1 per party: each blocks in its semop once",
                Placement::CrossCpu => "≤ 1 per party (a party may find the token there)",
            },
            format!(
                "initiator {:.2}, peer {}",
                per(self.client_switches),
                self.peer_switches
                    .map_or("unknown".into(), |p| format!("{:.2}", per(p)))
            ),
            true,
        );
        r
    }
}
