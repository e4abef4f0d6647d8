//! P = one minor page fault, two kinds:
//! - `mem.pagefault.anon`: first write to an anonymous page (the kernel
//!   allocates and zeroes a page and maps it);
//! - `mem.pagefault.cached`: first read of a file page that is in the page
//!   cache (mapping only — no I/O).
//!
//! Each observation is one pass over fresh mappings, T = (M(P'') − M(F))/n
//! with F the same loop over the now-present pages (see `touch.rs`), and
//! every pass is checked with the kernel's own counts: one minor fault per
//! access, no major fault, none in F.

use super::adapter::{self, page_size, Anon, FileMap, Pages, Readahead};
use super::touch::{touch_pass, Pass, ScratchFile};
use serde_json::json;
use std::time::Instant;
use yamba_core::{BenchResult, Benchmark, Ctx, Mode, Unit};

pub static ANON: Benchmark = Benchmark {
    id: "mem.pagefault.anon",
    area: "mem",
    unit: Unit::Nanoseconds,
    description:
        "minor page fault: first write to an anonymous page (allocate, zero and map a page)",
    modes: &[Mode::Hot],
    adapter: adapter::NAME,
    run: run_anon,
    ..Benchmark::TEMPLATE
};

pub static CACHED: Benchmark = Benchmark {
    id: "mem.pagefault.cached",
    area: "mem",
    unit: Unit::Nanoseconds,
    description:
        "minor page fault: first read of a file page that is in the page cache (mapping only)",
    modes: &[Mode::Hot],
    adapter: adapter::NAME,
    run: run_cached,
    ..Benchmark::TEMPLATE
};

/// Passes until the budget is spent, at least `min` of them.
fn passes<F: FnMut() -> Result<Pass, String>>(
    ctx: &Ctx,
    min: usize,
    mut one: F,
) -> Result<Vec<Pass>, String> {
    let budget = ctx.plan().budget;
    let t0 = Instant::now();
    let mut out = Vec::new();
    while out.len() < min || (t0.elapsed() < budget && out.len() < 1000) {
        out.push(one()?);
    }
    Ok(out)
}

/// Evidence every page-fault pass must give: the kernel counted exactly one
/// minor fault per access in P'', no major fault, and no fault in F.
fn fault_evidence(r: &mut BenchResult, passes: &[Pass], accesses: u64) {
    let bad = passes.iter().filter(|p| p.faults.minor != accesses).count();
    let minors: Vec<u64> = passes.iter().map(|p| p.faults.minor).collect();
    r.add_evidence(
        "every access took exactly one minor fault (getrusage ru_minflt over each pass)",
        format!("{accesses} per pass"),
        format!(
            "{} of {} passes differ (min {}, max {})",
            bad,
            passes.len(),
            minors.iter().min().unwrap_or(&0),
            minors.iter().max().unwrap_or(&0)
        ),
        bad == 0,
    );
    let major: u64 = passes.iter().map(|p| p.faults.major).sum();
    r.add_evidence(
        "no major fault (no I/O)",
        "0",
        major.to_string(),
        major == 0,
    );
    let dummy: u64 = passes
        .iter()
        .map(|p| p.dummy_faults.minor + p.dummy_faults.major)
        .sum();
    r.add_evidence(
        "the dummy pass F (pages present) took no fault",
        "0",
        dummy.to_string(),
        dummy == 0,
    );
}

fn finish(ctx: &mut Ctx, mut r: BenchResult, passes: &[Pass], accesses: u64) {
    r.set_observations(passes.iter().map(|p| p.per(accesses)).collect());
    let dummy: Vec<f64> = passes.iter().map(|p| p.dummy_ns).collect();
    let dummy_summary = yamba_stats::Summary::of(&dummy);
    r.method = Some(yamba_core::results::Method {
        kind: "direct".into(),
        iterations: accesses,
        unroll: 1,
        dummy_ns: dummy_summary.as_ref().map(|s| s.median),
        dummy: dummy_summary,
        base_subtracted_ns: None,
        warmup_ns: 0.0,
        target_precision: ctx.plan().target_precision,
        budget_s: ctx.plan().budget.as_secs_f64(),
        elapsed_s: 0.0,
        stopped: format!(
            "{} passes of {accesses} accesses, each on fresh mappings",
            passes.len()
        ),
    });
    fault_evidence(&mut r, passes, accesses);
    ctx.push(r);
}

fn run_anon(ctx: &mut Ctx) -> Result<(), String> {
    let pages = if ctx.quick() { 2048 } else { 8192 };
    let targets: Vec<usize> = (0..pages).collect();
    let clock = ctx.clock();
    // One pass untimed first: the code and the counters' own pages.
    let one = || -> Result<Pass, String> {
        let mem = Anon::new(pages * page_size(), Pages::Base, false)?;
        // SAFETY: mem is a live writable mapping of `pages` pages.
        Ok(unsafe { touch_pass(clock, mem.as_ptr(), &targets, true) })
    };
    one()?;
    let ps = passes(ctx, if ctx.quick() { 8 } else { 30 }, one)?;
    let mut r = ctx.result(None);
    r.param("pages_per_pass", pages)
        .param("page_bytes", page_size())
        .param("huge_pages", "off (MADV_NOHUGEPAGE)");
    finish(ctx, r, &ps, pages as u64);
    Ok(())
}

fn run_cached(ctx: &mut Ctx) -> Result<(), String> {
    // Fault-around maps the cached neighbours of a faulting page within
    // an aligned window (64 KiB by default), so one page in every 16 is
    // touched: each touch is then a fault of its own. The file is written
    // a page at a time so the page cache holds page-sized folios (a large
    // folio would be mapped whole by one fault; the check below would see).
    let stride: usize =
        match ctx.setting("cached_stride") {
            Some(s) => s.parse().ok().filter(|&v: &usize| v > 0).ok_or_else(|| {
                format!("bad cached_stride '{s}': expected a number of pages ≥ 1")
            })?,
            None => 16,
        };
    let accesses = if ctx.quick() { 512 } else { 2048 };
    let pages = accesses * stride;
    let file = ScratchFile::create(&ctx.scratch_dir().join("cached.dat"), pages, 1)?;
    let targets: Vec<usize> = (0..pages).step_by(stride).collect();
    let clock = ctx.clock();
    let mut resident_min = usize::MAX;
    let mut mapped = Vec::new();
    let mut sums_ok = true;
    let mut one = || -> Result<Pass, String> {
        let map = FileMap::new(&file.file, file.bytes, Readahead::Kernel)?;
        resident_min = resident_min.min(map.resident_pages()?);
        // SAFETY: map is a live mapping of the whole file; reads only.
        let p = unsafe { touch_pass(clock, map.as_ptr() as *mut u8, &targets, false) };
        sums_ok &= p.sum == ScratchFile::expected_sum(&targets);
        mapped.push(map.mapped_pages().ok());
        Ok(p)
    };
    one()?;
    let ps = passes(ctx, if ctx.quick() { 8 } else { 30 }, &mut one)?;
    let mut r = ctx.result(None);
    r.param("file_pages", pages)
        .param("touch_one_page_in", stride)
        .param("accesses_per_pass", accesses);
    r.add_evidence(
        "every page of the file was in the page cache before each pass (mincore)",
        format!("{pages} resident"),
        format!("at least {resident_min} resident"),
        resident_min == pages,
    );
    r.add_evidence(
        "every touch read the file's own bytes",
        "sum of known page contents",
        if sums_ok {
            "matched in every pass"
        } else {
            "mismatch"
        },
        sums_ok,
    );
    if let Some(Some(m)) = mapped.last() {
        r.extra.insert(
            "pages_mapped_per_fault".into(),
            json!(*m as f64 / accesses as f64),
        );
        r.add_note_evidence(
            "pages mapped per fault (fault-around, /proc/self/pagemap)",
            "≥ 1",
            format!("{:.2}", *m as f64 / accesses as f64),
            *m >= accesses,
        );
    }
    finish(ctx, r, &ps, accesses as u64);
    Ok(())
}
