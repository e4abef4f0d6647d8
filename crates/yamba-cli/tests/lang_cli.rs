//! `yamba lang` and `yamba asm` through the binary: several errors with
//! carets in one pass, the listing, an abstract class refused by name,
//! and a results file from `yamba asm`, stored in the history too.

use std::process::Command;

fn yamba(args: &[&str]) -> (i32, String, String) {
    let history = tempfile::tempdir().unwrap();
    yamba_with_history(args, &history.path().join("history.sqlite"))
}

/// `yamba` with its history in `history` (never the user's own).
fn yamba_with_history(args: &[&str], history: &std::path::Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .env("YAMBA_HISTORY", history)
        .env_remove("XDG_DATA_HOME")
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_reports_several_errors_with_carets_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.yamba");
    std::fs::write(
        &f,
        "yamba A {\n    import(x86_64);\n    int x = y;\n    bitstring b { 0x123 asm { mov eax, rbx } }\n    void benchmark() { z = 1; }\n}\n",
    )
    .unwrap();
    let (code, out, _) = yamba(&["lang", "check", f.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    for want in [
        "bad.yamba:3:13",
        "bad.yamba:4:19",
        "bad.yamba:4:31",
        "bad.yamba:5:24",
        "4 error(s)",
    ] {
        assert!(out.contains(want), "missing {want} in:\n{out}");
    }
    assert!(out.matches('^').count() >= 4, "{out}");
    let (code, out, _) = yamba(&["lang", "check", "examples/pagefault_linux.yamba"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn disasm_lists_the_seeds_listing_and_run_refuses_an_abstract_class() {
    let (code, out, err) = yamba(&[
        "lang",
        "disasm",
        "examples/pagefault_x86_64.yamba",
        "--class",
        "Y_pagefault_x86_64",
        "--fn",
        "pagefault_func",
        "--arg",
        "5",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("/* Y_pagefault_x86_64.prologue */\npush rbx\nmov rbx, rdi"),
        "{out}"
    );
    assert!(
        out.contains("i = 4 > Y_pagefault_x86_64.touch(4) */\nmov eax, [rbx + 0x4000]"),
        "{out}"
    );
    let (code, _, err) = yamba(&[
        "lang",
        "run",
        "examples/pagefault_linux.yamba",
        "--class",
        "Y_pagefault_generic",
        "--quick",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("abstract") && err.contains("bitstring touch"),
        "{err}"
    );
}

#[test]
fn asm_measures_and_writes_a_results_file() {
    if !cfg!(target_arch = "x86_64") {
        yamba_testkit::skip!("x86-64 sequence on {}", std::env::consts::ARCH);
    }
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("asm.json");
    let history = dir.path().join("history.sqlite");
    let (code, out, err) = yamba_with_history(
        &[
            "asm",
            "add rax, rax",
            "--quick",
            "--repeat",
            "1",
            "--out",
            out_file.to_str().unwrap(),
        ],
        &history,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("asm.1: 'add rax, rax'"), "{out}");
    assert!(err.contains("stored as @1"), "not in the history: {err}");
    let (code, listed, err) = yamba_with_history(&["history"], &history);
    assert_eq!(code, 0, "{err}");
    assert!(listed.contains("asm add rax, rax"), "{listed}");
    let file = yamba_core::ResultsFile::read(&out_file).unwrap();
    let r = &file.results[0];
    assert_eq!(r.id, "asm.1");
    assert!(!r.observations.is_empty() && r.method.is_some());
    assert!(
        r.evidence
            .iter()
            .any(|e| e.check.contains("read+execute") && e.ok),
        "{:?}",
        r.evidence
    );
}
