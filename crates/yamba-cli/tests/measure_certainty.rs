//! Certainty between runs, as a user meets it: pairs of identical runs
//! through the binary, compared with `yamba compare --threshold 5`.
//!
//! - false alarms: identical configurations fail the gate (exit 1) in at
//!   most 5% of pairs — undecided (exit 3) is counted and said, and most
//!   pairs undecided is a premise unmet — and no line is called
//!   slower/faster more often than a 5% test allows over the pairs;
//! - power: a known 10% more work (testing.work) is called slower in ≥ 90%
//!   of pairs, and 2% more passes a 5% gate in ≥ 95% of pairs; a planted
//!   ≈ 5% slowdown of a real system call (`cpu.syscall.getppid.extra_muls`,
//!   its size chosen from measured ratios) is reported at its size (a
//!   check); how often it is called slower, and how often a 5% gate
//!   fails, are printed.
//!
//! Runs are quick (short budgets) with 3 process blocks each, as a precise
//! run starts with, and are stored in a history of the test's own, as a user's
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
//! throughout. The gate's rates are decided by rate checks
//! (yamba_testkit::RateCheck: a binomial rule that fails falsely with at
//! most 0.1% when the true rate meets the claim, and says undecided where
//! 20 or 40 pairs cannot tell); the planted slowdown's size is a median,
//! and a check decides it.

use std::path::{Path, PathBuf};
use std::process::Command;
use yamba_core::coreclock::{lowest_adds_per_cycle, SHARED_CORE_SHARE};
use yamba_testkit::{alone, check, premise_unmet, rate_check, Accept, Claim, Outcome};

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

/// Process blocks of each run: what a precise run starts every benchmark
/// with.
const BLOCKS: u64 = 3;

/// One quick run of `names` with [`BLOCKS`] blocks into `out`, with these
/// settings (KEY=VALUE).
fn run(dir: &Path, out: &str, names: &[&str], sets: &[String]) -> PathBuf {
    let path = dir.join(out);
    let o = yamba(dir)
        .current_dir(dir)
        .args([
            "run",
            "--quick",
            "--realtime",
            "--repeat",
            &BLOCKS.to_string(),
            "--format",
            "json",
        ])
        .args(names)
        .args(sets.iter().flat_map(|s| ["--set", s.as_str()]))
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
    // 3: undecided — a line left with fewer than 2 processes a side.
    assert!(
        [0, 1, 3].contains(&code),
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

/// `testing.work.extra_pct=P`.
fn extra_pct(p: u32) -> Vec<String> {
    vec![format!("testing.work.extra_pct={p}")]
}

/// [`SEED_RUNS`] runs of A's configuration into a fresh history, then pairs
/// of runs A (`a_sets`) and B (`b_sets`), alternating so drift falls on
/// both alike; returns each pair's exit code and rows, and checks that
/// each comparison read the history.
fn pairs(
    names: &[&str],
    a_sets: &[String],
    b_sets: &[String],
    count: usize,
) -> Vec<(i32, Vec<serde_json::Value>)> {
    let mut rounds = Rounds::seeded(names, a_sets);
    (0..count)
        .map(|_| rounds.next(&[b_sets]).remove(0))
        .collect()
}

/// Rounds of runs against one seeded history: [`SEED_RUNS`] runs of A's
/// configuration first, then per round one A and every B, each B
/// compared with that A.
struct Rounds<'a> {
    dir: tempfile::TempDir,
    names: &'a [&'a str],
    a_sets: &'a [String],
    done: usize,
}

impl<'a> Rounds<'a> {
    fn seeded(names: &'a [&'a str], a_sets: &'a [String]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..SEED_RUNS {
            run(dir.path(), &format!("seed{i}.json"), names, a_sets);
        }
        Rounds {
            dir,
            names,
            a_sets,
            done: 0,
        }
    }

    /// One round: each B's exit code and rows, in `bs`' order.
    fn next(&mut self, bs: &[&[String]]) -> Vec<(i32, Vec<serde_json::Value>)> {
        let (d, i) = (self.dir.path(), self.done);
        self.done += 1;
        let a = run(d, &format!("a{i}.json"), self.names, self.a_sets);
        bs.iter()
            .enumerate()
            .map(|(k, b_sets)| {
                let b = run(d, &format!("b{k}-{i}.json"), self.names, b_sets);
                let (code, rows, earlier) = compare(d, &a, &b);
                // The seeds, or as many newer runs of A's configuration.
                assert!(earlier >= SEED_RUNS, "only {earlier} earlier runs read");
                (code, rows)
            })
            .collect()
    }
}

/// The rate at which the gate may fail on identical pairs, and a line may
/// be called slower or faster in them: what a 5% test allows.
const FALSE_ALARMS: Claim = Claim::AtMost(0.05);

#[test]
fn identical_runs_pass_the_gate() {
    let _alone = alone();
    let got = pairs(CHEAP, &extra_pct(0), &extra_pct(0), PAIRS);
    // The gate: `compare --threshold 5` exits 1 when a line is shown to be
    // more than 5% worse (Holm over the lines): a false alarm here; 3 when
    // it cannot decide — a line whose processes ran on a shared core on
    // one side and alone on the other, where the runs show the shared core
    // moves it (on a busy Zen 5 host every false alarm of 10 identical
    // suite pairs was such a line). Undecided is not a false alarm, but a
    // gate undecided in most pairs tests nothing: a premise unmet.
    let failed = got.iter().filter(|(code, _)| *code == 1).count();
    let undecided = got.iter().filter(|(code, _)| *code == 3).count();
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
        rate_check!(
            format!("{id} called slower or faster in identical pairs"),
            FALSE_ALARMS
        )
        .run(
            calls.len(),
            PAIRS,
            &format!("calls {calls:?}; too few unshared processes in {too_few}"),
        );
        for (_, rows) in &got {
            let r = rows
                .iter()
                .find(|r| r["key"] == format!("{id}@hot"))
                .unwrap();
            // 3 processes a side, less those a shared core moved (and
            // then the note says so).
            let (a, b) = (
                r["blocks_a"].as_u64().unwrap(),
                r["blocks_b"].as_u64().unwrap(),
            );
            assert!(a <= BLOCKS && b <= BLOCKS, "{r}");
            if r["verdict"] != "too_few" {
                assert!(a >= 2 && b >= 2, "{r}");
            }
            if a < BLOCKS || b < BLOCKS {
                assert!(
                    r["note"]
                        .as_str()
                        .is_some_and(|n| n.contains("shared core")),
                    "{r}"
                );
            }
        }
    }
    // Every line the gate left undecided says why: a shared core, or
    // cycles that could not confirm a time.
    for (i, (code, rows)) in got.iter().enumerate() {
        for r in rows.iter().filter(|r| r["gate"] == "undecided") {
            let note = r["note"].as_str().unwrap_or("");
            assert!(
                note.contains("shared core") || note.contains("core cycles"),
                "pair {i} (exit {code}): undecided without a reason: {r}"
            );
        }
    }
    // The lines that failed the gate, kept in the check's log (a passing
    // test's output is captured): which line, and why the verdict did not
    // call it.
    let regressions: Vec<String> = got
        .iter()
        .enumerate()
        .flat_map(|(i, (_, rows))| {
            rows.iter()
                .filter(|r| r["gate"] == "regression")
                .map(move |r| {
                    format!(
                        "pair {i}: {} {} {:+.1}% ({}+{} processes; {})",
                        r["key"],
                        r["verdict"],
                        r["change_pct"].as_f64().unwrap_or(f64::NAN),
                        r["blocks_a"],
                        r["blocks_b"],
                        r["note"].as_str().unwrap_or("no note")
                    )
                })
        })
        .collect();
    rate_check!("the 5% gate failed on identical pairs", FALSE_ALARMS).run(
        failed,
        PAIRS,
        &format!("undecided in {undecided}; regressions {regressions:?}"),
    );
    if 2 * undecided > PAIRS {
        premise_unmet!(
            "the 5% gate was undecided in {undecided} of {PAIRS} identical pairs (processes on a shared core on one side only): the machine let it test too little; failed in {failed}"
        );
    }
}

/// Power, the gate's other promise: a known 10% more work is called
/// slower in at least 90% of the pairs the machine lets `compare` decide,
/// and 2% more fails a 5% gate no more often than no change may (5%).
/// Both are rate checks over 20 pairs, and 20 more where either is
/// undecided (two looks).
///
/// A pair not called whose note gives the machine's reason (B's
/// processes at a level earlier runs of A reached, or a process left out
/// for a shared core) is not a trial of the power; a miss without one is: on an Intel Xeon guest
/// whose neighbour flickered (2026-12-02) the seeded runs of A spanned
/// 715–830 ns, 15%, and B's 10% lay inside in 3 or 4 of 20 pairs (the
/// power over all pairs there: 16 and 17 of 20). When the machine
/// declines most pairs the premise is unmet, and said so.
#[test]
fn ten_percent_more_work_is_slower_and_two_percent_passes_a_five_percent_gate() {
    let _alone = alone();
    const LOOKS: usize = 2;
    let power = rate_check!("10% more work called slower", Claim::AtLeast(0.9)).looks(LOOKS);
    let small = rate_check!("2% more work failed a 5% gate", FALSE_ALARMS).looks(LOOKS);
    // One A per round for both: 10% and 2% more work.
    let (a, b10, b2) = (extra_pct(0), extra_pct(10), extra_pct(2));
    let mut rounds = Rounds::seeded(&["testing.work"], &a);
    let (mut ten, mut two) = (Vec::new(), Vec::new());
    for look in 1..=LOOKS {
        for _ in 0..PAIRS {
            let mut got = rounds.next(&[&b10, &b2]);
            two.push(got.pop().unwrap());
            ten.push(got.pop().unwrap());
        }
        let trials: Vec<&serde_json::Value> = ten
            .iter()
            .map(|(_, rows)| &rows[0])
            .filter(|r| {
                r["verdict"] == "slower"
                    || machine_reason(r["note"].as_str().unwrap_or("")).is_none()
            })
            .collect();
        let slower = trials.iter().filter(|r| r["verdict"] == "slower").count();
        let declined = ten.len() - trials.len();
        // Exit 1: a regression found (3, undecided, is not a failure).
        let gated = two.iter().filter(|(code, _)| *code == 1).count();
        let undecided = [
            power.judge(slower, trials.len()).outcome,
            small.judge(gated, two.len()).outcome,
        ]
        .contains(&Outcome::Undecided);
        if look < LOOKS && undecided {
            continue;
        }
        let changes: Vec<f64> = ten
            .iter()
            .filter_map(|(_, rows)| rows[0]["change_pct"].as_f64())
            .collect();
        for (i, (_, rows)) in ten.iter().enumerate() {
            let r = &rows[0];
            if r["verdict"] != "slower" {
                eprintln!(
                    "  pair {i}: {} {:+.1}% {}+{} {}",
                    r["verdict"],
                    r["change_pct"].as_f64().unwrap_or(f64::NAN),
                    r["blocks_a"],
                    r["blocks_b"],
                    r["note"]
                );
            }
        }
        let verdicts: Vec<&str> = two
            .iter()
            .map(|(_, rows)| verdict(rows, "testing.work"))
            .collect();
        // Both decided and recorded before either may panic.
        let g = small.decide(gated, two.len(), &format!("verdicts {verdicts:?}"));
        if 2 * declined > ten.len() {
            assert_ne!(g.outcome, Outcome::Fail);
            premise_unmet!(
                "10% more work: the machine declined {declined} of {} pairs (B within earlier runs' states, or a process on a shared core); called slower in {slower} of the other {}",
                ten.len(),
                trials.len()
            );
        }
        let p = power.decide(
            slower,
            trials.len(),
            &format!(
                "{declined} of {} pairs declined for the machine; changes {changes:.1?}",
                ten.len()
            ),
        );
        assert_ne!(
            p.outcome,
            Outcome::Fail,
            "10% more work called slower in {slower} of {} decided pairs",
            trials.len()
        );
        assert_ne!(
            g.outcome,
            Outcome::Fail,
            "2% more work failed a 5% gate in {gated} of {}",
            two.len()
        );
        break;
    }
}

/// The headline value of `id@hot` in a results file.
fn estimate(path: &Path, id: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id && r["mode"] == "hot")
        .and_then(|r| r["certainty"]["estimate"].as_f64())
        .unwrap_or_else(|| panic!("{id} has no estimate in {}", path.display()))
}

/// The suite gate's evidence on a real benchmark: a planted slowdown of
/// ≈ 5% in `cpu.syscall.getppid` (N dependent multiplies after each call,
/// then a fence the next call waits on). N starts at 5% of the call's
/// time over a multiply's latency (`cpu.ops.i64.mul`), both the median of
/// 3 calibration runs, and is then sized by a witness (below). The
/// baseline A runs the same loop with 0 multiplies (`extra_muls=0`), not
/// the plain one: against the plain loop a planted +5% measured −7%
/// (cpu/syscall.rs says why).
///
/// What N multiplies add after a system call is not N latencies, and not
/// the same fraction of them on every core: on an AMD EPYC (Zen 4) guest
/// 8 added 4.0 ns of 6.5 (the core hid the first few), on a Zen 5 guest
/// (2026-12-02) 8 added 10.3 ns of 6.5 in C, and three CI runs there
/// measured the planted change at a median +8.2 to +8.9% against a model
/// of ≤ 4.9% — a check bounded by the model would fail on a quiet Zen 5
/// host. So the planted size e is measured, by a witness of known shape
/// ([`planted_witness`]): a C loop making the same call followed by the
/// same N multiplies and fence, against itself with none, interleaved
/// round by round on the same CPU (a round's two sides meet the same state
/// of the machine), the median of the rounds' ratios; e is the reading
/// most of 5 (else 9) fresh processes agree on, before the pairs — one
/// process can sit in a state of its own for its whole life (the witness
/// says what it saw), and a median of three likely sized the plant at ~1%
/// that yamba measured at 9% in one CI (its readings were not kept). Where no majority agrees the plant's
/// size is unknown and the check says so. N is the count, not below 5% as
/// latencies, that the witness reads nearest 5% ([`size_plant`] says why
/// not below): 5% where a core hides part of the chain, ~10% on a Zen 5.
///
/// Decided by a check ([`yamba_testkit::Check`], false failure ≤ 0.1%):
/// each attempt is one pair (A, then B, against the seeded history), its
/// value the change `compare` reports for the line (B's median over A's,
/// %, in core cycles where both runs measured them, as the gate judges);
/// the check passes when the median change is shown to lie in
/// [0.5·e, 1.5·e] (yamba's loop runs at random placements, C's at one;
/// the two loops are alike, not the same code) and fails when it is shown
/// to lie outside. Both sides of a pair visit the same states of the
/// machine (getppid's processes sit at 118, 124 or 155 ns on a Zen 4
/// guest, a run's median at one of them), so the pairs' changes centre on
/// the planted size. How often the gate calls the change slower, with the
/// reasons it did not, and how often a 5% gate fails are printed, not
/// asserted: on that guest (20 pairs a run, 3 processes a side) it was
/// called in 7, 1, 14 and 1 of 20 in four runs and the gate failed in 0–2
/// of 20 — earlier runs of the baseline's configuration span more than
/// 5%, and a B inside their range is a state of the machine, not a change
/// (docs/certainty.md, "Machine states").
#[test]
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn a_planted_five_percent_on_getppid_measures_five_percent() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let muls = |n: u64| vec![format!("cpu.syscall.getppid.extra_muls={n}")];
    let median3 = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[1]
    };
    let cal: Vec<PathBuf> = (0..3)
        .map(|i| {
            run(
                d,
                &format!("cal{i}.json"),
                &["cpu.syscall.getppid", "cpu.ops"],
                &muls(0),
            )
        })
        .collect();
    let t0 = median3(
        cal.iter()
            .map(|f| estimate(f, "cpu.syscall.getppid"))
            .collect(),
    );
    let m = median3(cal.iter().map(|f| estimate(f, "cpu.ops.i64.mul")).collect());
    let modelled_n = (0.05 * t0 / m).round().max(1.0) as u64;
    let witness = compile_witness(d);
    let cpu = yamba_core::affinity::default_cpu();
    let (n, e) = match size_plant(&witness, cpu, modelled_n) {
        Ok(sized) => sized,
        Err(why) => premise_unmet!("the plant could not be sized: {why}"),
    };
    eprintln!(
        "getppid {t0:.1} ns, a multiply {m:.3} ns: 5% as latencies is {modelled_n}; planting {n}, measured in C: {e:.2}%"
    );
    if e <= 0.0 {
        // A median of 401 interleaved rounds does not read a dependent
        // chain as free; where it does, the plant's size is unknown here.
        premise_unmet!("the C witness read no cost for {n} planted multiplies ({e:.2}%)");
    }
    let (a_sets, b_sets) = (muls(0), muls(n));
    let mut rounds = Rounds::seeded(&["cpu.syscall.getppid"], &a_sets);
    let mut got = Vec::new();
    check!(
        "planted change of cpu.syscall.getppid, % (B's median over A's)",
        Accept::between(0.5 * e, 1.5 * e)
    )
    .attempts(5, 15)
    .on_own_core(lowest_adds_per_cycle, SHARED_CORE_SHARE)
    .run(|| {
        let (code, rows) = rounds.next(&[&b_sets]).remove(0);
        // In core cycles where both runs measured them, as the gate
        // judges: a host's clock step between A and B moves the time.
        let r = row(&rows);
        let change = r["change_cycles_pct"].as_f64().or(r["change_pct"].as_f64());
        got.push((code, rows));
        change.ok_or("no change reported")
    });
    report_planted(n, &got);
}

/// The planted work's witness in C (bench/planted-witness.c says what it
/// measures; bench/trust-at-speed.sh sizes its plant with it too).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
const WITNESS: &str = include_str!("../../../bench/planted-witness.c");

/// The plant's size: the N, not below `n0` (5% as multiply latencies),
/// whose witness reading (%, [`planted_witness`]) is nearest 5%, and
/// that reading (`Err` when the witness's processes did not agree). From
/// `n0`, doubled until it reads ≥ 5%, then bisected, the reading taken as
/// rising with N. Upwards only: where the core hides
/// part of the chain (a Zen 4 guest: 8 multiplies added 4.0 ns of their
/// 6.5) N latencies plant less than 5%, and more multiplies make it 5%;
/// where it charges more (a Zen 5 guest: 1, 2, 3 and 8 multiplies read
/// 1.3, 3.0, 6.7 and 9.2% — the third brings a step of ~5 ns), fewer
/// multiplies leave the chain and measure the loop's branch, which
/// yamba's loop (replicated by the measurement's unrolling) and C's do
/// not share: at 3, C read 5.1% and the pairs a median 1.7% (a busy
/// hour, every attempt shared). There the plant stays at `n0`, about
/// 10%, and is measured as such.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn size_plant(exe: &Path, cpu: usize, n0: u64) -> Result<(u64, f64), String> {
    let read = |n: u64| planted_witness(exe, cpu, n).map(|r| 100.0 * r);
    let mut lo = (n0, read(n0)?);
    let mut hi = lo;
    while hi.1 < 5.0 && hi.0 < 4096 {
        lo = hi;
        hi = (hi.0 * 2, read(hi.0 * 2)?);
    }
    if lo.1 >= 5.0 {
        return Ok(lo);
    }
    while hi.0 - lo.0 > 1 {
        let mid = (lo.0 + hi.0) / 2;
        let e = read(mid)?;
        if e < 5.0 {
            lo = (mid, e);
        } else {
            hi = (mid, e);
        }
    }
    Ok(if (lo.1 - 5.0).abs() < (hi.1 - 5.0).abs() {
        lo
    } else {
        hi
    })
}

/// [`WITNESS`] compiled into `dir` by `cc`.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn compile_witness(dir: &Path) -> PathBuf {
    let (src, exe) = (dir.join("planted.c"), dir.join("planted"));
    std::fs::write(&src, WITNESS).unwrap();
    let out = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cc (.ci/install installs gcc): {e}"));
    assert!(
        out.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// What `n` planted multiplies add to an inline getppid, as a fraction,
/// by the C witness on `cpu` (401 rounds of 1000 calls a side, ~0.1 s, in
/// each of 5 processes, the reading most of them agree on; 9 when no
/// majority does; `Err` with what they read when 9 do not either).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn planted_witness(exe: &Path, cpu: usize, n: u64) -> Result<f64, String> {
    let mut why = String::new();
    for processes in [5, 9] {
        let out = Command::new(exe)
            .args([
                cpu.to_string(),
                n.to_string(),
                "401".into(),
                "1000".into(),
                processes.to_string(),
            ])
            .output()
            .unwrap();
        why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        match out.status.code() {
            Some(0) => {
                let ratio: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
                return Ok(ratio - 1.0);
            }
            // No majority of its processes agreed: more of them.
            Some(3) => continue,
            _ => panic!("the planted witness failed: {why}"),
        }
    }
    Err(format!("{n} multiplies: {why}"))
}

/// The getppid line of a comparison's rows.
fn row(rows: &[serde_json::Value]) -> serde_json::Value {
    rows.iter()
        .find(|r| r["key"] == "cpu.syscall.getppid@hot")
        .cloned()
        .unwrap()
}

/// The machine's reason, in a line's note, for `compare` not to call a
/// change: B at a level earlier runs of A's configuration reached, or a
/// process left out because another hardware thread shared its core (not
/// a shared state compared as measured because it does not move the
/// line).
fn machine_reason(note: &str) -> Option<&'static str> {
    if note.contains("identical runs give") || note.contains("a state of the machine") {
        Some("within earlier runs' states")
    } else if note.contains("shared core") && !note.contains("every process compared") {
        Some("a process left out for a shared core")
    } else {
        None
    }
}

/// Prints how often the gate called the planted change, and why not.
fn report_planted(n: u64, got: &[(i32, Vec<serde_json::Value>)]) {
    let slower = got
        .iter()
        .filter(|(_, rows)| row(rows)["verdict"] == "slower")
        .count();
    let gated = got.iter().filter(|(code, _)| *code == 1).count();
    let undecided = got.iter().filter(|(code, _)| *code == 3).count();
    let mut why = std::collections::BTreeMap::new();
    for (i, (code, rows)) in got.iter().enumerate() {
        let r = row(rows);
        if *code != 0 {
            eprintln!(
                "  pair {i} (exit {code}): gate {} {:+.1}% ({} → {}) {}",
                r["gate"], r["worse_pct"], r["median_a"], r["median_b"], r["note"]
            );
        }
        if r["verdict"] == "slower" {
            continue;
        }
        let note = r["note"].as_str().unwrap_or("");
        let reason = machine_reason(note).unwrap_or(
            if note.contains("core cycles") || note.contains("core clock") {
                "the cycles did not confirm it"
            } else {
                "not significant with these processes"
            },
        );
        *why.entry(reason).or_insert(0) += 1;
        eprintln!(
            "  pair {i} (exit {code}): {} {:+.1}% ({:+.1}% in cycles) {}+{} {note}",
            r["verdict"], r["change_pct"], r["change_cycles_pct"], r["blocks_a"], r["blocks_b"]
        );
    }
    eprintln!(
        "planted {n} multiplies: slower in {slower} of {} (not: {why:?}), gate (5%) failed in {gated}, undecided in {undecided}",
        got.len()
    );
}
