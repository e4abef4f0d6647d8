//! Figures 2+3 (x86-64) with the Linux page-out adapter agree with the
//! built-in mem.pagefault.major (k=1, readahead off: one page read per
//! fault) within 10%, measured in the same run — the two interleaved, each
//! in a fresh process; a measurement check (docs/testing.md) on the median
//! of independent runs — and with the same evidence: mincore
//! shows nothing resident before a pass, ru_majflt one major fault per
//! access, mincore after one page in per fault.
//!
//! Where it can (root, zram, mkfs.ext4), the scratch is an ext4 on a zram
//! device: a real block device whose page reads are done in memory, in the
//! faulting thread. On the machine's virtual disk a page read took 65–99 µs
//! from one process to the next while other work wrote (a CI run's), and the
//! two sides could not be compared within 10% there.
//!
//! On an AMD EPYC guest the two differed by 10–25% while the runner took
//! the unroll degree from the core's 1% rule (16 here): the interpreted loop
//! between groups slowed the faults themselves (kernel tracepoints agree).
//! With the degree as large as the work allows they agree within 2–9%. See
//! docs/language.md, "The unroll degree at run time".

use std::collections::BTreeMap;
use std::path::Path;
use yamba_core::{RunConfig, Status};
use yamba_lang::runner::{benchmark, Job};
use yamba_lang::{Isa, Program};
use yamba_testkit::{alone, check, skip, Accept, Journal, RamExt4};

/// Pages of the scratch file, one major fault each per pass.
const PAGES: usize = 2048;

/// Rule: the median over independent runs of (Yamba − its page-out) /
/// built-in is 1 within 10%; every run's Yamba evidence (none resident,
/// one major fault per access, one page per fault) must hold and both
/// results be ok, else that run gives no value.
#[test]
fn figures_2_and_3_agree_with_the_built_in_major_fault() {
    let _alone = alone();
    if Isa::host() != Some(Isa::X86_64) {
        skip!(
            "the example runs the x86-64 class; this host is {}",
            std::env::consts::ARCH
        );
    }
    // zram reads a page synchronously, in the faulting thread (a loop
    // device's reads, done by a kworker, cost 18 or 30 µs as that worker
    // lands on the faulting CPU or the other).
    let ram = RamExt4::new("64M", Journal::With);
    let disk;
    let scratch = match &ram {
        Ok(r) => r.path(),
        Err(why) => {
            println!("scratch on the build's disk (page reads vary with other I/O): {why}");
            disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
            disk.path()
        }
    };
    let (fs, impossible) = yamba_suite::mem::adapter::filesystem(scratch).unwrap();
    if let Some(why) = impossible {
        skip!("{why}");
    }
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (prog, _) = Program::load(&[examples.join("pagefault_linux.yamba")]).unwrap();
    let run = || {
        let job = Job::new(prog.clone(), "Y_pagefault_x86_64_Linux", BTreeMap::new());
        let lang = benchmark(job).unwrap();
        let config = RunConfig {
            scratch_dir: Some(scratch.to_path_buf()),
            repetitions: 1,
            settings: [("fault_pages".to_string(), PAGES.to_string())].into(),
            ..RunConfig::quick()
        };
        yamba_lang::session::run(
            config,
            &[&yamba_suite::mem::major::MAJOR, lang],
            vec!["test".into()],
            None,
        )
        .unwrap()
    };
    let first = run();
    if let Some(b) = first
        .results
        .iter()
        .find(|r| r.id == "mem.pagefault.major" && r.status == Status::Skipped)
    {
        skip!("{}", b.reason.as_deref().unwrap_or(""));
    }
    check!("(Yamba - page-out) / built-in per fault", Accept::within(1.0, 0.10))
.attempts(5, 15).run(|| {
        let file = run();
        let find = |id: &str| {
            file.results
                .iter()
                .find(|r| r.id == id)
                .unwrap_or_else(|| panic!("no {id}"))
        };
        let builtin = find("mem.pagefault.major");
        let ours = find("lang.Y_pagefault_x86_64_Linux");
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
        // The same evidence, and it held.
        if let Some(e) = ours.evidence.iter().find(|e| !e.ok) {
            return Err(format!("{}: {} (expected {})", e.check, e.observed, e.expected));
        }
        if ours.status != Status::Ok || builtin.status != Status::Ok {
            return Err(format!("{:?} {:?} / {:?} {:?}", ours.status, ours.reason, builtin.status, builtin.reason));
        }
        let (raw, b) = (ours.median().unwrap(), builtin.median().unwrap());
        // The seed's model times the page-out with each pass (and with each
        // dummy pass, where it has nothing to drop); the built-in does not.
        // The difference, measured apart and shown in the evidence, is taken
        // out here: negligible against a disk read, ~8% of a zram fault.
        let po = &ours.extra["verification"]["page_out_ns_median"];
        let (pb, pd) = (po["benchmark"].as_f64(), po["dummy"].as_f64());
        let page_out = (pb.unwrap() - pd.unwrap()) / PAGES as f64;
        let a = raw - page_out;
        println!(
            "on {fs}: Yamba {:.2} µs ({:.2} µs less {:.0} ns of page-out), built-in {:.2} µs per fault, ratio {:.3}",
            a / 1e3,
            raw / 1e3,
            page_out,
            b / 1e3,
            a / b
        );
        Ok(a / b)
    });
}
