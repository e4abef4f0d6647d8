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

/// A class the file does not declare: a one-line error naming those it
/// does, with and without --fn (without, `disasm` once panicked).
#[test]
fn disasm_of_a_class_that_is_not_there_is_a_one_line_error() {
    for fn_args in [&[][..], &["--fn", "pagefault_func"][..]] {
        let mut args = vec![
            "lang",
            "disasm",
            "examples/pagefault_x86_64.yamba",
            "--class",
            "Nope",
        ];
        args.extend_from_slice(fn_args);
        let (code, out, err) = yamba(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.trim().lines().count() == 1 && err.contains("no class Nope (classes: "),
            "{args:?}: {err}"
        );
    }
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

/// Two files, B importing A (docs/language.md, "Imported classes"):
/// `lang check` of the two takes them as one program; an import cycle
/// across them is one error, located, with a caret; `lang run` measures
/// B, whose benchmark() calls A's C function.
#[test]
fn check_and_run_a_class_importing_one_of_another_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.yamba");
    let b = dir.path().join("b.yamba");
    // A's code returns its argument: x0 holds it already on aarch64.
    let ret = if cfg!(target_arch = "aarch64") {
        "ret"
    } else {
        "mov rax, rdi; ret"
    };
    std::fs::write(
        &a,
        format!("yamba A {{\n    int k = 7;\n    long twice(long x) {{ return 2 * x + k; }}\n    bitstring<long f(long v)> id(int m) {{ asm {{ {ret} }} }}\n}}\n"),
    )
    .unwrap();
    std::fs::write(
        &b,
        "yamba B {\n    import(A);\n    long sum;\n    void benchmark() { sum += A.id(0)(A.twice(3)); }\n    void benchmark_dummy() { sum -= A.id(0)(A.twice(3)); }\n}\n",
    )
    .unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let (code, out, _) = yamba(&["lang", "check", b, a]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ok: 2 class(es): A, B"), "{out}");
    // b.yamba alone: A is unknown, at the import.
    let (code, out, _) = yamba(&["lang", "check", b]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error: import of unknown class 'A'"), "{out}");
    assert!(out.contains("b.yamba:2:12"), "{out}");
    assert!(out.contains("1 error(s)"), "{out}");
    let out_file = dir.path().join("run.json");
    // `lang run` of B (with `extra` flags): its one result.
    let run_b = |extra: &[&str]| {
        let mut args = vec![
            "lang", "run", b, a, "--class", "B", "--quick", "--repeat", "1",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--no-history", "--out", out_file.to_str().unwrap()]);
        let (code, out, err) = yamba(&args);
        assert_eq!(code, 0, "{out}\n{err}");
        let file = yamba_core::ResultsFile::read(&out_file).unwrap();
        assert_eq!(file.results.len(), 1);
        file.results[0].clone()
    };
    let r = &run_b(&[]);
    // B's C parts compiled, A's function too (called directly): the
    // calls the same in both, and no interpreter step; A's code is B's.
    for check in [
        "(compiled) made the same calls",
        "(compiled, imported classes' C functions too) ran the same interpreter steps",
        "read+execute",
    ] {
        assert!(
            r.evidence.iter().any(|e| e.check.contains(check) && e.ok),
            "{check}: {:?}",
            r.evidence
        );
    }
    assert_eq!(r.extra["generated"][0]["function"], "A.id(0)");
    let steps = r
        .evidence
        .iter()
        .find(|e| e.check.contains("ran the same interpreter steps"))
        .unwrap();
    assert_eq!(steps.observed, "benchmark [0], dummy [0]");
    let compiled: Vec<&str> = r.extra["compiled_c"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect();
    assert!(compiled.contains(&"A.twice"), "{compiled:?}");
    // `lang disasm`: B's compiled C, then A's (which runs inside B's calls);
    // `--fn A.twice` alone; a function A lacks is a one-line error.
    let (code, all, err) = yamba(&["lang", "disasm", b, a, "--class", "B"]);
    assert_eq!(code, 0, "{err}");
    let (own, imported) = (
        all.find("/* B.benchmark("),
        all.find("/* A.twice(long) -> long"),
    );
    assert!(own.is_some() && imported > own, "{all}");
    let (code, one, err) = yamba(&["lang", "disasm", b, a, "--class", "B", "--fn", "A.twice"]);
    assert_eq!(code, 0, "{err}");
    assert!(one.starts_with("/* A.twice(long) -> long"), "{one}");
    assert!(!one.contains("B.benchmark"), "{one}");
    let (code, _, err) = yamba(&["lang", "disasm", b, a, "--class", "B", "--fn", "A.thrice"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("B imports no class A with a compiled C function thrice()"),
        "{err}"
    );
    // The interpreter, the reference, runs the same program.
    let r = &run_b(&["--interpret"]);
    assert!(
        r.evidence
            .iter()
            .any(|e| e.check.contains("same interpreter steps") && e.ok),
        "{:?}",
        r.evidence
    );
    // The C compiler's back end (x86-32's, asked for on x86-64): the same
    // checks held, the result and the listing naming it.
    if cfg!(target_arch = "x86_64") {
        let r = &run_b(&["--backend", "cc"]);
        assert_eq!(r.params["c_backend"], "cc", "{:?}", r.params);
        assert!(
            r.evidence.iter().all(|e| e.ok || !e.gating),
            "{:?}",
            r.evidence
        );
        let (code, one, err) = yamba(&[
            "lang",
            "disasm",
            b,
            a,
            "--class",
            "B",
            "--fn",
            "A.twice",
            "--backend",
            "cc",
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(
            one.starts_with("/* A.twice(long) -> long: C compiled by the system C compiler"),
            "{one}"
        );
        let (code, _, err) = yamba(&["lang", "run", b, a, "--class", "B", "--backend", "gcc"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("gcc: expected cranelift or cc"), "{err}");
    }
    // A cycle across the files: one error, with the cycle and a caret.
    std::fs::write(
        dir.path().join("a.yamba"),
        "yamba A {\n    import(B);\n    long twice(long x) { return x; }\n    bitstring<long f(long v)> id(int m) { 0x90 }\n}\n",
    )
    .unwrap();
    let (code, out, _) = yamba(&["lang", "check", b, a]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error: import cycle: "), "{out}");
    assert!(out.contains("1 error(s)"), "{out}");
    assert!(out.contains("^"), "{out}");
    // `lang run` prints the same and fails.
    let (code, _, err) = yamba(&["lang", "run", b, a, "--class", "B", "--quick"]);
    assert_ne!(code, 0);
    assert!(err.contains("error: import cycle: "), "{err}");
}
