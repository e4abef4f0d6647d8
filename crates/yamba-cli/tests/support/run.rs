//! Running the binary as a user does, with the test benchmarks registered.
// Each test file that declares `mod support` uses a part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The binary, with the test-only benchmarks registered.
pub fn yamba() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
    c.env("YAMBA_TEST_BENCHMARKS", "1");
    c
}

/// Runs `yamba ARGS --out r.json` in `dir`; asserts success and returns
/// the results file and what was printed.
pub fn run_ok(dir: &Path, args: &[&str]) -> (serde_json::Value, String) {
    let out = dir.join("r.json");
    let o = yamba()
        .current_dir(dir)
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let file = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    (file, String::from_utf8_lossy(&o.stdout).into_owned())
}
