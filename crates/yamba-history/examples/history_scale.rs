//! The store at fleet scale (issue 29 §4), driven by `bench/history-scale.sh`.
//!
//! `fill STORE BASE.json RUNS MACHINES`: stores RUNS runs derived from the
//! real results file BASE over MACHINES machines (`m-00`…) in three hardware
//! groups, one run per machine per hour, every headline scaled by its
//! group's factor and ±1% of deterministic noise; planted: `m-07` is 15%
//! slower in fork in every run, and `m-11`'s newest run has a new kernel
//! and 20% slower system calls (the fleet view must flag exactly those).
//!
//! `size STORE FILE COPIES`: stores COPIES copies of FILE (each its own
//! start time) into an empty STORE and prints the bytes the store grew by
//! per run: SQLite's file (checkpointed), PostgreSQL's
//! `pg_total_relation_size` of both tables (heap, TOAST and indexes).

use std::path::Path;
use yamba_history::{History, Origin, OriginKind, StoreSpec};
use yamba_results::{rfc3339, ResultsFile};

const GROUPS: [(&str, usize, u64, f64); 3] = [
    ("Intel(R) Xeon(R) Processor", 2, 24, 1.0),
    ("AMD EPYC 7B13", 8, 64, 0.8),
    ("Neoverse-N1", 4, 16, 1.3),
];
pub const FORK_SLOW: &str = "m-07";
pub const KERNEL_MOVED: &str = "m-11";
/// 2026-11-01T00:00:00Z: the first run's start.
const T0: u64 = 1_793_491_200;

fn origin() -> Origin {
    Origin {
        kind: OriginKind::Import,
        suite: None,
        source: None,
    }
}

/// xorshift64: reproducible noise.
struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Every result's headline value (and interval) times `factor(id)`.
fn scale(f: &mut ResultsFile, mut factor: impl FnMut(&str) -> f64) {
    for r in &mut f.results {
        let k = factor(&r.id);
        if let Some(c) = &mut r.certainty {
            c.estimate.estimate *= k;
            if let Some(ci) = &mut c.estimate.ci {
                ci.lo *= k;
                ci.hi *= k;
            }
        }
        if let Some(s) = &mut r.summary {
            s.median *= k;
            if let Some(ci) = &mut s.median_ci {
                ci.lo *= k;
                ci.hi *= k;
            }
        }
    }
}

fn fill(store: &str, base: &Path, runs: usize, machines: usize) -> Result<(), String> {
    let base = ResultsFile::read(base).map_err(|e| e.to_string())?;
    let mut h = History::open(&StoreSpec::parse(store)).map_err(|e| e.to_string())?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let per_machine = runs.div_ceil(machines);
    let t = std::time::Instant::now();
    let mut stored = 0;
    for round in 0..per_machine {
        for m in 0..machines {
            if stored == runs {
                break;
            }
            let (cpu, cpus, gib, factor) = GROUPS[m % GROUPS.len()];
            let host = format!("m-{m:02}");
            let newest = round + 1 == per_machine;
            let mut f = base.clone();
            f.started = rfc3339(T0 + (round * 3600 + m * 60) as u64);
            f.machine.hostname = host.clone();
            f.machine.cpu_model = cpu.to_string();
            f.machine.online_cpus = cpus;
            f.machine.memory_bytes = (gib << 30) - (m as u64) * (3 << 20);
            f.machine.kernel = if newest && host == KERNEL_MOVED {
                "6.19.3-fc-v702".into()
            } else {
                "6.18.44-fc-v669".into()
            };
            scale(&mut f, |id| {
                let mut k = factor * (1.0 + 0.02 * (rng.unit() - 0.5));
                if host == FORK_SLOW && id == "proc.fork.light" {
                    k *= 1.15;
                }
                if newest && host == KERNEL_MOVED && id.starts_with("cpu.syscall.getppid") {
                    k *= 1.20;
                }
                k
            });
            h.save(&f, &origin()).map_err(|e| e.to_string())?;
            stored += 1;
            if stored % 1000 == 0 {
                eprintln!("{stored} runs stored ({:.0} s)", t.elapsed().as_secs_f64());
            }
        }
    }
    eprintln!(
        "{stored} runs over {machines} machines stored in {} ({:.0} s)",
        h.location(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The store's size in bytes: SQLite's file after a checkpoint, or the
/// two tables' total relation size in PostgreSQL.
fn store_bytes(spec: &StoreSpec) -> Result<u64, String> {
    match spec {
        StoreSpec::Sqlite(p) => {
            let c = rusqlite::Connection::open(p).map_err(|e| e.to_string())?;
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(|e| e.to_string())?;
            Ok(std::fs::metadata(p).map_err(|e| e.to_string())?.len())
        }
        StoreSpec::Postgres(url) => {
            let mut c =
                postgres::Client::connect(url, postgres::NoTls).map_err(|e| e.to_string())?;
            let row = c
                .query_one(
                    "SELECT pg_total_relation_size('runs') + pg_total_relation_size('results')",
                    &[],
                )
                .map_err(|e| e.to_string())?;
            Ok(row.get::<_, i64>(0) as u64)
        }
    }
}

fn size(store: &str, file: &Path, copies: usize) -> Result<(), String> {
    let spec = StoreSpec::parse(store);
    let mut f = ResultsFile::read(file).map_err(|e| e.to_string())?;
    let observations: usize = f.results.iter().map(|r| r.observations.len()).sum();
    let mut h = History::open(&spec).map_err(|e| e.to_string())?;
    let before = store_bytes(&spec)?;
    for i in 0..copies {
        f.started = rfc3339(T0 + i as u64 * 3600);
        h.save(&f, &origin()).map_err(|e| e.to_string())?;
    }
    drop(h);
    let after = store_bytes(&spec)?;
    let per_run = (after - before) as f64 / copies as f64;
    println!(
        "{}: {} results, {observations} observations, {} bytes as JSON; stored: {:.0} bytes per run ({:.2} per observation) in {}",
        file.display(),
        f.results.len(),
        serde_json::to_string(&f).map_err(|e| e.to_string())?.len(),
        per_run,
        per_run / observations.max(1) as f64,
        store
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let done = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["fill", store, base, runs, machines] => match (runs.parse(), machines.parse()) {
            (Ok(r), Ok(m)) if m > 0 => fill(store, Path::new(base), r, m),
            _ => Err("RUNS and MACHINES are positive numbers".into()),
        },
        ["size", store, file, copies] => match copies.parse() {
            Ok(c) if c > 0 => size(store, Path::new(file), c),
            _ => Err("COPIES is a positive number".into()),
        },
        _ => Err(
            "usage: history_scale fill STORE BASE.json RUNS MACHINES | size STORE FILE COPIES"
                .into(),
        ),
    };
    if let Err(e) = done {
        eprintln!("history_scale: {e}");
        std::process::exit(2);
    }
}
