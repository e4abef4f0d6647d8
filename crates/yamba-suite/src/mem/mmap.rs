//! P = mapping a file and unmapping it (lmbench's lat_mmap): mmap of the
//! whole file, readable, writable and shared; one byte written every
//! 16 KiB of its first tenth, so the mapping is really made and not only
//! promised; munmap. By file size (512 KiB, 4 MiB, 32 MiB: mem.mmap.SIZE),
//! the file cached in memory. Each observation is one operation, timed
//! alone, BASE subtracted; cold, each after the caches were evicted and
//! branch history disturbed (the file stays in the page cache).
//!
//! The cost grows with the pages touched (a write fault each, and their
//! page-table entries to tear down): the fit of cost against pages
//! touched over the sizes, in `extra`, splits it into the fixed cost of
//! mmap + munmap and the cost per page.
//!
//! The file is written a page at a time, so the page cache holds it in
//! base pages and each byte written faults in one page, the model
//! lat_mmap assumes. A file written in large chunks may be cached in large
//! folios on recent kernels, and one write fault then maps a whole folio
//! (one fault per 4 MiB mapping here, not 26): a different quantity.
//!
//! Evidence (gating): every map and unmap succeeded, each operation took
//! one minor fault per page written and no major fault (the file was
//! cached, and the touches were really made through the mapping).

use super::adapter::{self, map_file_rw, unmap_file, Faults, ScratchFile};
use serde_json::json;
use std::fs::File;
use std::time::{Duration, Instant};
use yamba_core::cold::Evictor;
use yamba_core::{BenchResult, Benchmark, Clock, Cold, Ctx, Mode, Series, Unit};

pub static MMAP: Benchmark = Benchmark {
    id: "mem.mmap",
    area: "mem",
    unit: Unit::Nanoseconds,
    description: "mmap a cached file (shared, read-write), write 1 byte per 16 KiB of its first tenth, munmap — by file size (mem.mmap.SIZE)",
    adapter: adapter::NAME,
    run: run_mmap,
    cold: Cold::Measured,
    ..Benchmark::TEMPLATE
};

/// File sizes measured.
pub const SIZES: &[usize] = &[512 << 10, 4 << 20, 32 << 20];
/// Distance between the bytes written (lmbench's PSIZE).
pub const STRIDE: usize = 16 << 10;
/// Share of the mapping written: its first tenth (lmbench's N).
pub const FRACTION: usize = 10;

/// Bytes written (pages touched) in a mapping of `size`.
pub fn touches(size: usize) -> usize {
    (size / FRACTION).div_ceil(STRIDE)
}

/// One size's operations.
#[derive(Debug, Clone)]
pub struct SizePoint {
    pub size: usize,
    pub touches: usize,
    /// ns per operation, BASE subtracted.
    pub ns: Vec<f64>,
    /// Faults each operation took.
    pub faults: Vec<Faults>,
    pub failed: Option<String>,
}

/// Times map + touches + unmap of the first `size` bytes of `file`,
/// `min_obs` times at least and then until `budget`; with an `evictor`
/// (cold), each after an eviction.
pub fn measure_size(
    clock: &Clock,
    base_ns: f64,
    file: &File,
    size: usize,
    (min_obs, budget): (usize, Duration),
    mut evictor: Option<&mut Evictor>,
) -> SizePoint {
    let n = touches(size);
    let value = (size & 0xff) as u8 | 1;
    let mut pt = SizePoint {
        size,
        touches: n,
        ns: Vec::new(),
        faults: Vec::new(),
        failed: None,
    };
    let mut one = |pt: &mut SizePoint, keep: bool| {
        if let Some(e) = evictor.as_deref_mut() {
            e.evict();
        }
        let f0 = Faults::now();
        let t0 = clock.start();
        let p = match map_file_rw(file, size) {
            Ok(p) => p,
            Err(e) => {
                pt.failed.get_or_insert_with(|| e.to_string());
                return;
            }
        };
        for k in 0..n {
            // SAFETY: k·STRIDE < size/10 + STRIDE ≤ size for every size
            // here (≥ 2 strides per tenth): inside the mapping.
            unsafe { p.add(k * STRIDE).write_volatile(value) };
        }
        // SAFETY: the whole mapping made above, not used after this.
        let unmapped = unsafe { unmap_file(p, size) };
        let t1 = clock.stop();
        let f1 = Faults::now();
        if !unmapped {
            pt.failed.get_or_insert("munmap failed".into());
        }
        if keep {
            pt.ns.push(clock.ticks_to_ns(t1.wrapping_sub(t0)) - base_ns);
            pt.faults.push(f1.since(f0));
        }
    };
    for _ in 0..3 {
        one(&mut pt, false);
    }
    let started = Instant::now();
    while pt.failed.is_none()
        && (pt.ns.len() < min_obs || (started.elapsed() < budget && pt.ns.len() < 100_000))
    {
        one(&mut pt, true);
    }
    pt
}

fn median(v: &[f64]) -> f64 {
    yamba_stats::Summary::of(v).map_or(f64::NAN, |s| s.median)
}

fn run_mmap(ctx: &mut Ctx) -> Result<(), String> {
    let ps = adapter::page_size();
    let largest = *SIZES.iter().max().unwrap();
    let path = ctx.scratch_dir().join("mmap.dat");
    // Written a page at a time, so the page cache holds base pages (see
    // the module comment).
    let file = ScratchFile::create(&path, largest / ps, 1)?;
    let fs = adapter::filesystem(&path)
        .map(|(t, dev)| format!("{t}{}", dev.map(|d| format!(" on {d}")).unwrap_or_default()))
        .unwrap_or_else(|e| format!("unknown: {e}"));
    // Per size: a third of the block's budget (itself scaled by effort).
    let (min_obs, budget) = (ctx.scaled(20), ctx.plan().budget / 3);
    let mut evictor = (ctx.mode == Mode::Cold).then(|| Evictor::new(ctx.machine()));
    let started = Instant::now();
    let points: Vec<SizePoint> = SIZES
        .iter()
        .map(|&size| {
            measure_size(
                ctx.clock(),
                ctx.base_ns(),
                &file.file,
                size,
                (min_obs, budget),
                evictor.as_mut(),
            )
        })
        .collect();
    let fit = yamba_stats::linear_fit(
        &points.iter().map(|p| p.touches as f64).collect::<Vec<_>>(),
        &points.iter().map(|p| median(&p.ns)).collect::<Vec<_>>(),
    );
    for p in &points {
        let r = size_result(ctx, p, &points, fit, &fs, started);
        ctx.push(r);
    }
    Ok(())
}

fn size_name(size: usize) -> String {
    if size >= 1 << 20 {
        format!("{}m", size >> 20)
    } else {
        format!("{}k", size >> 10)
    }
}

fn size_result(
    ctx: &Ctx,
    p: &SizePoint,
    all: &[SizePoint],
    fit: Option<yamba_stats::LinearFit>,
    fs: &str,
    started: Instant,
) -> BenchResult {
    let mut r = ctx.result(Some(&size_name(p.size)));
    r.description = format!(
        "mmap of a cached {} file (shared, read-write), {} bytes written 16 KiB apart, munmap",
        size_name(p.size),
        p.touches
    );
    r.set_observations(p.ns.clone());
    let mut method = ctx.direct_method(1, started, "budget spent");
    method.base_subtracted_ns = Some(ctx.base_ns());
    r.method = Some(method);
    r.param("file_bytes", p.size)
        .param("pages_written", p.touches)
        .param("stride_bytes", STRIDE)
        .param("filesystem", fs)
        .param("mapping", "PROT_READ|PROT_WRITE, MAP_SHARED");
    r.series = Some(Series {
        x_label: "file size".into(),
        x_unit: "B".into(),
        y_label: "mmap + touches + munmap".into(),
        y_unit: "ns".into(),
        log_x: true,
        log_y: true,
        points: all.iter().map(|q| [q.size as f64, median(&q.ns)]).collect(),
    });
    if let Some(f) = fit {
        r.extra.insert(
            "fit".into(),
            json!({
                "model": "ns = fixed + per_page × pages written (medians of every size)",
                "fixed_ns": f.intercept, "per_page_ns": f.slope, "r_squared": f.r_squared,
            }),
        );
    }
    r.add_evidence(
        "every mmap and munmap succeeded",
        "no failure",
        p.failed.clone().unwrap_or_else(|| "none".into()),
        p.failed.is_none() && !p.ns.is_empty(),
    );
    let minors: Vec<u64> = p.faults.iter().map(|f| f.minor).collect();
    let majors: u64 = p.faults.iter().map(|f| f.major).sum();
    let (lo, hi) = (
        minors.iter().copied().min().unwrap_or(0),
        minors.iter().copied().max().unwrap_or(0),
    );
    let n = p.touches as u64;
    r.add_evidence(
        "each operation faulted in every page it wrote through the mapping, none from disk",
        format!("{n} minor faults per operation (±1), 0 major"),
        format!("{lo}–{hi} minor per operation, {majors} major in all"),
        !minors.is_empty() && lo + 1 >= n && hi <= n + 1 && majors == 0,
    );
    r
}
