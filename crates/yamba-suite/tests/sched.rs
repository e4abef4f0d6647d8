//! The `sched` area's deterministic checks: a constructed timeline for the
//! switch pairing, and a noise report's consistency with itself. Gaps we
//! inject ourselves and what the machine's load does are measurement
//! checks (measure_sched.rs).

mod support;

use std::time::Duration;
use support::serial;
use yamba_core::Clock;
use yamba_suite::sched::gaps::Gap;
use yamba_suite::sched::{interruptions, preemption};

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

/// Every timer's wake-ups: as many as requested, none before its deadline,
/// on the pinned CPU, with the timer slack at 1 ns and the lateness's tail
/// kept (p99 ≤ max, median ≤ p99).
#[test]
fn wakeups_are_counted_and_never_early() {
    use yamba_core::{Mode, RunConfig, Status};
    use yamba_suite::sched::wakeup;
    let _serial = serial();
    for b in [&wakeup::NANOSLEEP, &wakeup::TIMERFD, &wakeup::ITIMER] {
        let rs = support::run_config(RunConfig::quick(), b, Mode::Hot);
        assert_eq!(rs.len(), wakeup::PERIODS.len(), "{}", b.id);
        for (r, (suffix, period, n)) in rs.iter().zip(wakeup::PERIODS) {
            eprintln!("{} {:?} {:?} {:?}", r.id, r.status, r.median(), r.reason);
            assert_eq!(r.id, format!("{}.{suffix}", b.id));
            assert_eq!(r.params["period_ns"], period);
            assert_eq!(r.observations.len(), n, "{}", r.id);
            for check in [
                "no wake-up before its deadline",
                "every requested wake-up came, once",
                "the thread stayed on its CPU",
            ] {
                let e = r
                    .evidence
                    .iter()
                    .find(|e| e.check.starts_with(check))
                    .unwrap();
                assert!(e.ok, "{}: {e:?}", r.id);
            }
            assert_eq!(r.params["timer_slack_ns"], 1, "{}", r.id);
            let l = &r.extra["lateness_ns"];
            let (p50, p99, max) = (
                l["p50"].as_f64().unwrap(),
                l["p99"].as_f64().unwrap(),
                l["max"].as_f64().unwrap(),
            );
            assert!(0.0 <= p50 && p50 <= p99 && p99 <= max, "{l}");
            assert_eq!(r.status, Status::Ok, "{:?}", r.reason);
        }
    }
}
