//! TIME_BLOCK's deterministic half: exact execution counts, in C (the
//! header, compiled here with the system `cc`) and in Rust (the macro),
//! the report line's format, and the header building as strict C99 and
//! C++11. Its times against CLOCK_MONOTONIC are measurement checks
//! (measure_time_block.rs).

mod support;

use std::process::Command;
use support::{build_c, marker_line, parse, repo_root, run_c, site};
use yamba_core::time_block;
use yamba_testkit::skip;

/// Every site of the C program reports once at exit, with exact counts:
/// atomic across threads, shared with another translation unit.
#[test]
fn c_header_counts_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let exe = match build_c(dir.path()) {
        Ok(e) => e,
        Err(why) => skip!("{why}"),
    };
    let root = repo_root();
    let known = root.join("tests/c/time_block_known.c");
    let other = root.join("tests/c/time_block_other.c");
    let (spins, threads, per_thread) = (40u64, 4u64, 50_000u64);
    let (stdout, _) = run_c(&exe, 1000, spins, threads, per_thread);
    let lines = parse(&stdout);
    assert_eq!(lines.len(), 4, "{stdout}");
    let at = |file: &str, src: &std::path::Path, marker: &str| {
        site(&lines, file, marker_line(src, marker))
            .into_iter()
            .cloned()
            .collect::<Vec<_>>()
    };
    let spin = at("time_block_known.c", &known, "SITE:spin");
    assert_eq!(spin.len(), 1, "{stdout}");
    assert_eq!(spin[0].executions, spins);
    assert!(
        spin[0].percent > 0.0 && spin[0].percent <= 100.0,
        "{stdout}"
    );
    assert_eq!(
        at("time_block_known.c", &known, "SITE:threads")[0].executions,
        threads * per_thread,
        "atomic counts across threads"
    );
    assert_eq!(
        at("time_block_other.c", &other, "SITE:other")[0].executions,
        7,
        "the other translation unit shares the registry"
    );
    assert_eq!(
        at("time_block_known.c", &known, "SITE:empty")[0].executions,
        20_000
    );
}

const EARLY_LINE: u32 = line!() + 2;
fn early(flag: bool) -> Option<u32> {
    yamba_core::time_block!({
        if flag {
            return None;
        }
        Some(1)
    })
}

/// One test for the whole Rust side: the registry is process-wide. The
/// macro's value, early returns, counts across threads, and counters reset
/// by a report.
#[test]
fn rust_macro_counts_exactly() {
    time_block::set_interval(0.0);
    let value = yamba_core::time_block!(6 * 7);
    assert_eq!(value, 42, "the macro evaluates to the block's value");
    let value_line = line!() - 2;
    for i in 0..10 {
        assert_eq!(early(i % 2 == 0), if i % 2 == 0 { None } else { Some(1) });
    }
    let first = parse(&time_block::take_report());
    let here = file!().rsplit('/').next().unwrap();
    assert_eq!(site(&first, here, value_line)[0].executions, 1);
    assert_eq!(
        site(&first, here, EARLY_LINE)[0].executions,
        10,
        "early returns out of the block are counted"
    );
    let spins = 40u64;
    for _ in 0..spins {
        yamba_core::time_block!(std::hint::black_box(1u64));
    }
    let spin_line = line!() - 2;
    let (threads, per_thread) = (4u64, 50_000u64);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..per_thread {
                    yamba_core::time_block!(std::hint::black_box(1u64));
                }
            });
        }
    });
    let thread_line = line!() - 5;
    let report = time_block::take_report();
    let lines = parse(&report);
    // Counters were reset by the previous report; nothing else ran.
    assert_eq!(lines.len(), 2, "{report}");
    assert_eq!(site(&lines, here, spin_line)[0].executions, spins);
    assert_eq!(
        site(&lines, here, thread_line)[0].executions,
        threads * per_thread
    );
}

#[test]
fn format_line_matches_the_seed() {
    // The seed's example line, from its numbers.
    let l = time_block::format_line(
        "/usr/src/lib/libsys/asynsend.c",
        136,
        2477,
        1_058_031,
        528_000_000_000,
    );
    assert_eq!(
        l,
        "/usr/src/lib/libsys/asynsend.c:136,2477,427,1058031,0.0002%\n"
    );
    assert_eq!(parse(&l)[0].mean, 427);
}

/// The header is portable C99 (pedantic) and C++11: the whole test program
/// must compile without a warning, and a C++ program must report its site.
#[test]
fn header_builds_as_strict_c99_and_cpp() {
    let root = repo_root();
    let dir = tempfile::tempdir().unwrap();
    let c = Command::new("cc")
        .args([
            "-std=c99",
            "-Wpedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O2",
            "-I",
        ])
        .arg(root.join("include"))
        .arg(root.join("tests/c/time_block_known.c"))
        .arg(root.join("tests/c/time_block_other.c"))
        .args(["-lpthread", "-o"])
        .arg(dir.path().join("c99"))
        .output();
    match c {
        Ok(o) => assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => skip!("no C compiler (cc: {e}; .ci/install installs gcc)"),
    }
    let src = root.join("tests/c/time_block_cpp.cpp");
    let exe = dir.path().join("cpp");
    let cpp = Command::new("c++")
        .args(["-std=c++11", "-Wall", "-Wextra", "-Werror", "-O2", "-I"])
        .arg(root.join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output();
    match cpp {
        Ok(o) => assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => skip!("no C++ compiler (c++: {e}; .ci/install installs g++)"),
    }
    let out = Command::new(&exe)
        .env_remove("YAMBA_TIME_BLOCK_FD")
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines = parse(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].line, marker_line(&src, "SITE:cpp"));
    assert_eq!(lines[0].executions, 5);
}
