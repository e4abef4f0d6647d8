//! Figures 2+3 (x86-64) with the Linux page-out adapter agree with the
//! built-in mem.pagefault.major (k=1, readahead off: one page read per
//! fault) within 10%, measured in the same run — the two interleaved, each
//! repetition in a fresh process — and with the same evidence: mincore
//! shows nothing resident before a pass, ru_majflt one major fault per
//! access, mincore after one page in per fault.

use std::collections::BTreeMap;
use std::path::Path;
use yamba_core::{RunConfig, Status};
use yamba_lang::runner::{benchmark, Job};
use yamba_lang::{Isa, Program};

#[test]
fn figures_2_and_3_agree_with_the_built_in_major_fault() {
    if Isa::host() != Some(Isa::X86_64) {
        println!(
            "SKIPPED: the example runs the x86-64 class; this host is {}",
            std::env::consts::ARCH
        );
        return;
    }
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (fs, impossible) = yamba_suite::mem::adapter::filesystem(scratch.path()).unwrap();
    if let Some(why) = impossible {
        println!("SKIPPED: {why}");
        return;
    }
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (prog, _) = Program::load(&[examples.join("pagefault_linux.yamba")]).unwrap();
    let mut last = String::new();
    for attempt in 1..=3 {
        let job = Job::new(prog.clone(), "Y_pagefault_x86_64_Linux", BTreeMap::new());
        let lang = benchmark(job).unwrap();
        let config = RunConfig {
            scratch_dir: Some(scratch.path().to_path_buf()),
            repetitions: 3,
            settings: [("fault_pages".to_string(), "2048".to_string())].into(),
            ..RunConfig::quick()
        };
        let file = yamba_lang::session::run(
            config,
            &[&yamba_suite::mem::major::MAJOR, lang],
            vec!["test".into()],
            None,
        )
        .unwrap();
        let find = |id: &str| {
            file.results
                .iter()
                .find(|r| r.id == id)
                .unwrap_or_else(|| panic!("no {id}"))
        };
        let builtin = find("mem.pagefault.major");
        let ours = find("lang.Y_pagefault_x86_64_Linux");
        if builtin.status == Status::Skipped {
            println!("SKIPPED: {}", builtin.reason.as_deref().unwrap_or(""));
            return;
        }
        // The same evidence, and it held.
        for e in &ours.evidence {
            assert!(
                e.ok,
                "{}: {} (expected {})\n{:#?}",
                e.check, e.observed, e.expected, ours.evidence
            );
        }
        for check in [
            "none of the file resident",
            "one major fault per operation",
            "one page",
        ] {
            assert!(
                ours.evidence.iter().any(|e| e.check.contains(check)),
                "no evidence '{check}'"
            );
        }
        assert_eq!(ours.status, Status::Ok, "{:?}", ours.reason);
        assert_eq!(builtin.status, Status::Ok, "{:?}", builtin.reason);
        let (a, b) = (ours.median().unwrap(), builtin.median().unwrap());
        last = format!(
            "attempt {attempt} on {fs}: Yamba {:.1} µs, built-in {:.1} µs per fault, ratio {:.3}",
            a / 1e3,
            b / 1e3,
            a / b
        );
        println!("{last}");
        if (a / b - 1.0).abs() <= 0.10 {
            return;
        }
    }
    panic!("not within 10% in 3 attempts; last {last}");
}
