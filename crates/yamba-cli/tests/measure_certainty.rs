//! Certainty between runs, as a user meets it: pairs of identical runs
//! through the binary, compared with `yamba compare --threshold 5`.
//!
//! - false alarms: identical configurations pass the gate in ≥ 95% of
//!   pairs, and no line is called slower/faster more often than a 5% test
//!   allows over the pairs;
//! - power: a known 10% more work (testing.work) is called slower in ≥ 90%
//!   of pairs, and 2% more passes a 5% gate in ≥ 95% of pairs.
//!
//! Runs are quick (short budgets) with 6 process blocks each, as a precise
//! run has, and are stored in a history of the test's own, as a user's
//! runs are: `compare` reads the earlier runs of the baseline's
//! configuration from it and does not call a difference that lies in a
//! state of the machine they showed (docs/certainty.md, "Machine states").
//! The history is seeded with [`SEED_RUNS`] runs first, as a user who
//! gates on a baseline runs it a few times. Without that, on an AMD EPYC
//! (Zen 4) guest a 1-byte read from /dev/zero costs 201 ns in most
//! processes and 222 or 260–290 ns in others (sometimes every process of
//! a run), and a CI run called `cpu.syscall.read_devzero` in 6 of 20
//! identical pairs.
//!
//! Measurement tests (docs/testing.md), each holding yamba_testkit::alone()
//! throughout; they decide on counts over 20 pairs, not with a
//! yamba_testkit::Check (a rate of false alarms near 5% needs far more
//! attempts than a check's median rule can afford here): their bounds and
//! what a false failure costs are stated at each assertion.

use std::path::{Path, PathBuf};
use std::process::Command;
use yamba_testkit::alone;

const PAIRS: usize = 20;
/// Runs of the baseline's configuration stored before the pairs.
const SEED_RUNS: usize = 10;
const CHEAP: &[&str] = &[
    "testing.work",
    "cpu.syscall.getppid",
    "cpu.syscall.read_devzero",
];

/// The binary, with the test's own history in `dir`.
fn yamba(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
    c.env("YAMBA_TEST_BENCHMARKS", "1")
        .env("YAMBA_HISTORY", dir.join("history.sqlite"));
    c
}

/// One quick run of `names` with 6 blocks into `out`.
fn run(dir: &Path, out: &str, names: &[&str], extra_pct: u32) -> PathBuf {
    let path = dir.join(out);
    let o = yamba(dir)
        .current_dir(dir)
        .args([
            "run",
            "--quick",
            "--realtime",
            "--repeat",
            "6",
            "--format",
            "json",
        ])
        .args(names)
        .args(["--set", &format!("testing.work.extra_pct={extra_pct}")])
        .arg("--out")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    path
}

/// `yamba compare A B --threshold 5 --format json`: exit code, rows, and
/// the earlier runs of A's configuration it read from the history.
fn compare(dir: &Path, a: &Path, b: &Path) -> (i32, Vec<serde_json::Value>, usize) {
    let o = yamba(dir)
        .args(["compare", "--threshold", "5", "--format", "json"])
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    let code = o.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let earlier = v["earlier_runs"].as_u64().unwrap() as usize;
    (code, v["rows"].as_array().unwrap().clone(), earlier)
}

fn verdict<'a>(rows: &'a [serde_json::Value], id: &str) -> &'a str {
    rows.iter()
        .find(|r| r["key"] == format!("{id}@hot"))
        .and_then(|r| r["verdict"].as_str())
        .unwrap_or_else(|| panic!("{id} missing in {rows:?}"))
}

/// [`SEED_RUNS`] runs of A's configuration into a fresh history, then pairs
/// of runs A (0% extra) and B (`extra_pct`), alternating so drift falls on
/// both alike; returns each pair's exit code and rows, and checks that
/// each comparison read the history.
fn pairs(names: &[&str], extra_pct: u32) -> Vec<(i32, Vec<serde_json::Value>)> {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..SEED_RUNS {
        run(dir.path(), &format!("seed{i}.json"), names, 0);
    }
    (0..PAIRS)
        .map(|i| {
            let a = run(dir.path(), &format!("a{i}.json"), names, 0);
            let b = run(dir.path(), &format!("b{i}.json"), names, extra_pct);
            let (code, rows, earlier) = compare(dir.path(), &a, &b);
            // The seeds, or as many newer runs of A's configuration.
            assert!(earlier >= SEED_RUNS, "only {earlier} earlier runs read");
            (code, rows)
        })
        .collect()
}

/// At most this many calls of one line in 20 pairs: a 5% test calls 4 or
/// more with probability 1.6%, 5 or more with 0.26%.
const MAX_CALLS: usize = 4;

#[test]
fn identical_runs_pass_the_gate() {
    let _alone = alone();
    let got = pairs(CHEAP, 0);
    // The gate: `compare --threshold 5` exits 1 on a significant slowdown
    // of more than 5% in any line.
    let failed = got.iter().filter(|(code, _)| *code != 0).count();
    for (i, (code, rows)) in got.iter().enumerate() {
        for r in rows
            .iter()
            .filter(|r| r["verdict"] != "same" || r["note"].is_string())
        {
            eprintln!(
                "pair {i} (exit {code}): {} {} {:+.1}% ({} → {}; {}+{} processes) {}",
                r["key"],
                r["verdict"],
                r["change_pct"],
                r["median_a"],
                r["median_b"],
                r["blocks_a"],
                r["blocks_b"],
                r["note"]
            );
        }
    }
    for id in CHEAP {
        // A call is "slower" or "faster"; "too_few" (processes that ran on
        // a shared core left out) calls nothing.
        let calls: Vec<&str> = got
            .iter()
            .map(|(_, rows)| verdict(rows, id))
            .filter(|v| *v == "slower" || *v == "faster")
            .collect();
        let too_few = got
            .iter()
            .filter(|(_, rows)| verdict(rows, id) == "too_few")
            .count();
        eprintln!(
            "{id}: called {} of {PAIRS}: {calls:?}; too few unshared processes in {too_few}",
            calls.len()
        );
        assert!(
            calls.len() <= MAX_CALLS,
            "{id} called {} times in {PAIRS} identical pairs: {calls:?}",
            calls.len()
        );
        for (_, rows) in &got {
            let r = rows
                .iter()
                .find(|r| r["key"] == format!("{id}@hot"))
                .unwrap();
            // 6 processes a side, less those a shared core moved (and
            // then the note says so).
            let (a, b) = (
                r["blocks_a"].as_u64().unwrap(),
                r["blocks_b"].as_u64().unwrap(),
            );
            assert!(a <= 6 && b <= 6, "{r}");
            if r["verdict"] != "too_few" {
                assert!(a >= 4 && b >= 4, "{r}");
            }
            if a < 6 || b < 6 {
                assert!(
                    r["note"]
                        .as_str()
                        .is_some_and(|n| n.contains("shared core")),
                    "{r}"
                );
            }
        }
    }
    eprintln!("gate failed in {failed} of {PAIRS} identical pairs");
    assert!(
        failed * 20 <= PAIRS,
        "the gate failed {failed} of {PAIRS} identical pairs"
    );
}

#[test]
fn ten_percent_more_work_is_slower_and_two_percent_passes_a_five_percent_gate() {
    let _alone = alone();
    let ten = pairs(&["testing.work"], 10);
    let slower = ten
        .iter()
        .filter(|(_, rows)| verdict(rows, "testing.work") == "slower")
        .count();
    let changes: Vec<f64> = ten
        .iter()
        .filter_map(|(_, rows)| rows[0]["change_pct"].as_f64())
        .collect();
    eprintln!("10% more work: slower in {slower} of {PAIRS}; changes {changes:.1?}");
    for (i, (_, rows)) in ten.iter().enumerate() {
        let r = &rows[0];
        if r["verdict"] != "slower" {
            eprintln!(
                "  pair {i}: {} {}+{} {}",
                r["verdict"], r["blocks_a"], r["blocks_b"], r["note"]
            );
        }
    }
    assert!(
        slower * 10 >= 9 * PAIRS,
        "slower in only {slower} of {PAIRS}"
    );
    let two = pairs(&["testing.work"], 2);
    let gated = two.iter().filter(|(code, _)| *code != 0).count();
    let verdicts: Vec<&str> = two
        .iter()
        .map(|(_, rows)| verdict(rows, "testing.work"))
        .collect();
    eprintln!("2% more work: gate failed in {gated} of {PAIRS}; verdicts {verdicts:?}");
    // The gate's promise for a change below its threshold is the same as
    // for no change at all: it passes in ≥ 95% of pairs.
    assert!(
        gated * 20 <= PAIRS,
        "a 2% change failed a 5% gate in {gated} of {PAIRS}: {verdicts:?}"
    );
}
