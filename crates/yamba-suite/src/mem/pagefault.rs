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

use super::adapter::{self, page_size, Anon, FileMap, Pages, Readahead, ScratchFile};
use super::touch::{touch_pass, Pass};
use serde_json::json;
use std::time::Instant;
use yamba_core::settings::{Kind, Setting};
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Unit};

/// `--set mem.cached_stride`: pages between the cached faults' pages.
pub const CACHED_STRIDE: Setting = Setting {
    key: "mem.cached_stride",
    kind: Kind::Integer {
        min: 1,
        max: 1 << 16,
    },
    default: "16 (past the kernel's 64 KiB fault-around window)",
    help: "pages between the touched pages of mem.pagefault.cached",
    aliases: &["cached_stride"],
};

pub static ANON: Benchmark = Benchmark {
    id: "mem.pagefault.anon",
    area: "mem",
    unit: Unit::Nanoseconds,
    description:
        "minor page fault: first write to an anonymous page (allocate, zero and map a page)",
    adapter: adapter::NAME,
    run: run_anon,
    cold: Cold::NotMeaningful(
        "each observation is a pass of faults over fresh pages timed against the same loop over present pages (P'' − F): one fault is never timed alone",
    ),
    ..Benchmark::TEMPLATE
};

pub static CACHED: Benchmark = Benchmark {
    id: "mem.pagefault.cached",
    area: "mem",
    unit: Unit::Nanoseconds,
    description:
        "minor page fault: first read of a file page that is in the page cache (mapping only)",
    adapter: adapter::NAME,
    run: run_cached,
    settings: &[CACHED_STRIDE],
    cold: Cold::NotMeaningful(
        "each observation is a pass of faults over fresh pages timed against the same loop over present pages (P'' − F): one fault is never timed alone",
    ),
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

/// Share of passes that may be disturbed (a page reclaimed by the kernel
/// meanwhile, a fault from elsewhere in the process) before the result is
/// withheld rather than measured from the clean ones.
const MAX_DROPPED_SHARE: f64 = 0.05;

/// Why a pass cannot stand as an observation of the operation, if it
/// cannot: every page fault pass must have had exactly one minor fault per
/// access in P'', no major fault, no fault in F, and its precondition (the
/// file resident, for the cached case).
fn disturbed(p: &Pass, accesses: u64, precondition: bool) -> Option<String> {
    if !precondition {
        Some("file not wholly resident before the pass".into())
    } else if p.faults.minor != accesses {
        Some(format!(
            "{} minor faults for {accesses} accesses",
            p.faults.minor
        ))
    } else if p.faults.major != 0 {
        Some(format!("{} major fault(s)", p.faults.major))
    } else if p.dummy_faults.minor + p.dummy_faults.major != 0 {
        Some("the dummy pass F took a fault".into())
    } else {
        None
    }
}

/// Keeps the passes that really measured one minor fault per access, says
/// how many were left out and why, and withholds the result when too many
/// were (more than 5%, or fewer than 3 left).
fn finish(
    ctx: &mut Ctx,
    mut r: BenchResult,
    passes: &[Pass],
    accesses: u64,
    preconditions: &[bool],
) {
    let mut kept: Vec<&Pass> = Vec::new();
    let mut why: Vec<String> = Vec::new();
    for (i, p) in passes.iter().enumerate() {
        match disturbed(p, accesses, preconditions.get(i).copied().unwrap_or(true)) {
            None => kept.push(p),
            Some(w) => why.push(format!("pass {}: {w}", i + 1)),
        }
    }
    let dropped = passes.len() - kept.len();
    r.add_evidence(
        "each pass took exactly one minor fault per access, no major fault, none in F (getrusage), its file resident (mincore); disturbed passes are left out",
        format!("at most {:.0}% of passes left out, at least 3 kept", MAX_DROPPED_SHARE * 100.0),
        if why.is_empty() {
            format!("all {} passes clean", passes.len())
        } else {
            format!("{dropped} of {} left out ({})", passes.len(), why.join("; "))
        },
        dropped as f64 <= MAX_DROPPED_SHARE * passes.len() as f64 && kept.len() >= 3,
    );
    r.set_observations(kept.iter().map(|p| p.per(accesses)).collect());
    let dummy: Vec<f64> = kept.iter().map(|p| p.dummy_ns).collect();
    let dummy_summary = yamba_stats::Summary::of(&dummy);
    r.method = Some(yamba_results::results::Method {
        // Kept as counted, even 0 (`Method::direct` would raise 0 to 1).
        iterations: accesses,
        dummy_ns: dummy_summary.as_ref().map(|s| s.median),
        dummy: dummy_summary,
        ..yamba_results::results::Method::direct(
            accesses,
            ctx.plan().target_precision,
            ctx.plan().budget.as_secs_f64(),
            0.0,
            format!(
                "{} passes of {accesses} accesses, each on fresh mappings",
                passes.len()
            ),
        )
    });
    ctx.push(r);
}

fn run_anon(ctx: &mut Ctx) -> Result<(), String> {
    // A size: the mapping one pass faults in (8 MiB or 32 MiB of fresh
    // pages to zero); the passes are amounts.
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
    let ps = passes(ctx, ctx.scaled(8), one)?;
    let mut r = ctx.result(None);
    r.param("pages_per_pass", pages)
        .param("page_bytes", page_size())
        .param("huge_pages", "off (MADV_NOHUGEPAGE)");
    finish(ctx, r, &ps, pages as u64, &[]);
    Ok(())
}

fn run_cached(ctx: &mut Ctx) -> Result<(), String> {
    // Fault-around maps the cached neighbours of a faulting page within
    // an aligned window (64 KiB by default), so one page in every 16 is
    // touched: each touch is then a fault of its own. The file is written
    // a page at a time so the page cache holds page-sized folios (a large
    // folio would be mapped whole by one fault; the check below would see).
    let stride = ctx.integer(CACHED_STRIDE.key)?.unwrap_or(16) as usize;
    // A size: the file (accesses × stride pages); the passes are amounts.
    let accesses = if ctx.quick() { 512 } else { 2048 };
    let pages = accesses * stride;
    let file = ScratchFile::create(&ctx.scratch_dir().join("cached.dat"), pages, 1)?;
    let targets: Vec<usize> = (0..pages).step_by(stride).collect();
    let clock = ctx.clock();
    let mut resident_min = usize::MAX;
    let mut all_resident: Vec<bool> = Vec::new();
    let mut mapped = Vec::new();
    let mut sums_ok = true;
    let mut one = || -> Result<Pass, String> {
        let mut map = FileMap::new(&file.file, file.bytes, Readahead::Kernel)?;
        // The kernel may reclaim a few of the file's pages between passes
        // (seen here: 37 of 8192, never read back because fault-around maps
        // only resident neighbours). Read the file again so the pass
        // measures what it claims; a pass still not wholly resident is
        // left out below.
        if map.resident_pages()? < pages {
            refill(&file)?;
            map = FileMap::new(&file.file, file.bytes, Readahead::Kernel)?;
        }
        let resident = map.resident_pages()?;
        resident_min = resident_min.min(resident);
        all_resident.push(resident == pages);
        // SAFETY: map is a live mapping of the whole file; reads only.
        let p = unsafe { touch_pass(clock, map.as_ptr() as *mut u8, &targets, false) };
        sums_ok &= p.sum == ScratchFile::expected_sum(&targets);
        mapped.push(map.mapped_pages().ok());
        Ok(p)
    };
    one()?;
    let ps = passes(ctx, ctx.scaled(8), &mut one)?;
    // The untimed first pass's residency is not one of the passes'.
    all_resident.remove(0);
    let mut r = ctx.result(None);
    r.param("file_pages", pages)
        .param("touch_one_page_in", stride)
        .param("accesses_per_pass", accesses);
    r.add_note_evidence(
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
    finish(ctx, r, &ps, accesses as u64, &all_resident);
    Ok(())
}

/// Reads the whole file, bringing every page back into the page cache.
fn refill(file: &ScratchFile) -> Result<(), String> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0usize;
    while off < file.bytes {
        let n = file
            .file
            .read_at(&mut buf, off as u64)
            .map_err(|e| format!("re-reading the scratch file: {e}"))?;
        if n == 0 {
            break;
        }
        off += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::adapter::Faults;

    fn pass(minor: u64, major: u64, dummy_minor: u64) -> Pass {
        Pass {
            ns: 1000.0,
            dummy_ns: 100.0,
            faults: Faults { minor, major },
            dummy_faults: Faults {
                minor: dummy_minor,
                major: 0,
            },
            sum: 0,
        }
    }

    #[test]
    fn a_disturbed_pass_is_named_and_a_clean_one_is_not() {
        assert_eq!(disturbed(&pass(8, 0, 0), 8, true), None);
        assert!(disturbed(&pass(7, 0, 0), 8, true)
            .unwrap()
            .contains("7 minor faults"));
        assert!(disturbed(&pass(8, 1, 0), 8, true)
            .unwrap()
            .contains("major"));
        assert!(disturbed(&pass(8, 0, 1), 8, true)
            .unwrap()
            .contains("dummy"));
        assert!(disturbed(&pass(8, 0, 0), 8, false)
            .unwrap()
            .contains("resident"));
    }
}
