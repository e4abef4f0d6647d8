//! The stone series' products on fixed numbers: the log (read back, and by
//! the real ministat), the summary, the results file and its evidence.

use std::process::Command;
use yamba_core::Describe;
use yamba_stone::{
    compare_text, log_text, parse_log, results_file, summary_text, Context, Series, StoneRun,
};

fn run(seconds: f64, code: i32) -> StoneRun {
    StoneRun {
        ticks: (seconds * 2e9) as u64,
        cycles_ns: seconds * 1e9,
        wall_ns: seconds * 1e9 * 1.0001,
        user_s: seconds / 10.0,
        system_s: seconds / 20.0,
        max_rss_kib: 1000 + (seconds * 1000.0) as u64,
        exit_code: Some(code),
        signal: None,
    }
}

fn series(times: &[f64]) -> Series {
    Series {
        command: vec!["/usr/bin/make".into(), "all".into()],
        shell: false,
        warmup: 1,
        prepare: Some("make clean".into()),
        cleanup: None,
        runs: times.iter().map(|&t| run(t, 0)).collect(),
        ..Series::default()
    }
}

const TIMES: [f64; 5] = [2.0, 1.0, 4.0, 3.0, 5.0];

#[test]
fn log_is_one_value_per_line_and_reads_back() {
    let text = log_text(&[0.2, 0.25, 1.5]);
    assert_eq!(text, "0.200000000\n0.250000000\n1.500000000\n");
    assert_eq!(parse_log(&text).unwrap(), vec![0.2, 0.25, 1.5]);
    assert_eq!(parse_log("# c\n\n1\n2 x\n").unwrap(), vec![1.0, 2.0]);
    let err = parse_log("1\nabc\n").unwrap_err();
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn the_real_ministat_reads_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.log");
    let b = dir.path().join("b.log");
    std::fs::write(&a, log_text(&TIMES)).unwrap();
    std::fs::write(&b, log_text(&[2.5, 1.5, 4.5, 3.5, 5.5])).unwrap();
    let out = match Command::new("ministat").arg(&a).arg(&b).output() {
        Ok(o) => o,
        Err(e) => yamba_testkit::skip!(
            "the original ministat is not installed ({e}; .ci/install installs it)"
        ),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // N, min, max, median, mean of the first set, as the original computes them.
    let row = text.lines().find(|l| l.starts_with("x   5")).expect(&text);
    let f: Vec<f64> = row
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(&f[..5], &[5.0, 1.0, 5.0, 3.0, 3.0], "{text}");
    assert!(
        text.contains("No difference proven at 95.0% confidence"),
        "{text}"
    );
    // Our comparison (yamba's ministat) is the original's, byte for byte.
    let ours = compare_text(
        &a.display().to_string(),
        &TIMES,
        &b.display().to_string(),
        &[2.5, 1.5, 4.5, 3.5, 5.5],
    )
    .unwrap();
    assert_eq!(ours, text);
}

#[test]
fn summary_has_min_max_median_mean_stddev() {
    let text = summary_text(&series(&TIMES));
    assert!(
        text.starts_with("/usr/bin/make all: 5 runs after 1 warm-up\n"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("time (cycles), s"))
        .unwrap();
    let f: Vec<&str> = row.split_whitespace().skip(3).collect();
    // mean 3, sample stddev sqrt(2.5) = 1.58114
    assert_eq!(f, ["1", "5", "3", "3", "1.58114"], "{text}");
    let rss = text.lines().find(|l| l.starts_with("peak RSS")).unwrap();
    assert!(rss.split_whitespace().nth(3) == Some("2000"), "{rss}");
    assert!(!text.contains("failed"));
}

#[test]
fn results_file_has_one_result_with_per_run_accounting() {
    let clock = yamba_core::Clock::detect(20);
    let base = yamba_core::base::measure_base(&clock, 1000);
    let machine = yamba_core::Machine::describe();
    let ctx = Context {
        clock: clock.info(),
        base: &base,
        machine: &machine,
        argv: vec!["yamba".into(), "stone".into()],
        started: yamba_results::now_rfc3339(),
    };
    let s = series(&TIMES);
    let file = results_file(&s, &ctx);
    // Round trip through JSON, as `yamba compare` and friends read it.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    file.write_atomic(&p).unwrap();
    let back = yamba_results::ResultsFile::read(&p).unwrap();
    assert_eq!(back.results.len(), 1);
    let r = &back.results[0];
    assert_eq!(r.id, "stone.make");
    assert_eq!(r.status, yamba_results::Status::Ok, "{:?}", r.reason);
    assert_eq!(r.observations, vec![2e9, 1e9, 4e9, 3e9, 5e9]);
    assert_eq!(r.median(), Some(3e9));
    let runs = r.extra["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5);
    assert_eq!(runs[2]["max_rss_kib"], 5000);
    assert_eq!(runs[2]["user_s"], 0.4);
    let acc = r.accounting.as_ref().unwrap();
    assert!((acc.user_s - 1.5).abs() < 1e-9 && acc.max_rss_kib == 6000);

    // A run where the two clocks disagree by 5% withholds the number.
    let mut bad = series(&TIMES);
    bad.runs[3].wall_ns *= 1.05;
    let r = &results_file(&bad, &ctx).results[0];
    assert_eq!(r.status, yamba_results::Status::Withheld);
    assert!(r.reason.as_ref().unwrap().contains("wall clock"));

    // Failed runs (kept with --ignore-failure) are noted, not withheld.
    let mut failing = series(&TIMES);
    failing.runs[0].exit_code = Some(1);
    let r = &results_file(&failing, &ctx).results[0];
    assert_eq!(r.status, yamba_results::Status::Ok);
    assert!(r.warnings.iter().any(|w| w.contains("1 runs failed")));
    assert!(summary_text(&failing).contains("1 of 5 runs failed"));
}

#[test]
fn names_are_safe_file_names() {
    let mut s = series(&TIMES);
    assert_eq!(s.name(), "make");
    s.command = vec!["echo hi; rm -rf x".into()];
    s.shell = true;
    assert_eq!(s.name(), "echo");
    s.command = vec!["./a b.sh".into()];
    s.shell = false;
    assert_eq!(s.name(), "a_b_sh");
}
