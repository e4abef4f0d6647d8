//! TIME_BLOCK's times against ground truth outside its counter: blocks
//! that spin a known time of CLOCK_MONOTONIC (std::time::Instant in Rust,
//! clock_gettime in C), whose mean in counter ticks must be that time at
//! the counter's rate, itself measured against CLOCK_MONOTONIC (a spin of
//! N ticks of the counter under test would only check the accounting).
//! Measurement checks only (docs/testing.md); the exact counts are in
//! time_block.rs.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};
use support::{build_c, marker_line, parse, repo_root, run_c, site, ticks_per_ns};
use yamba_core::coreclock::{lowest_adds_per_cycle, SHARED_CORE_SHARE};
use yamba_core::time_block;
use yamba_testkit::{alone, check, skip, Accept};

/// The spin sites' length: 10 µs of CLOCK_MONOTONIC.
const SPIN_NS: u64 = 10_000;

/// The C header's spin site (200 spins of 10 µs: the site's first
/// execution also registers it and reads the environment, ~10 µs, which
/// 40 spins would show as +2.5%). Rules: the median over attempts of the
/// site's total ticks / (what the spins took by CLOCK_MONOTONIC, at the
/// counter's rate) is 1 within 5%; the cost of an empty TIME_BLOCK (BASE
/// method, minimum) is under 1 µs. The spins' own clock is the ground
/// truth, not their nominal 10 µs: an interruption inside a spin lengthens
/// it for both clocks. Against 10 µs, on an Intel Xeon guest under a busy
/// neighbour, four runs of the check read [1.025, 1.035] to [1.051,
/// 1.227] (that one failed); against the spins' own time, [1.008, 1.011].
#[test]
fn c_header_times_a_known_block() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let exe = match build_c(dir.path()) {
        Ok(e) => e,
        Err(why) => skip!("{why}"),
    };
    let known = repo_root().join("tests/c/time_block_known.c");
    let spin_line = marker_line(&known, "SITE:spin");
    check!(
        "spin site's total / its spins' CLOCK_MONOTONIC time",
        Accept::within(1.0, 0.05)
    )
    .on_own_core(lowest_adds_per_cycle, SHARED_CORE_SHARE)
    .run(|| {
        let rate = ticks_per_ns();
        let (stdout, stderr) = run_c(&exe, SPIN_NS, 200, 1, 1);
        eprintln!("{stdout}{stderr}");
        let lines = parse(&stdout);
        let spin = site(&lines, "time_block_known.c", spin_line);
        assert_eq!(spin.len(), 1, "{stdout}");
        assert_eq!(spin[0].executions, 200);
        let spun_ns: u64 = stderr
            .split_whitespace()
            .find_map(|w| w.strip_prefix("spun_ns="))
            .and_then(|v| v.parse().ok())
            .expect("spun_ns line");
        assert!(spun_ns >= 200 * SPIN_NS, "{spun_ns} ns for 200 spins");
        spin[0].total as f64 / (spun_ns as f64 * rate)
    });
    check!("an empty TIME_BLOCK, ns (minimum)", Accept::at_most(1000.0)).run(|| {
        let rate = ticks_per_ns();
        let (_, stderr) = run_c(&exe, 1000, 1, 1, 1);
        let min: u64 = stderr
            .split_whitespace()
            .find_map(|w| w.strip_prefix("min="))
            .and_then(|v| v.parse().ok())
            .expect("overhead line");
        min as f64 / rate
    });
}

/// Periodic reports every 10 ms to a chosen descriptor, over 400 spins of
/// 0.5 ms of CLOCK_MONOTONIC (≥ 0.2 s of spinning, so at least three
/// reports whatever the machine's speed): every attempt, the reports go to
/// fd 2 and their counts add up exactly. Rule: in the median attempt at
/// least half the reports show the interval over 50% busy in the site.
#[test]
fn c_periodic_reports_add_up_and_go_to_the_chosen_fd() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let exe = match build_c(dir.path()) {
        Ok(e) => e,
        Err(why) => skip!("{why}"),
    };
    let known = repo_root().join("tests/c/time_block_known.c");
    let spins = 400u64;
    check!("share of reports over 50% busy", Accept::at_least(0.5)).run(|| {
        let out = Command::new(&exe)
            .args(["500000", &spins.to_string(), "1", "10"])
            .env("YAMBA_TIME_BLOCK_INTERVAL", "0.01")
            .env("YAMBA_TIME_BLOCK_FD", "2")
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_empty(), "reports went to fd 2, not stdout");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let report: String = stderr
            .lines()
            .filter(|l| !l.starts_with("overhead_ticks") && !l.starts_with("spun_ns="))
            .map(|l| format!("{l}\n"))
            .collect();
        let lines = parse(&report);
        let spin = site(
            &lines,
            "time_block_known.c",
            marker_line(&known, "SITE:spin"),
        );
        assert!(
            spin.len() >= 3,
            "several periodic reports expected:\n{report}"
        );
        let total: u64 = spin.iter().map(|l| l.executions).sum();
        assert_eq!(
            total, spins,
            "reports cover disjoint intervals: they add up"
        );
        spin.iter().filter(|l| l.percent > 50.0).count() as f64 / spin.len() as f64
    });
}

/// Spins `ns` nanoseconds of CLOCK_MONOTONIC; what it took, interruptions
/// included.
fn spin(ns: u64) -> Duration {
    let t0 = Instant::now();
    let d = Duration::from_nanos(ns);
    loop {
        let spun = t0.elapsed();
        if spun >= d {
            return spun;
        }
        std::hint::spin_loop();
    }
}

/// The Rust macro, as the C header: the median over attempts of the spin
/// site's total ticks / (what its spins took by Instant, at the counter's
/// rate) is 1 within 5%; an empty time_block! costs under 1 µs (BASE
/// method, minimum). Against the spins' nominal 10 µs, attempts on an
/// Intel Xeon guest under a busy neighbour read up to 1.5 (interruptions
/// inside the spins, which both clocks see), four runs [1.008, 1.009] to
/// [1.009, 1.133]; against their own time, [1.006, 1.007].
#[test]
fn rust_macro_times_a_known_block() {
    let _alone = alone();
    time_block::set_interval(0.0);
    let here = file!().rsplit('/').next().unwrap();
    check!(
        "spin site's total / its spins' CLOCK_MONOTONIC time",
        Accept::within(1.0, 0.05)
    )
    .run(|| {
        let rate = ticks_per_ns();
        let _ = time_block::take_report();
        let spins = 40u64;
        let mut spun = Duration::ZERO;
        for _ in 0..spins {
            yamba_core::time_block!(spun += spin(SPIN_NS));
        }
        let spin_line = line!() - 2;
        let report = time_block::take_report();
        eprintln!("{report}");
        let lines = parse(&report);
        let s = site(&lines, here, spin_line);
        assert_eq!(s.len(), 1, "{report}");
        assert_eq!(s[0].executions, spins);
        assert!(spun >= Duration::from_nanos(spins * SPIN_NS), "{spun:?}");
        s[0].total as f64 / (spun.as_nanos() as f64 * rate)
    });
    check!(
        "an empty time_block!, ns (minimum)",
        Accept::at_most(1000.0)
    )
    .run(|| {
        let rate = ticks_per_ns();
        overhead_ticks() as f64 / rate
    });
}

/// The cost of an empty time_block!, by the BASE method: an outer counter
/// pair around it, its minimum minus the minimum of an empty pair.
fn overhead_ticks() -> u64 {
    let n = 20_000;
    let mut empty = Vec::with_capacity(n);
    let mut with = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = time_block::start();
        let t1 = time_block::stop();
        empty.push(t1 - t0);
    }
    for _ in 0..n {
        let t0 = time_block::start();
        yamba_core::time_block!({});
        let t1 = time_block::stop();
        with.push(t1 - t0);
    }
    let min = |v: &[u64]| v.iter().copied().min().unwrap();
    let o = min(&with).saturating_sub(min(&empty));
    eprintln!(
        "empty time_block! overhead ({}): {o} ticks; BASE {} ticks",
        time_block::counter_name(),
        min(&empty)
    );
    o
}
