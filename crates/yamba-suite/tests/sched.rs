//! Ground truth for the `sched` area: gaps we inject ourselves (a spin of
//! known length, a sleep the kernel counts), a constructed timeline for the
//! switch pairing, and the kernel's own switch counts.

mod support;

use std::time::Duration;
use support::{attempts, serial};
use yamba_core::{BenchResult, Benchmark, Clock, Mode, RunConfig, Status};
use yamba_suite::sched::gaps::{self, Gap};
use yamba_suite::sched::{interruptions, preemption};

fn run(b: &'static Benchmark) -> Vec<BenchResult> {
    support::run_config(RunConfig::quick(), b, Mode::Hot)
}

/// A spin of known length injected into the loop is found at the moment it
/// was injected, never shorter than the spin as timed around it, and longer
/// only by the hook's own cost; the least disturbed one has the spin's
/// length within 1%. (Each spin is also timed on its own because this
/// machine's interruptions land inside some of them.) A sleep is found too,
/// at least as long as asked, and the kernel counted it as a voluntary switch.
#[test]
fn injected_gaps_are_found_with_their_length() {
    let _serial = serial();
    let clock = Clock::detect(20);
    let spin_ns = 30_000.0;
    attempts(|| {
        let mut injected: Vec<(u64, f64)> = Vec::with_capacity(1000);
        let period = clock.ns_to_ticks(3e6);
        let mut next = 0u64;
        let rec = gaps::record(&clock, 400e6, 250.0, 1 << 16, None, |now| {
            if next == 0 {
                next = now + period;
            } else if now >= next {
                let t0 = clock.start();
                clock.spin_ns(spin_ns);
                let t1 = clock.stop();
                injected.push((now, clock.ticks_to_ns(t1 - t0)));
                next = now + period;
            }
        });
        let found: Vec<(f64, f64)> = injected
            .iter()
            .filter_map(|&(t, d)| {
                let g = rec.gaps.iter().find(|g| g.start == t)?;
                Some((clock.ticks_to_ns(g.ticks()), d))
            })
            .collect();
        if injected.len() < 10 || found.len() != injected.len() {
            return Err(format!(
                "{} injected, {} found",
                injected.len(),
                found.len()
            ));
        }
        for &(gap, d) in &found {
            assert!(
                gap >= d && gap >= spin_ns,
                "gap {gap} shorter than its spin {d}"
            );
        }
        let mut extra: Vec<f64> = found.iter().map(|&(g, d)| g - d).collect();
        extra.sort_by(f64::total_cmp);
        let min_gap = found.iter().map(|f| f.0).fold(f64::INFINITY, f64::min);
        let extra_median = extra[extra.len() / 2];
        eprintln!(
            "{} spins of {spin_ns} ns found; shortest gap {min_gap:.0} ns; gap − timed spin: median {extra_median:.0} ns",
            found.len()
        );
        if (min_gap - spin_ns) / spin_ns <= 0.01 && extra_median <= 2_000.0 {
            Ok(())
        } else {
            Err(format!("shortest {min_gap}, extra median {extra_median}"))
        }
    });

    let sleep = Duration::from_millis(2);
    let mut slept = Vec::new();
    let mut first = 0u64;
    let every = clock.ns_to_ticks(15e6);
    let rec = gaps::record(&clock, 100e6, 250.0, 1 << 16, None, |now| {
        if first == 0 {
            first = now;
        } else if slept.len() < 3 && now >= first + every * (slept.len() as u64 + 1) {
            slept.push(now);
            std::thread::sleep(sleep);
        }
    });
    assert_eq!(
        slept.len(),
        3,
        "the loop ran too few iterations to sleep 3 times"
    );
    for t in &slept {
        let g = rec
            .gaps
            .iter()
            .find(|g| g.start == *t)
            .expect("a sleep not found as a gap");
        assert!(
            clock.ticks_to_ns(g.ticks()) >= 2e6,
            "{}",
            clock.ticks_to_ns(g.ticks())
        );
    }
    assert!(
        rec.voluntary >= 3,
        "kernel counted {} voluntary switches",
        rec.voluntary
    );
}

/// Pairing on a constructed timeline: A runs, is switched out for B (5
/// ticks lost), B for A (10), A has a tick that does not switch, A for B (5).
#[test]
fn switch_pairing_follows_a_known_timeline() {
    let _serial = serial();
    let a = [
        Gap {
            start: 100,
            end: 210,
        },
        Gap {
            start: 300,
            end: 303,
        },
        Gap {
            start: 400,
            end: 520,
        },
    ];
    let b = [
        Gap { start: 0, end: 105 },
        Gap {
            start: 200,
            end: 405,
        },
    ];
    let (ab, un_a) = preemption::pair_switches(&a, &b);
    let (ba, un_b) = preemption::pair_switches(&b, &a);
    assert_eq!(
        ab.iter().map(|s| (s.gap, s.cost_ticks)).collect::<Vec<_>>(),
        [(0, 5), (2, 5)]
    );
    assert_eq!(un_a, 1);
    assert_eq!(
        ba.iter().map(|s| (s.gap, s.cost_ticks)).collect::<Vec<_>>(),
        [(1, 10)]
    );
    assert_eq!(un_b, 1, "B's first gap (before A began) pairs with nothing");
}

#[test]
fn interruptions_are_reported_with_rate_and_lost_share() {
    let _serial = serial();
    let rs = run(&interruptions::INTERRUPTIONS);
    let ids: Vec<&str> = rs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "sched.interruptions",
            "sched.interruptions.rate",
            "sched.interruptions.lost"
        ]
    );
    for r in &rs {
        eprintln!("{} {:?} {:?} {:?}", r.id, r.status, r.median(), r.reason);
        assert_eq!(r.status, Status::Ok, "{:?}", r.reason);
        assert!(r.evidence.iter().all(|e| e.ok && e.gating));
    }
    assert_eq!(rs[1].unit, yamba_core::Unit::PerSecond);
    assert_eq!(rs[2].unit, yamba_core::Unit::Ratio);
    // The lost share of the whole pass is the gaps' total over the span.
    let report = &rs[0].extra["noise_report"];
    let lost = report["lost_share"].as_f64().unwrap();
    let total: f64 = rs[0].observations.iter().sum::<f64>() / 1e9;
    let span = report["duration_s"].as_f64().unwrap();
    assert!(
        (lost - total / span).abs() < 1e-6,
        "{lost} vs {total}/{span}"
    );
    assert!(rs[0].observations.iter().all(|&g| g > 250.0));
}

#[test]
fn noise_report_covers_the_asked_duration() {
    let _serial = serial();
    let clock = Clock::detect(20);
    yamba_core::affinity::pin_current_thread(yamba_core::affinity::default_cpu()).unwrap();
    let r = interruptions::noise_report(&clock, Duration::from_millis(200));
    eprintln!("{r:?}\nnote: {:?}", r.note());
    // It ends at the first read past 200 ms, which may follow a long gap.
    let max_gap_s = r.max_gap_ns.unwrap_or(0.0) / 1e9;
    assert!(
        r.duration_s >= 0.2 && r.duration_s <= 0.2 + max_gap_s + 1e-3,
        "{}",
        r.duration_s
    );
    assert!(r.threshold_ns >= 250.0);
    assert!((0.0..=1.0).contains(&r.lost_share));
    assert!(r.gaps as u64 >= r.involuntary_switches);
    assert_eq!(
        r.note().is_some(),
        r.lost_share > 0.02 || r.max_gap_ns.unwrap_or(0.0) > 5e6
    );
}

/// Two CPU-bound threads on one CPU: the switches pair up, each costs far
/// less than the time slice between them, and the gating evidence holds.
#[test]
fn preemption_costs_little_next_to_the_slice() {
    let _serial = serial();
    attempts(|| {
        let rs = run(&preemption::PREEMPTION);
        let r = &rs[0];
        for e in &r.evidence {
            eprintln!("  [{}] {}: {}", e.ok, e.check, e.observed);
        }
        let slice = r.extra["time_slice_median_ns"].as_f64().unwrap_or(f64::NAN);
        let cost = r.median().unwrap_or(f64::NAN);
        eprintln!(
            "{:?} {:?}: switch {cost:.0} ns, slice {slice:.0} ns",
            r.status, r.reason
        );
        if r.status == Status::Ok && cost > 0.0 && cost * 10.0 < slice {
            Ok(())
        } else {
            Err(format!(
                "{:?} {:?}, switch {cost} slice {slice}",
                r.status, r.reason
            ))
        }
    });
}
