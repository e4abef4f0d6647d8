//! Issue 13 through the binary, as a user (or an attacker) meets it:
//! - §7 SIGKILL of `yamba run` takes its benchmark process with it, and
//!   the next run removes the scratch folder the killed one left;
//! - §8 a full disk at `--out` loses nothing: the table is printed, the
//!   results go to a fallback place named on stderr, the exit code is 1;
//! - §9 absurd durations and sizes are one-line errors, not panics or
//!   10 GiB allocations;
//! - §4 the token is never in a results file (given with --token, in
//!   YAMBA_TOKEN, or inherited from an older file by `select`), a token
//!   file others can read is refused, `yamba serve` refuses a weak token
//!   and creates a private token file.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn yamba() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
    c.env("YAMBA_TEST_BENCHMARKS", "1")
        .env_remove("YAMBA_TOKEN");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Children of `pid` (from /proc/*/stat).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid …": comm may hold spaces and parentheses.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let ppid: u32 = after.split(' ').nth(1).unwrap().parse().unwrap();
        if ppid == pid {
            out.push(p);
        }
    }
    out
}

/// Whether `pid` still runs (a zombie waiting for its reaper does not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat[stat.rfind(')').unwrap() + 2..].chars().next();
            !matches!(state, Some('Z' | 'X'))
        }
        Err(_) => false,
    }
}

fn scratch_folders(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".yamba-scratch-"))
        .collect()
}

/// §7. Before: the `__bench` child was alive 11 s after SIGKILL of the run
/// (despite --timeout 8), and its scratch folder stayed for ever.
#[test]
fn sigkill_of_the_run_takes_its_benchmark_and_the_next_run_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = yamba()
        .current_dir(dir.path())
        .args(["run", "--quick", "--timeout", "60", "testing.hang"])
        .arg("--out")
        .arg(dir.path().join("r.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_pid = run.id();
    // Its benchmark process: a child running `__bench`.
    let t0 = Instant::now();
    let bench = loop {
        let found = children(run_pid).into_iter().find(|&c| {
            std::fs::read(format!("/proc/{c}/cmdline"))
                .map(|b| text(&b).contains("__bench"))
                .unwrap_or(false)
        });
        if let Some(b) = found {
            break b;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no __bench child appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        scratch_folders(dir.path()),
        vec![format!(".yamba-scratch-{run_pid}")]
    );
    run.kill().unwrap(); // SIGKILL: no handler runs.
    run.wait().unwrap();
    let t1 = Instant::now();
    while alive(bench) && t1.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !alive(bench),
        "the benchmark process {bench} outlived the killed run by 5 s"
    );
    println!("benchmark process gone {:?} after the run", t1.elapsed());
    // The killed run's scratch folder is still there; the next run removes it.
    assert_eq!(scratch_folders(dir.path()).len(), 1);
    let o = yamba()
        .current_dir(dir.path())
        .args(["run", "--quick", "cpu.syscall.getppid", "--out"])
        .arg(dir.path().join("r2.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        scratch_folders(dir.path()).is_empty(),
        "{:?}",
        scratch_folders(dir.path())
    );
    let r2: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r2.json")).unwrap()).unwrap();
    assert!(
        r2["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains(&format!("removed 1 scratch folder(s) left by runs that were killed: ./.yamba-scratch-{run_pid}"))),
        "{}",
        r2["notes"]
    );
}

/// Whether this test can mount a file system in a mount namespace of its
/// own (root and unshare(1)); Err says why not.
fn can_mount() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root to mount a small file system".into());
    }
    match Command::new("unshare").args(["--mount", "true"]).status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("unshare --mount failed ({s})")),
        Err(e) => Err(format!(
            "cannot run unshare: {e} (apt-get install -y util-linux)"
        )),
    }
}

/// §8. Before: "No space left on device", 1 of 21 results kept, nothing
/// on stdout. (A disk already full when the run starts is refused at once,
/// before anything is measured.)
#[test]
fn a_full_disk_at_the_results_file_loses_nothing() {
    if let Err(why) = can_mount() {
        yamba_testkit::skip!("{why}");
    }
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    let state = dir.path().join("state");
    std::fs::create_dir_all(&full).unwrap();
    let benches = [
        "cpu.syscall.getppid",
        "testing.work",
        "testing.crash",
        "testing.offset",
        "testing.hang",
    ];
    // A 1 MiB file system for --out, in a mount namespace of the run's
    // own (gone with it), filled up as soon as the run has written its
    // first file: every later save meets a full disk. (testing.hang's
    // 2 s timeout keeps the run going well past that.)
    let script = format!(
        "mount -t tmpfs -o size=1m yamba-full {full} || exit 99
         \"$@\" & run=$!
         while [ ! -s {full}/r.json ]; do sleep 0.02; done
         cat /dev/zero > {full}/filler 2>/dev/null
         wait $run",
        full = full.display()
    );
    let o = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &script,
            "sh",
        ])
        .arg(env!("CARGO_BIN_EXE_yamba"))
        .args(["run", "--quick"])
        .args(benches)
        .arg("--out")
        .arg(full.join("r.json"))
        .current_dir(dir.path())
        .env("YAMBA_TEST_BENCHMARKS", "1")
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    println!("{stderr}");
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    // The table was printed, every benchmark in it.
    for b in benches {
        assert!(stdout.contains(b), "{b} missing from the table:\n{stdout}");
    }
    // Where the results went instead is said, and they are all there.
    let fallback = state.join("yamba/r.json");
    assert!(
        stderr.contains(&format!(
            "cannot write results to {}",
            full.join("r.json").display()
        )) && stderr.contains(&format!(
            "results written to {} instead",
            fallback.display()
        )),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&fallback).unwrap()).unwrap();
    assert_eq!(v["complete"], true);
    let ids: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for b in benches {
        assert!(ids.contains(&b), "{b} missing from {ids:?}");
    }
}

/// §9. Before: `top -i 1e20` panicked converting seconds to a Duration;
/// `--set fs.remote.size=10G` built the file in memory.
#[test]
fn absurd_durations_and_sizes_are_one_line_errors() {
    for args in [
        &["top", "-i", "1e20"][..],
        &["top", "-i", "NaN"],
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--idle-timeout",
            "1e300",
        ],
        &["serve", "--listen", "127.0.0.1:0", "--auth-timeout", "0"],
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-message",
            "17179869184G",
        ],
    ] {
        let o = yamba().args(args).output().unwrap();
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(
            !err.contains("panicked") && err.trim().lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    // A petabyte remote file: refused before anything is allocated.
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let o = yamba()
        .current_dir(dir.path())
        .args([
            "run",
            "--quick",
            "fs.remote.read",
            "--set",
            "fs.remote.size=1048576G",
            "--out",
        ])
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(60));
    // The declared setting's range refuses it before anything runs: one
    // line naming the key and the bounds, no results file.
    let err = text(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("--set fs.remote.size=1048576G") && err.trim().lines().count() == 1,
        "{err}"
    );
    assert!(!dir.path().join("r.json").exists());
}

fn read_json(p: &Path) -> (serde_json::Value, String) {
    let raw = std::fs::read_to_string(p).unwrap();
    (serde_json::from_str(&raw).unwrap(), raw)
}

/// §4. Before: `run --token T` wrote T into the results file twice, and
/// `select` copied it on.
#[test]
fn the_token_never_reaches_a_results_file() {
    const SECRET: &str = "7e3a9c1f5b2d8e4a6c0f3b7d9e1a5c2f";
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    // Given on the command line: warned about, and redacted.
    let o = yamba()
        .current_dir(dir.path())
        .args(["run", "--quick", "cpu.syscall.getppid"])
        .args(["--remote", "127.0.0.1:9", "--token", SECRET, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("visible to every local user"));
    let (v, raw) = read_json(&out);
    assert!(!raw.contains(SECRET), "{raw}");
    assert!(raw.contains("--token <redacted>") || v["command"].to_string().contains("<redacted>"));
    assert!(v["config"]["remote_token"].is_null(), "{}", v["config"]);
    // From the environment.
    let o = yamba()
        .current_dir(dir.path())
        .env("YAMBA_TOKEN", SECRET)
        .args([
            "run",
            "--quick",
            "cpu.syscall.getppid",
            "--remote",
            "127.0.0.1:9",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("visible to every local user"));
    assert!(!read_json(&out).1.contains(SECRET));
    // A file written by an older yamba, token and all: select drops it.
    let (mut v, _) = read_json(&out);
    v["command"] = serde_json::json!(["yamba", "run", "--token", SECRET]);
    v["config"]["remote_token"] = SECRET.into();
    let old = dir.path().join("old.json");
    std::fs::write(&old, serde_json::to_string(&v).unwrap()).unwrap();
    let o = yamba()
        .args(["select"])
        .arg(&old)
        .arg("cpu")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains(SECRET), "{}", text(&o.stdout));
    // A token file others may read is refused, with the fix.
    let tf = dir.path().join("tok");
    std::fs::write(&tf, SECRET).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tf, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = yamba()
        .args([
            "run",
            "--quick",
            "cpu.syscall.getppid",
            "--remote",
            "127.0.0.1:9",
        ])
        .arg("--token-file")
        .arg(&tf)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("chmod 600"), "{}", text(&o.stderr));
}

/// §3, §4. `yamba serve`: a weak token is refused; a missing token file is
/// created private, holding a fresh token that works.
#[test]
fn serve_refuses_weak_tokens_and_creates_private_token_files() {
    for weak in [
        "s3cret",
        "netns-test-token",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ] {
        let o = yamba()
            .args(["serve", "--listen", "127.0.0.1:0", "--token", weak])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{weak} accepted");
        assert!(text(&o.stderr).contains("too weak"), "{}", text(&o.stderr));
    }
    let o = yamba()
        .env("YAMBA_TOKEN", "hunter2")
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(text(&o.stderr).contains("YAMBA_TOKEN: the token is too weak"));

    let dir = tempfile::tempdir().unwrap();
    let tf: PathBuf = dir.path().join("agent.token");
    let mut serve = yamba()
        .args(["serve", "--listen", "127.0.0.1:0", "--token-file"])
        .arg(&tf)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(serve.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .strip_prefix("yamba serve: listening on ")
        .unwrap()
        .to_string();
    let second = lines.next().unwrap().unwrap();
    assert!(second.contains("token written to"), "{second}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&tf).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let token = std::fs::read_to_string(&tf).unwrap().trim().to_string();
    assert_eq!(token.len(), 64);
    assert!(!second.contains(&token), "printed: {second}");
    let echoed = yamba_suite::remote::Client::connect(&addr, &token, Duration::from_secs(5))
        .and_then(|mut c| c.echo(b"x").map(<[u8]>::to_vec));
    let _ = serve.kill();
    let _ = serve.wait();
    assert_eq!(echoed.unwrap(), b"x");
}
