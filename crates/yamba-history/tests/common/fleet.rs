//! A simulated fleet for the fleet view: 50 machines in 3 hardware groups,
//! two runs each, every run the real quick run of
//! `yamba-report/tests/data/quick-both.json` with each result's value
//! scaled by its group's factor and ±1% of deterministic noise; one machine
//! planted 15% slower in fork (both runs), one whose newest run has a new
//! kernel and 20% slower system calls.

#![allow(dead_code)]

use std::path::PathBuf;
use yamba_history::{History, Origin, OriginKind};
use yamba_results::ResultsFile;

pub const FORK_SLOW: &str = "b-07";
pub const KERNEL_MOVED: &str = "c-11";
pub const OLD_KERNEL: &str = "6.18.44-fc-v669";
pub const NEW_KERNEL: &str = "6.19.3-fc-v702";
pub const NEWEST: &str = "2026-11-24T09:00:00Z";

/// (group name, CPU model, online CPUs, memory GiB, value factor, machines).
const GROUPS: [(&str, &str, usize, u64, f64, usize); 3] = [
    ("a", "Intel(R) Xeon(R) Processor", 2, 24, 1.0, 17),
    ("b", "AMD EPYC 7B13", 8, 64, 0.8, 17),
    ("c", "Neoverse-N1", 4, 16, 1.3, 16),
];

/// The real run, its observations dropped (the headline values stay:
/// they are what the fleet reads, and 100 files store faster without).
pub fn base() -> ResultsFile {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../yamba-report/tests/data/quick-both.json");
    let mut f = ResultsFile::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    for r in &mut f.results {
        r.observations.clear();
    }
    f
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

/// The 100 files: (host, file), previous runs first.
pub fn files() -> Vec<(String, ResultsFile)> {
    let base = base();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    for (run, started) in ["2026-11-20T09:00:00Z", NEWEST].iter().enumerate() {
        for (g, cpu, cpus, gib, factor, n) in GROUPS {
            for i in 1..=n {
                let host = format!("{g}-{i:02}");
                let mut f = base.clone();
                f.started = started.to_string();
                f.machine.hostname = host.clone();
                f.machine.cpu_model = cpu.to_string();
                f.machine.online_cpus = cpus;
                // A few MiB either side: the group rounds to the GiB.
                f.machine.memory_bytes = (gib << 30) - (i as u64) * (3 << 20);
                f.machine.kernel = OLD_KERNEL.to_string();
                let newest = run == 1;
                if newest && host == KERNEL_MOVED {
                    f.machine.kernel = NEW_KERNEL.to_string();
                }
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
                out.push((host, f));
            }
        }
    }
    out
}

/// Stores the files; returns how many.
pub fn store(h: &mut History, files: &[(String, ResultsFile)]) -> usize {
    let origin = Origin {
        kind: OriginKind::Import,
        suite: None,
        source: None,
    };
    for (_, f) in files {
        h.save(f, &origin).unwrap();
    }
    files.len()
}

/// Checks the view flags exactly the planted machines, for the planted
/// reasons.
pub fn check(fleet: &yamba_history::Fleet) {
    use yamba_history::FlagKind;
    assert_eq!(fleet.groups.len(), 3, "{}", fleet.text());
    assert_eq!(
        fleet
            .groups
            .iter()
            .map(|g| g.machines.len())
            .collect::<Vec<_>>(),
        vec![17, 17, 16], // AMD, Intel, Neoverse: groups in name order
        "{}",
        fleet.text()
    );
    let mut flags: Vec<(&str, FlagKind, &str)> = fleet
        .flags
        .iter()
        .map(|f| (f.host.as_str(), f.kind, f.result.as_str()))
        .collect();
    flags.sort_by_key(|f| (f.0, f.1 == FlagKind::Moved));
    assert_eq!(
        flags,
        vec![
            (FORK_SLOW, FlagKind::Outlier, "proc.fork.light@hot"),
            (KERNEL_MOVED, FlagKind::Outlier, "cpu.syscall.getppid@hot"),
            (KERNEL_MOVED, FlagKind::Moved, "cpu.syscall.getppid@hot"),
        ],
        "{}",
        fleet.text()
    );
    assert_eq!(fleet.flagged_hosts().len(), 2);
    let fork = fleet.flags.iter().find(|f| f.host == FORK_SLOW).unwrap();
    assert!((fork.change - 0.15).abs() < 0.03, "{}", fork.reason());
    let moved = fleet
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::Moved)
        .unwrap();
    assert!((moved.change - 0.20).abs() < 0.03, "{}", moved.reason());
    assert_eq!(moved.since, NEWEST);
    assert_eq!(
        moved.changes,
        vec![format!("kernel: {OLD_KERNEL} → {NEW_KERNEL}")]
    );
    let text = fleet.text();
    assert!(
        text.contains(&format!("kernel: {OLD_KERNEL} → {NEW_KERNEL}")),
        "{text}"
    );
}
