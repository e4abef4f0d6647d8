//! A simulated fleet for the fleet view: 50 machines in 3 hardware groups,
//! [`RUNS`] runs each (one a day), every run the real quick run of
//! `yamba-report/tests/data/quick-both.json` (its headline primitives'
//! results) with each result's value scaled by its group's factor and ±1%
//! of deterministic noise. Planted:
//!
//! * [`FORK_SLOW`]: 15% slower in fork, every run (outside its group);
//! * [`KERNEL_MOVED`]: its newest run has a new kernel and 20% slower
//!   system calls (outside its group, and moved since the newest run);
//! * [`STEPPED`]: 15% slower pipe round trips from run [`STEP`] on (three
//!   runs before the newest), with a new kernel at that run, and a new
//!   microcode two runs later that changed nothing: moved since `STEP`,
//!   the kernel (only) changed at the step. Its newest two runs are both
//!   at the new level, so judged from the previous run it is no move;
//! * [`NOISY`]: its previous run alone 12% slower in signals, its newest
//!   back at its level: no move (judged from the previous run alone, one).
//!
//! The noise is bounded (±1%), so no other machine can be flagged.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use yamba_history::fleet::{move_bound, HEADLINES, HISTORY_RUNS};
use yamba_history::{FlagKind, Fleet, History, Origin, OriginKind, RunId, Saved};
use yamba_results::ResultsFile;

pub const FORK_SLOW: &str = "b-07";
pub const KERNEL_MOVED: &str = "c-11";
pub const OLD_KERNEL: &str = "6.18.44-fc-v669";
pub const NEW_KERNEL: &str = "6.19.3-fc-v702";
pub const STEPPED: &str = "a-05";
pub const STEP_RESULT: &str = "ipc.rtt.pipe.same_cpu@hot";
pub const STEP_KERNEL: &str = "6.19.1-fc-v690";
pub const NOISY: &str = "b-03";
pub const NOISY_RESULT: &str = "signal.self@hot";
/// Runs per machine: as many as the fleet view reads ([`HISTORY_RUNS`]).
pub const RUNS: usize = 8;
/// The runs' starts, oldest first, one a day.
pub const STARTS: [&str; RUNS] = [
    "2026-11-17T09:00:00Z",
    "2026-11-18T09:00:00Z",
    "2026-11-19T09:00:00Z",
    "2026-11-20T09:00:00Z",
    "2026-11-21T09:00:00Z",
    "2026-11-22T09:00:00Z",
    "2026-11-23T09:00:00Z",
    "2026-11-24T09:00:00Z",
];
pub const NEWEST: &str = STARTS[RUNS - 1];
/// [`STEPPED`]'s first run at its new level: three runs before the newest.
pub const STEP: usize = RUNS - 4;

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

/// The 400 files: (host, file), older runs first.
pub fn files() -> Vec<(String, ResultsFile)> {
    // Only the headline primitives' results: all the view reads, and 400
    // runs of them store in a fraction of the time of 400 whole runs.
    let mut base = base();
    base.results
        .retain(|r| HEADLINES.iter().any(|h| h.ids.contains(&r.id.as_str())));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    for (run, started) in STARTS.iter().enumerate() {
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
                let newest = run == RUNS - 1;
                if newest && host == KERNEL_MOVED {
                    f.machine.kernel = NEW_KERNEL.to_string();
                }
                let stepped = host == STEPPED && run >= STEP;
                if stepped {
                    f.machine.kernel = STEP_KERNEL.to_string();
                }
                if host == STEPPED && run >= RUNS - 2 {
                    f.machine.microcode = Some("0x2".to_string());
                }
                let noisy = host == NOISY && run == RUNS - 2;
                scale(&mut f, |id| {
                    let mut k = factor * (1.0 + 0.02 * (rng.unit() - 0.5));
                    if host == FORK_SLOW && id == "proc.fork.light" {
                        k *= 1.15;
                    }
                    if newest && host == KERNEL_MOVED && id.starts_with("cpu.syscall.getppid") {
                        k *= 1.20;
                    }
                    if stepped && STEP_RESULT.starts_with(&format!("{id}@")) {
                        k *= 1.15;
                    }
                    if noisy && NOISY_RESULT.starts_with(&format!("{id}@")) {
                        k *= 1.12;
                    }
                    k
                });
                out.push((host, f));
            }
        }
    }
    out
}

/// The stored runs' ids by (host, start).
pub type Runs = BTreeMap<(String, String), RunId>;

/// Stores the files, each as a new run.
pub fn store(h: &mut History, files: &[(String, ResultsFile)]) -> Runs {
    let origin = Origin {
        kind: OriginKind::Import,
        suite: None,
        source: None,
    };
    let mut runs = Runs::new();
    for (host, f) in files {
        let Saved::New(id) = h.save(f, &origin).unwrap() else {
            panic!("{host} {}: stored before", f.started)
        };
        runs.insert((host.clone(), f.started.clone()), id);
    }
    runs
}

/// The id of `host`'s run started at `STARTS[i]`.
pub fn id(runs: &Runs, host: &str, i: usize) -> RunId {
    runs[&(host.to_string(), STARTS[i].to_string())]
}

/// Checks the view flags exactly the planted machines, for the planted
/// reasons, with each move's step, previous run and changes.
pub fn check(fleet: &Fleet, runs: &Runs) {
    assert_eq!(
        HISTORY_RUNS, RUNS,
        "each machine has as many runs as are read"
    );
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
    for m in fleet.groups.iter().flat_map(|g| &g.machines) {
        assert_eq!(m.runs, RUNS, "{}", m.host);
        assert_eq!(m.run, id(runs, &m.host, RUNS - 1), "{}", m.host);
        assert_eq!(m.previous, Some(id(runs, &m.host, RUNS - 2)), "{}", m.host);
    }
    let mut flags: Vec<(&str, FlagKind, &str)> = fleet
        .flags
        .iter()
        .map(|f| (f.host.as_str(), f.kind, f.result.as_str()))
        .collect();
    flags.sort_by_key(|f| (f.0, f.1 == FlagKind::Moved));
    // NOISY is not there: its one noisy run is not a move.
    assert_eq!(
        flags,
        vec![
            (STEPPED, FlagKind::Outlier, STEP_RESULT),
            (STEPPED, FlagKind::Moved, STEP_RESULT),
            (FORK_SLOW, FlagKind::Outlier, "proc.fork.light@hot"),
            (KERNEL_MOVED, FlagKind::Outlier, "cpu.syscall.getppid@hot"),
            (KERNEL_MOVED, FlagKind::Moved, "cpu.syscall.getppid@hot"),
        ],
        "{}",
        fleet.text()
    );
    assert_eq!(fleet.flagged_hosts().len(), 3);
    let fork = fleet.flags.iter().find(|f| f.host == FORK_SLOW).unwrap();
    assert!((fork.change - 0.15).abs() < 0.03, "{}", fork.reason());
    let moved = |host: &str| {
        fleet
            .flags
            .iter()
            .find(|f| f.kind == FlagKind::Moved && f.host == host)
            .unwrap()
    };
    check_move(moved(KERNEL_MOVED), runs, 0.20, RUNS - 1, NEW_KERNEL);
    check_move(moved(STEPPED), runs, 0.15, STEP, STEP_KERNEL);
    let text = fleet.text();
    for f in &fleet.flags {
        assert!(text.contains(&f.reason()), "{text}");
    }
}

/// A move of `change` whose new level started at run `step`, from the run
/// before, the kernel (and nothing else) changed between the two; its
/// level the median of all its earlier runs.
pub fn check_move(
    f: &yamba_history::fleet::Flag,
    runs: &Runs,
    change: f64,
    step: usize,
    kernel: &str,
) {
    let why = f.reason();
    assert!((f.change - change).abs() < 0.03, "{why}");
    assert_eq!(f.since, STARTS[step], "{why}");
    assert_eq!(f.run, id(runs, &f.host, step), "{why}");
    assert_eq!(f.previous, Some(id(runs, &f.host, step - 1)), "{why}");
    assert_eq!(f.runs_before, RUNS - 1, "{why}");
    assert_eq!(
        f.changes,
        vec![format!("kernel: {OLD_KERNEL} → {kernel}")],
        "{why}"
    );
    assert!(
        why.contains(&format!("since run @{} of {}", f.run, f.since)),
        "{why}"
    );
}

/// The moves the rule this view replaced would flag: newest against
/// previous run, bound from the view's own group spread (or the floor).
pub fn two_newest_moves(h: &mut History, fleet: &Fleet) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for g in &fleet.groups {
        for m in &g.machines {
            let Some(previous) = m.previous else { continue };
            let (new, old) = (h.headlines(m.run).unwrap(), h.headlines(previous).unwrap());
            for p in &g.primitives {
                let b = move_bound(p.bound.map(|_| p.spread));
                if let (Some(v), Some(w)) = (new.get(&p.result), old.get(&p.result)) {
                    if (v / w - 1.0).abs() > b {
                        out.push((m.host.clone(), p.result.clone()));
                    }
                }
            }
        }
    }
    out
}
