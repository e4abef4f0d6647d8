//! Ground truth for the `ipc` area: a peer that waits a known time, the
//! kernel's own context-switch counts, a clock offset we put there
//! ourselves, and orderings no transport can break. Ratios and differences
//! measured in one run, never absolute times; statistical checks get up to
//! three attempts (the machine is shared and noisy).

mod support;

use std::collections::BTreeMap;
use support::{attempts, find, serial};
use yamba_core::{BenchResult, Benchmark, Clock, Mode, RunConfig, Status};
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
fn peer_spinning_x_us_grows_the_round_trip_by_x() {
    let _serial = serial();
    let x_us = 50.0;
    attempts(|| {
        let rs = run_with(&ipc::rtt::PEER_DELAY, &[("delay_us", "50")]);
        let r0 = find(&rs, "ipc.groundtruth.peer_delay.delay_0");
        let r1 = find(&rs, "ipc.groundtruth.peer_delay.delay_x");
        let grew = r1.median().unwrap() - r0.median().unwrap();
        eprintln!(
            "round trip {:.0} → {:.0} ns: grew {grew:.0} ns for {x_us} µs",
            r0.median().unwrap(),
            r1.median().unwrap()
        );
        // The benchmark's own gating check must agree with ours.
        let check = evidence(r1, "the round trip grew");
        let within = ((grew - x_us * 1e3) / (x_us * 1e3)).abs() <= 0.02;
        assert_eq!(check.ok, within, "{check:?}");
        if within && r1.status == Status::Ok && r0.status == Status::Ok {
            Ok(())
        } else {
            Err(format!(
                "grew {grew:.0} ns, status {:?}/{:?} {:?}",
                r0.status, r1.status, r1.reason
            ))
        }
    });
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

/// Each context-switch result carries the kernel's switch count as gating
/// evidence, and it holds: one switch per party per round trip.
#[test]
fn context_switches_are_counted_by_the_kernel() {
    let _serial = serial();
    for b in [&ipc::ctxsw::PIPE, &ipc::ctxsw::FUTEX] {
        attempts(|| {
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
            let rt = r.extra["round_trip_median_ns"].as_f64().unwrap();
            let sw = r.median().unwrap();
            assert!(e.gating);
            if r.status == Status::Ok && e.ok && sw > 0.0 && sw < rt / 2.0 {
                Ok(())
            } else {
                Err(format!("{}: {:?} {:?}", r.id, r.status, r.reason))
            }
        });
    }
}

/// Every transport × placement is present, once, in the results and in
/// the comparison table; skipped ones say why; and the one ordering no
/// machine can break holds: polling shared memory across CPUs (no kernel)
/// is far cheaper than any same-CPU round trip through the kernel.
#[test]
fn round_trip_table_covers_every_transport_and_placement() {
    let _serial = serial();
    let rs = run_with(&ipc::rtt::RTT, &[]);
    let table = find(&rs, "ipc.rtt");
    let rows = table.extra["comparison"].as_array().unwrap();
    assert_eq!(rows.len(), 14);
    for t in ipc::transport::Transport::ALL {
        for p in ["same_cpu", "cross_cpu"] {
            let id = format!("ipc.rtt.{}.{p}", t.name());
            let r = find(&rs, &id);
            assert!(
                rows.iter().any(|row| row["id"] == id.as_str()),
                "{id} not in table"
            );
            match r.status {
                Status::Ok => {
                    assert!(r.median().unwrap() > 0.0, "{id}");
                    assert!(evidence(r, "every request got its reply").ok, "{id}");
                    assert!(evidence(r, "initiator and peer stayed").ok, "{id}");
                }
                Status::Skipped => {
                    assert!(r.reason.as_deref().is_some_and(|s| !s.is_empty()), "{id}")
                }
                s => eprintln!("{id}: {s:?} {:?}", r.reason),
            }
        }
    }
    let spin_same = find(&rs, "ipc.rtt.shm_spin.same_cpu");
    assert!(
        spin_same.description.contains("sched_yield"),
        "{}",
        spin_same.description
    );
    let spin = find(&rs, "ipc.rtt.shm_spin.cross_cpu");
    let pipe = find(&rs, "ipc.rtt.pipe.same_cpu");
    if spin.status == Status::Ok && pipe.status == Status::Ok {
        let (s, p) = (spin.median().unwrap(), pipe.median().unwrap());
        eprintln!("shm spin across CPUs {s:.0} ns, pipe on one CPU {p:.0} ns");
        assert!(s * 5.0 < p, "spin {s} vs pipe {p}");
    }
}

/// The offset bound finds an offset we add ourselves, and with none added
/// the invariant TSC's two CPUs agree to well under a microsecond.
#[test]
fn clock_offset_bound_finds_a_known_skew() {
    let _serial = serial();
    let cpus = yamba_core::affinity::usable_cpus();
    if cpus.len() < 2 {
        eprintln!("skipped: one CPU only");
        return;
    }
    let (a, b) = (cpus[cpus.len() - 1], cpus[0]);
    let clock = Clock::detect(20);
    let skew_ns = 1_000_000.0;
    let skewed =
        ipc::clocksync::offset_bound_skewed(&clock, a, b, 2000, clock.ns_to_ticks(skew_ns) as i64)
            .unwrap();
    eprintln!("skewed by 1 ms: {skewed:?}");
    assert!(
        skewed.lo_ns <= skew_ns + 1.0 && skew_ns - 1.0 <= skewed.hi_ns,
        "{skewed:?}"
    );
    assert!(skewed.abs_bound_ns() >= skew_ns * 0.99);
    let plain = ipc::clocksync::offset_bound(&clock, a, b, 2000).unwrap();
    eprintln!("no skew: {plain:?}");
    assert!(plain.lo_ns <= plain.hi_ns);
    assert!(
        plain.abs_bound_ns() < skewed.abs_bound_ns() / 10.0,
        "{plain:?}"
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

/// Worst case above best case: a round trip after the initiator evicted
/// the caches (and so, on one CPU, the peer's too) costs more than one in a
/// hot loop; the cold run's method says how it was taken.
#[test]
fn cold_round_trip_costs_more_than_hot() {
    let _serial = serial();
    attempts(|| {
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
        if cm > hm {
            Ok(())
        } else {
            Err(format!("cold {cm} not above hot {hm}"))
        }
    });
}

/// The cross-CPU gate can fail: with a thread of ours spinning on the
/// peer's CPU the whole time, at nice −20 so that the peer cannot preempt
/// it on wake-up, the peer does not have its CPU to itself, and the
/// cross-CPU round trip is withheld, naming that check.
#[test]
fn cross_cpu_round_trip_is_withheld_when_the_peer_cpu_is_taken() {
    let _serial = serial();
    let cpus = yamba_core::affinity::usable_cpus();
    let me = yamba_core::affinity::default_cpu();
    let Some(&other) = cpus.iter().rev().find(|&&c| c != me) else {
        eprintln!("skipped: one CPU only");
        return;
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
