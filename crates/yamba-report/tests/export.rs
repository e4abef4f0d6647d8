//! Exports: CSV rows, Go benchmark text read by the real benchstat, and
//! ministat columns.

mod support;

use std::path::PathBuf;
use std::process::Command;
use yamba_report::export::{gobench, gobench_name, ministat_column, results_csv, CSV_HEADER};
use yamba_results::units::Unit;
use yamba_results::Mode;

#[test]
fn csv_has_a_row_per_result() {
    let f = support::sample_file();
    let csv = results_csv(&f);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], CSV_HEADER);
    assert_eq!(lines.len(), f.results.len() + 1);
    let cols = CSV_HEADER.split(',').count();
    for (l, r) in lines[1..].iter().zip(&f.results) {
        let fields: Vec<&str> = l.split(',').collect();
        assert_eq!(fields.len(), cols, "{l}");
        assert_eq!(fields[0], r.id);
        assert_eq!(fields[1], r.mode.as_str());
        match &r.summary {
            Some(s) => {
                assert_eq!(fields[4], s.n.to_string());
                assert_eq!(fields[5].parse::<f64>().unwrap(), s.median);
                assert_eq!(fields[13].parse::<f64>().unwrap(), s.max);
            }
            None => assert_eq!(fields[5], ""),
        }
    }
    assert!(lines.iter().any(|l| l.contains(",skipped,")));
    assert!(lines.iter().any(|l| l.contains(",withheld,")));
}

/// The value columns carry the figure the table reports: for a result
/// measured in processes, their estimate and its interval, not the median
/// of every observation pooled — here two slow processes hold most of the
/// observations, so the pooled median is theirs. Without processes (a
/// quick run), the value is the median.
#[test]
fn csv_value_is_the_headline_not_the_pooled_median() {
    let fast = vec![4.97; 50];
    let slow = vec![3.3; 350];
    let procs = vec![
        fast.clone(),
        fast.clone(),
        fast.clone(),
        fast,
        slow.clone(),
        slow,
    ];
    let precise = support::blocked("cpu.ops.parallel.i32.add", Mode::Hot, Unit::Ratio, procs);
    let quick = support::result(
        "cpu.syscall.getppid",
        Mode::Hot,
        Unit::Nanoseconds,
        support::lognormal(5, 40, 100.0, 0.05),
    );
    let col = |name: &str| CSV_HEADER.split(',').position(|c| c == name).unwrap();
    for (r, pooled_is_value) in [(&precise, false), (&quick, true)] {
        let row = yamba_report::export::csv_row(r);
        let f: Vec<f64> = row
            .split(',')
            .map(|x| x.parse().unwrap_or(f64::NAN))
            .collect();
        let (value, ci) = r.headline().unwrap();
        let ci = ci.expect("an interval from 6 processes or 40 observations");
        assert_eq!(f[col("value")], value, "{row}");
        assert_eq!(
            (f[col("value_lo")], f[col("value_hi")]),
            (ci.lo, ci.hi),
            "{row}"
        );
        assert_eq!(f[col("median")] == value, pooled_is_value, "{row}");
    }
    // The pooled median is the slow processes' (3.3); the value is the
    // processes' estimate, pulled up by the four fast ones.
    let row = yamba_report::export::csv_row(&precise);
    let f: Vec<f64> = row
        .split(',')
        .map(|x| x.parse().unwrap_or(f64::NAN))
        .collect();
    assert_eq!(f[col("median")], 3.3);
    assert!(f[col("value")] > 4.0, "{row}");
}

#[test]
fn csv_quotes_awkward_ids() {
    let r = support::result("x.a,b\"c", Mode::Hot, Unit::Count, vec![1.0]);
    let row = yamba_report::export::csv_row(&r);
    assert!(row.starts_with("\"x.a,b\"\"c\",hot,count,ok,1,"), "{row}");
}

#[test]
fn gobench_lines() {
    let f = support::sample_file();
    assert_eq!(
        gobench_name(&f.results[0]),
        "BenchmarkCpuSyscallGetppid/hot"
    );
    let text = gobench(&f);
    assert!(text.starts_with("goos: linux\ngoarch: amd64\ncpu: AMD EPYC Test Processor\n"));
    let ok_obs: usize = f
        .results
        .iter()
        .filter(|r| r.status == yamba_results::Status::Ok)
        .map(|r| r.observations.len())
        .sum();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("Benchmark")).count(),
        ok_obs
    );
    // Bandwidth in MB/s, so benchstat knows higher is better.
    let bw = text
        .lines()
        .find(|l| l.starts_with("BenchmarkMemBandwidthRead/hot"))
        .unwrap();
    let v: f64 = bw.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(
        bw.ends_with(" MB/s") && (v - 12_000.0).abs() < 2_000.0,
        "{bw}"
    );
    assert!(text.contains("# BenchmarkFsReadRemote/hot skipped: needs a yamba serve agent"));
    assert!(text.contains("pkg: yamba/cpu\n") && text.contains("pkg: yamba/mem\n"));
}

/// benchstat: $BENCHSTAT, then PATH, then Go's bin directory.
fn benchstat() -> PathBuf {
    if let Some(p) = std::env::var_os("BENCHSTAT") {
        return p.into();
    }
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("benchstat"))
                .collect()
        })
        .unwrap_or_default();
    if let Some(gopath) = std::env::var_os("GOPATH") {
        candidates.push(PathBuf::from(gopath).join("bin/benchstat"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join("go/bin/benchstat"));
    }
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "benchstat not found (set BENCHSTAT or put it on PATH); install it with: \
             go install golang.org/x/perf/cmd/benchstat@latest"
            )
        })
}

/// The real benchstat reads the export and sees the 10% shift we built.
#[test]
fn benchstat_reads_gobench() {
    let a = support::file(vec![
        support::result(
            "cpu.syscall.getppid",
            Mode::Hot,
            Unit::Nanoseconds,
            support::lognormal(11, 30, 100.0, 0.02),
        ),
        support::result(
            "mem.bandwidth.read",
            Mode::Hot,
            Unit::GigabytesPerSecond,
            support::lognormal(12, 30, 10.0, 0.02),
        ),
    ]);
    let b = support::file(vec![
        support::result(
            "cpu.syscall.getppid",
            Mode::Hot,
            Unit::Nanoseconds,
            support::lognormal(13, 30, 110.0, 0.02),
        ),
        support::result(
            "mem.bandwidth.read",
            Mode::Hot,
            Unit::GigabytesPerSecond,
            support::lognormal(14, 30, 10.0, 0.02),
        ),
    ]);
    let text = benchstat_csv(&a, &b);
    // benchstat's CSV: name, A median, CI, B median, CI, change, p.
    assert!(
        text.contains(",sec/op,") && text.contains(",B/s,"),
        "units not understood:\n{text}"
    );
    let row = |name: &str| csv_row_of(&text, name);
    let t = row("CpuSyscallGetppid/hot,");
    let a_med: f64 = t[1].parse().unwrap();
    let b_med: f64 = t[3].parse().unwrap();
    assert!(
        (a_med - 100e-9).abs() < 3e-9 && (b_med - 110e-9).abs() < 3e-9,
        "{t:?}"
    );
    let change: f64 = t[5].trim_end_matches('%').parse().unwrap();
    assert!((change - 10.0).abs() < 3.0, "{t:?}");
    let bw = row("MemBandwidthRead/hot,");
    assert!(
        bw[5].trim() == "~",
        "no shift built, none reported: {bw:?}\n{text}"
    );
}

/// Runs the real benchstat on two files' Go text; its CSV output.
fn benchstat_csv(a: &yamba_results::ResultsFile, b: &yamba_results::ResultsFile) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    std::fs::write(&pa, gobench(a)).unwrap();
    std::fs::write(&pb, gobench(b)).unwrap();
    let out = Command::new(benchstat())
        .args(["-format", "csv"])
        .arg(&pa)
        .arg(&pb)
        .output()
        .expect("run benchstat");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "benchstat failed: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// benchstat's CSV row for `name`: name, A's median, its interval, B's
/// median, its interval, the change (`~` when not significant), p.
fn csv_row_of(text: &str, name: &str) -> Vec<String> {
    text.lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
        .split(',')
        .map(str::to_string)
        .collect()
}

/// [`csv_row_of`] benchstat's comparison of `a` and `b`.
fn benchstat_row(
    a: &yamba_results::ResultsFile,
    b: &yamba_results::ResultsFile,
    name: &str,
) -> Vec<String> {
    csv_row_of(&benchstat_csv(a, b), name)
}

/// A precise run of six processes of 40 timings each around 100 ns ×
/// `levels`, each process's timings within 0.3% of its own level: two runs
/// on one machine draw their processes' levels from one spread.
fn precise_run(seed: u64, levels: [f64; 6]) -> yamba_results::ResultsFile {
    let procs = levels
        .iter()
        .enumerate()
        .map(|(i, l)| support::lognormal(seed + i as u64, 40, 100.0 * l, 0.003))
        .collect();
    support::file(vec![support::blocked(
        "cpu.syscall.getppid",
        Mode::Hot,
        Unit::Nanoseconds,
        procs,
    )])
}

/// A precise run goes to benchstat as one sample per process: two runs
/// whose processes differ by what processes differ by are not called
/// different — over every observation pooled, benchstat called the same
/// 2% significant (the observations of one process are not independent
/// samples of the run); a real 10% change is still called.
#[test]
fn benchstat_sees_a_precise_run_s_processes() {
    let a = precise_run(100, [0.96, 0.98, 1.00, 1.02, 1.04, 1.06]);
    let b = precise_run(200, [0.94, 0.96, 0.98, 1.00, 1.02, 1.04]);
    let text = gobench(&a);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("Benchmark")).count(),
        6,
        "one line per process:\n{text}"
    );
    let same = benchstat_row(&a, &b, "CpuSyscallGetppid/hot,");
    assert_eq!(
        same[5].trim(),
        "~",
        "process spread called a change: {same:?}"
    );
    // The pooled export's verdict on the same runs: the defect this avoids.
    let pooled = |f: &yamba_results::ResultsFile| {
        let mut f = f.clone();
        f.results[0].certainty = None;
        f
    };
    let wrong = benchstat_row(&pooled(&a), &pooled(&b), "CpuSyscallGetppid/hot,");
    assert_ne!(
        wrong[5].trim(),
        "~",
        "pooled observations should overstate it: {wrong:?}"
    );
    // A real change of 10% across every process is called.
    let c = precise_run(300, [1.056, 1.078, 1.10, 1.122, 1.144, 1.166]);
    let moved = benchstat_row(&a, &c, "CpuSyscallGetppid/hot,");
    let change: f64 = moved[5].trim_end_matches('%').parse().unwrap_or(f64::NAN);
    assert!((change - 10.0).abs() < 3.0, "{moved:?}");
}

#[test]
fn ministat_column_reads_back() {
    let f = support::sample_file();
    let col = ministat_column(&f.results[0]);
    let back: Vec<f64> = col.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(back, f.results[0].observations);
    // The real ministat, when installed, agrees on n and the median.
    if let Ok(out) = Command::new("ministat")
        .arg("-n")
        .arg("/dev/stdin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        use std::io::Write;
        let mut child = out;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(col.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        let row = text
            .lines()
            .find(|l| {
                l.starts_with("x ")
                    && l.split_whitespace()
                        .nth(1)
                        .is_some_and(|f| f.parse::<usize>().is_ok())
            })
            .unwrap_or_else(|| panic!("{text}"));
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(fields[1], "40", "{text}");
    } else {
        eprintln!("ministat not installed: checked the column by reading it back only");
    }
}
