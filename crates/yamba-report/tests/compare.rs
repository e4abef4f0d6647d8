//! compare: a known 10% shift is found, no shift is (almost) never
//! claimed, and nothing is dropped silently.

mod support;

use yamba_core::results::{Mode, Status};
use yamba_core::units::Unit;
use yamba_report::compare::{compare, hodges_lehmann_shift_ci, table, Verdict};

fn pair(
    seed: u64,
    n: usize,
    shift: f64,
    unit: Unit,
) -> (
    yamba_core::results::ResultsFile,
    yamba_core::results::ResultsFile,
) {
    let a = support::file(vec![support::result(
        "cpu.x",
        Mode::Hot,
        unit,
        support::lognormal(seed, n, 100.0, 0.05),
    )]);
    let b = support::file(vec![support::result(
        "cpu.x",
        Mode::Hot,
        unit,
        support::lognormal(seed + 1_000_000, n, 100.0 * (1.0 + shift), 0.05),
    )]);
    (a, b)
}

#[test]
fn detects_a_ten_percent_slowdown() {
    let mut detected = 0;
    for seed in 0..50 {
        let (a, b) = pair(seed, 30, 0.10, Unit::Nanoseconds);
        let c = compare(&a, &b, 0.95);
        let r = &c.rows[0];
        if r.verdict == Verdict::Slower {
            detected += 1;
        }
        let (lo, hi) = r.ci_pct.unwrap();
        assert!(lo <= r.change_pct.unwrap() && r.change_pct.unwrap() <= hi);
    }
    eprintln!("10% shift: detected in {detected} of 50 seeds");
    // 5% noise, n = 30 a side, a 10% shift: the test has power ≈ 1.
    assert!(detected >= 49, "detected in only {detected} of 50");
    let (a, b) = pair(7, 30, 0.10, Unit::Nanoseconds);
    let r = &compare(&a, &b, 0.95).rows[0];
    assert!((r.change_pct.unwrap() - 10.0).abs() < 4.0, "{r:?}");
    assert!(r.p_value.unwrap() < 0.001);
    assert!(c_regression(&a, &b, 5.0) && !c_regression(&a, &b, 20.0));
}

fn c_regression(
    a: &yamba_core::results::ResultsFile,
    b: &yamba_core::results::ResultsFile,
    t: f64,
) -> bool {
    !compare(a, b, 0.95).regressions(t).is_empty()
}

#[test]
fn bandwidth_up_is_faster() {
    let (a, b) = pair(3, 30, 0.10, Unit::GigabytesPerSecond);
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Faster);
    assert!(r.worse_pct.unwrap() < -5.0);
    let r = &compare(&b, &a, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower);
    assert!(c_regression(&b, &a, 5.0));
}

/// With no shift, "significant" at 95% must come up in about 5% of runs:
/// at most 10% over 200 seeds.
#[test]
fn false_positive_rate_under_no_shift() {
    let trials = 200;
    let mut claimed = 0;
    for seed in 0..trials {
        let (a, b) = pair(seed * 7 + 1, 25, 0.0, Unit::Nanoseconds);
        if compare(&a, &b, 0.95).rows[0].verdict != Verdict::Same {
            claimed += 1;
        }
    }
    let rate = claimed as f64 / trials as f64;
    eprintln!("no shift: {claimed} of {trials} seeds called significant at 95%");
    assert!(rate <= 0.10, "false-positive rate {rate}");
    // At 99% the rate drops.
    let mut claimed99 = 0;
    for seed in 0..trials {
        let (a, b) = pair(seed * 7 + 1, 25, 0.0, Unit::Nanoseconds);
        if compare(&a, &b, 0.99).rows[0].verdict != Verdict::Same {
            claimed99 += 1;
        }
    }
    eprintln!("no shift: {claimed99} of {trials} seeds called significant at 99%");
    assert!(claimed99 <= claimed, "{claimed99} > {claimed}");
}

#[test]
fn lists_everything_not_compared() {
    let a = support::sample_file();
    let mut b = support::sample_file();
    b.results.remove(2); // cpu.call.args3@hot: only in A
    b.results.push(support::result(
        "net.new",
        Mode::Hot,
        Unit::Nanoseconds,
        vec![1.0, 2.0],
    ));
    b.results[0].status = Status::Failed;
    b.results[0].reason = Some("crashed".into());
    let c = compare(&a, &b, 0.95);
    let row = |k: &str| {
        c.rows
            .iter()
            .find(|r| r.key == k)
            .unwrap_or_else(|| panic!("{k} missing"))
    };
    assert_eq!(c.rows.len(), a.results.len() + 1);
    assert_eq!(row("cpu.call.args3@hot").note.as_deref(), Some("only in A"));
    assert_eq!(row("net.new@hot").note.as_deref(), Some("only in B"));
    assert_eq!(
        row("cpu.syscall.getppid@hot").note.as_deref(),
        Some("failed in B")
    );
    assert_eq!(
        row("mem.pagefault@cold").note.as_deref(),
        Some("withheld in A, withheld in B")
    );
    assert_eq!(
        row("fs.read.remote@hot").note.as_deref(),
        Some("skipped in A, skipped in B")
    );
    for k in [
        "cpu.call.args3@hot",
        "net.new@hot",
        "cpu.syscall.getppid@hot",
        "mem.pagefault@cold",
    ] {
        assert_eq!(row(k).verdict, Verdict::NotCompared);
    }
    // Same data on both sides: no difference.
    assert_eq!(row("cpu.syscall.getppid@cold").verdict, Verdict::Same);
    let t = table(&c);
    for k in ["only in A", "only in B", "failed in B", "withheld in A"] {
        assert!(t.contains(k), "{k} not in\n{t}");
    }
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert!(
        t.ends_with("0 slower, 0 faster, 3 unchanged, 5 not compared (confidence 95%, changes under 0.1% not called)\n"),
        "{t}"
    );
}

#[test]
fn warns_when_the_machine_changed() {
    let a = support::sample_file();
    let mut b = support::sample_file();
    b.machine.cpu_model = "Intel Xeon Other".into();
    b.machine.kernel = "6.9.0".into();
    b.clock.kind = yamba_core::clock::ClockKind::MonotonicRaw;
    b.tool.version = "0.2.0".into();
    b.config = serde_json::json!({"quick": true, "cpu": 1, "no_pin": false});
    let w = compare(&a, &b, 0.95).warnings;
    for what in [
        "CPU model",
        "kernel",
        "clock",
        "yamba version",
        "cpu differs",
    ] {
        assert!(w.iter().any(|l| l.contains(what)), "{what} not in {w:?}");
    }
    assert!(table(&compare(&a, &b, 0.95)).starts_with("warning: "));
}

/// An x86-64 run against an aarch64 one: every result lined up by id and
/// compared, and the first warning says the architectures differ.
#[test]
fn lines_up_results_across_architectures() {
    let a = support::sample_file();
    let mut b = support::sample_file();
    b.machine.arch = "aarch64".into();
    b.machine.cpu_model = "CPU part 0x051".into();
    b.clock.kind = yamba_core::clock::ClockKind::ArmVirtualCounter;
    for r in &mut b.results {
        r.adapter = "linux-aarch64".into();
    }
    let c = compare(&a, &b, 0.95);
    assert!(
        c.warnings[0].starts_with("architectures differ: x86_64 in A, aarch64 in B"),
        "{:?}",
        c.warnings
    );
    assert_eq!(c.rows.len(), a.results.len());
    for (row, r) in c.rows.iter().zip(&a.results) {
        assert_eq!(row.key, r.key());
        assert!(
            row.status_a.is_some() && row.status_b.is_some(),
            "{} not lined up: {:?}",
            row.key,
            row.note
        );
    }
    assert!(table(&c).starts_with("warning: architectures differ"));
    assert!(compare(&a, &a, 0.95)
        .warnings
        .iter()
        .all(|w| !w.contains("architecture")));
}

#[test]
fn values_at_or_below_zero_use_the_shift() {
    // A loop time after subtracting the dummy loop can be ≤ 0.
    let a: Vec<f64> = (0..30).map(|i| -1.0 + i as f64 * 0.1).collect();
    let b: Vec<f64> = a.iter().map(|v| v + 2.0).collect();
    let (d, lo, hi) = hodges_lehmann_shift_ci(&a, &b, 0.95).unwrap();
    assert!((d - 2.0).abs() < 1e-9 && lo < 2.0 && hi > 2.0);
    let fa = support::file(vec![support::result(
        "cpu.y",
        Mode::Hot,
        Unit::Nanoseconds,
        a,
    )]);
    let fb = support::file(vec![support::result(
        "cpu.y",
        Mode::Hot,
        Unit::Nanoseconds,
        b,
    )]);
    let r = &compare(&fa, &fb, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
}

/// Large samples (BASE keeps 20 000 observations) compare in bounded time
/// and memory, and a 10% shift is still measured as 10%.
#[test]
fn large_samples_are_thinned_not_dropped() {
    let a = support::file(vec![support::result(
        "cpu.base",
        Mode::Hot,
        Unit::Nanoseconds,
        support::lognormal(5, 20_000, 100.0, 0.05),
    )]);
    let b = support::file(vec![support::result(
        "cpu.base",
        Mode::Hot,
        Unit::Nanoseconds,
        support::lognormal(6, 20_000, 110.0, 0.05),
    )]);
    let t = std::time::Instant::now();
    let r = &compare(&a, &b, 0.95).rows[0];
    assert!(t.elapsed().as_secs_f64() < 5.0, "took {:?}", t.elapsed());
    assert_eq!(r.verdict, Verdict::Slower);
    let (lo, hi) = r.ci_pct.unwrap();
    assert!(lo < 10.0 && 10.0 < hi && hi - lo < 2.0, "[{lo}, {hi}]");
    assert_eq!((r.n_a, r.n_b), (20_000, 20_000));
}

/// A change smaller than the printed precision is not called, however
/// many observations make it "significant".
#[test]
fn negligible_changes_are_not_called() {
    let a = support::lognormal(21, 2000, 100.0, 0.001);
    let b: Vec<f64> = a.iter().map(|v| v * 1.0005).collect();
    let fa = support::file(vec![support::result(
        "cpu.b",
        Mode::Hot,
        Unit::Nanoseconds,
        a,
    )]);
    let fb = support::file(vec![support::result(
        "cpu.b",
        Mode::Hot,
        Unit::Nanoseconds,
        b,
    )]);
    let c = compare(&fa, &fb, 0.95);
    let r = &c.rows[0];
    assert!(r.p_value.unwrap() < 0.05, "{r:?}");
    assert_eq!(r.verdict, Verdict::Same, "{r:?}");
    assert!(c.min_change_pct >= 0.1);
}
