//! Helpers the TIME_BLOCK test files share (time_block.rs, the exact
//! counts; measure_time_block.rs, the times). Each compiles this module
//! and uses only some of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// One report line, split into its fields.
#[derive(Debug, Clone)]
pub struct Line {
    pub file: String,
    pub line: u32,
    pub executions: u64,
    pub mean: u64,
    pub total: u64,
    pub percent: f64,
}

/// Parses `file:line,executions,mean,total,pct%`, checking the exact format.
pub fn parse(text: &str) -> Vec<Line> {
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.rsplitn(5, ',').collect();
            assert_eq!(f.len(), 5, "not a TIME_BLOCK line: {l:?}");
            let (site, n, mean, total, pct) = (f[4], f[3], f[2], f[1], f[0]);
            let (file, line) = site.rsplit_once(':').expect("file:line");
            let pct = pct.strip_suffix('%').expect("percent sign");
            let decimals = pct.split_once('.').map(|(_, d)| d.len());
            assert_eq!(decimals, Some(4), "percentage with 4 decimals: {l:?}");
            let line = Line {
                file: file.to_string(),
                line: line.parse().expect("line number"),
                executions: n.parse().expect("executions"),
                mean: mean.parse().expect("mean"),
                total: total.parse().expect("total"),
                percent: pct.parse().expect("percentage"),
            };
            assert_eq!(
                line.mean,
                line.total / line.executions,
                "mean = total / executions: {l:?}"
            );
            line
        })
        .collect()
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Line number of the marker comment in a test C file.
pub fn marker_line(src: &Path, marker: &str) -> u32 {
    let text = std::fs::read_to_string(src).unwrap();
    let i = text
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{marker} not in {}", src.display()));
    i as u32 + 1
}

pub fn site<'a>(lines: &'a [Line], file_end: &str, line: u32) -> Vec<&'a Line> {
    lines
        .iter()
        .filter(|l| l.file.ends_with(file_end) && l.line == line)
        .collect()
}

/// Compiles the C ground-truth program (tests/c/time_block_known.c); Err
/// when there is no C compiler.
pub fn build_c(dir: &Path) -> Result<PathBuf, String> {
    let root = repo_root();
    let exe = dir.join("time_block_known");
    let out = Command::new("cc")
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root.join("include"))
        .arg(root.join("tests/c/time_block_known.c"))
        .arg(root.join("tests/c/time_block_other.c"))
        .arg("-lpthread")
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| format!("no C compiler (`cc`: {e})"))?;
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(exe)
}

/// The time_block counter's ticks per nanosecond of CLOCK_MONOTONIC
/// (std::time::Instant) over a 50 ms sleep: the ground truth a spin's
/// ticks are checked against.
pub fn ticks_per_ns() -> f64 {
    let i0 = std::time::Instant::now();
    let t0 = yamba_core::time_block::start();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let t1 = yamba_core::time_block::stop();
    let ns = i0.elapsed().as_nanos() as f64;
    (t1 - t0) as f64 / ns
}

/// Runs the C program: SPIN_NS SPINS THREADS PER_THREAD, reports at exit
/// only; its stdout (the report) and stderr (the overhead line).
pub fn run_c(
    exe: &Path,
    spin_ns: u64,
    spins: u64,
    threads: u64,
    per_thread: u64,
) -> (String, String) {
    let out = Command::new(exe)
        .args([spin_ns, spins, threads, per_thread].map(|v| v.to_string()))
        .env_remove("YAMBA_TIME_BLOCK_INTERVAL")
        .env_remove("YAMBA_TIME_BLOCK_FD")
        .output()
        .unwrap();
    assert!(out.status.success());
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
