//! Where a run's time went (`yamba run --timings`): per benchmark, summed
//! over its blocks — starting its processes, the harness's calibration,
//! code placement, warm-up and sampling, and the benchmark's own work
//! (setup, verification, curves it times itself) — and the run's own time
//! beside them (clock and BASE, the noise check, saving the file).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use yamba_results::{Phases, ResultsFile};

/// One benchmark's time over all its blocks, in seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchTime {
    pub benchmark: String,
    pub mode: String,
    pub blocks: usize,
    /// Wall time of its processes, from launch to results.
    pub wall_s: f64,
    /// Starting each process and handing the results back.
    pub start_s: f64,
    /// The harness, over all the benchmark's quantities.
    pub phases: Phases,
    /// The rest of the time inside its processes.
    pub own_s: f64,
}

/// The benchmarks' times, costliest first.
pub fn bench_times(f: &ResultsFile) -> Vec<BenchTime> {
    let mut by: BTreeMap<(String, String), BenchTime> = BTreeMap::new();
    let mut counted = std::collections::BTreeSet::new();
    for r in &f.results {
        let key = (r.benchmark.clone(), r.mode.as_str().to_string());
        let t = by.entry(key.clone()).or_insert_with(|| BenchTime {
            benchmark: key.0.clone(),
            mode: key.1.clone(),
            ..BenchTime::default()
        });
        if let Some(p) = r.method.as_ref().and_then(|m| m.phases) {
            t.phases = t.phases.plus(p);
        }
        // Every result of one benchmark shares its processes' accounting:
        // count it once.
        if counted.insert(key) {
            if let Some(a) = &r.accounting {
                t.wall_s = a.wall_s;
                t.start_s = a.bench_s.map_or(0.0, |b| (a.wall_s - b).max(0.0));
            }
            t.blocks = r
                .params
                .get("repetitions")
                .and_then(|v| v.as_u64())
                .unwrap_or(1) as usize;
        }
    }
    let mut out: Vec<BenchTime> = by
        .into_values()
        .map(|mut t| {
            t.own_s = (t.wall_s - t.start_s - t.phases.total_s()).max(0.0);
            t
        })
        .collect();
    out.sort_by(|a, b| b.wall_s.total_cmp(&a.wall_s));
    out
}

/// The table `yamba run --timings` prints.
pub fn table(f: &ResultsFile) -> String {
    let times = bench_times(f);
    let mut out = String::new();
    let benches: f64 = times.iter().map(|t| t.wall_s).sum();
    let sum = |g: fn(&BenchTime) -> f64| times.iter().map(g).sum::<f64>();
    let _ = writeln!(
        out,
        "where the time went (seconds, each benchmark's blocks summed):"
    );
    let _ = writeln!(
        out,
        "{:<32} {:>6} {:>8} {:>7} {:>9} {:>7} {:>8} {:>8} {:>8}",
        "benchmark", "blocks", "wall", "start", "calibrate", "place", "warm-up", "sample", "own"
    );
    let row = |out: &mut String, name: &str, blocks: String, t: &BenchTime| {
        let _ = writeln!(
            out,
            "{:<32} {:>6} {:>8.2} {:>7.2} {:>9.2} {:>7.3} {:>8.2} {:>8.2} {:>8.2}",
            name,
            blocks,
            t.wall_s,
            t.start_s,
            t.phases.calibrate_s,
            t.phases.place_s,
            t.phases.warmup_s,
            t.phases.sample_s,
            t.own_s
        );
    };
    for t in &times {
        let name = if t.mode == "hot" {
            t.benchmark.clone()
        } else {
            format!("{} ({})", t.benchmark, t.mode)
        };
        row(&mut out, &name, t.blocks.to_string(), t);
    }
    let all = BenchTime {
        wall_s: benches,
        start_s: sum(|t| t.start_s),
        phases: times
            .iter()
            .fold(Phases::default(), |a, t| a.plus(t.phases)),
        own_s: sum(|t| t.own_s),
        ..BenchTime::default()
    };
    row(
        &mut out,
        "all benchmarks",
        times.iter().map(|t| t.blocks).sum::<usize>().to_string(),
        &all,
    );
    if let Some(r) = &f.timings {
        let _ = writeln!(
            out,
            "the run itself: clock, BASE and machine {:.2} s; noise check {:.2} s; pooling and saving the file {:.2} s; \
             earlier runs from the history {:.2} s; \
             {} blocks, {} of them extra (the two-stage rule's second stage: {:.1} s of {:.1} s)",
            r.prepare_s,
            r.noise_s,
            r.saving_s,
            r.before_finish_s,
            r.blocks,
            r.extra_blocks,
            r.extra_s,
            r.pilot_s + r.extra_s
        );
    }
    out
}
