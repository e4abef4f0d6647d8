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

/// Large processes (BASE keeps 20 000 observations): a 10% shift is still
/// measured as 10% (the time it takes is a measurement check,
/// measure_compare.rs).
#[test]
fn large_samples_compare_right() {
    let run = |seed: u64, median: f64| {
        support::file(vec![support::blocked(
            "cpu.base",
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(seed, 6, 20_000, median, 0.005, 0.05),
        )])
    };
    let (a, b) = (run(5, 100.0), run(6, 110.0));
    let r = &compare(&a, &b, 0.95).rows[0];
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
                // One observation per repetition, as such a file pooled them.
                .map(|m| serde_json::json!({"status": "ok", "median": m, "n": 1}))
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

/// A run of 6 processes with these medians (30 tight observations each)
/// and, per process, the core's adds per cycle; `started` orders runs.
fn shared_run(medians: &[f64], adds: &[f64], started: &str) -> yamba_results::ResultsFile {
    let processes = medians
        .iter()
        .enumerate()
        .map(|(i, &m)| support::lognormal(i as u64 + 1, 30, m, 0.001))
        .collect();
    let mut r = support::blocked("cpu.x", Mode::Hot, Unit::Nanoseconds, processes);
    r.certainty
        .as_mut()
        .unwrap()
        .leave_out_shared_core(adds.to_vec());
    let mut f = support::file(vec![r]);
    f.started = started.into();
    f
}

const ALONE: f64 = 3.75;

/// The AMD guest's case: two identical runs, B with two processes 35%
/// slower that ran on a shared core: left out, nothing is called.
#[test]
fn processes_a_shared_core_moved_are_left_out() {
    let a = shared_run(
        &[201.4, 201.6, 201.2, 201.5, 201.3, 201.4],
        &[ALONE; 6],
        "1",
    );
    let b_medians = [201.5, 272.0, 201.3, 275.0, 201.4, 201.6];
    let b = shared_run(&b_medians, &[ALONE, 2.2, ALONE, 2.3, ALONE, ALONE], "2");
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Same, "{r:?}");
    assert_eq!((r.blocks_a, r.blocks_b), (6, 4), "{r:?}");
    assert!(r.note.as_deref().unwrap().contains("shared core"), "{r:?}");
    // A real 10% slowdown beside a shared process is still called.
    let slow: Vec<f64> = b_medians.iter().map(|m| m * 1.10).collect();
    let b = shared_run(&slow, &[ALONE, 2.2, ALONE, ALONE, ALONE, ALONE], "2");
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
    // Three of B's six shared: half, so B describes a shared core and
    // keeps them all (and its spread says so: nothing called).
    let b = shared_run(
        &[201.5, 272.0, 201.3, 275.0, 270.0, 201.6],
        &[ALONE, 2.2, ALONE, 2.3, 2.4, ALONE],
        "2",
    );
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 6, Verdict::Same),
        "{r:?}"
    );
    // B all on a shared core keeps every process: from one pair, the
    // neighbour and the code cannot be told apart (earlier runs can).
    let b = shared_run(&[272.0; 6], &[2.2; 6], "2");
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 6, Verdict::Slower),
        "{r:?}"
    );
    // A chain a shared core does not move is compared on every process.
    let b = shared_run(
        &[201.4, 201.5, 201.3, 201.4, 201.5, 201.6],
        &[ALONE, 2.2, ALONE, ALONE, ALONE, ALONE],
        "2",
    );
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!((r.blocks_a, r.blocks_b), (6, 6), "{r:?}");
}

/// Machine states learned from earlier runs of A's configuration: a B
/// whose processes all sit in a state earlier runs showed is not called;
/// a B 10% above every run is; runs after A, or of another
/// configuration, are not used.
#[test]
fn earlier_runs_of_the_baseline_tell_a_state_from_a_change() {
    use yamba_report::compare::{compare_with, EarlierRuns};
    let fast = [201.2, 201.7, 201.2, 201.0, 201.2, 201.2];
    let earlier: Vec<yamba_results::ResultsFile> = [
        [201.4, 201.1, 222.1, 221.8, 221.9, 221.8],
        [225.1, 225.2, 222.3, 201.2, 201.2, 201.5],
        [201.4, 201.1, 201.4, 201.2, 200.9, 200.9],
        [222.1, 225.8, 222.6, 225.3, 225.6, 222.7],
    ]
    .iter()
    .enumerate()
    .map(|(i, m)| shared_run(m, &[ALONE; 6], &format!("0{i}")))
    .collect();
    let a = shared_run(&fast, &[ALONE; 6], "1");
    let b = shared_run(
        &[222.5, 221.9, 224.0, 222.2, 225.1, 222.4],
        &[ALONE; 6],
        "2",
    );
    let known = EarlierRuns::of_baseline(&a, &b, &earlier, Some("test".into()));
    assert_eq!(known.runs, 4);
    let c = compare_with(&a, &b, 0.95, &known);
    let r = &c.rows[0];
    assert_eq!(r.verdict, Verdict::Same, "{r:?}");
    assert!(
        r.note.as_deref().unwrap().contains("identical runs"),
        "{r:?}"
    );
    assert!(table(&c).contains("4 earlier runs"), "{}", table(&c));
    // Without them, the same pair is a "regression".
    assert_eq!(compare(&a, &b, 0.95).rows[0].verdict, Verdict::Slower);
    // 10% above every state seen: a change.
    let moved: Vec<f64> = [222.5, 221.9, 224.0, 222.2, 225.1, 222.4]
        .iter()
        .map(|m| m * 1.10)
        .collect();
    let b = shared_run(&moved, &[ALONE; 6], "2");
    let r = &compare_with(&a, &b, 0.95, &known).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
    // Runs after A may hold the change itself: not used.
    let later: Vec<_> = earlier
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.started = "3".into();
            f
        })
        .collect();
    assert_eq!(EarlierRuns::of_baseline(&a, &b, &later, None).runs, 0);
    // Nor runs of another configuration.
    let other: Vec<_> = earlier
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.config["quick"] = serde_json::json!(false);
            f
        })
        .collect();
    assert_eq!(EarlierRuns::of_baseline(&a, &b, &other, None).runs, 0);
}

/// Two builds of one version are two configurations: `compare` says so,
/// and says nothing when a file predates the build being kept.
#[test]
fn another_build_of_the_same_version_is_named() {
    let (mut a, mut b) = pair(1, 0.0, Unit::Nanoseconds);
    a.tool.build = Some("00000000000000aa".into());
    b.tool.build = Some("00000000000000bb".into());
    let d = yamba_report::compare::configuration_differences(&a, &b);
    assert!(d.iter().any(|w| w.contains("yamba build differs")), "{d:?}");
    b.tool.build = None;
    let d = yamba_report::compare::configuration_differences(&a, &b);
    assert!(!d.iter().any(|w| w.contains("build")), "{d:?}");
    b.tool.build = a.tool.build.clone();
    assert!(yamba_report::compare::configuration_differences(&a, &b).is_empty());
}
