//! `mem.pagefault.naive_msync`: lmbench's lat_pagefault method, kept as a
//! clearly labelled counter-example. Each pass maps the file, "pages it
//! out" with msync(MS_INVALIDATE) only, and touches every page in random
//! order; the number is time per access. On Linux msync does not drop
//! pages from the page cache, so the accesses are at most minor faults:
//! its own check "page-out before every pass" fails and the result
//! is withheld — the number is kept only to show how far off it is.

use super::adapter::{self, FileMap, Readahead, ScratchFile};
use super::touch::touch_pass;
use rand::seq::SliceRandom;
use serde_json::json;
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static NAIVE_MSYNC: Benchmark = Benchmark {
    id: "mem.pagefault.naive_msync",
    area: "mem",
    unit: Unit::Nanoseconds,
    description: "lmbench's lat_pagefault method (msync MS_INVALIDATE as page-out) — a counter-example, withheld unless pages really were evicted",
    adapter: adapter::NAME,
    run: run_naive,
    cold: Cold::NotMeaningful(
        "a counter-example (lat_pagefault's msync method), withheld unless pages were really paged out: nothing to make cold",
    ),
    ..Benchmark::TEMPLATE
};

fn run_naive(ctx: &mut Ctx) -> Result<(), String> {
    let pages = if ctx.quick() { 2048 } else { 16384 };
    let file = ScratchFile::create(&ctx.scratch_dir().join("naive.dat"), pages, 256)?;
    let mut targets: Vec<usize> = (0..pages).collect();
    targets.shuffle(&mut crate::shared::rng(0x1B));
    let clock = ctx.clock();
    let n = ctx.scaled(5);
    let mut obs = Vec::new();
    let mut resident = Vec::new();
    let mut majors = Vec::new();
    let mut minors = Vec::new();
    for _ in 0..n {
        let map = FileMap::new(&file.file, file.bytes, Readahead::Kernel)?;
        map.msync_invalidate()?;
        resident.push(map.resident_pages()?);
        // SAFETY: map is a live mapping of the whole file; reads only.
        let p = unsafe { touch_pass(clock, map.as_ptr() as *mut u8, &targets, false) };
        // lmbench divides the whole pass by the pages touched.
        obs.push(p.per(pages as u64));
        majors.push(p.faults.major);
        minors.push(p.faults.minor);
    }
    let mut r = ctx.result(None);
    r.set_observations(obs);
    r.param("file_pages", pages)
        .param("page_out", "msync(MS_INVALIDATE) only")
        .param("order", "random permutation of all pages, as lmbench");
    let max_res = *resident.iter().max().unwrap_or(&0);
    r.add_evidence(
        "page-out before every pass (mincore)",
        format!("0 of {pages} pages resident"),
        format!(
            "{max_res} of {pages} still resident after msync(MS_INVALIDATE){}",
            if max_res > 0 {
                ", which does not drop pages from the page cache: the accesses were minor faults"
            } else {
                ""
            }
        ),
        max_res == 0,
    );
    let total_major: u64 = majors.iter().sum();
    r.add_evidence(
        "every access took a major fault (ru_majflt)",
        format!("{pages} per pass"),
        format!("{majors:?}"),
        majors.iter().all(|&m| m == pages as u64),
    );
    r.extra.insert(
        "verification".into(),
        json!({
            "resident_before": resident, "major_faults_per_pass": majors,
            "minor_faults_per_pass": minors,
            "share_of_accesses_faulted": total_major as f64 / (n * pages) as f64,
        }),
    );
    ctx.push(r);
    Ok(())
}
