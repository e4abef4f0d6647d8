//! The `ipc` area's deterministic checks: bad settings are one clear
//! error, one-way transfers carry their clock check, a FIFO round trip is
//! answered and leaves no name behind, and a peer CPU we take is caught. Its ground truths against measurements are in
//! measure_ipc.rs.

mod support;

use std::collections::BTreeMap;
use support::{find, serial};
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Status};
use yamba_suite::ipc;

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

fn evidence<'a>(r: &'a BenchResult, starts: &str) -> &'a yamba_core::Evidence {
    r.evidence
        .iter()
        .find(|e| e.check.starts_with(starts))
        .unwrap_or_else(|| panic!("{} has no evidence '{starts}…': {:?}", r.id, r.evidence))
}

#[test]
fn bad_delay_setting_is_one_clear_error() {
    let _serial = serial();
    let rs = run_with(&ipc::rtt::PEER_DELAY, &[("delay_us", "soon")]);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].status, Status::Failed);
    let why = rs[0].reason.as_deref().unwrap();
    assert!(why.contains("delay_us") && why.contains("soon"), "{why}");
    let rs = run_with(&ipc::rtt::RTT, &[("transports", "pipe,carrier_pigeon")]);
    assert!(
        rs[0].reason.as_deref().unwrap().contains("carrier_pigeon"),
        "{:?}",
        rs[0].reason
    );
}

/// One-way transfers: on one CPU both stamps come from one clock and the
/// results stand; across CPUs the clock check is present and gating, and a
/// latency shorter than 10× the offset bound is withheld, not reported.
#[test]
fn one_way_transfers_carry_their_clock_check() {
    let _serial = serial();
    let rs = run_with(&ipc::oneway::ONEWAY, &[]);
    for r in &rs {
        eprintln!("{}: {:?} {:?} {:?}", r.id, r.status, r.median(), r.reason);
    }
    for t in ["pipe", "futex", "shm_spin"] {
        let same = find(&rs, &format!("ipc.oneway.{t}.same_cpu"));
        assert!(
            matches!(same.status, Status::Ok | Status::Withheld),
            "{:?}",
            same.reason
        );
        assert!(evidence(same, "every message arrived").ok);
        let cross = find(&rs, &format!("ipc.oneway.{t}.cross_cpu"));
        if cross.status == Status::Skipped {
            continue;
        }
        let e = evidence(cross, "the two CPUs' clocks agree");
        assert!(e.gating);
        let bound = cross.extra["clock_offset_bound"]["lo_ns"]
            .as_f64()
            .unwrap()
            .abs()
            .max(
                cross.extra["clock_offset_bound"]["hi_ns"]
                    .as_f64()
                    .unwrap()
                    .abs(),
            );
        assert_eq!(e.ok, bound <= 0.1 * cross.median().unwrap(), "{e:?}");
        if !e.ok {
            assert_eq!(cross.status, Status::Withheld);
        }
    }
}

/// The cross-CPU gate can fail: with a thread of ours spinning on the
/// peer's CPU the whole time, at nice −20 so that the peer cannot preempt
/// it on wake-up, the peer does not have its CPU to itself, and the
/// cross-CPU round trip is withheld, naming that check.
/// The FIFO transport answers every request, and leaves nothing behind:
/// its names are gone before the first byte moves (no `yamba-fifo-*`
/// directory remains in the temporary directory).
#[test]
fn fifo_round_trips_are_answered_and_leave_no_name_behind() {
    let _serial = serial();
    let fifo_dirs = || -> std::collections::BTreeSet<std::ffi::OsString> {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .filter(|n| n.to_string_lossy().starts_with("yamba-fifo-"))
            .collect()
    };
    let before = fifo_dirs();
    let rs = run_with(&ipc::rtt::RTT, &[("transports", "fifo")]);
    let r = find(&rs, "ipc.rtt.fifo.same_cpu");
    assert_eq!(r.status, Status::Ok, "{:?}", r.reason);
    assert!(
        evidence(r, "every request got its reply").ok,
        "{:?}",
        r.evidence
    );
    assert!(r.description.contains("FIFO"), "{}", r.description);
    let left: Vec<_> = fifo_dirs().difference(&before).cloned().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn cross_cpu_round_trip_is_withheld_when_the_peer_cpu_is_taken() {
    let _serial = serial();
    let cpus = yamba_core::affinity::usable_cpus();
    let me = yamba_core::affinity::default_cpu();
    let Some(&other) = cpus.iter().rev().find(|&&c| c != me) else {
        yamba_testkit::skip!("one CPU only");
    };
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let running = std::sync::Arc::new(AtomicBool::new(false));
    let hog = {
        let (stop, running) = (stop.clone(), running.clone());
        std::thread::spawn(move || {
            yamba_core::affinity::pin_current_thread(other).unwrap();
            // SAFETY: setpriority on the calling thread only.
            let niced =
                unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as u32, -20) } == 0;
            assert!(niced, "needs root or CAP_SYS_NICE to outrank the peer");
            running.store(true, Ordering::Release);
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    };
    while !running.load(Ordering::Acquire) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let rs = run_with(&ipc::rtt::RTT, &[("transports", "eventfd")]);
    stop.store(true, Ordering::Relaxed);
    hog.join().unwrap();
    let r = find(&rs, "ipc.rtt.eventfd.cross_cpu");
    let e = evidence(r, "the peer had its CPU to itself");
    eprintln!("{:?}: {}", r.status, e.observed);
    assert!(!e.ok && e.gating);
    assert_eq!(r.status, Status::Withheld);
    assert!(r
        .reason
        .as_deref()
        .unwrap()
        .contains("the peer had its CPU to itself"));
}

/// lat_sem's round trip: the steps counted on both sides agree and the
/// token is conserved; a peer that gives the token twice (planted) breaks
/// both, and the number is withheld. The POSIX semaphores carry each
/// request's reply (request + 1) and the peer served every request.
#[test]
fn semaphore_hand_offs_are_counted_on_both_sides() {
    let _serial = serial();
    let two_cpus = yamba_core::affinity::other_cpu(yamba_core::affinity::default_cpu()).is_some();
    let rs = run_with(&ipc::sem::SYSV, &[]);
    for placement in ["same_cpu", "cross_cpu"] {
        let r = find(&rs, &format!("ipc.sem.sysv.{placement}"));
        if placement == "cross_cpu" && !two_cpus {
            assert_eq!(r.status, Status::Skipped);
            continue;
        }
        let e = evidence(r, "the hand-offs counted on both sides agree");
        assert!(e.ok, "{}: {e:?}", r.id);
        assert!(r.median().is_some_and(|m| m > 0.0), "{}", r.id);
    }
    let rs = run_with(&ipc::sem::SYSV, &[("ipc.sem.plant", "give_twice")]);
    let r = find(&rs, "ipc.sem.sysv.same_cpu");
    assert_eq!(r.status, Status::Withheld, "{:?}", r.evidence);
    let e = evidence(r, "the hand-offs counted on both sides agree");
    assert!(!e.ok, "{e:?}");
    let rs = run_with(&ipc::sem::POSIX, &[]);
    let r = find(&rs, "ipc.sem.posix.same_cpu");
    assert!(
        evidence(r, "every request got its reply").ok,
        "{:?}",
        r.evidence
    );
    assert!(r.median().is_some_and(|m| m > 0.0));
}

/// Uncontended, the futex lock makes no system call (it counts them) and
/// neither lock sleeps; contended, the lock alternates between the two
/// threads, every hand-off counted on both sides, each one a FUTEX_WAKE.
#[test]
fn locks_count_their_system_calls_and_hand_offs() {
    let _serial = serial();
    for mode in [Mode::Hot, Mode::Cold] {
        let rs = run_mode(&ipc::lock::FUTEX, &[], mode);
        let r = find(&rs, "ipc.lock.futex");
        let e = evidence(r, "the uncontended lock made no system call");
        assert!(
            e.ok && e.observed.starts_with("0 FUTEX_WAIT + 0 FUTEX_WAKE"),
            "{e:?}"
        );
        let rs = run_mode(&ipc::lock::MUTEX, &[], mode);
        let r = find(&rs, "ipc.lock.mutex");
        assert!(evidence(r, "every lock and unlock succeeded").ok);
        assert!(evidence(r, "the lock never slept").ok, "{:?}", r.evidence);
    }
    let rs = run_with(&ipc::handoff::HANDOFF, &[]);
    let r = find(&rs, "ipc.lock.handoff.cross_cpu");
    if yamba_core::affinity::other_cpu(yamba_core::affinity::default_cpu()).is_none() {
        assert_eq!(r.status, Status::Skipped);
        return;
    }
    let e = evidence(r, "the owners alternated");
    assert!(e.ok, "{e:?}");
    // Every hand-off stamped, but those whose waiter had not slept yet
    // (a host that took its CPU away), which are left out and counted.
    let n = r.observations.len() as u64;
    let left_out = r.params["handoffs_left_out"].as_u64().unwrap();
    assert_eq!(n + left_out, 2 * 1000, "every hand-off stamped or left out");
    assert!(left_out <= 20, "{left_out} hand-offs left out of 2000");
    let calls = &r.extra["futex_calls"];
    assert!(calls["wakes"].as_u64().unwrap() >= n, "{calls}");
    assert!(calls["waits"].as_u64().unwrap() >= n, "{calls}");
}

/// The futex lock itself, two threads, no benchmark: N increments under
/// the lock from each thread give exactly 2N (mutual exclusion holds),
/// and the contended runs did enter the kernel.
#[test]
fn futex_lock_excludes() {
    let _serial = serial();
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    struct Counted {
        lock: ipc::lock::FutexLock,
        // Read and written only under the lock, in two steps, so a lost
        // update shows if the lock does not exclude.
        count: AtomicU64,
    }
    let c = Arc::new(Counted {
        lock: Default::default(),
        count: AtomicU64::new(0),
    });
    let n = 200_000u64;
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let c = c.clone();
            std::thread::spawn(move || {
                let mut calls = ipc::lock::Calls::default();
                for _ in 0..n {
                    calls.add(c.lock.lock());
                    let v = c.count.load(Ordering::Relaxed);
                    std::hint::black_box(v);
                    c.count.store(v + 1, Ordering::Relaxed);
                    calls.add(c.lock.unlock());
                }
                calls
            })
        })
        .collect();
    let calls: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(c.count.load(Ordering::Relaxed), 2 * n);
    assert_eq!(c.lock.word.load(Ordering::Relaxed), 0, "left unlocked");
    eprintln!("{calls:?}");
}
