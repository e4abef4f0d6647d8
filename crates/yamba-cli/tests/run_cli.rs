//! `yamba run` and `yamba list` as a user sees them: isolation of
//! misbehaving benchmarks, the results file, and one-line errors.

use std::process::Command;

fn yamba() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
    c.env("YAMBA_TEST_BENCHMARKS", "1");
    c
}

#[test]
fn crash_and_hang_fail_alone_and_the_run_completes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = yamba()
        .current_dir(dir.path())
        .args(["run", "--quick", "testing.crash", "testing.hang", "cpu.syscall.getppid", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["complete"], true);
    let results = v["results"].as_array().unwrap();
    let status = |id: &str| {
        results
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| (r["status"].as_str().unwrap().to_string(), r["reason"].clone()))
            .unwrap()
    };
    let (s, why) = status("testing.crash");
    assert_eq!(s, "failed");
    assert!(why.as_str().unwrap().contains("SIGSEGV"), "{why}");
    let (s, why) = status("testing.hang");
    assert_eq!(s, "failed");
    assert!(why.as_str().unwrap().contains("timed out"), "{why}");
    assert_eq!(status("cpu.syscall.getppid").0, "ok");
    assert!(stdout.contains("FAILED: crashed"), "{stdout}");
    // No scratch directory is left in the working directory.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".yamba"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn json_and_csv_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let o = yamba()
        .current_dir(dir.path())
        .args(["run", "--quick", "cpu.loop", "--format", "json", "--out", "r.json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "yamba-results");
    assert_eq!(v["results"][0]["id"], "cpu.loop");
    let o = yamba()
        .current_dir(dir.path())
        .args(["run", "--quick", "cpu.loop", "--format", "csv", "--out", "r.json"])
        .output()
        .unwrap();
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(csv.starts_with("id,mode,status,unit,n,median"), "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("cpu.loop,hot,ok,ns,"), "{csv}");
}

#[test]
fn default_results_file_goes_to_a_timestamped_path() {
    let dir = tempfile::tempdir().unwrap();
    let o = yamba()
        .current_dir(dir.path())
        .args(["run", "--quick", "cpu.loop"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    let files: Vec<_> = std::fs::read_dir(dir.path().join("results")).unwrap().collect();
    assert_eq!(files.len(), 1);
    let name = files[0].as_ref().unwrap().file_name().to_string_lossy().into_owned();
    assert!(name.starts_with("yamba-") && name.ends_with(".json"), "{name}");
    assert!(stderr.contains("results written to results/yamba-"), "{stderr}");
}

/// Bad input: one clear line on stderr naming the problem, non-zero exit,
/// nothing measured.
#[test]
fn errors_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "no.such.bench"], "unknown benchmark or area 'no.such.bench'"),
        (&["run", "cpu.loop", "--out", "/nonexistent/dir/r.json"], "folder /nonexistent/dir does not exist"),
        (&["run", "cpu.loop", "--budget", "0"], "--budget 0: must be a number of seconds"),
        (&["run", "cpu.loop", "--cpu", "4096"], "--cpu 4096"),
        (&["run", "cpu.loop", "--set", "novalue"], "--set novalue: expected KEY=VALUE"),
        (&["list", "zzz"], "unknown benchmark or area 'zzz'"),
    ];
    for (args, want) in cases {
        let o = yamba().current_dir(dir.path()).args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    }
    assert!(!dir.path().join("results").exists());
}

#[test]
fn list_shows_adapters_and_whether_each_runs_here() {
    let o = yamba().args(["list"]).output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let header = text.lines().next().unwrap();
    for col in ["id", "area", "unit", "modes", "adapter", "runs here", "description"] {
        assert!(header.contains(col), "{header}");
    }
    let getppid = text.lines().find(|l| l.starts_with("cpu.syscall.getppid")).unwrap();
    assert!(getppid.contains("linux-x86_64") || getppid.contains("linux-aarch64"), "{getppid}");
    assert!(getppid.contains("yes"), "{getppid}");
    assert!(text.contains("testing.hang"), "hidden benchmarks show with YAMBA_TEST_BENCHMARKS=1");
}
