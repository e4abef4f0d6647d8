//! `yamba stone`, `yamba blocks` and `yamba top` as a user runs them.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn yamba(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run yamba")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn log_values(path: &Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn prepare_and_cleanup_run_around_every_run_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = yamba(
        dir.path(),
        &[
            "stone",
            "-n",
            "3",
            "--warmup",
            "1",
            "--prepare",
            "echo prepare >> order.txt",
            "--cleanup",
            "echo cleanup >> order.txt",
            "--log",
            "o.log",
            "--",
            "sh",
            "-c",
            "echo run >> order.txt",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let order = std::fs::read_to_string(dir.path().join("order.txt")).unwrap();
    assert_eq!(order, "prepare\nrun\ncleanup\n".repeat(4));
    assert_eq!(
        log_values(&dir.path().join("o.log")).len(),
        3,
        "warm-ups are not logged"
    );
}

#[test]
fn a_failing_command_stops_the_series_unless_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let out = yamba(
        dir.path(),
        &["stone", "-n", "3", "--log", "f.log", "--", "false"],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("run 1 exited with status 1"), "{err}");
    assert!(!dir.path().join("f.log").exists());

    let out = yamba(
        dir.path(),
        &[
            "stone",
            "-n",
            "3",
            "--ignore-failure",
            "--log",
            "f.log",
            "--",
            "false",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("3 of 3 runs failed"));
    assert_eq!(log_values(&dir.path().join("f.log")).len(), 3);

    let out = yamba(dir.path(), &["stone", "--prepare", "exit 3", "--", "true"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--prepare command \"exit 3\" failed"));
}

#[test]
fn no_shell_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    // Without --shell the words are arguments: `echo` prints `$$ > x` literally.
    let out = yamba(
        dir.path(),
        &[
            "stone",
            "-n",
            "1",
            "--show-output",
            "--log",
            "a.log",
            "--",
            "echo",
            "$$",
            ">",
            "x",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("$$ > x"));
    assert!(!dir.path().join("x").exists());
    // With --shell the shell redirects.
    let out = yamba(
        dir.path(),
        &[
            "stone",
            "-n",
            "1",
            "--shell",
            "--log",
            "b.log",
            "--",
            "echo hi > x",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("x")).unwrap(),
        "hi\n"
    );
}

#[test]
fn compare_prints_the_ministat_report_and_bad_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = yamba(dir.path(), &["stone", "-n", "3", "--log", "--", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.path().join("stone.true.log").exists());
    let out = yamba(
        dir.path(),
        &[
            "stone",
            "-n",
            "3",
            "--compare",
            "stone.true.log",
            "--log",
            "--",
            "true",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        dir.path().join("stone.true.log.next").exists(),
        "worldstone's .next naming"
    );
    assert!(
        stdout.contains("x stone.true.log\n+ stone.true.log.next\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("No difference proven at 95.0% confidence")
            || stdout.contains("Difference at 95.0% confidence"),
        "{stdout}"
    );
    std::fs::write(dir.path().join("bad.log"), "1\nnope\n3\n").unwrap();
    for args in [
        &["stone", "-n", "0", "--", "true"][..],
        &["stone", "-n", "3", "--compare", "bad.log", "--", "true"][..],
        &["stone", "-n", "3", "--compare", "missing.log", "--", "true"][..],
        &["stone", "--", "/no/such/program"][..],
    ] {
        let out = yamba(dir.path(), args);
        assert!(!out.status.success(), "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn blocks_aggregates_stdin_and_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r1"),
        "a.c:1,10,100,1000,1.0%\nnoise\nb.c:2,1,3000,3000,3.0%\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("r2"), "a.c:1,10,100,1000,1.0%\n").unwrap();
    let out = yamba(dir.path(), &["blocks", "r1", "r2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "b.c:2 3000 60 60\na.c:1 2000 40 100\n");

    let mut child = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(["blocks", "--table", "--top", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a.c:1,10,100,1000,1.0%\nb.c:2,1,3000,3000,3.0%\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let t = text(&out.stdout);
    assert!(t.contains("top 1 of 2 sites account for 75.0%"), "{t}");

    for args in [&["blocks", "missing"][..], &["blocks", "nothing"][..]] {
        std::fs::write(dir.path().join("nothing"), "").unwrap();
        let out = yamba(dir.path(), args);
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(text(&out.stderr).lines().count(), 1);
    }
    std::fs::write(dir.path().join("plain"), "just text\n").unwrap();
    let out = yamba(dir.path(), &["blocks", "plain"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no TIME_BLOCK lines"));
}

#[test]
fn top_prints_cpu_states_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = yamba(dir.path(), &["top", "--interval", "0.1", "--count", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 2, "{t}");
    for l in lines {
        assert!(l.starts_with("CPU states: "), "{l}");
        let pcts: Vec<f64> = l
            .split_whitespace()
            .filter_map(|w| w.strip_suffix('%'))
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pcts.len(), 5, "{l}");
        let sum: f64 = pcts.iter().sum();
        assert!(
            (sum - 100.0).abs() < 0.1,
            "user+system+idle+iowait+steal = 100%: {l}"
        );
    }
    let out = yamba(dir.path(), &["top", "--interval", "0"]);
    assert!(!out.status.success());
    assert_eq!(text(&out.stderr).lines().count(), 1);
}

/// Files the user asked for, and only those: a plain run leaves the
/// working directory as it was.
#[test]
fn no_files_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let out = yamba(dir.path(), &["stone", "-n", "3", "--", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A quoted command with shell syntax is refused with a pointer to --shell
/// (run without a shell, `|` would be an argument of `ls`).
#[test]
fn shell_syntax_suggests_shell() {
    let dir = tempfile::tempdir().unwrap();
    let out = yamba(dir.path(), &["stone", "-n", "1", "ls | wc -l"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--shell"), "{err}");
    let out = yamba(dir.path(), &["stone", "-n", "1", "--shell", "ls | wc -l"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
