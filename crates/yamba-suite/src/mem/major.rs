//! P = one major page fault: a read of a file page that is not in memory,
//! so the kernel reads it (and maybe its neighbours) from the device.
//!
//! The generic template (as Y_pagefault_generic in the yamba paper):
//! for each pass, `cause_page_outs()` (the adapter: fdatasync, posix_fadvise
//! DONTNEED, drop_caches as root if pages survive), then touch one page in
//! every k of a fresh mapping, timed, F being the same loop again. Unlike
//! lmbench's lat_pagefault it *verifies* what happened: mincore shows no
//! page of the file resident before the pass; getrusage counts the major
//! faults the pass took; mincore afterwards tells how many pages the faults
//! brought in. Workloads: k = 1, 16, 32, 64, with the kernel's readahead
//! and with readahead off (MADV_RANDOM). Latency per fault is fitted
//! against pages brought in per fault by least squares.

use super::adapter::{self, page_out, FileMap, Readahead, ScratchFile};
use super::touch::{touch_pass, Pass};
use serde_json::json;
use yamba_core::settings::{Kind, Setting};
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Replication, Status, Unit};
use yamba_results::results::Method;

/// `--set mem.fault_pages`: pages of the scratch file.
pub const FAULT_PAGES: Setting = Setting {
    key: "mem.fault_pages",
    kind: Kind::Integer {
        min: 64,
        max: 1 << 24,
    },
    default: "8192, or 4 readahead windows (2048 with --quick)",
    help: "pages of the file faulted in each pass",
    aliases: &["fault_pages"],
};

/// `--set mem.evict`: how pages are paged out before a pass.
pub const EVICT: Setting = Setting {
    key: "mem.evict",
    kind: Kind::Choice(&["auto", "drop_caches"]),
    default: "auto",
    help: "page-out before each pass: fadvise and msync where they work (auto), or always drop_caches (root)",
    aliases: &["evict"],
};

pub static MAJOR: Benchmark = Benchmark {
    id: "mem.pagefault.major",
    replication: Replication::OneProcess {
        why: "each pass evicts and verifies a file: costly to repeat",
    },
    area: "mem",
    unit: Unit::Nanoseconds,
    description: "major page fault: first read of a file page paged out to the device (verified by mincore and ru_majflt)",
    adapter: adapter::NAME,
    timeout_s: 300,
    run: run_major,
    settings: &[FAULT_PAGES, EVICT],
    cold: Cold::NotMeaningful(
        "a major fault reads its page from the device, paged out before each pass: the uncached case by construction",
    ),
    ..Benchmark::TEMPLATE
};

/// Touch one page in every `k`, with or without the kernel's readahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    pub k: usize,
    pub readahead: Readahead,
}

impl Workload {
    pub fn suffix(&self) -> String {
        match self.readahead {
            Readahead::Kernel => format!("k{}", self.k),
            Readahead::Off => format!("k{}.ra_off", self.k),
        }
    }

    pub fn targets(&self, pages: usize) -> Vec<usize> {
        (0..pages).step_by(self.k).collect()
    }
}

/// What one pass of a workload saw.
#[derive(Debug, Clone)]
pub struct MajorPass {
    pub pass: Pass,
    pub accesses: usize,
    /// Pages of the file resident (mincore) just before and after the pass.
    pub resident_before: usize,
    pub resident_after: usize,
    pub pageout_steps: Vec<String>,
    pub sum_ok: bool,
}

impl MajorPass {
    pub fn per_fault_ns(&self) -> Option<f64> {
        (self.pass.faults.major > 0).then(|| self.pass.per(self.pass.faults.major))
    }
    pub fn share_faulted(&self) -> f64 {
        self.pass.faults.major as f64 / self.accesses as f64
    }
    pub fn pages_per_fault(&self) -> Option<f64> {
        (self.pass.faults.major > 0).then(|| {
            (self.resident_after - self.resident_before) as f64 / self.pass.faults.major as f64
        })
    }
}

/// One pass: page out, map afresh, check mincore, touch, count.
pub fn major_pass(
    clock: &yamba_core::Clock,
    file: &ScratchFile,
    w: Workload,
    always_drop: bool,
) -> Result<MajorPass, String> {
    let out = page_out(&file.file, file.bytes, always_drop)?;
    let map = FileMap::new(&file.file, file.bytes, w.readahead)?;
    let resident_before = map.resident_pages()?;
    let targets = w.targets(file.pages);
    // SAFETY: map is a live mapping of the whole file; reads only.
    let pass = unsafe { touch_pass(clock, map.as_ptr() as *mut u8, &targets, false) };
    let resident_after = map.resident_pages()?;
    map.msync_sync()?;
    Ok(MajorPass {
        pass,
        accesses: targets.len(),
        resident_before,
        resident_after,
        pageout_steps: out.steps,
        sum_ok: pass.sum == ScratchFile::expected_sum(&targets),
    })
}

/// The seed's workloads: k = 1, 16, 32, 64, readahead on and off.
pub fn workloads() -> Vec<Workload> {
    let mut v = Vec::new();
    for readahead in [Readahead::Kernel, Readahead::Off] {
        for k in [1, 16, 32, 64] {
            v.push(Workload { k, readahead });
        }
    }
    v
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// Builds the result of one workload from its passes.
pub fn workload_result(ctx: &Ctx, w: Workload, passes: &[MajorPass]) -> BenchResult {
    let mut r = ctx.result(Some(&w.suffix()));
    let ra = match w.readahead {
        Readahead::Kernel => "kernel default (MADV_NORMAL)",
        Readahead::Off => "off (MADV_RANDOM)",
    };
    r.description = format!(
        "major page fault, touching one page in {} with readahead {ra}",
        w.k
    );
    r.param("k", w.k).param("readahead", ra);
    // A pass whose dummy F took a fault (rare: the kernel touching the
    // mapping meanwhile) has no clean F to subtract; it is left out.
    let clean = |p: &&MajorPass| p.pass.dummy_faults.major + p.pass.dummy_faults.minor == 0;
    r.set_observations(
        passes
            .iter()
            .filter(clean)
            .filter_map(|p| p.per_fault_ns())
            .collect(),
    );
    let accesses = passes.first().map_or(0, |p| p.accesses);
    let dummy: Vec<f64> = passes.iter().map(|p| p.pass.dummy_ns).collect();
    let dummy_summary = yamba_stats::Summary::of(&dummy);
    r.method = Some(Method {
        // Kept as counted, even 0 (`Method::direct` would raise 0 to 1).
        iterations: accesses as u64,
        dummy_ns: dummy_summary.as_ref().map(|s| s.median),
        dummy: dummy_summary,
        ..Method::direct(
            accesses as u64,
            0.0,
            0.0,
            0.0,
            format!(
                "{} passes; each observation = (pass − dummy pass) / major faults of the pass",
                passes.len()
            ),
        )
    });
    let most_resident = passes.iter().map(|p| p.resident_before).max().unwrap_or(0);
    r.add_evidence(
        "pages were evicted before the pass (mincore: none of the file resident)",
        "0 pages resident before every pass",
        format!("at most {most_resident} resident"),
        most_resident == 0 && !passes.is_empty(),
    );
    let faults: Vec<u64> = passes.iter().map(|p| p.pass.faults.major).collect();
    match w.readahead {
        Readahead::Off => r.add_evidence(
            "without readahead every access took exactly one major fault (ru_majflt)",
            format!("{accesses} per pass"),
            format!("{faults:?}"),
            faults.iter().all(|&f| f == accesses as u64),
        ),
        // How many accesses find their page already read ahead depends on
        // the kernel's readahead state, so only "some" can be expected;
        // the share and pages per fault are reported, not assumed.
        Readahead::Kernel => r.add_evidence(
            "every pass took major faults (ru_majflt > 0)",
            "> 0 per pass",
            format!("{faults:?}"),
            faults.iter().all(|&f| f > 0),
        ),
    };
    r.add_evidence(
        "every touch read the file's own bytes",
        "sum of known page contents",
        if passes.iter().all(|p| p.sum_ok) {
            "matched in every pass"
        } else {
            "mismatch"
        },
        passes.iter().all(|p| p.sum_ok),
    );
    let n_clean = passes.iter().filter(clean).count();
    r.add_evidence(
        "most passes' dummy F took no fault (the others are left out)",
        format!("> half of {} passes", passes.len()),
        format!("{n_clean} clean"),
        2 * n_clean > passes.len(),
    );
    let share = median(passes.iter().map(|p| p.share_faulted()).collect());
    let ppf = median(passes.iter().filter_map(|p| p.pages_per_fault()).collect());
    let minor_per_access = median(
        passes
            .iter()
            .map(|p| p.pass.faults.minor as f64 / p.accesses as f64)
            .collect(),
    );
    r.extra.insert(
        "verification".into(),
        json!({
            "accesses_per_pass": accesses,
            "major_faults_per_pass": faults,
            "minor_faults_per_pass": passes.iter().map(|p| p.pass.faults.minor).collect::<Vec<_>>(),
            "share_of_accesses_faulted": share,
            "pages_in_per_fault": ppf,
            "minor_faults_per_access": minor_per_access,
            "resident_before": passes.iter().map(|p| p.resident_before).collect::<Vec<_>>(),
            "resident_after": passes.iter().map(|p| p.resident_after).collect::<Vec<_>>(),
            "page_out": passes.first().map(|p| p.pageout_steps.clone()),
        }),
    );
    r
}

fn run_major(ctx: &mut Ctx) -> Result<(), String> {
    let (fs, impossible) = adapter::filesystem(ctx.scratch_dir())?;
    if let Some(why) = impossible {
        let mut r = ctx.result(None);
        r.status = Status::Skipped;
        r.reason = Some(why);
        r.param("filesystem", fs);
        ctx.push(r);
        return Ok(());
    }
    // The file should span several readahead windows, so that readahead
    // workloads take more than one fault per pass.
    let ra_pages = std::fs::File::open(ctx.scratch_dir())
        .ok()
        .and_then(|d| adapter::readahead_kb(&d))
        .map(|kb| kb as usize * 1024 / adapter::page_size());
    let pages: usize = match ctx.integer(FAULT_PAGES.key)? {
        Some(n) => n as usize,
        None if ctx.quick() => 2048,
        None => ra_pages.map_or(8192, |ra| (4 * ra).max(8192)),
    };
    let always_drop = ctx.choice(EVICT.key)? == Some("drop_caches");
    // At least three passes per workload, more while the budget lasts.
    let budget = ctx.plan().budget;
    let file = ScratchFile::create(&ctx.scratch_dir().join("major.dat"), pages, 256)?;
    let clock = ctx.clock();
    let mut table = Vec::new();
    let mut headline = None;
    for w in workloads() {
        let t0 = std::time::Instant::now();
        let mut passes = Vec::new();
        while passes.len() < 3 || (t0.elapsed() < budget && passes.len() < 10) {
            passes.push(major_pass(clock, &file, w, always_drop)?);
        }
        let mut r = workload_result(ctx, w, &passes);
        r.param("file_pages", pages)
            .param("filesystem", &fs)
            .param("device_readahead_pages", ra_pages);
        if w.readahead == Readahead::Kernel && ra_pages.is_some_and(|ra| ra >= pages) {
            r.warn("the file fits in one readahead window: one fault brings in the whole file (use --set fault_pages=N for more)");
        }
        let v = &r.extra["verification"];
        table.push(json!({
            "workload": w.suffix(), "k": w.k,
            "readahead": matches!(w.readahead, Readahead::Kernel),
            "latency_per_fault_ns": r.median(),
            "share_of_accesses_faulted": v["share_of_accesses_faulted"],
            "pages_in_per_fault": v["pages_in_per_fault"],
            "verified": r.evidence.iter().all(|e| e.ok || !e.gating),
        }));
        if w == (Workload {
            k: 1,
            readahead: Readahead::Off,
        }) {
            headline = Some(r.clone());
        }
        ctx.push(r);
    }
    let mut h = headline.ok_or("no k=1 workload")?;
    h.id = ctx.result(None).id;
    h.description = MAJOR.description.to_string();
    h.param("headline", "k=1, readahead off: one page read per fault");
    h.extra.insert("fit".into(), fit(&table));
    h.extra.insert("workloads".into(), json!(table));
    ctx.push(h);
    Ok(())
}

/// Latency per fault against pages in per fault, by least squares, over
/// the verified workloads where every access faulted (as in the seed's
/// Figure 8); over all verified workloads when those are too few.
pub fn fit(table: &[serde_json::Value]) -> serde_json::Value {
    let pick = |all: bool| -> Vec<(f64, f64, String)> {
        table
            .iter()
            .filter(|t| t["verified"].as_bool() == Some(true))
            .filter(|t| all || t["share_of_accesses_faulted"].as_f64() == Some(1.0))
            .filter_map(|t| {
                Some((
                    t["pages_in_per_fault"].as_f64()?,
                    t["latency_per_fault_ns"].as_f64()?,
                    t["workload"].as_str()?.to_string(),
                ))
            })
            .collect()
    };
    let mut pts = pick(false);
    let mut over = "workloads where every access faulted";
    let fit_of = |p: &[(f64, f64, String)]| {
        let x: Vec<f64> = p.iter().map(|q| q.0).collect();
        let y: Vec<f64> = p.iter().map(|q| q.1).collect();
        yamba_stats::linear_fit(&x, &y)
    };
    if fit_of(&pts).is_none() {
        pts = pick(true);
        over = "all verified workloads (too few where every access faulted)";
    }
    match fit_of(&pts) {
        Some(f) => json!({
            "model": "latency_per_fault_ns = slope × pages_in_per_fault + intercept",
            "slope_ns_per_page": f.slope, "intercept_ns": f.intercept,
            "r_squared": f.r_squared, "over": over,
            "points": pts.iter().map(|p| json!({"workload": p.2, "pages_in_per_fault": p.0, "latency_per_fault_ns": p.1})).collect::<Vec<_>>(),
        }),
        None => {
            json!({"error": "fewer than two distinct pages-per-fault values among verified workloads"})
        }
    }
}
