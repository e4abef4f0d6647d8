//! Results files to store: a real one written by yamba 0.1.0 (the results
//! crate's test file), and variations of it with observations that are
//! hard to carry exactly.

#![allow(dead_code)]

use std::path::PathBuf;
use yamba_results::{BenchResult, ResultsFile};

pub fn real_run() -> ResultsFile {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../yamba-results/tests/files/run-v0.1.0.json");
    ResultsFile::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Values a decimal round trip gets wrong when done carelessly: the
/// smallest subnormal, values next to powers of ten, 0.1 + 0.2, -0.0, a
/// huge one (not f64::MAX: the summary's variance would overflow to
/// infinity, which JSON cannot carry in any file), and a run of k·c/n like
/// a clock's conversions.
pub fn awkward_observations(n: usize, seed: u64) -> Vec<f64> {
    let mut v = vec![
        f64::MIN_POSITIVE,
        5e-324,
        0.1 + 0.2,
        -0.0,
        1.797_693_134_862_315_7e150,
        1e23,
        9007199254740993.0,
        1.0 / 3.0,
        std::f64::consts::PI * 1e-9,
    ];
    let ns_per_tick = 1e9 / 2_394_567_123.0;
    let mut x = seed | 1;
    while v.len() < n {
        // xorshift: reproducible ticks around 200 per operation
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let ticks = 200_000 + (x % 5000);
        v.push(ticks as f64 * ns_per_tick / 1000.0);
    }
    v
}

/// The real run, started at `started`, on `kernel`, with its getppid
/// result's observations (and so its median) scaled by `scale`, and one
/// result holding awkward observations.
pub fn variant(started: &str, kernel: &str, scale: f64) -> ResultsFile {
    let mut f = real_run();
    f.started = started.to_string();
    f.machine.kernel = kernel.to_string();
    for r in f.results.iter_mut() {
        if r.id == "cpu.syscall.getppid" {
            let obs: Vec<f64> = r.observations.iter().map(|v| v * scale).collect();
            r.set_observations(obs);
        }
    }
    let mut odd: BenchResult = f.results[0].clone();
    odd.id = "testing.awkward".into();
    odd.benchmark = "testing.awkward".into();
    odd.area = "testing".into();
    odd.certainty = None;
    odd.set_observations(awkward_observations(5000, scale.to_bits()));
    f.results.push(odd);
    f
}

/// The file as JSON text: two files are the same file when these match.
pub fn text(f: &ResultsFile) -> String {
    serde_json::to_string(f).unwrap()
}

/// Every observation of every result, bit for bit.
pub fn observation_bits(f: &ResultsFile) -> Vec<Vec<u64>> {
    f.results
        .iter()
        .map(|r| r.observations.iter().map(|v| v.to_bits()).collect())
        .collect()
}
