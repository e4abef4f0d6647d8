//! Ground truth for the `ipc` area: a peer that waits a known time, the
//! kernel's own context-switch counts, a clock offset we put there
//! ourselves, and orderings no transport can break. Ratios and differences
//! measured in one run, never absolute times. Measurement checks only
//! (docs/testing.md): each decides on the median of independent runs.

mod support;

use std::collections::BTreeMap;
use support::find;
use yamba_core::coreclock::{lowest_adds_per_cycle, SHARED_CORE_SHARE};
use yamba_core::{BenchResult, Benchmark, Clock, Mode, RunConfig, Status};
use yamba_suite::ipc;
use yamba_testkit::{alone, check, premise_unmet, Accept};

fn run_with(b: &'static Benchmark, settings: &[(&str, &str)]) -> Vec<BenchResult> {
    run_mode(b, settings, Mode::Hot)
}

fn run_mode(b: &'static Benchmark, settings: &[(&str, &str)], mode: Mode) -> Vec<BenchResult> {
    let mut config = RunConfig::quick();
    config.settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<BTreeMap<_, _>>();
    support::run_config(config, b, mode)
}

/// The gating check a busy second CPU fails (yamba_suite::ipc::peer).
const PEER_CPU: &str = "the peer had its CPU to itself";

fn evidence<'a>(r: &'a BenchResult, starts: &str) -> &'a yamba_core::Evidence {
    r.evidence
        .iter()
        .find(|e| e.check.starts_with(starts))
        .unwrap_or_else(|| panic!("{} has no evidence '{starts}…': {:?}", r.id, r.evidence))
}

/// A peer that spins 50 µs per request grows the round trip by 50 µs.
/// Every attempt: the benchmark's own gating check agrees with ours. An
/// attempt whose results are not ok gives no value. Rule: the median
/// growth / 50 µs is 1 within 2%, on a core of its own: the growth is
/// the difference of two round trips measured one after the other, and a
/// round trip of a few µs that a shared core stretches by up to 40% in
/// one of them moves the growth by a few % (on an Intel Xeon guest whose
/// neighbour flickered the median sat at 1.020).
#[test]
fn peer_spinning_x_us_grows_the_round_trip_by_x() {
    let _alone = alone();
    let x_us = 50.0;
    check!("round-trip growth / 50 µs", Accept::within(1.0, 0.02))
        .attempts(5, 15)
        .on_own_core(lowest_adds_per_cycle, SHARED_CORE_SHARE)
        .run(|| {
            let rs = run_with(&ipc::rtt::PEER_DELAY, &[("delay_us", "50")]);
            let r0 = find(&rs, "ipc.groundtruth.peer_delay.delay_0");
            let r1 = find(&rs, "ipc.groundtruth.peer_delay.delay_x");
            let grew = r1.median().unwrap() - r0.median().unwrap();
            eprintln!(
                "round trip {:.0} → {:.0} ns: grew {grew:.0} ns for {x_us} µs",
                r0.median().unwrap(),
                r1.median().unwrap()
            );
            let check = evidence(r1, "the round trip grew");
            let within = ((grew - x_us * 1e3) / (x_us * 1e3)).abs() <= 0.02;
            assert_eq!(check.ok, within, "{check:?}");
            if r0.status != Status::Ok || (r1.status != Status::Ok && within) {
                return Err(format!("{:?}/{:?} {:?}", r0.status, r1.status, r1.reason));
            }
            Ok(grew / (x_us * 1e3))
        });
}

/// Each context-switch result carries the kernel's switch count as gating
/// evidence, and it holds: one switch per party per round trip. An attempt
/// whose result is not ok, or whose kernel count did not hold, gives no
/// value. Rule (per transport): the median switch cost is positive and
/// under half the round trip.
#[test]
fn context_switches_are_counted_by_the_kernel() {
    let _alone = alone();
    for b in [&ipc::ctxsw::PIPE, &ipc::ctxsw::FUTEX] {
        check!(
            format!("{}: switch cost / round trip", b.id),
            Accept::between(1e-9, 0.5)
        )
        .attempts(5, 15)
        .run(|| {
            let rs = run_with(b, &[]);
            let r = find(&rs, b.id);
            let e = evidence(r, "the kernel switched each party out once");
            eprintln!(
                "{}: {:?} {:?} median {:?}; {}",
                r.id,
                r.status,
                r.reason,
                r.median(),
                e.observed
            );
            assert!(e.gating);
            if r.status != Status::Ok || !e.ok {
                return Err(format!("{}: {:?} {:?}", r.id, r.status, r.reason));
            }
            let rt = r.extra["round_trip_median_ns"].as_f64().unwrap();
            Ok(r.median().unwrap() / rt)
        });
    }
}

/// Every transport × placement is present, once, in the results and in
/// the comparison table, and none failed: the benchmark reports a
/// transport it could not measure as skipped with the reason, and the only
/// reason this test accepts is one usable CPU for a cross-CPU placement
/// (then the premise is unmet, recorded). A result withheld in the full
/// run is measured again alone: rule, the median attempt is not withheld
/// (1) by a gating check other than "the peer had its CPU to itself" (0:
/// ok, or withheld by that one alone — the benchmark working as designed
/// on a machine whose other CPU is busy, recorded as a premise unmet; that
/// check itself is tested in ipc.rs). And the one ordering no machine can break: polling
/// shared memory across CPUs (no kernel) costs under a fifth of a same-CPU
/// round trip through a pipe (median of attempts).
#[test]
fn round_trip_table_covers_every_transport_and_placement() {
    let _alone = alone();
    let rs = run_with(&ipc::rtt::RTT, &[]);
    let table = find(&rs, "ipc.rtt");
    let rows = table.extra["comparison"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * ipc::transport::Transport::ALL.len());
    let one_cpu = yamba_core::affinity::usable_cpus().len() < 2;
    let mut withheld = Vec::new();
    for t in ipc::transport::Transport::ALL {
        for p in ["same_cpu", "cross_cpu"] {
            let id = format!("ipc.rtt.{}.{p}", t.name());
            let r = find(&rs, &id);
            assert!(
                rows.iter().any(|row| row["id"] == id.as_str()),
                "{id} not in table"
            );
            let why = r.reason.as_deref().unwrap_or("");
            match r.status {
                Status::Ok => {
                    assert!(r.median().unwrap() > 0.0, "{id}");
                    assert!(evidence(r, "every request got its reply").ok, "{id}");
                    assert!(evidence(r, "initiator and peer stayed").ok, "{id}");
                }
                Status::Skipped if one_cpu && p == "cross_cpu" => {
                    assert!(!why.is_empty(), "{id} skipped without a reason");
                    yamba_testkit::premise_unmet(
                        &yamba_testkit::this_test!(),
                        &format!("{id}: one usable CPU: {why}"),
                    );
                }
                Status::Withheld => withheld.push((t, p, id.clone())),
                s => panic!("{id}: {s:?}: {why}"),
            }
        }
    }
    let spin_same = find(&rs, "ipc.rtt.shm_spin.same_cpu");
    assert!(
        spin_same.description.contains("sched_yield"),
        "{}",
        spin_same.description
    );
    for (t, p, id) in withheld {
        eprintln!("{id} was withheld in the full run: measured again alone");
        let mut peer_busy = 0;
        check!(
            format!("{id} withheld by a check other than the peer's CPU (1) or not (0)"),
            Accept::at_most(0.0)
        )
        .attempts(5, 15)
        .run(|| {
            let rs = run_with(&ipc::rtt::RTT, &[("transports", t.name())]);
            let r = find(&rs, &format!("ipc.rtt.{}.{p}", t.name()));
            match r.status {
                Status::Ok => 0.0,
                Status::Withheld => {
                    let failed: Vec<&str> = r
                        .evidence
                        .iter()
                        .filter(|e| e.gating && !e.ok)
                        .map(|e| e.check.as_str())
                        .collect();
                    eprintln!("{id} withheld: {failed:?}");
                    if failed.iter().all(|c| c.starts_with(PEER_CPU)) {
                        peer_busy += 1;
                        0.0
                    } else {
                        1.0
                    }
                }
                s => panic!("{id}: {s:?}: {:?}", r.reason),
            }
        });
        if peer_busy > 0 {
            yamba_testkit::premise_unmet(
                &yamba_testkit::this_test!(),
                &format!("{id}: the peer's CPU was busy in {peer_busy} runs (withheld on that check alone)"),
            );
        }
    }
    if one_cpu {
        premise_unmet!("one usable CPU: no cross-CPU spin to compare with a pipe");
    }
    check!(
        "pipe on one CPU / shm spin across CPUs",
        Accept::at_least(5.0)
    )
    .attempts(5, 15)
    .run(|| {
        let rs = run_with(&ipc::rtt::RTT, &[("transports", "shm_spin,pipe")]);
        let spin = find(&rs, "ipc.rtt.shm_spin.cross_cpu");
        let pipe = find(&rs, "ipc.rtt.pipe.same_cpu");
        if spin.status != Status::Ok || pipe.status != Status::Ok {
            return Err(format!("{:?} {:?}", spin.reason, pipe.reason));
        }
        let (s, p) = (spin.median().unwrap(), pipe.median().unwrap());
        eprintln!("shm spin across CPUs {s:.0} ns, pipe on one CPU {p:.0} ns");
        Ok(p / s)
    });
}

/// A FIFO is a pipe with a name: the kernel moves its bytes with the same
/// code, so a same-CPU round trip over FIFOs (lmbench's lat_fifo) costs
/// about what one over pipes costs — not half (a reply missed) nor twice
/// (an extra crossing). On the AMD EPYC guest the FIFO was 1.05–1.08×
/// the pipe in every attempt, its inode on ext4 or tmpfs alike (the cause
/// of those few percent is not found). Each attempt measures both in one
/// fresh run; rule: the median of FIFO / pipe in [0.9, 1.2].
#[test]
fn a_fifo_round_trip_costs_a_pipe_round_trip() {
    check!(
        "FIFO / pipe round trip on one CPU",
        Accept::between(0.9, 1.2)
    )
    .attempts(5, 15)
    .run(|| {
        let rs = run_with(&ipc::rtt::RTT, &[("transports", "pipe,fifo")]);
        let pipe = find(&rs, "ipc.rtt.pipe.same_cpu");
        let fifo = find(&rs, "ipc.rtt.fifo.same_cpu");
        if pipe.status != Status::Ok || fifo.status != Status::Ok {
            return Err(format!("{:?} {:?}", pipe.reason, fifo.reason));
        }
        let (p, f) = (pipe.median().unwrap(), fifo.median().unwrap());
        eprintln!("pipe {p:.0} ns, FIFO {f:.0} ns");
        Ok(f / p)
    });
}

/// The offset bound finds an offset we add ourselves (1 ms: every attempt
/// the skewed bound covers it and is at least 0.99 ms, else no value), and
/// with none added the invariant TSC's two CPUs agree to well under it.
/// Rule: the median unskewed bound under a tenth of the skewed one.
#[test]
fn clock_offset_bound_finds_a_known_skew() {
    let _alone = alone();
    let cpus = yamba_core::affinity::usable_cpus();
    if cpus.len() < 2 {
        premise_unmet!("one usable CPU: no second clock to compare");
    }
    let (a, b) = (cpus[cpus.len() - 1], cpus[0]);
    let clock = Clock::detect(20);
    let skew_ns = 1_000_000.0;
    check!("unskewed bound / skewed bound", Accept::at_most(0.1))
        .attempts(5, 15)
        .run(|| {
            let skewed = ipc::clocksync::offset_bound_skewed(
                &clock,
                a,
                b,
                2000,
                clock.ns_to_ticks(skew_ns) as i64,
            )
            .unwrap();
            let plain = ipc::clocksync::offset_bound(&clock, a, b, 2000).unwrap();
            eprintln!("skewed by 1 ms: {skewed:?}; no skew: {plain:?}");
            assert!(plain.lo_ns <= plain.hi_ns);
            if !(skewed.lo_ns <= skew_ns + 1.0 && skew_ns - 1.0 <= skewed.hi_ns)
                || skewed.abs_bound_ns() < skew_ns * 0.99
            {
                return Err(format!("the skewed bound misses 1 ms: {skewed:?}"));
            }
            Ok(plain.abs_bound_ns() / skewed.abs_bound_ns())
        });
}

/// Worst case above best case: a round trip after the initiator evicted
/// the caches (and so, on one CPU, the peer's too) costs more than one in a
/// hot loop; the cold run's method says how it was taken (every attempt).
/// Rule: the median cold / hot at least 1.05.
#[test]
fn cold_round_trip_costs_more_than_hot() {
    let _alone = alone();
    check!("pipe round trip, cold / hot", Accept::at_least(1.05))
        .attempts(5, 15)
        .run(|| {
            let id = "ipc.rtt.pipe.same_cpu";
            let hot = run_mode(&ipc::rtt::RTT, &[("transports", "pipe")], Mode::Hot);
            let cold = run_mode(&ipc::rtt::RTT, &[("transports", "pipe")], Mode::Cold);
            let (h, c) = (find(&hot, id), find(&cold, id));
            assert_eq!(c.mode, Mode::Cold);
            assert!(
                c.method.as_ref().unwrap().kind == yamba_core::MethodKind::Single,
                "{:?}",
                c.method
            );
            let (hm, cm) = (h.median().unwrap(), c.median().unwrap());
            eprintln!("pipe round trip: hot {hm:.0} ns, cold {cm:.0} ns");
            cm / hm
        });
}

/// A lock no other thread wants costs less than one system call, and a
/// lock handed to a sleeping waiter on another CPU more than one: each
/// attempt runs cpu.syscall.getppid (libc's wrapper, a real crossing),
/// the two uncontended locks and the hand-off in fresh processes. Its
/// value is the number of the three orderings broken (printed); rule: the
/// median attempt breaks none.
#[test]
fn an_uncontended_lock_costs_less_than_a_system_call_a_hand_off_more() {
    let _alone = alone();
    if yamba_core::affinity::other_cpu(yamba_core::affinity::default_cpu()).is_none() {
        premise_unmet!("one usable CPU: no hand-off between two");
    }
    check!("lock orderings broken", Accept::at_most(0.0))
        .attempts(5, 15)
        .on_own_core(lowest_adds_per_cycle, SHARED_CORE_SHARE)
        .run(|| {
            let med = |b: &'static Benchmark, id: &str| -> Result<f64, String> {
                let rs = run_with(b, &[]);
                let r = find(&rs, id);
                match (r.status, r.median()) {
                    (Status::Ok, Some(m)) => Ok(m),
                    _ => Err(format!("{id}: {:?} {:?}", r.status, r.reason)),
                }
            };
            let syscall = med(&yamba_suite::cpu::syscall::GETPPID, "cpu.syscall.getppid.libc")?;
            let mutex = med(&ipc::lock::MUTEX, "ipc.lock.mutex")?;
            let futex = med(&ipc::lock::FUTEX, "ipc.lock.futex")?;
            let handoff = med(&ipc::handoff::HANDOFF, "ipc.lock.handoff.cross_cpu")?;
            eprintln!(
                "getppid {syscall:.1} ns; mutex {mutex:.1} ns, futex lock {futex:.1} ns; hand-off {handoff:.0} ns"
            );
            Ok::<f64, String>(
                [mutex < syscall, futex < syscall, handoff > syscall]
                    .iter()
                    .filter(|ok| !**ok)
                    .count() as f64,
            )
        });
}

/// lat_sem's round trip on one CPU costs less than a pipe round trip but
/// is of its kind: both are two sleeps, two wakes and two switches, with
/// one system call per hand-off for the semaphores against two for the
/// pipe (and a byte copied each way). Rule: the median attempt's sem /
/// pipe round trip within 0.25–1 (0.82 on the AMD EPYC KVM guest: the
/// switches dominate both).
#[test]
fn a_semaphore_round_trip_costs_less_than_a_pipe_round_trip() {
    let _alone = alone();
    check!(
        "sysv sem / pipe round trip, same CPU",
        Accept::between(0.25, 1.0)
    )
    .attempts(5, 15)
    .run(|| {
        let rs = run_with(&ipc::sem::SYSV, &[]);
        let sem = find(&rs, "ipc.sem.sysv.same_cpu");
        let rs = run_with(&ipc::rtt::RTT, &[("ipc.transports", "pipe")]);
        let pipe = find(&rs, "ipc.rtt.pipe.same_cpu");
        match (sem.status, sem.median(), pipe.status, pipe.median()) {
            (Status::Ok, Some(s), Status::Ok, Some(p)) => {
                eprintln!("sem {s:.0} ns, pipe {p:.0} ns");
                Ok(s / p)
            }
            _ => Err(format!("{:?} {:?}", sem.reason, pipe.reason)),
        }
    });
}
