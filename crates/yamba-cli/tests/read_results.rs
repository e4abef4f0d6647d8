//! The reading commands end to end: `yamba obs`, `select`, `compare`,
//! `export` and `plot` on results files built here, checking output, exit
//! codes and error lines.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use yamba_core::base::Base;
use yamba_core::clock::{Calibration, ClockInfo, ClockKind};
use yamba_core::{Machine, Unit};
use yamba_results::results::{BenchResult, BlockKind, Certainty, Mode, ResultsFile};

/// A result measured in 5 processes (blocks of consecutive observations).
fn result(id: &str, mode: Mode, obs: Vec<f64>) -> BenchResult {
    let area = id.split('.').next().unwrap();
    let mut r = BenchResult::new(id, id, area, Unit::Nanoseconds, mode, "test");
    let per = obs.len().div_ceil(5);
    let blocks: Vec<&[f64]> = obs.chunks(per).collect();
    r.certainty = Certainty::from_blocks(
        BlockKind::Process,
        blocks
            .iter()
            .map(|b| yamba_stats::Summary::of(b).unwrap().median)
            .collect(),
        blocks.iter().map(|b| b.len()).collect(),
        0.0,
        vec![],
    );
    r.set_observations(obs);
    r
}

/// Deterministic spread: 0.95 … 1.05 times `median`, in a scrambled order.
fn spread(median: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| median * (0.95 + 0.1 * ((i * 7919) % n) as f64 / n as f64))
        .collect()
}

fn file(scale: f64) -> ResultsFile {
    let obs = spread(100.0 * scale, 40);
    let mut f = ResultsFile::new(
        vec![],
        serde_json::json!({}),
        Machine {
            hostname: "h".into(),
            os: "Linux".into(),
            kernel: "6.1".into(),
            arch: "x86_64".into(),
            cpu_vendor: "v".into(),
            cpu_model: "m".into(),
            online_cpus: 2,
            memory_bytes: 1 << 30,
            cpu_mhz: None,
            governor: None,
            boost: None,
            hypervisor: None,
            caches: vec![],
            page_size: 4096,
            transparent_hugepages: None,
            clocksource: None,
            perf_event_paranoid: None,
            vulnerabilities: Default::default(),
            mitigations: None,
            is_root: false,
            ..Default::default()
        },
        ClockInfo {
            kind: ClockKind::MonotonicRaw,
            reason: String::new(),
            tick_ns: 1.0,
            resolution_ns: 20.0,
            calibration: Calibration {
                frequency_hz: 1e9,
                relative_uncertainty: 0.0,
                reference: String::new(),
                windows: 1,
                window_ms: 1.0,
            },
        },
        Base {
            base_ns: 20.0,
            mean_ns: Some(20.0),
            quantum_ns: Some(20.0),
            base_ticks: 20,
            share_within_2x_min: 1.0,
            summary: yamba_stats::Summary::of(&[20.0]).unwrap(),
            observations: vec![20.0],
        },
    );
    f.tool.version = "0.1.0".into();
    f.started = "2026-11-23T00:00:00Z".into();
    f.complete = true;
    f.results = vec![
        result("cpu.syscall.getppid", Mode::Hot, obs.clone()),
        result("cpu.syscall.getppid", Mode::Cold, spread(2000.0, 30)),
        result("mem.read", Mode::Hot, spread(5.0, 20)),
    ];
    f
}

fn yamba(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(args)
        .env("COLUMNS", "72")
        .env("LINES", "20")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run yamba");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, f: &ResultsFile) -> String {
    let p = dir.join(name);
    f.write_atomic(&p).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn obs_and_select() {
    let dir = tempfile::tempdir().unwrap();
    let f = file(1.0);
    let a = write(dir.path(), "a.json", &f);
    let o = yamba(&["obs", &a, "cpu.syscall.getppid@hot"], None);
    assert!(o.status.success(), "{}", err(&o));
    let vals: Vec<f64> = out(&o).lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(vals, f.results[0].observations);
    let o = yamba(
        &["obs", &a, "cpu.syscall.getppid@hot", "--range", "2-5"],
        None,
    );
    assert_eq!(out(&o).lines().count(), 3);
    // Ambiguous, unknown, bad range: one clear line, exit 2.
    for (args, needle) in [
        (vec!["obs", &a, "cpu.syscall.getppid"], "@cold"),
        (vec!["obs", &a, "cpu.syscall.getpid"], "did you mean"),
        (vec!["obs", &a, "mem.read", "--range", "x"], "bad range"),
        (vec!["obs", "/no/such/file.json", "x"], "/no/such/file.json"),
    ] {
        let o = yamba(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(err(&o).contains(needle), "{args:?}: {}", err(&o));
        assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
    }
    // select writes a smaller file that obs reads back.
    let small = dir.path().join("small.json");
    let o = yamba(
        &["select", &a, "mem", "--out", small.to_str().unwrap()],
        None,
    );
    assert!(o.status.success(), "{}", err(&o));
    let back = ResultsFile::read(&small).unwrap();
    assert_eq!(back.results.len(), 1);
    let o = yamba(
        &["obs", "-", "mem.read@hot"],
        Some(&std::fs::read_to_string(&small).unwrap()),
    );
    assert_eq!(out(&o).lines().count(), 20);
}

#[test]
fn compare_threshold_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &file(1.0));
    let b = write(dir.path(), "b.json", &file(1.10));
    let c = write(dir.path(), "c.json", &file(1.25));
    let o = yamba(&["compare", &a, &a, "--threshold", "5"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains(" ~"), "{}", out(&o));
    // +10% with processes spread ±5%: called slower, but not shown to be
    // more than 5% worse (its interval starts at +5.2%, and the gate's
    // one-sided test is at 0.05/3 for 3 lines): the gate passes.
    let o = yamba(&["compare", &a, &b, "--threshold", "5"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("slower"));
    assert!(out(&o).contains("gate: 3 lines tested against a 5% threshold"));
    // +25%: worse than 5%, beyond doubt.
    let o = yamba(&["compare", &a, &c, "--threshold", "5"], None);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(err(&o).contains("cpu.syscall.getppid@hot"), "{}", err(&o));
    assert!(out(&o).contains("REGRESSION"), "{}", out(&o));
    let o = yamba(&["compare", &a, &c, "--threshold", "20"], None);
    assert_eq!(o.status.code(), Some(0));
    let o = yamba(&["compare", &a, &b, "--format", "json"], None);
    let v: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["rows"][0]["verdict"], "slower");
    let o = yamba(&["compare", &a, &b, "--confidence", "95"], None);
    assert_eq!(o.status.code(), Some(2));
}

/// Two quick runs (one process per result: batches of one process are
/// not independent between runs) cannot decide a gate: exit 3 with one
/// line saying why, whatever the change — never 0.
#[test]
fn a_gate_on_quick_runs_is_undecided() {
    let dir = tempfile::tempdir().unwrap();
    let quick = |scale: f64| {
        let mut f = file(scale);
        f.config = serde_json::json!({"quick": true, "repetitions": 1});
        for r in &mut f.results {
            r.certainty = Certainty::within_process(&r.observations, 0.0, None);
        }
        f
    };
    let a = write(dir.path(), "qa.json", &quick(1.0));
    let b = write(dir.path(), "qb.json", &quick(2.0));
    for (x, y) in [(&a, &b), (&a, &a)] {
        let o = yamba(&["compare", x, y, "--threshold", "5"], None);
        assert_eq!(o.status.code(), Some(3), "{}{}", out(&o), err(&o));
        let e = err(&o);
        assert_eq!(
            e.lines().filter(|l| l.contains("undecided")).count(),
            1,
            "{e}"
        );
        assert!(
            e.contains("undecided: 3 line(s) could not be tested against the 5% threshold"),
            "{e}"
        );
    }
    // Without --threshold there is no gate: exit 0.
    let o = yamba(&["compare", &a, &b], None);
    assert_eq!(o.status.code(), Some(0));
    let help = out(&yamba(&["compare", "--help"], None));
    assert!(help.contains("3 undecided"), "{help}");
    let help = out(&yamba(&["run", "--help"], None));
    assert!(help.contains("3 undecided"), "{help}");
}

#[test]
fn export_formats() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &file(1.0));
    let o = yamba(&["export", &a, "--format", "csv"], None);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).lines().count(), 4);
    assert!(
        out(&o).starts_with("id,")
            && out(&o)
                .lines()
                .next()
                .unwrap()
                .ends_with(",value,value_lo,value_hi")
    );
    // One benchstat sample per process of a precise run: 3 results of 5
    // processes each (not their 90 observations).
    let o = yamba(&["export", &a, "--format", "gobench"], None);
    assert_eq!(
        out(&o)
            .lines()
            .filter(|l| l.starts_with("Benchmark"))
            .count(),
        15
    );
    let o = yamba(&["export", &a, "--format", "ministat"], None);
    assert_eq!(o.status.code(), Some(2), "several results need --out DIR");
    let o = yamba(&["export", &a, "mem.read", "--format", "ministat"], None);
    assert_eq!(out(&o).lines().count(), 20);
    let d = dir.path().join("cols");
    let o = yamba(
        &[
            "export",
            &a,
            "--format",
            "ministat",
            "--out",
            d.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 3);
}

#[test]
fn plot_terminal_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &file(1.0));
    // Plain numbers on stdin, sized by $COLUMNS/$LINES.
    let o = yamba(&["plot", "-", "-o"], Some("BASE 1 2 3 2 1 2 3 100\n"));
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.lines().count() <= 20, "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 72), "{text}");
    assert!(
        err(&o).contains("-o layer 1: removed 1 of 8"),
        "{}",
        err(&o)
    );
    let o = yamba(&["plot", "-"], Some("1 2 x\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("line 1"), "{}", err(&o));
    let o = yamba(
        &[
            "plot",
            &a,
            "cpu.syscall.getppid@cold",
            "--hist",
            "--bins",
            "5",
        ],
        None,
    );
    assert!(out(&o).contains("value (µs)"), "{}", out(&o));
    for ext in ["svg", "png"] {
        let p = dir.path().join(format!("p.{ext}"));
        let o = yamba(&["plot", &a, "cpu", "--output", p.to_str().unwrap()], None);
        assert!(o.status.success(), "{}", err(&o));
        let bytes = std::fs::read(&p).unwrap();
        assert!(bytes.len() > 1000);
    }
    let o = yamba(&["plot", &a, "--output", "x.gif"], None);
    assert_eq!(o.status.code(), Some(2));
}
