//! compare: one sample is one process. A known 10% shift between runs is
//! found, no shift is (almost) never claimed even when processes differ
//! from run to run far more than observations inside one process do, too
//! few processes call nothing, and nothing is dropped silently.

mod support;

use yamba_report::compare::{compare, hodges_lehmann_shift_ci, table, Verdict};
use yamba_results::units::Unit;
use yamba_results::{Mode, Status};

/// Two runs of 6 processes × 30 observations; processes vary by 2% from
/// one to the next, observations by 5% inside a process; B shifted.
fn pair(
    seed: u64,
    shift: f64,
    unit: Unit,
) -> (yamba_results::ResultsFile, yamba_results::ResultsFile) {
    let run = |seed: u64, median: f64| {
        support::file(vec![support::blocked(
            "cpu.x",
            Mode::Hot,
            unit,
            support::processes(seed, 6, 30, median, 0.02, 0.05),
        )])
    };
    (
        run(seed, 100.0),
        run(seed + 1_000_000, 100.0 * (1.0 + shift)),
    )
}

#[test]
fn detects_a_ten_percent_slowdown() {
    let mut detected = 0;
    for seed in 0..50 {
        let (a, b) = pair(seed, 0.10, Unit::Nanoseconds);
        let c = compare(&a, &b, 0.95);
        let r = &c.rows[0];
        assert_eq!((r.blocks_a, r.blocks_b), (6, 6));
        if r.verdict == Verdict::Slower {
            detected += 1;
        }
        let (lo, hi) = r.ci_pct.unwrap();
        assert!(lo <= r.change_pct.unwrap() && r.change_pct.unwrap() <= hi);
    }
    eprintln!("10% shift: detected in {detected} of 50 seeds");
    // 2% between processes, 6 a side, a 10% shift: the test has power ≈ 1.
    assert!(detected >= 49, "detected in only {detected} of 50");
    let (a, b) = pair(7, 0.10, Unit::Nanoseconds);
    let r = &compare(&a, &b, 0.95).rows[0];
    assert!((r.change_pct.unwrap() - 10.0).abs() < 4.0, "{r:?}");
    // Complete separation of 6 and 6: the exact p is 2 / C(12, 6).
    assert!(r.p_value.unwrap() <= 2.0 / 924.0 + 1e-12, "{r:?}");
    assert!(c_regression(&a, &b, 5.0) && !c_regression(&a, &b, 20.0));
}

fn c_regression(a: &yamba_results::ResultsFile, b: &yamba_results::ResultsFile, t: f64) -> bool {
    !compare(a, b, 0.95).regressions(t).is_empty()
}

#[test]
fn bandwidth_up_is_faster() {
    let (a, b) = pair(3, 0.10, Unit::GigabytesPerSecond);
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Faster);
    assert!(r.worse_pct.unwrap() < -5.0);
    let r = &compare(&b, &a, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower);
    assert!(c_regression(&b, &a, 5.0));
}

/// With no shift, "significant" at 95% comes up in at most 5% of pairs
/// (the exact test is conservative): at most 7% over 400 seeds. The
/// processes differ by 2% from run to run while a process's median is
/// known to ±1%: a test on observations would call most pairs different.
#[test]
fn false_positive_rate_under_no_shift() {
    let trials = 400;
    let called = |confidence: f64| {
        (0..trials)
            .filter(|&seed| {
                let (a, b) = pair(seed * 7 + 1, 0.0, Unit::Nanoseconds);
                compare(&a, &b, confidence).rows[0].verdict != Verdict::Same
            })
            .count()
    };
    let (c95, c99) = (called(0.95), called(0.99));
    eprintln!("no shift: {c95} of {trials} pairs called at 95%, {c99} at 99%");
    assert!(
        c95 as f64 / trials as f64 <= 0.07,
        "false-alarm rate {c95}/{trials}"
    );
    assert!(
        c99 <= c95 && (c99 as f64 / trials as f64) <= 0.02,
        "{c99}/{trials}"
    );
    // The old model — every observation a sample — on the same pairs.
    let naive = (0..trials)
        .filter(|&seed| {
            let (a, b) = pair(seed * 7 + 1, 0.0, Unit::Nanoseconds);
            yamba_stats::mann_whitney_u(&a.results[0].observations, &b.results[0].observations)
                .unwrap()
                .p_value
                < 0.05
        })
        .count();
    eprintln!("observations as samples: {naive} of {trials} pairs called at 95%");
    assert!(naive > 4 * c95.max(1), "{naive} vs {c95}");
}

/// One process a side — a quick run — is not evidence of a change, however
/// many observations it holds: the change is shown, nothing is called.
#[test]
fn too_few_processes_call_nothing() {
    let one = |seed: u64, median: f64| {
        support::file(vec![support::result(
            "cpu.x",
            Mode::Hot,
            Unit::Nanoseconds,
            support::lognormal(seed, 5000, median, 0.01),
        )])
    };
    let (a, b) = (one(1, 100.0), one(2, 120.0));
    let c = compare(&a, &b, 0.95);
    let r = &c.rows[0];
    assert_eq!(r.verdict, Verdict::TooFew, "{r:?}");
    assert!((r.change_pct.unwrap() - 20.0).abs() < 1.0, "{r:?}");
    assert!(r.p_value.is_none());
    assert!(c.regressions(5.0).is_empty());
    let t = table(&c);
    assert!(t.contains("too few processes: 1 in A, 1 in B"), "{t}");
    assert!(t.contains("needs ≥ 4 processes a side"), "{t}");
    // Three a side cannot reach 95% either (the smallest exact p is 0.1).
    let three = |seed: u64, median: f64| {
        support::file(vec![support::blocked(
            "cpu.x",
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(seed, 3, 30, median, 0.01, 0.01),
        )])
    };
    let r = &compare(&three(1, 100.0), &three(2, 150.0), 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::TooFew, "{r:?}");
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
    // One process a side: too few for the test.
    assert_eq!(row("cpu.syscall.getppid@cold").verdict, Verdict::TooFew);
    let t = table(&c);
    for k in ["only in A", "only in B", "failed in B", "withheld in A"] {
        assert!(t.contains(k), "{k} not in\n{t}");
    }
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert!(
        t.contains("\n0 slower, 0 faster, 0 unchanged, 3 with too few processes, 5 not compared\ntest: exact two-sided Mann-Whitney U at 95% on per-process medians"),
        "{t}"
    );
}

#[test]
fn warns_when_the_machine_changed() {
    let a = support::sample_file();
    let mut b = support::sample_file();
    b.machine.cpu_model = "Intel Xeon Other".into();
    b.machine.kernel = "6.9.0".into();
    b.clock.kind = yamba_results::ClockKind::MonotonicRaw;
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

#[test]
fn warns_when_the_mitigations_changed() {
    let mut a = support::sample_file();
    let mut b = support::sample_file();
    let same = |f: &mut yamba_core::ResultsFile| {
        let v = &mut f.machine.vulnerabilities;
        v.insert("meltdown".into(), "Not affected".into());
        v.insert(
            "spectre_v2".into(),
            "Mitigation: Retpolines; RSB filling".into(),
        );
    };
    same(&mut a);
    same(&mut b);
    assert!(compare(&a, &b, 0.95).warnings.is_empty());
    b.machine
        .vulnerabilities
        .insert("spectre_v2".into(), "Vulnerable".into());
    b.machine.mitigations = Some("off".into());
    let w = compare(&a, &b, 0.95).warnings;
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w.iter().any(|l| l.contains("spectre_v2")
        && l.contains("RSB filling")
        && l.contains("Vulnerable")));
    assert!(w
        .iter()
        .any(|l| l.contains("mitigations=") && l.contains("off")));
    // A file from before they were recorded: said, not guessed.
    b.machine.vulnerabilities.clear();
    b.machine.mitigations = None;
    let w = compare(&a, &b, 0.95).warnings;
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("not recorded in B"), "{w:?}");
}

#[test]
fn values_at_or_below_zero_use_the_shift() {
    // A loop time after subtracting the dummy loop can be ≤ 0.
    let a: Vec<f64> = (0..30).map(|i| -1.0 + i as f64 * 0.1).collect();
    let b: Vec<f64> = a.iter().map(|v| v + 2.0).collect();
    let (d, lo, hi) = hodges_lehmann_shift_ci(&a, &b, 0.95).unwrap();
    assert!((d - 2.0).abs() < 1e-9 && lo < 2.0 && hi > 2.0);
    let run = |v: &[f64]| {
        support::file(vec![support::blocked(
            "cpu.y",
            Mode::Hot,
            Unit::Nanoseconds,
            v.chunks(5).map(<[f64]>::to_vec).collect(),
        )])
    };
    let r = &compare(&run(&a), &run(&b), 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
}

/// Large processes (BASE keeps 20 000 observations) compare in bounded
/// time and memory, and a 10% shift is still measured as 10%.
#[test]
fn large_samples_compare_quickly() {
    let run = |seed: u64, median: f64| {
        support::file(vec![support::blocked(
            "cpu.base",
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(seed, 6, 20_000, median, 0.005, 0.05),
        )])
    };
    let (a, b) = (run(5, 100.0), run(6, 110.0));
    let t = std::time::Instant::now();
    let r = &compare(&a, &b, 0.95).rows[0];
    assert!(t.elapsed().as_secs_f64() < 5.0, "took {:?}", t.elapsed());
    assert_eq!(r.verdict, Verdict::Slower);
    let (lo, hi) = r.ci_pct.unwrap();
    assert!(lo < 10.0 && 10.0 < hi && hi - lo < 4.0, "[{lo}, {hi}]");
    assert_eq!((r.n_a, r.n_b), (120_000, 120_000));
}

/// A change smaller than the printed precision is not called, however
/// clearly the processes separate.
#[test]
fn negligible_changes_are_not_called() {
    let a = support::processes(21, 6, 200, 100.0, 0.0001, 0.001);
    let b: Vec<Vec<f64>> = a
        .iter()
        .map(|p| p.iter().map(|v| v * 1.0005).collect())
        .collect();
    let fa = support::file(vec![support::blocked(
        "cpu.b",
        Mode::Hot,
        Unit::Nanoseconds,
        a,
    )]);
    let fb = support::file(vec![support::blocked(
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

/// Files written before blocks were recorded: each repetition's median,
/// kept in `extra.repetitions`, is a process sample.
#[test]
fn old_files_use_their_repetition_medians() {
    let mk = |medians: &[f64]| {
        let mut r = support::result("cpu.z", Mode::Hot, Unit::Nanoseconds, medians.to_vec());
        r.extra.insert(
            "repetitions".into(),
            medians
                .iter()
                .map(|m| serde_json::json!({"status": "ok", "median": m, "n": 10}))
                .collect::<Vec<_>>()
                .into(),
        );
        support::file(vec![r])
    };
    let a = mk(&[100.0, 101.0, 99.0, 100.5, 100.2]);
    let b = mk(&[120.0, 121.0, 119.0, 120.5, 120.2]);
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!((r.blocks_a, r.blocks_b), (5, 5));
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
}
