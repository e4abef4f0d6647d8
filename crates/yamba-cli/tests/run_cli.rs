//! `yamba run` and `yamba list` as a user sees them: isolation of
//! misbehaving benchmarks, the results file, and one-line errors.

mod support;

use support::run::{run_ok, yamba};

#[test]
fn crash_and_hang_fail_alone_and_the_run_completes() {
    let dir = tempfile::tempdir().unwrap();
    let (v, stdout) = run_ok(
        dir.path(),
        &[
            "run",
            "--quick",
            "testing.crash",
            "testing.hang",
            "cpu.syscall.getppid",
        ],
    );
    assert_eq!(v["complete"], true);
    let results = v["results"].as_array().unwrap();
    let status = |id: &str| {
        results
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| {
                (
                    r["status"].as_str().unwrap().to_string(),
                    r["reason"].clone(),
                )
            })
            .unwrap()
    };
    let (s, why) = status("testing.crash");
    assert_eq!(s, "failed");
    assert!(why.as_str().unwrap().contains("SIGSEGV"), "{why}");
    let (s, why) = status("testing.hang");
    assert_eq!(s, "failed");
    assert!(why.as_str().unwrap().contains("timed out"), "{why}");
    assert_eq!(status("cpu.syscall.getppid").0, "ok");
    let crash_row = stdout
        .lines()
        .find(|l| l.starts_with("testing.crash"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        crash_row.contains("FAILED") && crash_row.contains("crashed"),
        "{stdout}"
    );
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
        .args([
            "run", "--quick", "cpu.loop", "--format", "json", "--out", "r.json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schema"], "yamba-results");
    assert_eq!(v["results"][0]["id"], "cpu.loop");
    let o = yamba()
        .current_dir(dir.path())
        .args([
            "run", "--quick", "cpu.loop", "--format", "csv", "--out", "r.json",
        ])
        .output()
        .unwrap();
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(csv.starts_with("id,mode,unit,status,n,median"), "{csv}");
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("cpu.loop,hot,ns,ok,"),
        "{csv}"
    );
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
    let files: Vec<_> = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .collect();
    assert_eq!(files.len(), 1);
    let name = files[0]
        .as_ref()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    // Compressed (zstd): every reader opens it as it opens plain JSON.
    assert!(
        name.starts_with("yamba-") && name.ends_with(".json.zst"),
        "{name}"
    );
    let path = dir.path().join("results").join(&name);
    assert!(std::fs::read(&path)
        .unwrap()
        .starts_with(&[0x28, 0xB5, 0x2F, 0xFD]));
    let file = yamba_core::ResultsFile::read(&path).unwrap();
    assert!(file.results.iter().any(|r| r.id == "cpu.loop"));
    assert!(
        stderr.contains("results written to results/yamba-"),
        "{stderr}"
    );
}

/// Bad input: one clear line on stderr naming the problem, non-zero exit,
/// nothing measured.
#[test]
fn errors_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "no.such.bench"],
            "unknown benchmark or area 'no.such.bench'",
        ),
        (
            &["run", "cpu.loop", "--out", "/nonexistent/dir/r.json"],
            "folder /nonexistent/dir does not exist",
        ),
        (
            &["run", "cpu.loop", "--budget", "0"],
            "--budget 0: must be a number of seconds",
        ),
        (&["run", "cpu.loop", "--cpu", "4096"], "--cpu 4096"),
        (
            &["run", "cpu.loop", "--set", "novalue"],
            "--set novalue: expected KEY=VALUE",
        ),
        (&["list", "zzz"], "unknown benchmark or area 'zzz'"),
        (
            &["run", "cpu.loop", "--set", "mem.strid=64"],
            "--set mem.strid: no benchmark has this setting; did you mean mem.stride?",
        ),
        (
            &["run", "cpu.loop", "--set", "net.streams=0"],
            "--set net.streams=0: expected a whole number from 1 to 64",
        ),
    ];
    for (args, want) in cases {
        let o = yamba()
            .current_dir(dir.path())
            .args(*args)
            .output()
            .unwrap();
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
    for col in [
        "id",
        "area",
        "unit",
        "modes",
        "adapter",
        "runs here",
        "description",
    ] {
        assert!(header.contains(col), "{header}");
    }
    let getppid = text
        .lines()
        .find(|l| l.starts_with("cpu.syscall.getppid"))
        .unwrap();
    assert!(header.contains("default"), "{header}");
    assert!(
        getppid.contains("linux-x86_64") || getppid.contains("linux-aarch64"),
        "{getppid}"
    );
    assert!(getppid.contains("yes"), "{getppid}");
    assert!(
        text.contains("testing.hang"),
        "hidden benchmarks show with YAMBA_TEST_BENCHMARKS=1"
    );
}

/// Every benchmark says whether it has a cold mode, or why a cold case
/// would not mean something for it: the table's last column, the JSON's
/// `no_cold` (null exactly when "cold" is among the modes); a cold run of
/// a hot-only benchmark is skipped with that reason in the results file.
#[test]
fn list_states_cold_or_why_not_and_a_cold_run_skips_with_it() {
    let o = yamba().args(["list"]).output().unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.lines().next().unwrap().ends_with("cold"), "{text}");
    let row = |id: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("no row {id}"))
            .to_string()
    };
    assert!(row("cpu.syscall.getppid").ends_with("  yes"));
    assert!(row("fs.meta.stat").ends_with("  yes"));
    let why = "no: the working-set sizes are the experiment";
    assert!(row("mem.latency").contains(why), "{}", row("mem.latency"));

    let o = yamba().args(["list", "--format", "json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let all = v.as_array().unwrap();
    assert!(all.len() > 100, "{} benchmarks", all.len());
    for b in all {
        let cold = b["modes"].as_array().unwrap().iter().any(|m| m == "cold");
        match &b["no_cold"] {
            serde_json::Value::Null => assert!(cold, "{b}"),
            serde_json::Value::String(why) => assert!(!cold && !why.is_empty(), "{b}"),
            other => panic!("no_cold is {other}"),
        }
    }
    let latency = all.iter().find(|b| b["id"] == "mem.latency").unwrap();
    let reason = latency["no_cold"].as_str().unwrap().to_string();

    let dir = tempfile::tempdir().unwrap();
    let (file, _) = run_ok(
        dir.path(),
        &["run", "--quick", "--mode", "cold", "mem.latency"],
    );
    let r = &file["results"][0];
    assert_eq!(r["status"], "skipped", "{r}");
    assert_eq!(r["reason"], format!("has no cold mode: {reason}"), "{r}");
}

/// Ctrl-C: the benchmark in progress is killed, what finished is kept in
/// the results file (marked incomplete), and the exit status says so.
#[test]
fn interrupt_keeps_what_finished() {
    interrupted_by(libc::SIGINT, 130);
}

/// SIGTERM (what `kill`, `timeout` and service managers send) and SIGHUP
/// (the terminal went away) end a run as Ctrl-C does, with the shell's
/// status for that signal.
#[test]
fn sigterm_and_sighup_end_a_run_like_ctrl_c() {
    interrupted_by(libc::SIGTERM, 143);
    interrupted_by(libc::SIGHUP, 129);
}

fn interrupted_by(signal: libc::c_int, status: i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let child = yamba()
        .current_dir(dir.path())
        .args([
            "run",
            "--quick",
            "cpu.loop",
            "testing.hang",
            "cpu.syscall.getppid",
            "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until cpu.loop is saved and the hang's process is running (not
    // a fixed delay: starting a process can take long on a slow machine).
    let t0 = std::time::Instant::now();
    let hung = loop {
        // (The command line in the file names cpu.loop from the start.)
        let saved: serde_json::Value = std::fs::read(&out)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let finished = saved["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["id"] == "cpu.loop"));
        if finished {
            let children = benchmark_children(child.id());
            if !children.is_empty() {
                break children;
            }
        }
        assert!(
            t0.elapsed().as_secs() < 60,
            "cpu.loop never finished, or testing.hang never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // SAFETY: kill(2) on our own child's pid, which has not been waited for yet.
    unsafe { libc::kill(child.id() as i32, signal) };
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(status), "signal {signal}: {stderr}");
    assert!(stderr.contains("interrupted by SIG"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(v["interrupted"], true);
    let ids: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["cpu.loop", "testing.hang"]);
    assert_eq!(v["results"][1]["reason"], "interrupted");
    for pid in hung {
        // SAFETY: signal 0 only checks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive, "benchmark process {pid} outlived the run");
    }
}

/// Children of `pid` running `yamba __bench`, from /proc (not the run's
/// guardian, a fork of the run that outlives it by a moment on purpose).
fn benchmark_children(pid: u32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).any(|w| w == b"__bench"))
        })
        .collect()
}

/// `--repeat N`: each benchmark runs N times in fresh processes, interleaved
/// with the others; the file holds one pooled result per id with every
/// repetition's median.
#[test]
fn repetitions_are_pooled_per_result() {
    let dir = tempfile::tempdir().unwrap();
    let (v, _) = run_ok(
        dir.path(),
        &[
            "run",
            "--quick",
            "--repeat",
            "3",
            "cpu.loop",
            "cpu.syscall.getppid",
        ],
    );
    let results = v["results"].as_array().unwrap();
    // cpu.loop, and getppid in its three shapes (inline, .call, .libc).
    let mut ids: Vec<&str> = results.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(results.len(), 4, "one pooled result per id: {ids:?}");
    ids.dedup();
    assert_eq!(ids.len(), 4, "one pooled result per id: {ids:?}");
    for r in results {
        assert_eq!(r["params"]["repetitions"], 3);
        let reps = r["extra"]["repetitions"].as_array().unwrap();
        assert_eq!(reps.len(), 3);
        let n: u64 = reps.iter().map(|x| x["n"].as_u64().unwrap()).sum();
        assert_eq!(r["observations"].as_array().unwrap().len() as u64, n);
        assert_eq!(r["summary"]["n"].as_u64().unwrap(), n);
    }
    let o = yamba()
        .args(["run", "--repeat", "0", "cpu.loop"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("--repeat 0: must be between 1 and 1000"));
}

/// A saved baseline is compared when the run ends; an unreadable one is
/// refused before anything is measured.
#[test]
fn baseline_is_compared_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    let o = yamba()
        .current_dir(dir.path())
        .args(["run", "--quick", "cpu.loop", "--out"])
        .arg(&base)
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = yamba()
        .current_dir(dir.path())
        .args([
            "run",
            "--quick",
            "cpu.loop",
            "--out",
            "new.json",
            "--baseline",
        ])
        .arg(&base)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("against the baseline"), "{stdout}");
    assert!(stdout.contains("cpu.loop"), "{stdout}");
    // A quick run against a quick baseline cannot decide a gate (one
    // process a side): exit 3, "undecided", never a pass.
    let o = yamba()
        .current_dir(dir.path())
        .args([
            "run",
            "--quick",
            "cpu.loop",
            "--out",
            "gated.json",
            "--threshold",
            "5",
            "--baseline",
        ])
        .arg(&base)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("yamba: undecided: "), "{stderr}");
    let o = yamba()
        .current_dir(dir.path())
        .args(["run", "cpu.loop", "--baseline", "missing.json"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--baseline missing.json"));
    assert!(!dir.path().join("results").exists());
}

/// A benchmark in its fresh `__bench` process still sees every CPU the run
/// may use, though the runner pins it to one before it starts.
#[test]
fn isolated_benchmarks_can_place_a_peer_on_another_cpu() {
    if yamba_core::affinity::usable_cpus().len() < 2 {
        yamba_testkit::skip!("this machine lets the tests use one CPU only");
    }
    let dir = tempfile::tempdir().unwrap();
    let (v, _) = run_ok(
        dir.path(),
        &["run", "--quick", "ipc.rtt", "--set", "transports=pipe"],
    );
    let cross = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "ipc.rtt.pipe.cross_cpu")
        .unwrap();
    assert_ne!(cross["status"], "skipped", "{cross}");
}

/// Settings are declared: `yamba list --settings` shows each with its
/// type, default and readers; the JSON list has booleans; an old name
/// still works, with a warning naming the new one.
#[test]
fn settings_are_listed_and_old_names_warn() {
    let o = yamba().args(["list", "--settings"]).output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    for key in [
        "mem.stride  (bytes)",
        "net.streams  (integer)",
        "ipc.transports  (list)",
        "proc.heavy_mib  (integer)",
        "fs.remote.file  (text)",
        "cpu.syscall.getppid.extra_muls  (integer)",
    ] {
        assert!(text.contains(key), "{key} missing:\n{text}");
    }
    assert!(text.contains("old name: stride"), "{text}");
    assert!(text.contains("read by: net.tcp.bandwidth.n"), "{text}");
    assert!(
        text.contains("test only: N dependent multiplies after each getppid call"),
        "{text}"
    );

    let o = yamba()
        .args(["list", "--settings", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let keys: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert!(keys.len() >= 22, "{keys:?}");
    let o = yamba()
        .args(["list", "--format", "json", "cpu", "testing"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for b in v.as_array().unwrap() {
        assert!(
            b["default"].is_boolean() && b["runnable"].is_boolean(),
            "{b}"
        );
    }
    assert!(v.as_array().unwrap().iter().any(|b| b["default"] == false));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = yamba()
        .current_dir(dir.path())
        .args([
            "run",
            "--quick",
            "ipc.rtt",
            "--set",
            "transports=pipe",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("--set transports: an old name, read as ipc.transports"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["config"]["settings"]["ipc.transports"], "pipe");
    let ids: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.iter().all(|id| !id.contains("futex")), "{ids:?}");
}
