//! The effective last-level cache, and the working-set sizes it implies.
//!
//! sysfs gives the LLC the hardware (or the hypervisor) claims: 480 MiB on
//! an Intel VM whose chase leaves the LLC near 16 MiB, 32 MiB on a Zen 4
//! tenant that gets 4–6 MiB of it. A curve that goes to 8× sysfs's figure
//! and bandwidth arrays of 8× it (3.8 GiB each there) measure nothing
//! more and cost memory and minutes. [`probe`] finds the effective LLC
//! with a short chase on huge pages (base pages visited page by page where
//! there are none, so TLB misses stay rare): the working set where the
//! latency crosses the midpoint between the LLC's and memory's, as the
//! curve does (`plateau::capacity`), up to 2× sysfs's LLC or 256 MiB. [`Sizing`] bounds the defaults by it
//! and by MemAvailable, and says how in the results' params.
//!
//! One short pass can miss: a neighbour in a shared LLC makes the first
//! size read as slow as memory, and a curve that never doubles looks like
//! one that never left the LLC — whose answer, sysfs's figure, is the
//! expensive one (on an Intel Xeon guest, 260 MiB: bandwidth arrays of
//! 2 GiB, one benchmark's block 42 s instead of 3, in one process of a run
//! whose others sized from 12 MiB). So a pass that finds no crossing is
//! followed by up to two more, each size keeping its lowest reading (a
//! disturbance only adds time to a chase). With a neighbour busy for
//! minutes, every pass can miss: memory's latency from the smallest size
//! on (132–159 ns from 4 MiB to 256 MiB, three passes alike), or a rise
//! too gradual for the midpoint rule (75 ns at 4 MiB, 140 at 256). That
//! is not a curve that never left the LLC, and sysfs's 260 MiB made one
//! precise run's `mem.latency` curves 36 s each and its copy 32 s. Nor is
//! it a tiny LLC: the share comes back within seconds, and copy arrays of
//! 32 MiB (the floor) then read 20–25 GB/s against 11–16 at 50–60 MiB and
//! 11.8 at 2 GiB. So when the largest size read as memory (≥ 80 ns) and
//! no crossing was found, the LLC is taken as an eighth of that size: 8×
//! it, the bandwidth arrays, is a working set the probe saw come from
//! memory.
//!
//! A run probes once: the first process of a memory benchmark that asks
//! (`Sizing::for_run`) leaves its curve among the run's facts
//! (`yamba_core::memo`) and every later block of every memory benchmark
//! sizes from it, so the blocks of one quantity measure the same working
//! set and the probe's cost is paid once.

use super::adapter::{self, Pages};
use super::chase::{Chain, Order};
use super::plateau::capacity;
use serde_json::json;
use std::time::Duration;
use yamba_core::harness::Plan;
use yamba_core::memo::Source;
use yamba_core::{Clock, Ctx, Machine};

/// What the probe found.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Probe {
    /// Working set where half the loads still hit the LLC, in bytes.
    pub effective_bytes: Option<f64>,
    /// (bytes, ns) of every size probed: the lower reading of the passes.
    pub points: Vec<[f64; 2]>,
    pub pages: String,
    /// Passes over the sizes: more than one when the first found no
    /// crossing.
    pub passes: usize,
}

/// The largest working set the probe looks at: twice sysfs's LLC, at most
/// 256 MiB and an eighth of the memory available.
fn probe_ceiling(machine: &Machine) -> usize {
    let llc = machine.llc_bytes() as usize;
    (2 * llc)
        .min(256 << 20)
        .min(mem_available(machine) / 8)
        .max(8 << 20)
}

/// MemAvailable, or the machine's memory when the kernel does not say.
pub fn mem_available(machine: &Machine) -> usize {
    yamba_core::machine::meminfo_kib("MemAvailable")
        .map(|k| k * 1024)
        .unwrap_or(machine.memory_bytes) as usize
}

/// A short chase from past the level below the LLC to [`probe_ceiling`],
/// doubling, each size warmed by a trip round its cycle (bounded); about a
/// second.
pub fn probe(clock: &Clock, machine: &Machine) -> Probe {
    let huge = adapter::thp_unavailable(machine.transparent_hugepages.as_deref()).is_none();
    let (pages, order, name) = if huge {
        (Pages::Huge, Order::Random, "2 MiB pages, random order")
    } else {
        (Pages::Base, Order::Page, "base pages, page by page")
    };
    let llc_level = machine
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.level)
        .max()
        .unwrap_or(0);
    let below = llc_level
        .checked_sub(1)
        .and_then(|l| machine.cache_bytes(l))
        .unwrap_or(256 << 10) as usize;
    let ceiling = probe_ceiling(machine);
    // Every size's chain is built once and kept for the further passes:
    // building one is the probe's cost (a 256 MiB chain took 0.2–2.2 s on
    // an Intel Xeon guest, as the host backed its pages or did not), its
    // timing 30–50 ms. All of them together stay within a quarter of
    // MemAvailable ([`probe_ceiling`]).
    let mut chains = Vec::new();
    let mut bytes = (2 * below).max(1 << 20);
    while bytes <= ceiling {
        let Ok(chain) = Chain::new(bytes, 64, order, pages, 0x11C + bytes as u64) else {
            break;
        };
        chains.push((bytes, chain));
        bytes *= 2;
    }
    let pass = || {
        let mut plan = Plan::quick();
        plan.budget = Duration::from_millis(8);
        plan.min_observation_ns = 50_000.0;
        plan.min_observations = 3;
        let mut points = Vec::new();
        for (bytes, chain) in &chains {
            // Warm: the caches must hold what they can of this working set.
            plan.warmup_ns = (chain.elements as f64 * 200.0).clamp(2e6, 40e6);
            if let Some(s) = chain.measure(clock, &plan).summary() {
                points.push([*bytes as f64, s.median]);
            }
        }
        points
    };
    let (points, passes) = settle(pass(), pass);
    Probe {
        effective_bytes: effective(&points),
        points,
        pages: name.into(),
        passes,
    }
}

/// A load that takes this long on average came from memory: no cache
/// level of a machine this runs on takes 80 ns (an Intel Xeon guest's
/// LLC read 35–50 ns calm and up to 107 with a busy neighbour, its memory
/// 130–170; an AMD EPYC's L3 10–15, its memory 100–120).
const MEMORY_NS: f64 = 80.0;

impl Probe {
    /// No crossing, yet the largest size read as memory: the curve left
    /// the LLC before its smallest size, or too gradually for the midpoint
    /// rule (75 ns at 4 MiB and 140 at 256 on the Intel guest) — not a
    /// curve that never left the LLC.
    pub fn memory_without_crossing(&self) -> bool {
        self.effective_bytes.is_none() && self.points.last().is_some_and(|p| p[1] >= MEMORY_NS)
    }
}

/// The most passes the probe makes over its sizes.
const PROBE_PASSES: usize = 3;

/// The probe's curve and how many passes made it: `first` alone when it
/// finds a crossing, else each size's lowest reading over `first` and
/// further passes, until one finds it or [`PROBE_PASSES`] were made.
fn settle(
    first: Vec<[f64; 2]>,
    mut again: impl FnMut() -> Vec<[f64; 2]>,
) -> (Vec<[f64; 2]>, usize) {
    let mut points = first;
    let mut passes = 1;
    while effective(&points).is_none() && passes < PROBE_PASSES {
        let next = again();
        for p in &mut points {
            if let Some(q) = next.iter().find(|q| q[0] == p[0]) {
                p[1] = p[1].min(q[1]);
            }
        }
        passes += 1;
    }
    (points, passes)
}

/// Where a probe curve crosses the midpoint between its first point (the
/// LLC) and its last (memory), when the last is clearly memory (≥ 2× the
/// first); `None` when the curve never left the LLC.
pub fn effective(points: &[[f64; 2]]) -> Option<f64> {
    let (first, last) = (points.first()?[1], points.last()?[1]);
    if points.len() < 3 || last < 2.0 * first {
        return None;
    }
    capacity(points, 0, first, last)
}

/// Default working-set sizes for a run, bounded by the effective LLC and
/// MemAvailable.
#[derive(Debug, Clone)]
pub struct Sizing {
    pub sysfs_llc: u64,
    pub probe: Probe,
    /// The LLC the defaults are scaled from ([`Sizing::from_probe`]).
    pub llc: usize,
    pub mem_available: usize,
    /// Whether this process probed or an earlier one of the run did.
    pub source: Source,
}

/// Where the LLC a run's sizes scale from came from ([`Sizing::basis`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlcBasis {
    /// Where the probe's chase crossed over.
    Effective,
    /// An eighth of the largest size probed: the chase reached memory
    /// without a crossing.
    Probed,
    /// The hardware's size, from sysfs.
    Sysfs,
}

impl LlcBasis {
    /// What the basis means, for a result's params.
    pub fn explain(self) -> &'static str {
        match self {
            LlcBasis::Effective => "effective: where a short chase crosses halfway from the LLC's latency to memory's (measured, not the hardware's size)",
            LlcBasis::Probed => "probed: the chase reached memory without a crossing; an eighth of its largest size, so that 8× it is a working set seen coming from memory",
            LlcBasis::Sysfs => "sysfs: the probe found no smaller LLC than the hardware's (its chase never left the LLC, or crossed over beyond sysfs's size)",
        }
    }

    /// A few words for evidence.
    pub fn short(self) -> &'static str {
        match self {
            LlcBasis::Effective | LlcBasis::Probed => "the run's effective LLC, probed",
            LlcBasis::Sysfs => "sysfs's LLC",
        }
    }
}

/// The LLC the probe's curve gives, and how (module doc): none when the
/// chase never left the LLC.
fn probed_llc(probe: &Probe) -> Option<(usize, LlcBasis)> {
    match (probe.effective_bytes, probe.points.last()) {
        (Some(e), _) => Some((e as usize, LlcBasis::Effective)),
        (None, Some(&[largest, _])) if probe.memory_without_crossing() => {
            Some((largest as usize / 8, LlcBasis::Probed))
        }
        _ => None,
    }
}

/// The name of the run's probe among its facts (`yamba_core::memo`).
const RUN_FACT: &str = "mem.llc.probe";

impl Sizing {
    /// Probes in this process.
    pub fn new(clock: &Clock, machine: &Machine) -> Sizing {
        Sizing::from_probe(
            probe(clock, machine),
            machine.llc_bytes(),
            mem_available(machine),
        )
    }

    /// The run's probe: measured by the first process of the run that
    /// asks, reused by the others, so every block of every memory
    /// benchmark sizes from one curve (a size that moved between blocks
    /// would put working sets, not noise, in the interval; and the probe
    /// costs 0.3–3 s a process). MemAvailable is this process's own.
    pub fn for_run(ctx: &Ctx) -> Sizing {
        let (probe, source) = ctx.run_fact(RUN_FACT, || probe(ctx.clock(), ctx.machine()));
        Sizing {
            source,
            ..Sizing::from_probe(
                probe,
                ctx.machine().llc_bytes(),
                mem_available(ctx.machine()),
            )
        }
    }

    /// The LLC the defaults scale from: where the probe's curve crosses
    /// over; when it reached memory without a crossing, an eighth of the
    /// largest size probed, so that 8× it is a working set the probe saw
    /// come from memory (not the smallest size: the guest's share of the
    /// LLC moves within seconds, see the module doc); sysfs's figure when
    /// the curve never left the LLC.
    pub fn from_probe(probe: Probe, sysfs_llc: u64, mem_available: usize) -> Sizing {
        let llc = probed_llc(&probe)
            .map_or(sysfs_llc as usize, |(bytes, _)| bytes)
            .min(sysfs_llc as usize);
        Sizing {
            sysfs_llc,
            llc,
            mem_available,
            probe,
            source: Source::Measured,
        }
    }

    /// Where [`Sizing::llc`] came from: sysfs's figure where the probe gave
    /// none or a larger one.
    pub fn basis(&self) -> LlcBasis {
        match probed_llc(&self.probe) {
            Some((bytes, basis)) if bytes as u64 <= self.sysfs_llc => basis,
            _ => LlcBasis::Sysfs,
        }
    }

    /// `times` × the LLC, at least `floor`, at most `share` of MemAvailable.
    pub fn bounded(&self, times: usize, floor: usize, share: f64) -> usize {
        (times * self.llc)
            .max(floor)
            .min((self.mem_available as f64 * share) as usize)
            .max(1 << 20)
    }

    /// What the sizes were scaled from, for a result's params.
    pub fn describe(&self, rule: &str) -> serde_json::Value {
        json!({
            "rule": rule,
            "llc_bytes_used": self.llc,
            "llc_basis": self.basis().explain(),
            "sysfs_llc_bytes": self.sysfs_llc,
            "mem_available_bytes": self.mem_available,
            "probe": {
                "pages": self.probe.pages,
                "points": self.probe.points,
                "passes": self.probe.passes,
                "source": self.source.describe(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_is_the_midpoint_crossing_or_nothing() {
        let m = 1048576.0;
        let curve = [
            [4.0 * m, 30.0],
            [8.0 * m, 32.0],
            [16.0 * m, 60.0],
            [32.0 * m, 120.0],
            [64.0 * m, 150.0],
        ];
        let e = effective(&curve).unwrap();
        assert!(e > 16.0 * m && e < 32.0 * m, "{e}");
        // Never left the LLC: no figure, not a guess.
        let flat = [[4.0 * m, 30.0], [8.0 * m, 31.0], [16.0 * m, 33.0]];
        assert_eq!(effective(&flat), None);
    }

    /// Curves an Intel Xeon guest's probe read (2 MiB pages; MiB, ns):
    /// `mem.bandwidth.copy`'s first pass in a precise run, its 4 MiB size
    /// as slow as memory's half, and the next process's pass.
    fn mib(curve: &[(f64, f64)]) -> Vec<[f64; 2]> {
        curve.iter().map(|&(x, y)| [x * 1048576.0, y]).collect()
    }

    #[test]
    fn a_disturbed_first_pass_is_measured_again_and_the_lower_readings_decide() {
        let disturbed = mib(&[
            (4.0, 89.4),
            (8.0, 103.3),
            (16.0, 145.6),
            (32.0, 147.1),
            (64.0, 154.6),
            (128.0, 154.0),
            (256.0, 171.3),
        ]);
        // On its own: no crossing, so sysfs's 260 MiB would have sized
        // the arrays.
        assert_eq!(effective(&disturbed), None);
        let calm = mib(&[
            (4.0, 36.8),
            (8.0, 53.8),
            (16.0, 140.3),
            (32.0, 138.9),
            (64.0, 147.4),
            (128.0, 142.3),
            (256.0, 162.2),
        ]);
        let (points, passes) = settle(disturbed.clone(), || calm.clone());
        assert_eq!(passes, 2, "one more pass found it");
        assert_eq!(points[0][1], 36.8, "the lower reading of each size");
        assert_eq!(points[3][1], 138.9);
        assert_eq!(points[4][1], 147.4);
        let e = effective(&points).unwrap() / 1048576.0;
        assert!(e > 8.0 && e < 16.0, "{e} MiB");
        // A pass that finds the crossing is not repeated.
        let (points, passes) = settle(calm.clone(), || panic!("measured again"));
        assert_eq!((points, passes), (calm, 1));
    }

    fn probe_of(points: Vec<[f64; 2]>) -> Probe {
        Probe {
            effective_bytes: effective(&points),
            points,
            pages: "2 MiB pages, random order".into(),
            passes: PROBE_PASSES,
        }
    }

    /// Where the LLC the defaults scale from comes from.
    #[test]
    fn the_llc_is_the_crossing_an_eighth_of_memory_s_size_or_sysfs() {
        let sysfs = 260 << 20;
        let crossing = Sizing::from_probe(
            probe_of(mib(&[
                (4.0, 36.8),
                (8.0, 53.8),
                (16.0, 140.3),
                (32.0, 138.9),
            ])),
            sysfs,
            1 << 30,
        );
        let e = crossing.llc as f64 / 1048576.0;
        assert!(e > 8.0 && e < 16.0, "{e} MiB");
        assert!(!crossing.probe.memory_without_crossing());
        // Every size as slow as memory, three passes alike (read on an
        // Intel Xeon guest): an eighth of the largest size, 32 MiB. Before,
        // sysfs's 260 MiB sized 2 GiB arrays and 2 GiB latency curves.
        let memory = Sizing::from_probe(
            probe_of(mib(&[
                (4.0, 132.2),
                (8.0, 130.8),
                (16.0, 135.5),
                (32.0, 143.3),
                (64.0, 141.1),
                (128.0, 147.3),
                (256.0, 158.8),
            ])),
            sysfs,
            1 << 30,
        );
        assert!(memory.probe.memory_without_crossing());
        assert_eq!(memory.llc, 32 << 20);
        assert!(memory.describe("r")["llc_basis"]
            .as_str()
            .unwrap()
            .starts_with("probed"));
        // A rise too gradual for the midpoint rule, ending in memory (the
        // Intel guest's mem.latency, 2026-12-04): an eighth of 256 MiB too.
        let gradual = Sizing::from_probe(
            probe_of(mib(&[
                (4.0, 75.8),
                (16.0, 120.0),
                (64.0, 133.0),
                (256.0, 140.0),
            ])),
            sysfs,
            1 << 30,
        );
        assert_eq!(gradual.probe.effective_bytes, None);
        assert_eq!(gradual.llc, 32 << 20);
        // Flat at a cache's speed: it never left the LLC, sysfs's figure.
        let cached = Sizing::from_probe(
            probe_of(mib(&[(4.0, 30.0), (8.0, 31.0), (16.0, 33.0), (32.0, 36.0)])),
            sysfs,
            1 << 30,
        );
        assert!(!cached.probe.memory_without_crossing());
        assert_eq!(cached.llc, sysfs as usize);
        assert!(cached.describe("r")["llc_basis"]
            .as_str()
            .unwrap()
            .starts_with("sysfs"));
    }

    /// A curve that never leaves the LLC stays that way after its last
    /// pass: sysfs's figure is then the answer, not a guess.
    #[test]
    fn a_curve_that_never_leaves_the_llc_still_finds_nothing() {
        let flat = mib(&[(4.0, 30.0), (8.0, 31.0), (16.0, 33.0), (32.0, 36.0)]);
        let mut made = 0;
        let (points, passes) = settle(flat.clone(), || {
            made += 1;
            flat.clone()
        });
        assert_eq!((passes, made), (PROBE_PASSES, PROBE_PASSES - 1));
        assert_eq!(effective(&points), None);
    }
}
