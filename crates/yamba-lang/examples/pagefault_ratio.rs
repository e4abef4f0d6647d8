//! Figures 2+3 (x86-64, Linux page-out) against the built-in
//! mem.pagefault.major in the same run, as tests/measure_pagefault.rs
//! compares them, with the C parts compiled or interpreted and the unroll
//! degree chosen or set. Prints, per round, (Yamba − its page-out) /
//! built-in per fault.
//!
//!   cargo run --release -p yamba-lang --example pagefault_ratio -- [--interpret] [--degree N] [--rounds N] [--scratch DIR]
//!
//! Give `--scratch` an ext4 on zram (tests/measure_pagefault.rs makes one
//! as root) so page reads are done in memory by the faulting thread.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yamba_core::RunConfig;
use yamba_lang::runner::{benchmark, Job};
use yamba_lang::Program;

const PAGES: usize = 2048;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |f: &str| args.iter().position(|a| a == f);
    let value = |f: &str| flag(f).and_then(|i| args.get(i + 1)).cloned();
    let interpret = flag("--interpret").is_some();
    let degree = value("--degree");
    let rounds: usize = value("--rounds").map_or(3, |r| r.parse().expect("--rounds N"));
    let scratch = PathBuf::from(value("--scratch").unwrap_or_else(|| "/tmp".into()));
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (prog, _) = Program::load(&[examples.join("pagefault_linux.yamba")]).expect("loads");
    for round in 0..rounds {
        let mut settings = BTreeMap::new();
        if let Some(d) = &degree {
            settings.insert("unroll_degree".to_string(), d.clone());
        }
        let mut job = Job::new(prog.clone(), "Y_pagefault_x86_64_Linux", settings);
        job.interpret = interpret;
        let lang = benchmark(job).expect("runnable");
        let config = RunConfig {
            scratch_dir: Some(scratch.clone()),
            repetitions: 1,
            settings: [("fault_pages".to_string(), PAGES.to_string())].into(),
            ..RunConfig::quick()
        };
        let file = yamba_lang::session::run(
            config,
            &[&yamba_suite::mem::major::MAJOR, lang],
            vec!["pagefault_ratio".into()],
            None,
        )
        .expect("runs");
        let find = |id: &str| file.results.iter().find(|r| r.id == id).expect("result");
        let builtin = find("mem.pagefault.major");
        let ours = find("lang.Y_pagefault_x86_64_Linux");
        let failed: Vec<&str> = ours
            .evidence
            .iter()
            .filter(|e| !e.ok)
            .map(|e| e.check.as_str())
            .collect();
        let (Some(raw), Some(b)) = (ours.median(), builtin.median()) else {
            println!(
                "round {round}: no value ({:?} / {:?}) {failed:?}",
                ours.reason, builtin.reason
            );
            continue;
        };
        let po = &ours.extra["verification"]["page_out_ns_median"];
        let page_out = (po["benchmark"].as_f64().unwrap_or(0.0)
            - po["dummy"].as_f64().unwrap_or(0.0))
            / PAGES as f64;
        let a = raw - page_out;
        println!(
            "round {round}: {} degree {}: Yamba {:.2} µs ({:.2} less {:.0} ns page-out), built-in {:.2} µs, ratio {:.3}{}",
            ours.params["c_parts"].as_str().unwrap_or("?"),
            ours.params["unroll_degree"],
            a / 1e3,
            raw / 1e3,
            page_out,
            b / 1e3,
            a / b,
            if failed.is_empty() { String::new() } else { format!(" FAILED evidence: {failed:?}") }
        );
    }
}
