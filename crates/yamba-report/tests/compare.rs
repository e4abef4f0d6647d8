//! compare: one sample is one process. A known 10% shift between runs is
//! found, no shift is (almost) never claimed even when processes differ
//! from run to run far more than observations inside one process do, too
//! few processes call nothing, and nothing is dropped silently. The gate
//! over a simulated suite: its family-wise false-alarm rate, the table's
//! false-discovery rate, its power, and a gate that cannot decide.

mod support;

use yamba_report::compare::{compare, table, Verdict};
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
    // 10% against a 2% spread, 6 a side: Welch's p is far below what the
    // exact rank test could give (2 / C(12, 6) at complete separation).
    assert!(r.p_value.unwrap() <= 2.0 / 924.0, "{r:?}");
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

/// A ratio says nothing of its direction; a result that says a larger
/// value is better (a parallelism: `cpu.ops.parallel`, `mem.parallelism`)
/// is compared that way, from either side's word (a file written before
/// results said so has none); one that does not keeps a ratio's rule,
/// lower is better (a share of time lost).
#[test]
fn a_parallelism_up_is_faster() {
    let (mut a, mut b) = pair(3, 0.10, Unit::Ratio);
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "a bare ratio: lower is better");
    b.results[0].better_higher = Some(true);
    for (x, y) in [(&a, &b), (&b, &a)] {
        let up = std::ptr::eq(x, &a);
        let r = &compare(x, y, 0.95).rows[0];
        let want = if up { Verdict::Faster } else { Verdict::Slower };
        assert_eq!(r.verdict, want, "{r:?}");
        assert_eq!(c_regression(x, y, 5.0), !up);
    }
    a.results[0].better_higher = Some(true);
    assert!(!c_regression(&a, &b, 5.0) && c_regression(&b, &a, 5.0));
    // The word survives the file: written, read back.
    let text = serde_json::to_string(&b).unwrap();
    assert!(text.contains("\"higher_is_better\":true"));
    let back: yamba_results::ResultsFile = serde_json::from_str(&text).unwrap();
    assert_eq!(back.results[0].better_higher, Some(true));
    assert!(back.results[0].higher_is_better());
}

/// With no shift, "significant" at 95% comes up in about 5% of pairs
/// (Welch's test keeps its level): at most 7% over 400 seeds. The
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
    assert!(t.contains("the test needs ≥ 2 a side"), "{t}");
    assert!(t.contains("valid from 2 processes a side"), "{t}");
    // Three a side is enough for Welch's test (the exact rank test's
    // smallest p was 0.1: it could call nothing here) ...
    let three = |seed: u64, median: f64| {
        support::file(vec![support::blocked(
            "cpu.x",
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(seed, 3, 30, median, 0.01, 0.01),
        )])
    };
    let r = &compare(&three(1, 100.0), &three(2, 150.0), 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
    assert!(r.p_value.unwrap() < 0.001, "{r:?}");
    // ... and two: the interval is wide then, and says so.
    let two = |seed: u64, median: f64| {
        support::file(vec![support::blocked(
            "cpu.x",
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(seed, 2, 30, median, 0.01, 0.01),
        )])
    };
    let r = &compare(&two(1, 100.0), &two(2, 105.0), 0.95).rows[0];
    assert_eq!((r.blocks_a, r.blocks_b), (2, 2), "{r:?}");
    let (lo, hi) = r.ci_pct.unwrap();
    assert!(hi - lo > 4.0, "{r:?}");
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
        t.contains("\n0 slower, 0 faster, 0 unchanged, 3 with too few processes, 5 not compared\ntest: Welch's t on the logarithms of per-process values"),
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
    // A loop time after subtracting the dummy loop can be ≤ 0: no
    // logarithm, so Welch on the values, the change relative to A's mean.
    let a: Vec<f64> = (0..30).map(|i| -1.0 + i as f64 * 0.1).collect();
    let b: Vec<f64> = a.iter().map(|v| v + 2.0).collect();
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
    // A's 6 block medians average 0.45; B's are 2 more: +2/0.45.
    let (change, (lo, hi)) = (r.change_pct.unwrap(), r.ci_pct.unwrap());
    assert!((change - 2.0 / 0.45 * 100.0).abs() < 1e-6, "{r:?}");
    assert!(lo < change && change < hi, "{r:?}");
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
    let change = r.change_pct.unwrap();
    // The processes differ by 0.5% (a σ of 0.3% on the 6-process means'
    // difference): the estimate is within 1.5% of 10%, the interval
    // around it narrow. (Whether this one draw's 95% interval holds 10.0
    // is a coin of 95%, not what this test is about.)
    assert!((change - 10.0).abs() < 1.5, "{change}");
    assert!(lo < change && change < hi && hi - lo < 4.0, "[{lo}, {hi}]");
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
/// and, per process, the core's adds per cycle, judged against a run's
/// best of [`ALONE`] (so a result whose every process shared is named);
/// `started` orders runs.
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
        .leave_out_shared_core(adds.to_vec(), Some(ALONE));
    let mut f = support::file(vec![r]);
    f.started = started.into();
    f
}

/// Asserts that a row's note says `text`.
fn assert_note(r: &yamba_report::compare::Row, text: &str) {
    let note = r.note.as_deref().unwrap_or_default();
    assert!(note.contains(text), "note lacks {text:?}: {r:?}");
}

const ALONE: f64 = 3.75;

/// The AMD guest's case: two identical runs, B with two processes 35%
/// slower that ran on a shared core: left out, nothing is called.
#[test]
fn processes_a_shared_core_moved_are_left_out() {
    use yamba_report::compare::{GateOutcome, TooFewWhy};
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
    assert_note(r, "shared core");
    // A real 10% slowdown beside the shared processes is still called.
    let slow: Vec<f64> = b_medians.iter().map(|m| m * 1.10).collect();
    let b = shared_run(&slow, &[ALONE, 2.2, ALONE, 2.3, ALONE, ALONE], "2");
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
    assert_eq!((r.blocks_a, r.blocks_b), (6, 4), "{r:?}");
    // One of them on a core nobody shared: a process 37% above B's others
    // and every one of A's stays in B's value (a user may meet it), but it
    // is that process's state, not the code's: the test leaves it out and
    // calls the 10% on the four that agree. Before, Welch's interval
    // widened to hold it, [< 10, > 30], and hid the change.
    let b = shared_run(&slow, &[ALONE, 2.2, ALONE, ALONE, ALONE, ALONE], "2");
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 4, Verdict::Slower),
        "{r:?}"
    );
    assert_note(r, "1 of B's at 302.5 ns against 221.4–221.8 in its others");
    // Two of B's four shared: half, and too few alone for B's own value
    // to stand on, so B's value describes a shared core and keeps them
    // all; against A's, whose value is the core's alone, B is compared
    // on its two processes alone — like with like.
    let b = shared_run(
        &[201.5, 272.0, 201.3, 275.0],
        &[ALONE, 2.2, ALONE, 2.3],
        "2",
    );
    assert!(b.results[0]
        .certainty
        .as_ref()
        .unwrap()
        .note
        .as_deref()
        .unwrap()
        .contains("describes a shared core"));
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 2, Verdict::Same),
        "{r:?}"
    );
    assert_note(
        r,
        "B's value describes a shared core: its 2 processes alone compared",
    );
    // And a real 10% slowdown there is called on them.
    let b = shared_run(
        &[221.6, 272.0, 221.4, 275.0],
        &[ALONE, 2.2, ALONE, 2.3],
        "2",
    );
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 2, Verdict::Slower),
        "{r:?}"
    );
    // One alone of four: too few to compare like with like, and B's own
    // processes show that the shared core moves this benchmark (272 ns
    // against 201.5 alone): comparing B's shared value with A's alone
    // would call the neighbour a regression. Too few, and the gate is
    // undecided — not passed, not failed.
    let b = shared_run(&[201.5, 272.0, 270.0, 275.0], &[ALONE, 2.2, 2.4, 2.3], "2");
    let c = compare(&a, &b, 0.95).gated(5.0);
    let r = &c.rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 1, Verdict::TooFew),
        "{r:?}"
    );
    assert_note(r, "show a shared core moves this benchmark by more than 3%");
    let g = c.gate.as_ref().unwrap();
    assert_eq!(
        (g.outcome, g.undecided.clone()),
        (
            GateOutcome::Undecided,
            vec![("cpu.x@hot".to_string(), TooFewWhy::SharedCore)]
        )
    );
    // Three of B's six shared, three alone (a precise run's pilot, once
    // its shared processes were replaced): B stands on the three.
    let b = shared_run(
        &[201.5, 272.0, 201.3, 275.0, 270.0, 201.6],
        &[ALONE, 2.2, ALONE, 2.3, 2.4, ALONE],
        "2",
    );
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 3, Verdict::Same),
        "{r:?}"
    );
    // B all on a shared core, A all alone: neither run shows whether the
    // neighbour or the code moved it, so nothing is called and the gate
    // is undecided (before, this pair was called slower).
    let b = shared_run(&[272.0; 6], &[2.2; 6], "2");
    let c = compare(&a, &b, 0.95).gated(5.0);
    let r = &c.rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 0, Verdict::TooFew),
        "{r:?}"
    );
    assert_note(r, "neither run has processes in both states");
    assert_eq!(c.gate.unwrap().outcome, GateOutcome::Undecided);
    // The same B against an A whose processes on a shared core read as
    // its others (a dependent chain of adds: the neighbour does not move
    // it): the states do not matter here, so every process is compared,
    // and B's 35% is called.
    let a_chain = shared_run(
        &[201.4, 201.6, 201.2, 201.5, 201.3, 201.4],
        &[ALONE, 2.2, ALONE, ALONE, 2.3, ALONE],
        "1",
    );
    let c = compare(&a_chain, &b, 0.95).gated(5.0);
    let r = &c.rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 6, Verdict::Slower),
        "{r:?}"
    );
    assert_note(
        r,
        "show does not move this benchmark by more than 3%: every process compared",
    );
    assert_eq!(c.gate.unwrap().outcome, GateOutcome::Regression);
    // And the same B as a shared-core reading with no change: passed.
    let b_same = shared_run(&[201.5, 201.3, 201.4, 201.6, 201.2, 201.5], &[2.2; 6], "2");
    let c = compare(&a_chain, &b_same, 0.95).gated(5.0);
    assert_eq!(c.rows[0].verdict, Verdict::Same, "{:?}", c.rows[0]);
    assert_eq!(c.gate.unwrap().outcome, GateOutcome::Pass);
    // A chain a shared core does not move is compared on every process.
    let b = shared_run(
        &[201.4, 201.5, 201.3, 201.4, 201.5, 201.6],
        &[ALONE, 2.2, ALONE, ALONE, ALONE, ALONE],
        "2",
    );
    let r = &compare(&a, &b, 0.95).rows[0];
    assert_eq!((r.blocks_a, r.blocks_b), (6, 6), "{r:?}");
}

/// A precise run under a neighbour that holds the core most of the time:
/// A's six processes all shared (its replacements shared too); B's pilot
/// replaced, three alone and three shared. A has no two alone to compare
/// with B's alone, but B has three on a shared core: the two runs are
/// compared in that state, like with like, and decide. Of 253 lines a
/// 5% gate left undecided in 6 identical pairs of precise default runs
/// on the busy AMD EPYC (Zen 3) guest, 232 were such (2026-12-07).
#[test]
fn a_run_on_a_shared_core_is_compared_with_the_other_s_shared_processes() {
    use yamba_report::compare::GateOutcome;
    let a = shared_run(&[272.0, 270.5, 274.0, 271.0, 273.0, 272.5], &[2.2; 6], "1");
    let b_medians = [201.5, 272.5, 201.3, 271.5, 273.5, 201.6];
    let b_adds = [ALONE, 2.2, ALONE, 2.3, 2.4, ALONE];
    let b = shared_run(&b_medians, &b_adds, "2");
    let c = compare(&a, &b, 0.95).gated(5.0);
    let r = &c.rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 3, Verdict::Same),
        "{r:?}"
    );
    assert_note(
        r,
        "compared on a shared core in both, A's 6 against the other's 3 that ran on one",
    );
    assert_eq!(c.gate.unwrap().outcome, GateOutcome::Pass);
    // B's shared processes 10% slower, its alone ones as A's could never
    // show: called on the shared ones, and the gate fails.
    let slow: Vec<f64> = b_medians
        .iter()
        .zip(&b_adds)
        .map(|(m, a)| if *a < ALONE { m * 1.10 } else { *m })
        .collect();
    let b = shared_run(&slow, &b_adds, "2");
    let c = compare(&a, &b, 0.95).gated(5.0);
    let r = &c.rows[0];
    assert_eq!(
        (r.blocks_a, r.blocks_b, r.verdict),
        (6, 3, Verdict::Slower),
        "{r:?}"
    );
    assert_eq!(c.gate.unwrap().outcome, GateOutcome::Regression);
    // With one of B's on a shared core, not two: too few in either state,
    // and the gate is undecided, as before.
    let b = shared_run(
        &[201.5, 272.5, 201.3, 201.4, 201.6, 201.6],
        &[ALONE, 2.2, ALONE, ALONE, ALONE, ALONE],
        "2",
    );
    let c = compare(&a, &b, 0.95).gated(5.0);
    assert_eq!(c.rows[0].verdict, Verdict::TooFew, "{:?}", c.rows[0]);
    assert_eq!(c.gate.unwrap().outcome, GateOutcome::Undecided);
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
    // Without them, the same pair is a "regression", and a failed gate
    // says that it could not know the machine's states; with them it
    // passes and says nothing of it.
    assert_eq!(compare(&a, &b, 0.95).rows[0].verdict, Verdict::Slower);
    let blind = compare(&a, &b, 0.95).gated(5.0);
    assert_eq!(
        blind.gate.as_ref().unwrap().outcome,
        yamba_report::compare::GateOutcome::Regression
    );
    let line = yamba_report::compare::unknown_states_line(&blind).unwrap();
    assert!(line.contains("0 earlier run(s)"), "{line}");
    let c = c.gated(5.0);
    assert_eq!(
        c.gate.as_ref().unwrap().outcome,
        yamba_report::compare::GateOutcome::Pass
    );
    assert_eq!(yamba_report::compare::unknown_states_line(&c), None);
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

/// An earlier run's processes that a shared core moved do not stretch the
/// range of what identical runs give: they were left out of that run's
/// own value, so they are left out of what it teaches. The case measured
/// on the Zen 4 guest: getppid at 123 ns, one earlier run with two of six
/// processes on a shared core at 141–148 ns (its median of processes
/// 132.4 ns with them), and a planted +6.5% B at 131 ns, which the range
/// with them dismissed as a known state in 5 of 10 pairs.
#[test]
fn processes_on_a_shared_core_do_not_widen_the_known_range() {
    use yamba_report::compare::{compare_with, EarlierRuns};
    let shared = 2.4;
    let earlier: Vec<yamba_results::ResultsFile> = [
        ([123.1, 123.1, 123.7, 123.3, 123.4, 123.1], [ALONE; 6]),
        (
            [123.1, 145.2, 123.4, 147.7, 123.3, 141.5],
            [ALONE, shared, ALONE, shared, ALONE, shared],
        ),
        ([123.3, 123.4, 123.1, 122.9, 123.6, 123.2], [ALONE; 6]),
    ]
    .iter()
    .enumerate()
    .map(|(i, (m, adds))| shared_run(m, adds, &format!("0{i}")))
    .collect();
    let a = shared_run(
        &[123.1, 123.4, 123.6, 123.2, 123.0, 123.3],
        &[ALONE; 6],
        "1",
    );
    let planted: Vec<f64> = [123.1, 123.4, 123.6, 123.2, 123.0, 123.3]
        .iter()
        .map(|m| m * 1.065)
        .collect();
    let b = shared_run(&planted, &[ALONE; 6], "2");
    let known = EarlierRuns::of_baseline(&a, &b, &earlier, None);
    assert_eq!(known.runs, 3);
    // What the second earlier run teaches: its three processes alone.
    let second = &known.samples.values().next().unwrap()[1];
    assert_eq!(second.len(), 3, "{second:?}");
    assert!(second.iter().all(|m| *m < 124.0), "{second:?}");
    let r = &compare_with(&a, &b, 0.95, &known).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
    // The same earlier run with its shared processes counted (as if they
    // had run alone) stretches the range over B: dismissed. The test can
    // tell the two rules apart.
    let mut stretched = earlier.clone();
    stretched[1] = shared_run(
        &[123.1, 145.2, 123.4, 147.7, 123.3, 141.5],
        &[ALONE; 6],
        "01",
    );
    let known = EarlierRuns::of_baseline(&a, &b, &stretched, None);
    let r = &compare_with(&a, &b, 0.95, &known).rows[0];
    assert_eq!(r.verdict, Verdict::Same, "{r:?}");
    assert_note(r, "identical runs");
    // A run whose every process shared teaches nothing about B's state.
    let all_shared = shared_run(&[131.0; 6], &[shared; 6], "03");
    let known = EarlierRuns::of_baseline(&a, &b, std::iter::once(&all_shared), None);
    assert_eq!((known.runs, known.samples.len()), (1, 0));
}

/// The Zen 4 guest's planted pair 9 (stop 72): getppid with 8 multiplies
/// after each call read +3.6% in B's three processes that agreed, but B's
/// fourth ran in the slow state (+29%) for its whole life, and Welch's
/// interval over all four, [−9.7, +34.9], called nothing. That process is
/// far from all B's others: left out, the change is called. The same
/// process beside an unchanged B calls nothing (leaving a slow process out
/// must not make B "faster"); with three processes, or two of four slow
/// (two groups), nothing is left out.
#[test]
fn a_process_far_from_all_its_others_is_left_out_of_the_test() {
    let a = shared_run(&[123.1, 123.3, 123.7], &[ALONE; 3], "1");
    let planted = shared_run(&[164.5, 127.7, 127.7, 128.0], &[ALONE; 4], "2");
    let r = &compare(&a, &planted, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
    assert_eq!((r.blocks_a, r.blocks_b), (3, 3), "{r:?}");
    assert!((r.change_pct.unwrap() - 3.6).abs() < 0.1, "{r:?}");
    assert_note(r, "1 of B's at 164.5 ns against 127.7–128.0 in its others");
    // The identical run with the same slow process: nothing called.
    let same = shared_run(&[164.5, 123.2, 123.4, 123.0], &[ALONE; 4], "2");
    let r = &compare(&a, &same, 0.95).rows[0];
    assert_eq!(r.verdict, Verdict::Same, "{r:?}");
    assert_eq!(r.blocks_b, 3, "{r:?}");
    let c = compare(&a, &same, 0.95).gated(5.0);
    assert_eq!(
        c.gate.as_ref().unwrap().outcome,
        yamba_report::compare::GateOutcome::Pass
    );
    // Three processes: too few to tell one from the others' spread.
    let three = shared_run(&[164.5, 127.7, 127.9], &[ALONE; 3], "2");
    let r = &compare(&a, &three, 0.95).rows[0];
    assert_eq!((r.blocks_b, r.verdict), (3, Verdict::Same), "{r:?}");
    // Two of four slow: two groups, not a lone process.
    let two = shared_run(&[164.5, 127.7, 165.0, 127.9], &[ALONE; 4], "2");
    let r = &compare(&a, &two, 0.95).rows[0];
    assert_eq!(r.blocks_b, 4, "{r:?}");
    assert!(r.note.is_none(), "{r:?}");
    // A value at or below zero (a loop time less the dummy's): no
    // distance in percent, so nothing is left out.
    let small = shared_run(&[1.0, 1.02, 1.01], &[ALONE; 3], "1");
    let below = shared_run(&[-0.5, 1.05, 1.06, 1.04], &[ALONE; 4], "2");
    let r = &compare(&small, &below, 0.95).rows[0];
    assert_eq!(r.blocks_b, 4, "{r:?}");
}

/// A machine where about one process in ten runs ~30% slow for its whole
/// life (the Zen 4 guest's getppid), on 10 lines of a 150-line suite (the
/// placement-sensitive ones); each run gives a line 3 processes, and 2
/// more when one of them is far from the others (the two-stage rule adds
/// blocks where the pilot spreads). Identical pairs: no line where a
/// process was left out is gated and at most 1% are called (the rule
/// would call many if the processes it leaves out tilted the rest), the
/// gate fails in at most 5%
/// of pairs and the table calls a line in at most 5% (a side whose every
/// process drew the slow state — one in a thousand per line — is a change
/// to any rule). A planted 5% on a state line of CV 0.3% is called slower
/// in at least 90% of pairs, and in at least 80% of the pairs where a side
/// drew a slow process: the test fails if lone processes still widen the
/// interval (before the rule: 4 of 10 measured pairs missed, each with one).
#[test]
fn a_rare_slow_state_of_a_process_neither_hides_a_change_nor_makes_one() {
    use rand::{Rng, SeedableRng};
    const STATE_LINES: usize = 10;
    let mut lines = suite::lines(4);
    lines[0].cv = 0.002;
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let run = |rng: &mut rand::rngs::StdRng, factor: &dyn Fn(usize) -> f64| {
        let results = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let state = if i < STATE_LINES { 0.1 } else { 0.0 };
                let draw = |rng: &mut rand::rngs::StdRng| {
                    let slow = if rng.gen_bool(state) { 1.3 } else { 1.0 };
                    l.value * factor(i) * slow * (l.cv * suite::normal(rng)).exp()
                };
                let mut medians: Vec<f64> = (0..3).map(|_| draw(rng)).collect();
                let (lo, hi) = medians
                    .iter()
                    .fold((f64::INFINITY, 0f64), |(a, b), &m| (a.min(m), b.max(m)));
                if hi > 1.1 * lo {
                    medians.extend((0..2).map(|_| draw(rng)));
                }
                let slow_here = medians.iter().any(|m| *m > 1.2 * l.value * factor(i));
                let processes = medians.iter().map(|&m| vec![m; 3]).collect();
                (
                    support::blocked(
                        &format!("sim.l{i}"),
                        Mode::Hot,
                        Unit::Nanoseconds,
                        processes,
                    ),
                    slow_here,
                )
            })
            .collect::<Vec<_>>();
        let slow0 = results[0].1;
        let mut f = support::file(results.into_iter().map(|(r, _)| r).collect());
        f.config =
            serde_json::json!({"quick": false, "repetitions": 3, "cpu": null, "no_pin": false});
        (f, slow0)
    };
    let left_out = |r: &yamba_report::compare::Row| {
        r.note
            .as_deref()
            .is_some_and(|n| n.contains("left out as a state of the process"))
    };
    let (mut failed, mut any_call) = (0, 0);
    let (mut lone_rows, mut lone_calls, mut lone_gated) = (0, 0, 0);
    for _ in 0..suite::PAIRS {
        let (a, _) = run(&mut rng, &|_| 1.0);
        let (b, _) = run(&mut rng, &|_| 1.0);
        let c = compare(&a, &b, 0.95).gated(5.0);
        failed += usize::from(suite::failed(&c));
        any_call += usize::from(!suite::called(&c).is_empty());
        for r in c.rows.iter().filter(|r| left_out(r)) {
            lone_rows += 1;
            lone_calls += usize::from(r.verdict != Verdict::Same);
            lone_gated += usize::from(r.gate != Some(yamba_report::compare::GateLine::Pass));
        }
    }
    eprintln!(
        "identical pairs with a slow state on {STATE_LINES} lines: gate failed in {failed} of {}, BH called a line in {any_call}; {lone_rows} lines left a process out, {lone_calls} of them called, {lone_gated} gated",
        suite::PAIRS
    );
    assert!(lone_rows >= 200, "the rule was not exercised: {lone_rows}");
    assert_eq!(lone_gated, 0);
    assert!(
        lone_calls * 100 <= lone_rows,
        "{lone_calls} of {lone_rows} called"
    );
    assert!(failed * 20 <= suite::PAIRS, "gate failed in {failed}");
    assert!(any_call * 20 <= suite::PAIRS, "lines called in {any_call}");
    let (mut called, mut with_slow, mut called_with_slow) = (0, 0, 0);
    for _ in 0..suite::PAIRS {
        let (a, slow_a) = run(&mut rng, &|_| 1.0);
        let (b, slow_b) = run(&mut rng, &|i| if i == 0 { 1.05 } else { 1.0 });
        let c = compare(&a, &b, 0.95);
        let hit = c.rows[0].verdict == Verdict::Slower;
        called += usize::from(hit);
        if slow_a || slow_b {
            with_slow += 1;
            called_with_slow += usize::from(hit);
        }
    }
    let share = |k: usize, n: usize| k as f64 / n.max(1) as f64;
    let (with, without) = (
        share(called_with_slow, with_slow),
        share(called - called_with_slow, suite::PAIRS - with_slow),
    );
    eprintln!(
        "planted +5% at CV 0.2%: called slower in {called} of {}: {:.0}% of the {with_slow} pairs with a slow process, {:.0}% of the others",
        suite::PAIRS,
        with * 100.0,
        without * 100.0
    );
    assert!(
        with_slow * 5 >= suite::PAIRS,
        "too few slow pairs: {with_slow}"
    );
    assert!(without >= 0.8, "no power to lose: {without}");
    assert!(with >= without - 0.1, "{with} against {without}");
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

/// A simulated suite: [`SUITE`] lines, each with its own spread between
/// processes (CV 0.2%–3%, log-uniform: a dependent chain's 0.2% to a
/// file system call's 3%), drawn once from a seeded generator.
mod suite {
    use super::support;
    use rand::{Rng, SeedableRng};
    use yamba_report::compare::{compare, Comparison, GateOutcome, Verdict};
    use yamba_results::units::Unit;
    use yamba_results::{Mode, ResultsFile};

    pub const SUITE: usize = 150;
    pub const PAIRS: usize = 400;

    pub struct Line {
        pub value: f64,
        pub cv: f64,
    }

    pub fn lines(seed: u64) -> Vec<Line> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..SUITE)
            .map(|_| Line {
                value: 10f64.powf(rng.gen_range(0.0..4.0)),
                cv: (rng.gen_range(0.002f64.ln()..0.03f64.ln())).exp(),
            })
            .collect()
    }

    pub fn normal(rng: &mut rand::rngs::StdRng) -> f64 {
        let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// One precise run of the suite: line i in `blocks(i)` processes whose
    /// medians are log-normal around its value × `factor(i)`.
    pub fn run(
        rng: &mut rand::rngs::StdRng,
        lines: &[Line],
        blocks: impl Fn(usize, &mut rand::rngs::StdRng) -> usize,
        factor: impl Fn(usize) -> f64,
    ) -> ResultsFile {
        let results = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let n = blocks(i, rng);
                let processes = (0..n)
                    .map(|_| vec![l.value * factor(i) * (l.cv * normal(rng)).exp(); 3])
                    .collect();
                support::blocked(
                    &format!("sim.l{i}"),
                    Mode::Hot,
                    Unit::Nanoseconds,
                    processes,
                )
            })
            .collect();
        let mut f = support::file(results);
        f.config =
            serde_json::json!({"quick": false, "repetitions": 3, "cpu": null, "no_pin": false});
        f
    }

    /// 3 to 6 processes, as a precise run's two-stage rule gives.
    pub fn three_to_six(_: usize, rng: &mut rand::rngs::StdRng) -> usize {
        rng.gen_range(3..=6)
    }

    /// A pair of runs compared and gated at 5%.
    pub fn pair(
        rng: &mut rand::rngs::StdRng,
        lines: &[Line],
        blocks: impl Fn(usize, &mut rand::rngs::StdRng) -> usize + Copy,
        factor_b: impl Fn(usize) -> f64,
    ) -> Comparison {
        let a = run(rng, lines, blocks, |_| 1.0);
        let b = run(rng, lines, blocks, factor_b);
        compare(&a, &b, 0.95).gated(5.0)
    }

    pub fn called(c: &Comparison) -> Vec<usize> {
        c.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.verdict, Verdict::Slower | Verdict::Faster))
            .map(|(i, _)| i)
            .collect()
    }

    pub fn failed(c: &Comparison) -> bool {
        c.gate.as_ref().unwrap().outcome != GateOutcome::Pass
    }

    pub fn gated(c: &Comparison, line: usize) -> bool {
        c.gate
            .as_ref()
            .unwrap()
            .regressions
            .contains(&format!("sim.l{line}@hot"))
    }
}

/// Identical pairs of a 150-line suite, 3–6 processes a side: the gate
/// (threshold 5%, Holm at α = 0.05) fails in at most 5% of pairs, and the
/// table's Benjamini–Hochberg calls are false in at most 5% of pairs
/// (with nothing changed, every call is false: its false-discovery rate is
/// the share of pairs with any call). With 15 lines really changed by
/// 2–10%, false calls are at most 5% of the calls.
#[test]
fn a_suite_gate_holds_its_false_alarm_and_discovery_rates() {
    use rand::{Rng, SeedableRng};
    let lines = suite::lines(1);
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    let (mut failed, mut any_call, mut calls) = (0, 0, 0);
    for _ in 0..suite::PAIRS {
        let c = suite::pair(&mut rng, &lines, suite::three_to_six, |_| 1.0);
        assert_eq!(c.compared, suite::SUITE);
        let g = c.gate.as_ref().unwrap();
        assert_eq!((g.tested, g.undecided.len()), (suite::SUITE, 0));
        failed += usize::from(suite::failed(&c));
        let n = suite::called(&c).len();
        calls += n;
        any_call += usize::from(n > 0);
    }
    let rate = failed as f64 / suite::PAIRS as f64;
    let fdr = any_call as f64 / suite::PAIRS as f64;
    eprintln!(
        "identical pairs: gate failed in {failed} of {} ({:.2}%); BH called {calls} lines in {any_call} pairs (FDR {:.2}%)",
        suite::PAIRS,
        rate * 100.0,
        fdr * 100.0
    );
    assert!(rate <= 0.05, "gate false-alarm rate {rate}");
    assert!(fdr <= 0.05, "false-discovery rate {fdr}");
    // 15 lines really changed, by ±2–10%.
    let (mut false_calls, mut all_calls, mut fdp_sum, mut true_calls) = (0, 0, 0.0, 0);
    for p in 0..suite::PAIRS {
        let changes: Vec<f64> = (0..suite::SUITE)
            .map(|i| {
                if (i + p) % 10 == 0 {
                    let size = rng.gen_range(0.02..0.10);
                    if rng.gen() {
                        1.0 + size
                    } else {
                        1.0 / (1.0 + size)
                    }
                } else {
                    1.0
                }
            })
            .collect();
        let c = suite::pair(&mut rng, &lines, suite::three_to_six, |i| changes[i]);
        let called = suite::called(&c);
        let v = called.iter().filter(|&&i| changes[i] == 1.0).count();
        false_calls += v;
        all_calls += called.len();
        true_calls += called.len() - v;
        fdp_sum += v as f64 / called.len().max(1) as f64;
    }
    let fdr = fdp_sum / suite::PAIRS as f64;
    eprintln!(
        "15 of 150 lines changed by 2–10%: {all_calls} calls, {false_calls} false ({:.2}% of calls; mean FDP {:.2}%), {true_calls} of {} changes found",
        false_calls as f64 / all_calls as f64 * 100.0,
        fdr * 100.0,
        15 * suite::PAIRS
    );
    assert!(fdr <= 0.05, "false-discovery rate {fdr}");
    assert!(false_calls as f64 <= 0.05 * all_calls as f64);
}

/// A planted 8% slowdown in one line of a 150-line suite, 3 processes a
/// side, against a 5% threshold: the gate must show, after Holm's
/// correction over 150 lines (each line's one-sided p ≤ 0.05/150), that
/// the line is worse by more than 5% — a margin of 2.9% in logs. How often
/// it can depends on the line's spread between processes: gated in ≥ 90%
/// of pairs at CV 0.1% (a dependent chain, a system call in core cycles),
/// and the power at wider spreads is printed. With CV 1% no test
/// controlling the family-wise rate could reach 90% on 3 processes a side
/// (even knowing the variance, the z-test's power is 52%); a precise run
/// gives such a line more processes (its interval ±2.5% on 3 is wider than
/// the 1% the two-stage rule stops at), and with 10 a side the gate
/// catches it in ≥ 90%. A planted 5% — at the threshold itself — is by
/// construction gated in about α/150 of pairs; the table calls it.
#[test]
fn a_planted_slowdown_is_gated() {
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let power = |rng: &mut rand::rngs::StdRng, cv: f64, blocks: usize, slow: f64| {
        let mut lines = suite::lines(1);
        lines[0].cv = cv;
        let (mut gated, mut called, mut false_alarm) = (0, 0, 0);
        for _ in 0..suite::PAIRS {
            let c = suite::pair(
                rng,
                &lines,
                move |i, rng| {
                    if i == 0 {
                        blocks
                    } else {
                        suite::three_to_six(i, rng)
                    }
                },
                |i| if i == 0 { slow } else { 1.0 },
            );
            gated += usize::from(suite::gated(&c, 0));
            called += usize::from(c.rows[0].verdict == yamba_report::compare::Verdict::Slower);
            false_alarm += usize::from(
                c.gate
                    .as_ref()
                    .unwrap()
                    .regressions
                    .iter()
                    .any(|k| k != "sim.l0@hot"),
            );
        }
        let share = |n: usize| n as f64 / suite::PAIRS as f64;
        eprintln!(
            "planted {:+.0}% at CV {:.1}%, {blocks} processes a side: gated in {:.1}% of pairs, called slower in {:.1}%; another line gated in {false_alarm}",
            (slow - 1.0) * 100.0,
            cv * 100.0,
            share(gated) * 100.0,
            share(called) * 100.0
        );
        assert_eq!(false_alarm, 0);
        (share(gated), share(called))
    };
    let (gated, called) = power(&mut rng, 0.001, 3, 1.08);
    assert!(gated >= 0.90, "8% at CV 0.1%, 3 a side: gated in {gated}");
    assert!(called >= 0.99, "{called}");
    for cv in [0.002, 0.005, 0.01] {
        power(&mut rng, cv, 3, 1.08);
    }
    let (gated, _) = power(&mut rng, 0.01, 10, 1.08);
    assert!(gated >= 0.90, "8% at CV 1%, 10 a side: gated in {gated}");
    // 5%, at the threshold itself, on a line of CV 0.5% with 3–6 a side:
    // not gated (that is the threshold's meaning), but called.
    let mut lines = suite::lines(1);
    lines[0].cv = 0.005;
    let (mut gated, mut called) = (0, 0);
    for _ in 0..suite::PAIRS {
        let c = suite::pair(&mut rng, &lines, suite::three_to_six, |i| {
            if i == 0 {
                1.05
            } else {
                1.0
            }
        });
        gated += usize::from(suite::gated(&c, 0));
        called += usize::from(c.rows[0].verdict == Verdict::Slower);
    }
    eprintln!(
        "planted +5% at CV 0.5%, 3–6 a side: gated (threshold 5%) in {gated} of {}, called slower in {called}",
        suite::PAIRS
    );
    assert!(gated * 20 <= suite::PAIRS, "{gated}");
}

/// The gate's stated power holds. `catches_pct` at a line's true
/// standard error (CV·√(2/n) in logs) with the degrees of freedom the gate
/// gives it (`power_df`: 1.5·(n − 1) − 0.5), planted on that line, is gated in 90–99%
/// of 400 pairs: 9 of 10 is its promise, and a bound so loose that it
/// says little would pass more often. The figure each pair states from
/// its own spread has a median over 100 identical pairs within 20% of that
/// truth in its excess over the threshold. Four lines, 3 to 10 processes a
/// side (gated in 94.2–96.5% here). With Welch's own degrees of freedom
/// (up to 2n − 2) the figure was caught in 66% at 4 a side.
#[test]
fn the_gate_states_its_power_per_line() {
    use rand::SeedableRng;
    use yamba_report::compare::{catches_pct, power_df};
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    for (cv, blocks) in [(0.005f64, 6usize), (0.02, 4), (0.005, 3), (0.01, 10)] {
        let mut lines = suite::lines(1);
        lines[0].cv = cv;
        let sides = move |i: usize, rng: &mut rand::rngs::StdRng| {
            if i == 0 {
                blocks
            } else {
                suite::three_to_six(i, rng)
            }
        };
        let truth = catches_pct(
            cv * (2.0 / blocks as f64).sqrt(),
            power_df(blocks),
            1.05f64.ln(),
            true,
            0.05 / suite::SUITE as f64,
        );
        let mut stated: Vec<f64> = (0..100)
            .map(|_| {
                let c = suite::pair(&mut rng, &lines, sides, |_| 1.0);
                let g = c.gate.as_ref().unwrap();
                assert_eq!(g.catches.len(), g.tested);
                let footer = yamba_report::compare::gate_footer(g);
                assert!(
                    footer.contains(
                        "; its power: a lone slowdown it catches in at least 9 of 10 pairs"
                    ) && footer.contains(&format!(
                        " of {} (per line: the JSON's gate.catches)",
                        g.tested
                    )),
                    "{footer}"
                );
                g.catches.iter().find(|(k, _)| k == "sim.l0@hot").unwrap().1
            })
            .collect();
        stated.sort_by(f64::total_cmp);
        let median = stated[50];
        let planted = 1.0 + truth / 100.0;
        let mut gated = 0;
        for _ in 0..suite::PAIRS {
            let c = suite::pair(
                &mut rng,
                &lines,
                sides,
                |i| if i == 0 { planted } else { 1.0 },
            );
            gated += usize::from(suite::gated(&c, 0));
        }
        let share = gated as f64 / suite::PAIRS as f64;
        eprintln!(
            "CV {:.1}%, {blocks} a side: power at the true spread +{truth:.2}%, planted: gated in {:.1}% of pairs; stated per pair: median +{median:.2}%",
            cv * 100.0,
            share * 100.0
        );
        assert!((0.90..=0.99).contains(&share), "{share}");
        let excess = (median - 5.0) / (truth - 5.0);
        assert!((0.8..=1.2).contains(&excess), "{excess}");
    }
}

/// Two quick runs (one process each: their batches are not independent
/// between runs) with a 2× regression: the gate cannot decide, and says
/// so — never passes. A regression found elsewhere still fails it.
#[test]
fn a_gate_that_cannot_decide_does_not_pass() {
    use yamba_report::compare::{gate_footer, undecided_line, GateLine, GateOutcome, TooFewWhy};
    use yamba_results::{BlockKind, Certainty};
    let quick = |median: f64| {
        let mut r = support::result(
            "ipc.shm",
            Mode::Hot,
            Unit::Nanoseconds,
            support::lognormal(4, 400, median, 0.01),
        );
        r.certainty = Certainty::within_process(&r.observations, 0.0, None);
        assert_eq!(r.certainty.as_ref().unwrap().block, BlockKind::Batch);
        let mut f = support::file(vec![r]);
        f.config =
            serde_json::json!({"quick": true, "repetitions": 1, "cpu": null, "no_pin": false});
        f
    };
    let c = compare(&quick(100.0), &quick(200.0), 0.95).gated(5.0);
    let g = c.gate.as_ref().unwrap();
    assert_eq!(g.outcome, GateOutcome::Undecided);
    assert_eq!(g.outcome.exit_code(), 3);
    assert_eq!(
        g.undecided,
        vec![("ipc.shm@hot".to_string(), TooFewWhy::OneProcessRun)]
    );
    assert_eq!(c.rows[0].gate, Some(GateLine::Undecided));
    let line = undecided_line(g).unwrap();
    assert!(
        line.starts_with("undecided: 1 line(s) could not be tested"),
        "{line}"
    );
    assert!(line.contains("--quick"), "{line}");
    assert!(table(&c).contains(&gate_footer(g)));
    // The same runs with a replicated line that did regress: exit 1.
    let with = |median: f64, slow: f64| {
        let mut f = quick(median);
        f.results.push(support::blocked(
            "cpu.x",
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(9, 4, 30, 100.0 * slow, 0.002, 0.01),
        ));
        f
    };
    let c = compare(&with(100.0, 1.0), &with(200.0, 1.5), 0.95).gated(5.0);
    let g = c.gate.as_ref().unwrap();
    assert_eq!(
        (g.outcome, g.regressions.len(), g.undecided.len()),
        (GateOutcome::Regression, 1, 1)
    );
    assert_eq!(g.outcome.exit_code(), 1);
    assert!(undecided_line(g).is_none());
}

/// Precise runs: a curve a precise run measures in one process by design
/// (batches in both, the runs replicated everything else) is listed as
/// not gated and does not make the gate undecided.
#[test]
fn curves_of_precise_runs_are_not_gated_and_decide_nothing() {
    curves_not_gated(false);
    // A curve the harness times (mem.latency): its one process ran its code
    // at several placements, so its interval is over the placements, not
    // batches. Identical precise default runs were undecided on those
    // lines in 5 of 5 pairs before.
    curves_not_gated(true);
}

/// The curve's one process: its observations in batches, or its code at 4
/// placements in turn (one observation each).
fn one_process_interval(r: &mut yamba_results::BenchResult, placed: bool) {
    use yamba_results::{Certainty, Method, MethodKind, Placement};
    if !placed {
        r.certainty = Certainty::within_process(&r.observations, 0.0, None);
        return;
    }
    let placement = Placement {
        placed: true,
        why_not: None,
        slots: 4,
        stretch: 1,
        window_bytes: 1 << 20,
        granule_bytes: 16,
        code_bytes: 64,
        dummy_bytes: 0,
        at: Vec::new(),
    };
    r.method = Some(Method {
        kind: MethodKind::Single,
        iterations: 1,
        unroll: 1,
        dummy_ns: None,
        dummy: None,
        base_subtracted_ns: None,
        warmup_ns: 0.0,
        target_precision: 0.01,
        budget_s: 0.15,
        elapsed_s: 0.1,
        stopped: "budget".into(),
        core_mhz: None,
        core_adds_per_cycle: None,
        placement: Some(placement.clone()),
        phases: None,
    });
    r.certainty =
        Certainty::within_process_placed(&r.observations, placement.rotation(), 0.0, None);
    assert_eq!(
        r.certainty.as_ref().unwrap().block,
        yamba_results::BlockKind::Placement
    );
}

fn curves_not_gated(placed: bool) {
    use yamba_report::compare::{gate_footer, GateLine, GateOutcome};
    let precise = |scale: f64| {
        let mut curve = support::result(
            "mem.latency",
            Mode::Hot,
            Unit::Nanoseconds,
            support::lognormal(5, 300, 80.0 * scale, 0.02),
        );
        one_process_interval(&mut curve, placed);
        let mut f = support::file(vec![
            support::blocked(
                "cpu.x",
                Mode::Hot,
                Unit::Nanoseconds,
                support::processes(3, 3, 30, 100.0, 0.003, 0.01),
            ),
            curve,
        ]);
        f.config =
            serde_json::json!({"quick": false, "repetitions": 3, "cpu": null, "no_pin": false});
        f
    };
    let c = compare(&precise(1.0), &precise(1.3), 0.95).gated(5.0);
    let g = c.gate.as_ref().unwrap();
    assert_eq!(g.outcome, GateOutcome::Pass, "{g:?}");
    assert_eq!(g.one_process, vec!["mem.latency@hot".to_string()]);
    assert!(g.undecided.is_empty());
    assert_eq!(c.rows[1].gate, Some(GateLine::OneProcess));
    assert!(
        c.rows[1]
            .note
            .as_deref()
            .unwrap()
            .contains("measured in one process by design"),
        "{:?}",
        c.rows[1]
    );
    assert!(gate_footer(g).contains("1 not gated: measured in one process by design"));
    // A --repeat 1 run measures everything in one process: not by design.
    let mut one = precise(1.0);
    one.config["repetitions"] = serde_json::json!(1);
    one.results[0] = {
        let mut r = support::result(
            "cpu.x",
            Mode::Hot,
            Unit::Nanoseconds,
            support::lognormal(6, 300, 100.0, 0.01),
        );
        r.certainty = yamba_results::Certainty::within_process(&r.observations, 0.0, None);
        r
    };
    let g = compare(&one, &one.clone(), 0.95).gated(5.0).gate.unwrap();
    assert_eq!(g.outcome, GateOutcome::Undecided, "{g:?}");
    assert_eq!(g.undecided.len(), 2, "{g:?}");
}

/// A run of `cpu.x` whose processes ran at these core clocks (MHz), with
/// these medians (tight observations).
fn clocked(medians: &[f64], mhz: &[f64]) -> yamba_results::ResultsFile {
    use yamba_results::{BlockKind, Certainty};
    let processes: Vec<Vec<f64>> = medians
        .iter()
        .enumerate()
        .map(|(i, &m)| support::lognormal(i as u64 + 1, 30, m, 0.0005))
        .collect();
    let mut r = support::blocked("cpu.x", Mode::Hot, Unit::Nanoseconds, processes.clone());
    let medians = processes
        .iter()
        .map(|p| yamba_stats::Summary::of(p).unwrap().median)
        .collect();
    r.certainty = Certainty::from_blocks(
        BlockKind::Process,
        medians,
        processes.iter().map(Vec::len).collect(),
        0.0,
        mhz.to_vec(),
    );
    let mut f = support::file(vec![r]);
    f.config = serde_json::json!({"quick": false, "repetitions": 3, "cpu": null, "no_pin": false});
    f
}

/// Earlier runs are read where the gate reads: in core cycles. Runs of
/// one build at 3000 and 3200 MHz span 625–667 ns and 2000 cycles each (on
/// the busy AMD EPYC Zen 3 guest, consecutive runs moved 2956–3217 MHz).
/// A B with 10% more cycles, at a clock that brings its time inside that
/// span, is a regression, not a known state; a B at a level of cycles an
/// earlier run reached is one.
#[test]
fn earlier_runs_tell_a_state_in_cycles_where_the_gate_judged_in_cycles() {
    use yamba_report::compare::{compare_with, EarlierRuns, GateLine};
    let run = |cycles: f64, mhz: f64, started: &str| {
        let ns = cycles * 1e3 / mhz;
        let mut f = clocked(&[ns, ns * 1.0004, ns * 0.9996], &[mhz; 3]);
        f.started = started.into();
        f
    };
    let earlier = [run(2000.0, 3000.0, "01"), run(2000.0, 3200.0, "02")];
    let a = run(2000.0, 3100.0, "1");
    let b = run(2200.0, 3400.0, "2");
    let known = EarlierRuns::of_baseline(&a, &b, &earlier, None);
    assert_eq!(known.runs, 2);
    let c = compare_with(&a, &b, 0.95, &known).gated(5.0);
    let r = &c.rows[0];
    assert!(r.change_pct.unwrap().abs() < 1.0, "{r:?}");
    assert!((r.change_cycles_pct.unwrap() - 10.0).abs() < 0.5, "{r:?}");
    assert_eq!(r.gate, Some(GateLine::Regression), "{r:?}");
    // Read in time, as before 2026-12-06, the same earlier runs took B's
    // 647 ns for a state they had shown: the test tells the two apart.
    let mut timeless = known.clone();
    timeless.cycles.clear();
    let r = &compare_with(&a, &b, 0.95, &timeless).gated(5.0).rows[0];
    assert_ne!(r.gate, Some(GateLine::Regression), "{r:?}");
    assert_note(r, "identical runs");
    // An earlier run at B's level of cycles: a state, in cycles.
    let earlier = [run(2000.0, 3000.0, "01"), run(2200.0, 3200.0, "02")];
    let known = EarlierRuns::of_baseline(&a, &b, &earlier, None);
    let r = &compare_with(&a, &b, 0.95, &known).gated(5.0).rows[0];
    assert_ne!(r.gate, Some(GateLine::Regression), "{r:?}");
    assert_note(r, "cycles over A and 2 earlier runs");
}

/// A time that moved with the host's clock is not a change, and not a
/// regression; one whose cycles moved as far is both; one whose cycles
/// moved as far but unevenly (a disturbed clock reading) is not called,
/// and says so rather than blaming the clock.
#[test]
fn the_core_clock_is_judged_in_cycles() {
    use yamba_report::compare::{undecided_line, GateLine, GateOutcome, TooFewWhy};
    let a = clocked(&[100.0, 100.1, 99.9], &[3700.0, 3700.0, 3700.0]);
    // 8% more time at a clock 8% slower: the same cycles.
    let b = clocked(&[108.0, 108.1, 107.9], &[3426.0, 3426.0, 3426.0]);
    let c = compare(&a, &b, 0.95).gated(5.0);
    let r = &c.rows[0];
    assert_eq!(r.verdict, Verdict::Same, "{r:?}");
    assert!(
        r.note
            .as_deref()
            .unwrap()
            .starts_with("follows the core clock"),
        "{r:?}"
    );
    assert!(r.change_cycles_pct.unwrap().abs() < 0.5, "{r:?}");
    assert_eq!(r.gate, Some(GateLine::Pass), "{r:?}");
    let g = c.gate.as_ref().unwrap();
    assert_eq!((g.outcome, g.tested_in_cycles), (GateOutcome::Pass, 1));
    // 8% more cycles at the same clock: slower, and a regression past 5%.
    let b = clocked(&[108.0, 108.1, 107.9], &[3700.0, 3700.0, 3700.0]);
    let c = compare(&a, &b, 0.95).gated(5.0);
    assert_eq!(c.rows[0].verdict, Verdict::Slower, "{:?}", c.rows[0]);
    assert_eq!(
        c.rows[0].gate,
        Some(GateLine::Regression),
        "{:?}",
        c.rows[0]
    );
    assert!((c.rows[0].worse_pct.unwrap() - 8.0).abs() < 0.3);
    // The same, with one of A's clock readings disturbed (a process whose
    // multiply chains were sliced read 3425 MHz: seen on a busy guest).
    // Neither verdict nor gate can decide, and both say so: before, the
    // table said "~" and the gate passed an 8% slowdown.
    let a = clocked(&[100.0, 100.1, 99.9], &[3700.0, 3700.0, 3425.0]);
    let c = compare(&a, &b, 0.95).gated(5.0);
    let r = &c.rows[0];
    assert_eq!(r.verdict, Verdict::Unconfirmed, "{r:?}");
    assert!(
        r.note
            .as_deref()
            .unwrap()
            .starts_with("not confirmed in core cycles"),
        "{r:?}"
    );
    assert_eq!(r.gate, Some(GateLine::Undecided), "{r:?}");
    let g = c.gate.as_ref().unwrap();
    assert_eq!(g.outcome, GateOutcome::Undecided);
    assert_eq!(
        g.undecided,
        vec![(r.key.clone(), TooFewWhy::CyclesUnconfirmed)]
    );
    let said = undecided_line(g).unwrap();
    assert!(
        said.contains("too unevenly to confirm") && said.contains("Run again"),
        "{said}"
    );
    assert!(table(&c).contains("? (not confirmed in core cycles"));
    assert!(
        table(&c).contains("\n0 slower, 0 faster, 0 unchanged, 1 not confirmed in core cycles, ")
    );
    // The gate's quantity is the cycles (+10.8% here, interval [-1%, +24%]):
    // at a threshold above that estimate it is decided, a pass.
    let c = compare(&a, &b, 0.95).gated(15.0);
    assert_eq!(c.rows[0].gate, Some(GateLine::Pass), "{:?}", c.rows[0]);
    assert_eq!(c.gate.unwrap().outcome, GateOutcome::Pass);
}
