//! What CI relies on, seen from outside a test binary: a skip under
//! `YAMBA_CI=1` fails unless listed, every outcome reaches its log, and a
//! failed check fails its test. Each case runs one of the `#[ignore]`d
//! children below in a child process of this binary with its own
//! environment.

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "a child process of the tests below"]
fn child_skips() {
    yamba_testkit::skip!("planted reason {}", 42);
}

#[test]
#[ignore = "a child process of the tests below"]
fn child_checks() {
    let mut x = 0.0;
    yamba_testkit::check!("steady", yamba_testkit::Accept::between(0.9, 1.1)).run(|| {
        x += 0.001;
        1.0 + x
    });
    let v = yamba_testkit::check!("never", yamba_testkit::Accept::at_most(0.5))
        .attempts(5, 25)
        .decide(|| 1.0);
    assert_eq!(v.outcome, yamba_testkit::Outcome::Fail);
    yamba_testkit::premise_unmet!("planted premise");
}

#[test]
#[ignore = "a child process of the tests below"]
fn child_fails_a_check() {
    yamba_testkit::check!("wrong", yamba_testkit::Accept::at_least(2.0)).run(|| 1.0);
}

/// Runs child `name` with `env`; its exit success and its standard error.
fn child(name: &str, env: &[(&str, &Path)], ci: bool) -> (bool, String) {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        name,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    c.env_remove("YAMBA_CI")
        .env_remove("YAMBA_SKIP_LOG")
        .env_remove("YAMBA_CHECK_LOG")
        .env_remove("YAMBA_SKIPS_FILE");
    if ci {
        c.env("YAMBA_CI", "1");
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const ID: &str = "yamba-testkit/ci::child_skips";

#[test]
fn a_skip_is_printed_logged_and_under_ci_allowed_only_when_listed() {
    let dir = tempfile_dir();
    let log = dir.join("skips.log");
    let list = dir.join("skips");
    std::fs::write(&list, "# none\n").unwrap();

    let (ok, err) = child(
        "child_skips",
        &[("YAMBA_SKIP_LOG", &log), ("YAMBA_SKIPS_FILE", &list)],
        false,
    );
    assert!(ok, "{err}");
    assert!(
        err.contains(&format!("SKIPPED {ID}: planted reason 42")),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("{ID}\tplanted reason 42\n")
    );

    let (ok, err) = child("child_skips", &[("YAMBA_SKIPS_FILE", &list)], true);
    assert!(!ok, "an unlisted skip passed under YAMBA_CI: {err}");
    assert!(
        err.contains(&format!(
            "skip not allowed under YAMBA_CI: {ID}: planted reason 42 (list it in .ci/skips"
        )),
        "{err}"
    );

    std::fs::write(&list, format!("{ID}\tit is planted\n")).unwrap();
    let (ok, err) = child("child_skips", &[("YAMBA_SKIPS_FILE", &list)], true);
    assert!(ok, "a listed skip failed: {err}");
}

#[test]
fn every_check_outcome_is_logged_and_a_failed_check_fails_its_test() {
    let dir = tempfile_dir();
    let log = dir.join("checks.log");
    let (ok, err) = child("child_checks", &[("YAMBA_CHECK_LOG", &log)], true);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(
        lines[0][..4],
        ["pass", "yamba-testkit/ci::child_checks", "steady", "5"]
    );
    assert_eq!(
        lines[1][..4],
        ["fail", "yamba-testkit/ci::child_checks", "never", "16"]
    );
    assert_eq!(
        lines[2][..2],
        ["premise-unmet", "yamba-testkit/ci::child_checks"]
    );
    assert!(lines[2][6].contains("planted premise"), "{text}");
    assert!(
        err.contains("PREMISE UNMET yamba-testkit/ci::child_checks: planted premise"),
        "{err}"
    );

    let (ok, err) = child("child_fails_a_check", &[], true);
    assert!(!ok, "{err}");
    assert!(
        err.contains("FAILED yamba-testkit/ci::child_fails_a_check [wrong]"),
        "{err}"
    );
}

/// A fresh directory under the target directory (no tempfile dependency).
fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "yamba-testkit-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
