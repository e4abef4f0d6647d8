//! Results files built in code, for the reading tools' tests.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use yamba_results::clock::{Calibration, ClockInfo, ClockKind};
use yamba_results::units::Unit;
use yamba_results::Base;
use yamba_results::Machine;
use yamba_results::{
    BenchResult, BlockKind, Certainty, Method, MethodKind, Mode, ResultsFile, Series, Status,
};
use yamba_stats::Summary;

pub fn machine() -> Machine {
    Machine {
        hostname: "testhost".into(),
        os: "Linux".into(),
        kernel: "6.1.0-test".into(),
        arch: "x86_64".into(),
        cpu_vendor: "AuthenticAMD".into(),
        cpu_model: "AMD EPYC Test Processor".into(),
        online_cpus: 2,
        memory_bytes: 24 << 30,
        cpu_mhz: Some(2000.0),
        governor: None,
        boost: None,
        hypervisor: Some("KVM".into()),
        caches: vec![],
        page_size: 4096,
        transparent_hugepages: None,
        clocksource: Some("tsc".into()),
        perf_event_paranoid: None,
        vulnerabilities: Default::default(),
        mitigations: None,
        is_root: true,
        ..Default::default()
    }
}

pub fn clock() -> ClockInfo {
    ClockInfo {
        kind: ClockKind::Tsc,
        reason: "invariant TSC".into(),
        tick_ns: 0.5,
        resolution_ns: 10.0,
        calibration: Calibration {
            frequency_hz: 2e9,
            relative_uncertainty: 1e-5,
            reference: "CLOCK_MONOTONIC_RAW".into(),
            windows: 5,
            window_ms: 10.0,
        },
    }
}

pub fn base() -> Base {
    let obs = vec![20.0, 21.0, 20.0, 22.0, 20.0, 20.0];
    Base {
        base_ns: 20.0,
        mean_ns: Some(20.5),
        quantum_ns: Some(1.0),
        base_ticks: 40,
        share_within_2x_min: 1.0,
        summary: Summary::of(&obs).unwrap(),
        observations: obs,
    }
}

/// An ok result with these observations.
pub fn result(id: &str, mode: Mode, unit: Unit, obs: Vec<f64>) -> BenchResult {
    let benchmark = id.split('.').take(3).collect::<Vec<_>>().join(".");
    let area = id.split('.').next().unwrap_or("");
    let mut r = BenchResult::new(id, benchmark, area, unit, mode, "test");
    r.description = format!("test result {id}");
    r.method = Some(Method {
        kind: MethodKind::Loop,
        iterations: 1000,
        unroll: 4,
        ..Method::direct(1000, 0.01, 1.0, 0.5, "precision reached")
    });
    r.set_observations(obs);
    r
}

pub fn file(results: Vec<BenchResult>) -> ResultsFile {
    let mut f = ResultsFile::new(
        vec!["yamba".into(), "run".into()],
        serde_json::json!({"quick": true, "cpu": null, "no_pin": false}),
        machine(),
        clock(),
        base(),
    );
    f.tool.version = "0.1.0".into();
    f.started = "2026-11-23T00:00:00Z".into();
    f.finished = Some("2026-11-23T00:01:00Z".into());
    f.complete = true;
    f.results = results;
    f
}

/// A result measured in one process per element of `processes`, as a
/// precise run pools them: observations concatenated, one block per process.
pub fn blocked(id: &str, mode: Mode, unit: Unit, processes: Vec<Vec<f64>>) -> BenchResult {
    let medians = processes
        .iter()
        .map(|p| Summary::of(p).unwrap().median)
        .collect();
    let sizes = processes.iter().map(Vec::len).collect();
    let mut r = result(id, mode, unit, processes.concat());
    r.certainty = Certainty::from_blocks(BlockKind::Process, medians, sizes, 0.0, vec![]);
    r
}

/// `blocks` processes of `n` timings each around `median`: each process
/// off by a log-normal factor of spread `between` (what varies from run
/// to run), its observations spread by `within` around that.
pub fn processes(
    seed: u64,
    blocks: usize,
    n: usize,
    median: f64,
    between: f64,
    within: f64,
) -> Vec<Vec<f64>> {
    let offsets = lognormal(seed ^ 0x5eed, blocks, 1.0, between);
    offsets
        .iter()
        .enumerate()
        .map(|(i, o)| lognormal(seed * 1000 + i as u64, n, median * o, within))
        .collect()
}

/// `n` timings around `median` with log-normal noise of relative spread
/// `sigma`, reproducible from `seed`.
pub fn lognormal(seed: u64, n: usize, median: f64, sigma: f64) -> Vec<f64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            // Box-Muller.
            let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            median * (sigma * z).exp()
        })
        .collect()
}

/// A file with the shapes every tool must handle: hot and cold modes, a
/// bandwidth, a curve, a skipped and a withheld result.
pub fn sample_file() -> ResultsFile {
    let mut curve = result(
        "mem.latency.curve",
        Mode::Hot,
        Unit::Nanoseconds,
        vec![1.2, 1.3, 1.2],
    );
    curve.series = Some(Series {
        x_label: "working set".into(),
        x_unit: "B".into(),
        y_label: "latency".into(),
        y_unit: "ns".into(),
        log_x: true,
        log_y: true,
        points: (10..=26)
            .map(|k| {
                let x = (1u64 << k) as f64;
                let y = if k < 15 {
                    1.2
                } else if k < 20 {
                    4.0
                } else {
                    80.0
                };
                [x, y]
            })
            .collect(),
    });
    let mut skipped = result(
        "fs.read.remote",
        Mode::Hot,
        Unit::GigabytesPerSecond,
        vec![],
    );
    skipped.status = Status::Skipped;
    skipped.reason = Some("needs a yamba serve agent".into());
    skipped.summary = None;
    let mut withheld = result(
        "mem.pagefault",
        Mode::Cold,
        Unit::Nanoseconds,
        lognormal(9, 20, 900.0, 0.1),
    );
    withheld.add_evidence("every access faulted", "100", "3", false);
    withheld.apply_evidence();
    file(vec![
        result(
            "cpu.syscall.getppid",
            Mode::Hot,
            Unit::Nanoseconds,
            lognormal(1, 40, 100.0, 0.03),
        ),
        result(
            "cpu.syscall.getppid",
            Mode::Cold,
            Unit::Nanoseconds,
            lognormal(2, 40, 1500.0, 0.1),
        ),
        result(
            "cpu.call.args3",
            Mode::Hot,
            Unit::Nanoseconds,
            lognormal(3, 30, 1.5, 0.02),
        ),
        result(
            "mem.bandwidth.read",
            Mode::Hot,
            Unit::GigabytesPerSecond,
            lognormal(4, 25, 12.0, 0.05),
        ),
        curve,
        skipped,
        withheld,
    ])
}
