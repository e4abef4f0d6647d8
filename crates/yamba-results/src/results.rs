//! The results file: a versioned JSON document that `compare`, `plot`,
//! `obs`, `select` and `export` read. Its schema is described field by field
//! in docs/results-schema.md; bump [`SCHEMA_VERSION`] on any incompatible change.

use crate::base::Base;
use crate::clock::ClockInfo;
use crate::counters::Counts;
use crate::cpustates::CpuStates;
use crate::machine::Machine;
use crate::units::Unit;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use yamba_stats::Summary;

pub const SCHEMA_NAME: &str = "yamba-results";
pub const SCHEMA_VERSION: u32 = 1;

/// The first bytes of a zstd frame: a compressed results file starts so.
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// zstd's default level: a run's file is rewritten after every benchmark,
/// so speed matters. Measured on a default-suite file (bench/results-size.sh):
/// level 3 ≈ 8.7× smaller than indented JSON, level 19 ≈ 11× but ≈ 50× slower.
const ZSTD_LEVEL: i32 = 3;

/// Whether a results file of this name is written compressed (`.zst`).
pub fn is_compressed_name(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// Best case (hot caches, tight loop) or worst case (caches and branch
/// history disturbed before each single operation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Hot,
    Cold,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Hot => "hot",
            Mode::Cold => "cold",
        }
    }
}

/// What became of a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured, and every assumption checked held.
    Ok,
    /// Measured, but an assumption it relies on did not hold: the number is
    /// kept for diagnosis and must not be quoted.
    Withheld,
    /// Not measured here: a requirement is missing (reason says which).
    Skipped,
    /// The benchmark crashed, hung, or returned an error.
    Failed,
}

impl Status {
    /// The name the results file uses: `ok`, `withheld`, `skipped`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Withheld => "withheld",
            Status::Skipped => "skipped",
            Status::Failed => "failed",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One assumption a benchmark checked at run time, with what it saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What is assumed, e.g. "every access faulted".
    pub check: String,
    pub expected: String,
    pub observed: String,
    pub ok: bool,
    /// When false the check is informational: failing it does not withhold the result.
    #[serde(default = "yes")]
    pub gating: bool,
}

fn yes() -> bool {
    true
}

impl Evidence {
    /// A failed check in words, what was expected next to what was seen:
    /// `<check>: expected <expected>, observed <observed>`.
    pub fn failure_text(&self) -> String {
        format!(
            "{}: expected {}, observed {}",
            self.check, self.expected, self.observed
        )
    }

    /// One word for a listing: "ok" when the check held, "FAILED" when a
    /// gating check did not (the result is withheld), "note" when an
    /// informational one did not (e.g. code placement where a platform
    /// has no adapter for it): the result stands, and says so.
    pub fn verdict(&self) -> &'static str {
        match (self.ok, self.gating) {
            (true, _) => "ok",
            (false, true) => "FAILED",
            (false, false) => "note",
        }
    }
}

/// Which method took the observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodKind {
    /// T = (M(P'') − M(F)) / n: the loop of n operations minus the dummy loop F.
    Loop,
    /// One operation at a time, BASE subtracted from each.
    Single,
    /// The benchmark computes each observation itself.
    Direct,
}

impl MethodKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MethodKind::Loop => "loop",
            MethodKind::Single => "single",
            MethodKind::Direct => "direct",
        }
    }
}

impl std::fmt::Display for MethodKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reads `loop`, `single` and `direct`, and also the free text files of
/// yamba 0.1.0 could hold, such as `single (cold: evict, …)`: the first
/// word names the method.
impl<'de> Deserialize<'de> for MethodKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let word = s
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .next()
            .unwrap_or("");
        match word {
            "loop" => Ok(MethodKind::Loop),
            "single" => Ok(MethodKind::Single),
            "direct" => Ok(MethodKind::Direct),
            _ => Err(serde::de::Error::unknown_variant(
                &s,
                &["loop", "single", "direct"],
            )),
        }
    }
}

/// How the observations were taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Method {
    /// Loop, single or direct: see [`MethodKind`].
    pub kind: MethodKind,
    /// n: operations per observation.
    pub iterations: u64,
    /// m: copies of the operation unrolled in the loop body.
    pub unroll: u32,
    /// Median time of the dummy loop F per observation, in ns (loop method).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dummy_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dummy: Option<Summary>,
    /// BASE subtracted from each observation, in ns (single method).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_subtracted_ns: Option<f64>,
    pub warmup_ns: f64,
    /// Relative half-width of the median's 95% interval aimed for.
    pub target_precision: f64,
    pub budget_s: f64,
    pub elapsed_s: f64,
    /// Why sampling stopped: "precision reached", "budget", "max observations", …
    pub stopped: String,
    /// The core clock the quantity was sampled at, in MHz (`yamba_core::coreclock`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_mhz: Option<f64>,
    /// The core's integer throughput while it was sampled, in independent
    /// adds per cycle: lower when another hardware thread shared the
    /// physical core (`yamba_core::coreclock`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_adds_per_cycle: Option<f64>,
    /// Where the measured code ran (loop and single methods): copies at
    /// placements drawn at random, or why it stayed where the build put it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Where the measurement's time went (loop and single methods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
}

/// The harness's time on one quantity, in seconds: choosing n and the
/// unroll degree (calibration), copying the code to its placements,
/// warming up, sampling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    pub calibrate_s: f64,
    pub place_s: f64,
    pub warmup_s: f64,
    pub sample_s: f64,
}

impl Phases {
    pub fn total_s(&self) -> f64 {
        self.calibrate_s + self.place_s + self.warmup_s + self.sample_s
    }

    /// The sum of two (blocks pooled).
    pub fn plus(self, o: Phases) -> Phases {
        Phases {
            calibrate_s: self.calibrate_s + o.calibrate_s,
            place_s: self.place_s + o.place_s,
            warmup_s: self.warmup_s + o.warmup_s,
            sample_s: self.sample_s + o.sample_s,
        }
    }
}

/// Code placement as a random factor (docs/certainty.md, "Code
/// placement"): the measured loop (and its dummy) ran from copies of
/// their machine code at `slots` placements drawn at random, each in turn
/// for `stretch` consecutive observations — observation `i` at placement
/// `(i / stretch) % slots` — so the process's value, the mean of its
/// placements' medians, speaks for where the code could sit, not for
/// where this build happened to put it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// False: the code ran where the build put it, for the reason given.
    pub placed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    pub slots: usize,
    pub stretch: usize,
    /// Bytes of address space the placements were drawn from.
    pub window_bytes: usize,
    /// Placements are multiples of this many bytes apart (the alignment
    /// the compiler gave the code, kept).
    pub granule_bytes: usize,
    /// Machine code copied per placement: the loop P'' and the dummy F.
    pub code_bytes: usize,
    pub dummy_bytes: usize,
    /// Where each placement put the code, in order of use.
    #[serde(deserialize_with = "crate::limits::list")]
    pub at: Vec<PlacedAt>,
}

/// One placement: the addresses of the copies and the stack's offset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlacedAt {
    /// Address of the copy of P'' (its byte offset inside a page and a
    /// cache line is what a CPU's front end sees).
    pub code: u64,
    /// Address of the copy of the dummy F.
    pub dummy: u64,
    /// Bytes the stack was moved down by before the call.
    pub stack: u32,
}

impl Placement {
    /// Code that stayed where the build put it.
    pub fn not_placed(why: impl Into<String>) -> Placement {
        Placement {
            placed: false,
            why_not: Some(why.into()),
            slots: 1,
            stretch: 1,
            window_bytes: 0,
            granule_bytes: 0,
            code_bytes: 0,
            dummy_bytes: 0,
            at: Vec::new(),
        }
    }

    /// How observations map to placements: `(slots, stretch)`, `(1, 1)`
    /// when the code was not placed or ran at one placement (a block with
    /// one copy is read as one placement is: its median, and batches of
    /// its observations for a within-process interval).
    pub fn rotation(&self) -> Rotation {
        if self.placed && self.slots > 1 {
            Rotation {
                slots: self.slots.max(1),
                stretch: self.stretch.max(1),
            }
        } else {
            Rotation::NONE
        }
    }
}

/// Observation `i` of a block ran at placement `(i / stretch) % slots`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rotation {
    pub slots: usize,
    pub stretch: usize,
}

impl Rotation {
    /// One placement: a block's value is the median of its observations.
    pub const NONE: Rotation = Rotation {
        slots: 1,
        stretch: 1,
    };

    /// A block's value from its observations: the mean of its
    /// placements' medians (the median, with one placement).
    pub fn value(&self, obs: &[f64]) -> Option<f64> {
        if *self == Rotation::NONE {
            return Summary::of(obs).map(|s| s.median);
        }
        yamba_stats::rotation_value(obs, self.slots, self.stretch)
    }
}

impl Method {
    /// A benchmark that timed each observation itself (a peer, a curve, a
    /// page-fault pass): n operations per observation, no dummy, no unrolling.
    pub fn direct(
        iterations: u64,
        target_precision: f64,
        budget_s: f64,
        elapsed_s: f64,
        stopped: impl Into<String>,
    ) -> Method {
        Method {
            kind: MethodKind::Direct,
            iterations: iterations.max(1),
            unroll: 1,
            dummy_ns: None,
            dummy: None,
            base_subtracted_ns: None,
            warmup_ns: 0.0,
            target_precision,
            budget_s,
            elapsed_s,
            stopped: stopped.into(),
            core_mhz: None,
            core_adds_per_cycle: None,
            placement: None,
            phases: None,
        }
    }

    /// How this block's observations map to code placements.
    pub fn rotation(&self) -> Rotation {
        self.placement
            .as_ref()
            .map_or(Rotation::NONE, Placement::rotation)
    }
}

/// A curve: latency by working-set size, bandwidth by file size, ….
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub x_label: String,
    pub x_unit: String,
    pub y_label: String,
    pub y_unit: String,
    /// Whether the curve reads best on logarithmic axes.
    pub log_x: bool,
    pub log_y: bool,
    /// (x, y) points in x order.
    #[serde(deserialize_with = "crate::limits::list")]
    pub points: Vec<[f64; 2]>,
}

/// What the kernel accounted to the benchmark's process, and what the rest
/// of the machine was doing meanwhile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Accounting {
    pub wall_s: f64,
    pub user_s: f64,
    pub system_s: f64,
    pub max_rss_kib: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// Whole-machine CPU states over the benchmark.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_states: Option<CpuStates>,
    /// Share of all CPUs' time used by other processes, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub others_busy_pct: Option<f64>,
    /// CPU the benchmark was pinned to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned_cpu: Option<usize>,
    /// Hardware counters over the whole benchmark, where the kernel offers them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Counts>,
    /// Seconds the benchmark's own process spent running it (from being
    /// handed the session to its results): `wall_s` less this is starting
    /// the process and handing results back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench_s: Option<f64>,
}

/// What one block of a result is: the unit of replication its interval
/// comes from (see docs/certainty.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// A fresh process running the benchmark: the interval includes the
    /// variation between processes (layout, placement, the host's moment).
    Process,
    /// A contiguous run of one process's observations (batch means): the
    /// interval accounts for drift and autocorrelation inside the process,
    /// not for what another process would see.
    Batch,
    /// The observations one process took at one code placement (of
    /// several drawn at random, visited in turn): the interval covers
    /// where the code could sit and the drift inside the process, not
    /// the rest of what another process would see.
    Placement,
}

/// How far a result can be trusted, from one median per block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certainty {
    pub block: BlockKind,
    /// Each block's median, in the order taken.
    #[serde(deserialize_with = "crate::limits::list")]
    pub medians: Vec<f64>,
    /// Observations in each block.
    #[serde(deserialize_with = "crate::limits::list")]
    pub sizes: Vec<usize>,
    #[serde(flatten)]
    pub estimate: yamba_stats::BlockEstimate,
    /// The core clock each block ran at, in MHz (one value for batches of
    /// one process), where measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "crate::limits::list")]
    pub core_mhz: Vec<f64>,
    /// The same estimate in core cycles (each block's median times its
    /// clock): what does not move when the host changes the core's
    /// frequency. Times only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles: Option<yamba_stats::BlockEstimate>,
    /// Why the interval is missing or limited, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Each block's integer throughput, in independent adds per core
    /// cycle, where measured in every block (process blocks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "crate::limits::list")]
    pub core_adds_per_cycle: Vec<f64>,
    /// The blocks that ran on a shared core ([`shared_core_blocks`]). Those
    /// it moved are left out of the estimate, interval and cycles when
    /// fewer than half are such or enough ran alone
    /// ([`shared_core_left_out`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "crate::limits::list")]
    pub shared_core: Vec<usize>,
    /// The run's best integer throughput (the most adds per cycle any of
    /// its processes read), where it names shared blocks this result's
    /// own best would not: the blocks are judged against it, so that a
    /// result whose every process ran on a shared core is told so, not
    /// taken as the core's own speed. `None` where it changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_adds_reference: Option<f64>,
    /// The reading the blocks were judged against: the best that other
    /// readings confirm ([`judged_best_adds`]). Absent in files written
    /// before it was, whose blocks were judged against their highest
    /// reading ([`Certainty::adds_best`] reads those as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_adds_best: Option<f64>,
    /// Process blocks whose code ran at several placements: each block's
    /// rotation, in block order, its value being the mean of its
    /// placements' medians ([`Rotation::value`]); empty when every block's
    /// value is its median.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "crate::limits::list")]
    pub rotations: Vec<Rotation>,
    /// The pilot of the two-stage rule that chose how many process blocks
    /// the quantity got: the interval is never narrower than Stein's from
    /// the first `pilot` kept blocks (`yamba_stats::between_blocks_two_stage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pilot: Option<usize>,
    /// What earlier runs of the run's configuration say about the next
    /// run's value ([`BetweenRuns`]), where the history held enough of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_runs: Option<BetweenRuns>,
}

/// An interval for the runs, not only the processes: a state of the
/// machine that lasts longer than a run (a host's neighbour for minutes,
/// a slow state of a system call that holds a run's every process) moves
/// whole runs, and one run's processes cannot show it; the earlier runs
/// of its configuration can (docs/certainty.md, "An interval for the
/// runs"). Set by `yamba run` from the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BetweenRuns {
    /// Earlier runs of the configuration that measured this result.
    pub runs: usize,
    /// Where their median lies: the order statistics that bracket it at
    /// the interval's confidence, whatever the runs' distribution.
    pub typical: yamba_stats::Interval,
    /// The smallest interval holding the run's own (`Certainty::ci`, or
    /// its value) and `typical`: where the machine's typical run lies,
    /// from this run and the earlier ones.
    pub ci: yamba_stats::Interval,
}

/// A block whose adds per cycle are below this share of the best block's
/// ran on a core another hardware thread was using: alone, a core's
/// readings agree within ±0.5%; shared, they were 15–50% lower, and a
/// system call 25–44% slower (`yamba_core::coreclock`).
pub const SHARED_CORE_SHARE: f64 = 0.9;

/// Readings within this share below a reading confirm it as a core's
/// speed alone: alone, a core's readings agree within ±0.5%
/// (`yamba_core::coreclock`).
pub const CORE_BEST_SPAN: f64 = 0.01;

/// The share of readings (and at least two, the reading itself among
/// them) that must confirm the best: one reading is not enough. On a Zen 5
/// guest whose alone readings sat at 4.80–4.87 adds per cycle, six of
/// eight precise runs had a reading or two far above them (5.0–8.8; past
/// 6.0, more than the core's six ALUs retire: misreadings), and against
/// the highest, four runs called all but one or two of their 1091–1538
/// measurements shared where 157–1026 were (docs/certainty.md, "A shared
/// core").
pub const CORE_BEST_SUPPORT: f64 = 0.01;

/// What `adds` (adds-per-cycle readings) show their core doing alone: the
/// highest reading that at least [`CORE_BEST_SUPPORT`] of them (and two)
/// confirm within [`CORE_BEST_SPAN`] below it; the highest reading where
/// none is confirmed (one reading, or readings all apart). `None` when
/// there is no finite reading.
pub fn core_best_adds(adds: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = adds.iter().copied().filter(|a| a.is_finite()).collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let need = ((CORE_BEST_SUPPORT * sorted.len() as f64).ceil() as usize).max(2);
    let confirmed = (0..sorted.len()).find(|&i| {
        let floor = sorted[i] * (1.0 - CORE_BEST_SPAN);
        sorted[i..].iter().take_while(|&&a| a >= floor).count() >= need
    });
    confirmed
        .or((!sorted.is_empty()).then_some(0))
        .map(|i| sorted[i])
}

/// The reading blocks with `adds` are judged against: their own confirmed
/// best ([`core_best_adds`]), or `reference` (the run's, [`run_best_adds`])
/// where that is higher.
pub fn judged_best_adds(adds: &[f64], reference: Option<f64>) -> Option<f64> {
    higher(core_best_adds(adds), reference)
}

/// The higher of two readings, either of which may be missing.
fn higher(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Indices of the blocks whose `adds` are below [`SHARED_CORE_SHARE`] of
/// `best`: those that ran on a shared core.
pub fn shared_below(adds: &[f64], best: f64) -> Vec<usize> {
    adds.iter()
        .enumerate()
        .filter(|(_, &a)| a < SHARED_CORE_SHARE * best)
        .map(|(i, _)| i)
        .collect()
}

/// Indices of the blocks that ran on a shared core: adds per cycle below
/// [`SHARED_CORE_SHARE`] of [`judged_best_adds`].
pub fn shared_core_blocks(adds: &[f64], reference: Option<f64>) -> Vec<usize> {
    judged_best_adds(adds, reference).map_or_else(Vec::new, |best| shared_below(adds, best))
}

/// Processes a side of a comparison needs in one state of the core
/// (alone, or shared): one more than a mean needs, for a spread.
pub const MIN_BLOCKS_A_SIDE: usize = 2;

/// Whether `shared` of `n` processes having run on a shared core make a
/// value one of a shared core: at least one, and half or more.
pub fn shared_core_prevails(shared: usize, n: usize) -> bool {
    shared > 0 && 2 * shared >= n
}

/// A shared-core block is left out only when its median is more than this
/// share away from the unshared blocks' (a dependent chain of adds costs
/// the same on a shared core; a system call does not).
pub const SHARED_CORE_EFFECT: f64 = 0.03;

/// Of `candidates` (blocks that ran on a shared core), those whose median
/// is more than [`SHARED_CORE_EFFECT`] from `reference` (the median of
/// blocks that did not).
pub fn shared_core_affected(medians: &[f64], candidates: &[usize], reference: f64) -> Vec<usize> {
    candidates
        .iter()
        .copied()
        .filter(|&i| (medians[i] / reference - 1.0).abs() > SHARED_CORE_EFFECT)
        .collect()
}

/// The warning on a result measured in one process that ran on a shared
/// core: `adds` per cycle against the run's `best`. Read back by
/// [`shared_core_warning_values`].
pub fn shared_core_warning(adds: f64, best: f64) -> String {
    format!(
        "ran on a shared core ({adds:.1} adds per cycle against {best:.1}, the run's best: another hardware thread was using it)"
    )
}

/// The two readings of a [`shared_core_warning`], as written; `None` for
/// any other warning.
pub fn shared_core_warning_values(w: &str) -> Option<(&str, &str)> {
    let (adds, rest) = w
        .strip_prefix("ran on a shared core (")?
        .split_once(" adds per cycle against ")?;
    Some((adds, rest.split_once(", the run's best")?.0))
}

/// The best adds per cycle of a run's results (each process's reading,
/// [`Method::core_adds_per_cycle`]) that other readings confirm
/// ([`core_best_adds`]): what the pinned core does alone, the reference a
/// result's blocks are judged against as well as against each other.
/// `None` when no result read it.
pub fn run_best_adds<'a>(results: impl IntoIterator<Item = &'a BenchResult>) -> Option<f64> {
    let adds: Vec<f64> = results
        .into_iter()
        .filter_map(|r| r.method.as_ref()?.core_adds_per_cycle)
        .collect();
    core_best_adds(&adds)
}

/// The blocks of one run to leave out of its estimate: they ran on a
/// shared core (below [`SHARED_CORE_SHARE`] of `best`) and it moved them
/// (see [`shared_core_affected`]), when fewer than half are such, or when
/// at least [`PRECISE_BLOCKS`] ran alone (a precise run replaces shared
/// processes until its pilot's count ran alone: the value stands on
/// those). Otherwise the value describes a shared core and keeps them all.
pub fn shared_core_left_out(medians: &[f64], adds: &[f64], best: Option<f64>) -> Vec<usize> {
    let Some(best) = best else { return vec![] };
    if medians.len() != adds.len() {
        return vec![];
    }
    let shared = shared_below(adds, best);
    let alone: Vec<f64> = (0..medians.len())
        .filter(|i| !shared.contains(i))
        .map(|i| medians[i])
        .collect();
    let Some(reference) = yamba_stats::Summary::of(&alone).map(|s| s.median) else {
        return vec![];
    };
    let out = shared_core_affected(medians, &shared, reference);
    if 2 * out.len() < medians.len() || alone.len() >= PRECISE_BLOCKS {
        out
    } else {
        vec![]
    }
}

/// Batches one process's observations are cut into for a within-process
/// interval (batch means).
pub const BATCHES: usize = 10;

/// Blocks (fresh processes) a precise run starts every benchmark with: the
/// pilot of the two-stage rule, which adds blocks where their spread
/// needs more (`yamba_core::runner`), and the fewest that give a spread.
pub const PRECISE_BLOCKS: usize = 3;

impl Certainty {
    /// From one process's observations: [`BATCHES`] contiguous batches.
    /// `resolution`: the smallest step one observation can show;
    /// `core_mhz`: the process's core clock, for a time.
    pub fn within_process(
        obs: &[f64],
        resolution: f64,
        core_mhz: Option<f64>,
    ) -> Option<Certainty> {
        let medians = yamba_stats::batch_medians(obs, BATCHES);
        let size = obs.len() / medians.len().max(1);
        let mut sizes = vec![size; medians.len()];
        if let Some(last) = sizes.last_mut() {
            *last = obs.len() - size * (medians.len() - 1);
        }
        let mut c = Self::from_blocks(BlockKind::Batch, medians, sizes, resolution, vec![])?;
        c.leave_out_disturbed_batches(resolution);
        if let Some(mhz) = core_mhz {
            c.core_mhz = vec![mhz];
            c.cycles = scaled(&c.estimate, mhz / 1e3);
        }
        Some(c)
    }

    /// From one process's observations taken at several code placements
    /// in turn: one block per placement (its median), so the interval
    /// covers where the code could sit. No placement is left out as
    /// disturbed: a placement far from the others is the effect measured.
    pub fn within_process_placed(
        obs: &[f64],
        rotation: Rotation,
        resolution: f64,
        core_mhz: Option<f64>,
    ) -> Option<Certainty> {
        let groups = yamba_stats::rotation_medians(obs, rotation.slots, rotation.stretch);
        let (medians, sizes) = groups.into_iter().unzip();
        let mut c = Self::from_blocks(BlockKind::Placement, medians, sizes, resolution, vec![])?;
        c.rotations = vec![rotation];
        if c.estimate.blocks > 1 {
            c.note = Some(format!(
                "within one process, over {} code placements: covers where the code could sit, not the rest of the variation between runs (use a precise run's process blocks)",
                c.estimate.blocks
            ));
        }
        if let Some(mhz) = core_mhz {
            c.core_mhz = vec![mhz];
            c.cycles = scaled(&c.estimate, mhz / 1e3);
        }
        Some(c)
    }

    /// From one median per block (per process, or per batch), and the
    /// core clock of each block when the result is a time and it was
    /// measured in every block.
    pub fn from_blocks(
        block: BlockKind,
        medians: Vec<f64>,
        sizes: Vec<usize>,
        resolution: f64,
        core_mhz: Vec<f64>,
    ) -> Option<Certainty> {
        let estimate = yamba_stats::between_blocks(&medians, resolution, 0.95)?;
        let note = match (block, estimate.blocks) {
            (_, 1) => Some("one block: no interval".to_string()),
            (BlockKind::Batch | BlockKind::Placement, _) => Some(
                "within one process only: does not include the variation between runs (use a precise run's process blocks)"
                    .to_string(),
            ),
            (BlockKind::Process, _) => None,
        };
        let mut c = Certainty {
            block,
            medians,
            sizes,
            estimate,
            core_mhz,
            cycles: None,
            note,
            core_adds_per_cycle: vec![],
            shared_core: vec![],
            core_adds_reference: None,
            core_adds_best: None,
            rotations: vec![],
            pilot: None,
            between_runs: None,
        };
        c.cycles = c.block_cycles().and_then(|cycles| {
            let slowest = c.core_mhz.iter().copied().fold(f64::INFINITY, f64::min);
            yamba_stats::between_blocks(&cycles, resolution * slowest / 1e3, 0.95)
        });
        if c.cycles.is_none() {
            c.core_mhz.clear();
        }
        Some(c)
    }

    /// The interval of process blocks whose count the two-stage rule chose
    /// after a pilot of `pilot` blocks: widened to Stein's where wider
    /// (kept blocks only: those a shared core moved stay out), in time and
    /// in core cycles alike — the cycles interval is the one that holds
    /// when the host moves the core clock between runs (docs/certainty.md,
    /// "The core clock"), and it stands on the same stopping rule.
    pub fn two_stage(&mut self, pilot: usize) {
        let kept = self.kept_blocks();
        if self.block != BlockKind::Process || pilot >= kept.len() {
            return;
        }
        let stein = |e: &mut yamba_stats::BlockEstimate, values: &[f64]| {
            let confidence = e.ci.map_or(0.95, |c| c.confidence);
            let Some(mut wide) =
                yamba_stats::between_blocks_two_stage(values, pilot, e.resolution, confidence)
            else {
                return false;
            };
            wide.outliers = std::mem::take(&mut e.outliers);
            *e = wide;
            true
        };
        let values: Vec<f64> = kept.iter().map(|&i| self.medians[i]).collect();
        if !stein(&mut self.estimate, &values) {
            return;
        }
        self.pilot = Some(pilot);
        if let (Some(all), Some(c)) = (self.block_cycles(), self.cycles.as_mut()) {
            let cycles: Vec<f64> = kept.iter().map(|&i| all[i]).collect();
            stein(c, &cycles);
        }
    }

    /// Each block's median in core cycles (its median times its clock),
    /// where every block's clock was measured: one clock per process
    /// block, or the one process's clock for all its batches or
    /// placements.
    pub fn block_cycles(&self) -> Option<Vec<f64>> {
        let one_process = matches!(self.block, BlockKind::Batch | BlockKind::Placement);
        let mhz = |i: usize| match self.core_mhz[..] {
            [mhz] if one_process => Some(mhz),
            _ if self.core_mhz.len() == self.medians.len() => Some(self.core_mhz[i]),
            _ => None,
        };
        self.medians
            .iter()
            .enumerate()
            .map(|(i, ns)| Some(ns * mhz(i)? / 1e3))
            .collect()
    }

    /// Records each process block's integer throughput (`adds`, one per
    /// block) and names the blocks that ran on a shared core. When fewer
    /// than half did, or [`PRECISE_BLOCKS`] ran alone, the estimate,
    /// interval and cycles come from the others, and the note says so: a
    /// process measured while another hardware thread used its core
    /// measured a different machine. Otherwise nothing is left out (the
    /// run describes a shared core) and the note says that.
    ///
    /// `reference` is the run's best reading ([`run_best_adds`]): with it,
    /// a result whose every process shared a core is named too (on the AMD
    /// EPYC Zen 3 guest, `net.tcp.rtt`'s four processes read 2.4–2.6 adds
    /// per cycle while the rest of the run read 3.75, and said 22.3 µs
    /// where unshared runs say 16.2).
    pub fn leave_out_shared_core(&mut self, adds: Vec<f64>, reference: Option<f64>) {
        if self.block != BlockKind::Process || adds.len() != self.medians.len() {
            return;
        }
        // The run's best is kept only where it names blocks the result's
        // own best would not.
        let own_best = core_best_adds(&adds);
        let run_best = higher(own_best, reference);
        let below = |best: Option<f64>| best.map_or_else(Vec::new, |b| shared_below(&adds, b));
        let (best, shared) = if below(run_best) != below(own_best) {
            self.core_adds_reference = reference;
            (run_best, below(run_best))
        } else {
            self.core_adds_reference = None;
            (own_best, below(own_best))
        };
        self.core_adds_best = best;
        let left_out = shared_core_left_out(&self.medians, &adds, self.core_adds_best);
        self.core_adds_per_cycle = adds;
        if shared.is_empty() {
            return;
        }
        if !left_out.is_empty() {
            let kept: Vec<usize> = (0..self.medians.len())
                .filter(|i| !left_out.contains(i))
                .collect();
            let pick = |v: &[f64]| kept.iter().map(|&i| v[i]).collect::<Vec<f64>>();
            let mhz = if self.core_mhz.len() == self.medians.len() {
                pick(&self.core_mhz)
            } else {
                vec![]
            };
            let Some(sub) = Certainty::from_blocks(
                BlockKind::Process,
                pick(&self.medians),
                kept.iter().map(|&i| self.sizes[i]).collect(),
                self.estimate.resolution,
                mhz,
            ) else {
                return;
            };
            // The sub-estimate's outlying blocks, numbered as all blocks are.
            let renumber = |e: &mut yamba_stats::BlockEstimate| {
                e.outliers = e.outliers.iter().map(|&j| kept[j]).collect();
            };
            let (mut estimate, mut cycles) = (sub.estimate, sub.cycles);
            renumber(&mut estimate);
            if let Some(c) = cycles.as_mut() {
                renumber(c);
            }
            self.estimate = estimate;
            self.cycles = cycles;
        }
        self.shared_core = shared;
        let said = self.shared_core_sentence().unwrap_or_default();
        self.note = Some(match self.note.take() {
            Some(n) => format!("{n}; {said}"),
            None => said,
        });
    }

    /// Which processes ran on a shared core and what was done about it,
    /// in words; `None` when none did.
    pub fn shared_core_sentence(&self) -> Option<String> {
        if self.shared_core.is_empty() {
            return None;
        }
        let adds = |i: &usize| {
            self.core_adds_per_cycle
                .get(*i)
                .copied()
                .unwrap_or(f64::NAN)
        };
        let shared: Vec<f64> = self.shared_core.iter().map(adds).collect();
        let (lo, hi) = shared
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        let best = self.adds_best().unwrap_or(f64::NAN);
        let whose = if self.core_adds_reference == Some(best) {
            ", the run's best"
        } else {
            ""
        };
        let range = if hi - lo < 0.05 {
            format!("{lo:.1}")
        } else {
            format!("{lo:.1}–{hi:.1}")
        };
        let which: Vec<String> = self
            .shared_core
            .iter()
            .map(|i| (i + 1).to_string())
            .collect();
        let n = self.medians.len();
        let who = format!(
            "process{} {} of {n} ran on a shared core ({range} adds per cycle against {best:.1}{whose}: another hardware thread was using it)",
            if which.len() == 1 { "" } else { "es" },
            which.join(", ")
        );
        let left_out = n - self.kept_blocks().len();
        Some(if left_out > 0 {
            format!(
                "{who}; {left_out} moved more than {:.0}% by it, left out of the value",
                SHARED_CORE_EFFECT * 100.0
            )
        } else if self.describes_shared_core() {
            format!("{who}; half or more did, so the value describes a shared core")
        } else {
            format!(
                "{who}; it did not move them by more than {:.0}%, kept",
                SHARED_CORE_EFFECT * 100.0
            )
        })
    }

    /// The reading the blocks were judged against: as stored, or — in a
    /// file written before it was stored — as then judged, the highest of
    /// the blocks' readings and the run's reference.
    pub fn adds_best(&self) -> Option<f64> {
        self.core_adds_best.or_else(|| {
            let own = self.core_adds_per_cycle.iter().copied();
            own.chain(self.core_adds_reference)
                .filter(|a| a.is_finite())
                .reduce(f64::max)
        })
    }

    /// Whether the value describes a shared core: half or more of the
    /// processes ran on one and none was left out (too few ran alone to
    /// stand on: [`shared_core_left_out`]).
    pub fn describes_shared_core(&self) -> bool {
        shared_core_prevails(self.shared_core.len(), self.medians.len())
            && self.kept_blocks().len() == self.medians.len()
    }

    /// Whether this result's own processes show that a shared core moves
    /// it: `Some(true)` when a process that ran on one lies more than
    /// [`SHARED_CORE_EFFECT`] from the median of those that ran alone,
    /// `Some(false)` when none does, `None` when the run lacks one of the
    /// two states (nothing to judge by).
    pub fn shared_core_moves(&self) -> Option<bool> {
        if self.shared_core.is_empty() {
            return None;
        }
        let alone: Vec<f64> = self
            .alone_blocks()
            .iter()
            .map(|&i| self.medians[i])
            .collect();
        let reference = yamba_stats::Summary::of(&alone)?.median;
        Some(!shared_core_affected(&self.medians, &self.shared_core, reference).is_empty())
    }

    /// The processes that had their core alone (not named in
    /// `shared_core`).
    pub fn alone_blocks(&self) -> Vec<usize> {
        (0..self.medians.len())
            .filter(|i| !self.shared_core.contains(i))
            .collect()
    }

    /// The blocks the estimate stands on: all but those left out as
    /// having run on a shared core.
    pub fn kept_blocks(&self) -> Vec<usize> {
        let left_out =
            shared_core_left_out(&self.medians, &self.core_adds_per_cycle, self.adds_best());
        (0..self.medians.len())
            .filter(|i| !left_out.contains(i))
            .collect()
    }

    /// Batches of one process that lie far from all the others were hit by
    /// something outside the quantity (an interruption, a preemption: one
    /// process's batches share everything else), so the estimate and
    /// interval come from the other batches — named in `outliers` and
    /// said in the note. Only when fewer than half are such: otherwise the
    /// process itself was disturbed and the interval says so by its width.
    /// Processes are never left out this way: a process far from the
    /// others is variation a user sees when running again.
    fn leave_out_disturbed_batches(&mut self, resolution: f64) {
        let out = self.estimate.outliers.clone();
        if self.block != BlockKind::Batch || out.is_empty() || 2 * out.len() >= self.medians.len() {
            return;
        }
        let kept: Vec<f64> = (0..self.medians.len())
            .filter(|i| !out.contains(i))
            .map(|i| self.medians[i])
            .collect();
        let Some(mut e) = yamba_stats::between_blocks(&kept, resolution, 0.95) else {
            return;
        };
        e.outliers = out.clone();
        let worst = out.iter().map(|&i| self.medians[i]).fold(f64::NAN, |a, v| {
            if a.is_nan() || (v - e.estimate).abs() > (a - e.estimate).abs() {
                v
            } else {
                a
            }
        });
        let left = format!(
            "{} of {} batches left out as disturbed (farthest median {:.4} vs {:.4} for the rest)",
            out.len(),
            self.medians.len(),
            worst,
            e.estimate
        );
        self.note = Some(match self.note.take() {
            Some(n) => format!("{n}; {left}"),
            None => left,
        });
        self.estimate = e;
    }

    /// Whether the interval covers the variation between processes.
    pub fn between_processes(&self) -> bool {
        self.block == BlockKind::Process && self.estimate.blocks > 1
    }
}

/// An estimate in other units: everything times `k`.
fn scaled(e: &yamba_stats::BlockEstimate, k: f64) -> Option<yamba_stats::BlockEstimate> {
    let s = |v: f64| v * k;
    Some(yamba_stats::BlockEstimate {
        estimate: s(e.estimate),
        ci: e.ci.map(|c| yamba_stats::Interval {
            lo: s(c.lo),
            hi: s(c.hi),
            confidence: c.confidence,
        }),
        stddev: s(e.stddev),
        resolution: s(e.resolution),
        ..e.clone()
    })
}

/// One measured quantity. A benchmark may produce several (one per
/// argument count, per size, per mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// Unique within a run with `mode`: the benchmark id, plus a suffix for variants.
    pub id: String,
    /// The registered benchmark that produced it.
    pub benchmark: String,
    pub area: String,
    pub description: String,
    pub unit: Unit,
    /// Whether a larger value is the better one, where the unit alone
    /// does not say: a parallelism (more chains overlapped) is better
    /// higher, a share of time lost worse. Absent: the unit's rule
    /// ([`Unit::higher_is_better`]; files from before 2026-12-07 never
    /// had it). Read through [`BenchResult::higher_is_better`].
    #[serde(
        rename = "higher_is_better",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub better_higher: Option<bool>,
    pub mode: Mode,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The platform adapter that ran it.
    pub adapter: String,
    #[serde(default)]
    #[serde(deserialize_with = "crate::limits::value_map")]
    pub params: BTreeMap<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// Every observation, in `unit`, in the order taken.
    #[serde(default)]
    #[serde(deserialize_with = "crate::limits::observations")]
    pub observations: Vec<f64>,
    #[serde(default)]
    #[serde(deserialize_with = "crate::limits::list")]
    pub evidence: Vec<Evidence>,
    #[serde(default)]
    #[serde(deserialize_with = "crate::limits::list")]
    pub warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// Benchmark-specific tables (e.g. the page-fault fit), free-form.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[serde(deserialize_with = "crate::limits::value_map")]
    pub extra: BTreeMap<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounting: Option<Accounting>,
    /// The headline estimate and interval, from one median per block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certainty: Option<Certainty>,
    /// Measured as N simultaneous copies (`yamba run --copies N`): its
    /// observations are the copies' values, one per copy per block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<crate::copies::Copies>,
}

impl BenchResult {
    /// An empty, ok result: the fields every producer sets, the rest empty.
    pub fn new(
        id: impl Into<String>,
        benchmark: impl Into<String>,
        area: impl Into<String>,
        unit: Unit,
        mode: Mode,
        adapter: impl Into<String>,
    ) -> BenchResult {
        BenchResult {
            id: id.into(),
            benchmark: benchmark.into(),
            area: area.into(),
            description: String::new(),
            unit,
            better_higher: None,
            mode,
            status: Status::Ok,
            reason: None,
            adapter: adapter.into(),
            params: BTreeMap::new(),
            method: None,
            summary: None,
            observations: Vec::new(),
            evidence: Vec::new(),
            warnings: Vec::new(),
            series: None,
            extra: BTreeMap::new(),
            accounting: None,
            certainty: None,
            copies: None,
        }
    }

    /// Whether a larger value is the better one: the result's own word
    /// where it has one, else its unit's.
    pub fn higher_is_better(&self) -> bool {
        self.better_higher
            .unwrap_or_else(|| self.unit.higher_is_better())
    }

    /// The median of all observations pooled.
    pub fn median(&self) -> Option<f64> {
        self.summary.as_ref().map(|s| s.median)
    }

    /// The headline value and its 95% interval: from the blocks when the
    /// result has them (the mean of the block medians), else the pooled
    /// median and its order-statistic interval.
    pub fn headline(&self) -> Option<(f64, Option<yamba_stats::Interval>)> {
        match &self.certainty {
            Some(c) => Some((c.estimate.estimate, c.estimate.ci)),
            None => self.summary.as_ref().map(|s| (s.median, s.median_ci)),
        }
    }

    /// The headline in core cycles and its 95% interval, where the core
    /// clock was recorded with a time (`Certainty::cycles`): the same
    /// blocks as [`Self::headline`], each times its clock.
    pub fn headline_cycles(&self) -> Option<(f64, Option<yamba_stats::Interval>)> {
        let c = self.certainty.as_ref()?.cycles.as_ref()?;
        Some((c.estimate, c.ci))
    }

    /// The headline value alone.
    pub fn value(&self) -> Option<f64> {
        self.headline().map(|(v, _)| v)
    }

    /// Sets the observations and their summary.
    pub fn set_observations(&mut self, obs: Vec<f64>) {
        self.summary = Summary::of(&obs);
        self.observations = obs;
    }

    pub fn add_evidence(
        &mut self,
        check: impl Into<String>,
        expected: impl Into<String>,
        observed: impl Into<String>,
        ok: bool,
    ) -> &mut Self {
        self.evidence.push(Evidence {
            check: check.into(),
            expected: expected.into(),
            observed: observed.into(),
            ok,
            gating: true,
        });
        self
    }

    /// Records an informational check: shown, but never withholds the result.
    pub fn add_note_evidence(
        &mut self,
        check: impl Into<String>,
        expected: impl Into<String>,
        observed: impl Into<String>,
        ok: bool,
    ) -> &mut Self {
        self.add_evidence(check, expected, observed, ok);
        self.evidence.last_mut().unwrap().gating = false;
        self
    }

    pub fn warn(&mut self, w: impl Into<String>) -> &mut Self {
        self.warnings.push(w.into());
        self
    }

    pub fn param(&mut self, key: &str, value: impl Serialize) -> &mut Self {
        self.params.insert(
            key.to_string(),
            serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
        );
        self
    }

    /// Withholds an Ok result whose gating evidence failed, naming the checks.
    pub fn apply_evidence(&mut self) {
        if self.status != Status::Ok {
            return;
        }
        let failed: Vec<String> = self
            .evidence
            .iter()
            .filter(|e| e.gating && !e.ok)
            .map(Evidence::failure_text)
            .collect();
        if !failed.is_empty() {
            self.status = Status::Withheld;
            self.reason = Some(failed.join("; "));
        }
    }

    /// Key under which two runs' results are matched.
    pub fn key(&self) -> String {
        format!("{}@{}", self.id, self.mode.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// A digest of the executable that wrote the file (FNV-1a, 64 bits, of
    /// its bytes): two builds of one version can place the same code where
    /// a system call costs 30% more, so runs of different builds are not
    /// the same configuration. Absent in files written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

impl Tool {
    /// This yamba: its name, version and build.
    pub fn this() -> Tool {
        Tool {
            name: "yamba".into(),
            version: crate::VERSION.into(),
            build: build_id(),
        }
    }
}

/// The running executable's digest (see [`Tool::build`]), computed once
/// per process; None when the executable cannot be read.
pub fn build_id() -> Option<String> {
    static ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let bytes = std::fs::read(std::env::current_exe().ok()?).ok()?;
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Some(format!("{h:016x}"))
    })
    .clone()
}

/// The whole results file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultsFile {
    pub schema: String,
    pub schema_version: u32,
    pub tool: Tool,
    /// RFC 3339, UTC.
    pub started: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<String>,
    /// False while the run is going on, and for an interrupted run.
    pub complete: bool,
    #[serde(default)]
    pub interrupted: bool,
    #[serde(default)]
    #[serde(deserialize_with = "crate::limits::list")]
    pub command: Vec<String>,
    #[serde(deserialize_with = "crate::limits::value")]
    pub config: serde_json::Value,
    pub machine: Machine,
    pub clock: ClockInfo,
    pub base: Base,
    #[serde(deserialize_with = "crate::limits::list")]
    pub results: Vec<BenchResult>,
    /// Run-wide notes: noise on this machine, degraded features.
    #[serde(default)]
    #[serde(deserialize_with = "crate::limits::list")]
    pub notes: Vec<String>,
    /// Where the run's own time went, beside its benchmarks'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<RunTimings>,
}

/// The run's time outside its benchmarks' processes, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RunTimings {
    /// Calibrating the clock, measuring BASE, describing the machine.
    pub prepare_s: f64,
    /// The noise check that opens the run's notes.
    pub noise_s: f64,
    /// Pooling blocks and writing the results file as the run went.
    pub saving_s: f64,
    /// What the caller did to the finished file before its last save:
    /// `yamba run` reads the configuration's earlier runs from the history
    /// there (the interval for the runs). 0 in files older than the field.
    #[serde(default)]
    pub before_finish_s: f64,
    /// The run's benchmarks: the pilot blocks, then the extra blocks the
    /// two-stage rule asked for.
    pub pilot_s: f64,
    pub extra_s: f64,
    pub blocks: usize,
    pub extra_blocks: usize,
}

/// Why a results file could not be read (each message one line, its
/// cause included).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(std::io::Error),
    #[error("not a valid results file: {0}")]
    Json(serde_json::Error),
    #[error("not a yamba results file (schema {0:?})")]
    NotYamba(String),
    #[error("results file schema version {0} is newer than this yamba reads ({SCHEMA_VERSION})")]
    Version(u32),
    /// A limit of [`crate::limits::Limits`] was exceeded.
    #[error("{0}")]
    Limit(crate::limits::LimitExceeded),
}

impl ResultsFile {
    /// A new file of this schema version, written by this yamba, started
    /// now and not yet complete; `results` and `notes` empty.
    pub fn new(
        command: Vec<String>,
        config: serde_json::Value,
        machine: Machine,
        clock: ClockInfo,
        base: Base,
    ) -> ResultsFile {
        let mut f = ResultsFile {
            schema: SCHEMA_NAME.into(),
            schema_version: SCHEMA_VERSION,
            tool: Tool::this(),
            started: now_rfc3339(),
            finished: None,
            complete: false,
            interrupted: false,
            command,
            config,
            machine,
            clock,
            base,
            results: Vec::new(),
            notes: Vec::new(),
            timings: None,
        };
        f.redact_secrets();
        f
    }

    /// Marks the file finished now: complete unless `interrupted`.
    pub fn finish(&mut self, interrupted: bool) {
        self.finished = Some(now_rfc3339());
        self.complete = !interrupted;
        self.interrupted = interrupted;
    }

    /// Parses and checks a results file's text (within the limits of
    /// [`crate::limits::Limits::from_env`]).
    pub fn from_json(text: &str) -> Result<ResultsFile, ReadError> {
        Self::from_bytes(text.as_bytes())
    }

    /// Parses a results file's bytes: JSON, or JSON compressed with zstd
    /// (recognised by zstd's magic number, whatever the file is called),
    /// as it streams, within the limits of [`crate::limits::Limits::from_env`].
    pub fn from_bytes(bytes: &[u8]) -> Result<ResultsFile, ReadError> {
        let limits = env_limits()?;
        Self::from_reader_with(
            &mut || Ok(Box::new(bytes) as Box<dyn std::io::Read + '_>),
            limits,
        )
    }

    /// Reads a results file, plain (`.json`) or compressed (`.json.zst`),
    /// as it streams, within the limits of [`crate::limits::Limits::from_env`].
    /// A device, a directory or a socket is refused before it is read (a
    /// FIFO is read, within the limits).
    pub fn read(path: &Path) -> Result<ResultsFile, ReadError> {
        let cannot = |e: std::io::Error| {
            ReadError::Io(std::io::Error::new(
                e.kind(),
                format!("cannot read {}: {e}", path.display()),
            ))
        };
        let limits = env_limits()?;
        readable_input(path).map_err(cannot)?;
        let mut open = || -> std::io::Result<Box<dyn std::io::Read>> {
            Ok(Box::new(std::fs::File::open(path)?))
        };
        Self::from_reader_with(&mut open, limits).map_err(|e| match e {
            ReadError::Io(e) => cannot(e),
            e => e,
        })
    }

    /// Parses what `open` gives, as it streams: decompressed if it starts
    /// with zstd's magic, at most `limits.max_bytes` of JSON, each list
    /// counted. When the typed parse fails, `open` is called once more to
    /// say whether the file is a yamba results file at all, and of which
    /// version (a stream that cannot be read again gives the parse's error).
    pub fn from_reader_with<'a>(
        open: &mut dyn FnMut() -> std::io::Result<Box<dyn std::io::Read + 'a>>,
        limits: crate::limits::Limits,
    ) -> Result<ResultsFile, ReadError> {
        let typed = parse_stream(open().map_err(ReadError::Io)?, limits, |r| {
            serde_json::from_reader::<_, ResultsFile>(r)
        });
        match typed {
            Ok(mut f) => {
                if f.schema != SCHEMA_NAME {
                    return Err(ReadError::NotYamba(f.schema));
                }
                if f.schema_version > SCHEMA_VERSION {
                    return Err(ReadError::Version(f.schema_version));
                }
                // A file written before secrets were kept out: never pass them on.
                f.redact_secrets();
                Ok(f)
            }
            Err(ReadError::Json(e)) => {
                // Not of this schema? Its header says (read again, streaming).
                #[derive(Deserialize)]
                struct Header {
                    #[serde(default)]
                    schema: Option<serde_json::Value>,
                    #[serde(default)]
                    schema_version: Option<serde_json::Value>,
                }
                let header = open().ok().and_then(|r| {
                    parse_stream(r, limits, |r| serde_json::from_reader::<_, Header>(r)).ok()
                });
                if let Some(h) = header {
                    let schema = h.schema.as_ref().and_then(|s| s.as_str()).unwrap_or("");
                    if schema != SCHEMA_NAME {
                        return Err(ReadError::NotYamba(schema.to_string()));
                    }
                    let v = h.schema_version.and_then(|v| v.as_u64()).unwrap_or(0);
                    if v > SCHEMA_VERSION as u64 {
                        return Err(ReadError::Version(v.min(u32::MAX as u64) as u32));
                    }
                }
                Err(ReadError::Json(e))
            }
            Err(e) => Err(e),
        }
    }

    /// Writes the file atomically: a temporary file beside it, flushed,
    /// then renamed. A name ending in `.zst` gets zstd-compressed JSON.
    /// Secrets (see [`crate::secrets`]) are never written.
    pub fn write_atomic(&self, path: &Path) -> std::io::Result<()> {
        write_atomic(path, &self.to_bytes(is_compressed_name(path))?)
    }

    /// The file as JSON text, without secrets.
    pub fn to_json(&self) -> serde_json::Result<String> {
        if self.has_secrets() {
            let mut clean = self.clone();
            clean.redact_secrets();
            return serde_json::to_string_pretty(&clean);
        }
        serde_json::to_string_pretty(self)
    }

    /// The file as written, without secrets: indented JSON for people, or
    /// compact JSON compressed with zstd when `compressed` (indentation
    /// costs ≈ 7% more even compressed; `zstd -d | jq .` indents it again).
    pub fn to_bytes(&self, compressed: bool) -> std::io::Result<Vec<u8>> {
        if self.has_secrets() {
            let mut clean = self.clone();
            clean.redact_secrets();
            return clean.to_bytes(compressed);
        }
        if !compressed {
            return Ok(serde_json::to_vec_pretty(self)?);
        }
        let mut z = zstd::stream::Encoder::new(Vec::new(), ZSTD_LEVEL)?;
        serde_json::to_writer(&mut z, self)?;
        z.finish()
    }

    /// Results with this id (any mode), or whose id starts with `prefix.`.
    pub fn find<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a BenchResult> + 'a {
        self.results.iter().filter(move |r| {
            r.id == name
                || r.key() == name
                || r.benchmark == name
                || r.id.starts_with(&format!("{name}."))
                || r.area == name
        })
    }
}

/// Writes `bytes` to `path` so that a reader sees either the old file or
/// the whole new one, never a part: a new file beside it (created
/// exclusively, never through a link someone left there), flushed, then
/// renamed over it. Only a regular file is ever replaced (or a new name
/// made): a device node, a FIFO, a socket or a directory at `path` (or at
/// the end of a symbolic link there) is refused, and left as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    writable_output(path)?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
    let mut tries = 0;
    let (tmp, mut f) = loop {
        let tmp = dir.join(format!(
            ".{}.tmp.{}.{:x}",
            name.to_string_lossy(),
            std::process::id(),
            unique()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc_o_nofollow())
            .mode(0o666)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        f.write_all(bytes)?;
        f.sync_all()?;
        // Checked again just before the rename: what may have appeared
        // at the name meanwhile is not replaced if it is not a file.
        writable_output(path)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// O_NOFOLLOW where the platform has it (the temporary file's name).
fn libc_o_nofollow() -> i32 {
    #[cfg(target_os = "linux")]
    return 0o400000;
    #[cfg(not(target_os = "linux"))]
    return 0x100;
}

/// A number that differs between calls and processes.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ N.fetch_add(1, Ordering::Relaxed).rotate_left(40)
}

/// Ok when `path` is free, or a regular file (directly or at the end of
/// a symbolic link) that may be replaced; otherwise why not, in one line.
pub fn writable_output(path: &Path) -> std::io::Result<()> {
    let t = match std::fs::metadata(path) {
        Ok(m) => m.file_type(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A dangling symbolic link: renaming over it replaces the link.
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if t.is_file() {
        return Ok(());
    }
    let what = special_kind(t).unwrap_or("of another kind");
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("not a regular file ({what}): only a regular file or a new name is written"),
    ))
}

/// A file type other than a regular file, in words; None for a kind
/// without a name here.
fn special_kind(t: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    Some(if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        return None;
    })
}

fn env_limits() -> Result<crate::limits::Limits, ReadError> {
    crate::limits::Limits::from_env()
        .map_err(|e| ReadError::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))
}

/// What kind of file `path` is, in words, when it is not one a reader can
/// bound (a device, a directory, a socket); a regular file or a FIFO
/// (a pipe, `/dev/stdin`) passes.
pub fn readable_input(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::metadata(path)?.file_type();
    if t.is_file() || t.is_fifo() {
        return Ok(());
    }
    let what = special_kind(t).unwrap_or("not a regular file");
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("is {what}, not a file of results"),
    ))
}

/// Runs a typed parse of what `input` streams, decompressed when it
/// starts with zstd's magic, capped and counted; a limit met is named.
fn parse_stream<'a, T>(
    mut input: Box<dyn std::io::Read + 'a>,
    limits: crate::limits::Limits,
    parse: impl FnOnce(&mut dyn std::io::Read) -> serde_json::Result<T>,
) -> Result<T, ReadError> {
    use std::io::Read;
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match input.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    let rest = std::io::Cursor::new(head[..got].to_vec()).chain(input);
    let (out, exceeded) = crate::limits::counted(limits, || -> Result<T, ReadError> {
        if head[..got] == ZSTD_MAGIC {
            let dec = zstd::stream::read::Decoder::new(rest).map_err(|e| {
                ReadError::Io(std::io::Error::new(
                    e.kind(),
                    format!("compressed, but cannot be decompressed: {e}"),
                ))
            })?;
            let mut capped = std::io::BufReader::with_capacity(
                1 << 16,
                crate::limits::Capped::new(dec, limits.max_bytes),
            );
            parse(&mut capped).map_err(|e| classify(e, true))
        } else {
            let mut capped = std::io::BufReader::with_capacity(
                1 << 16,
                crate::limits::Capped::new(rest, limits.max_bytes),
            );
            parse(&mut capped).map_err(|e| classify(e, false))
        }
    });
    match (out, exceeded) {
        (_, Some(l)) => Err(ReadError::Limit(l)),
        (r, None) => r,
    }
}

/// A parse error as a reader says it: a transport or decompression
/// failure is not the JSON's fault.
fn classify(e: serde_json::Error, compressed: bool) -> ReadError {
    if e.is_io() {
        let text = e.to_string();
        let kind = std::io::ErrorKind::InvalidData;
        return ReadError::Io(std::io::Error::new(
            kind,
            if compressed {
                format!("compressed, but cannot be decompressed: {text}")
            } else {
                text
            },
        ));
    }
    ReadError::Json(e)
}

/// Current time as RFC 3339 UTC, e.g. `2026-11-23T00:17:25Z`.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Formats seconds since the epoch (civil-from-days, Howard Hinnant's algorithm).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_is_the_executables_digest_and_the_same_on_every_call() {
        let id = build_id().expect("the test executable can be read");
        assert_eq!(id.len(), 16, "{id}");
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert_eq!(build_id(), Some(id.clone()));
        assert_eq!(Tool::this().build, Some(id));
        // Files written before the build was kept read back without one.
        let t: Tool = serde_json::from_str(r#"{"name":"yamba","version":"0.1.0"}"#).unwrap();
        assert_eq!(t.build, None);
    }

    /// A withheld result says what was expected next to what was seen,
    /// for every failed gating check and none of the passed or
    /// informational ones.
    #[test]
    fn withheld_reason_says_expected_and_observed() {
        let mut r = BenchResult::new("m.x", "x", "m", Unit::Nanoseconds, Mode::Hot, "t");
        r.set_observations(vec![1.0; 5]);
        r.add_evidence(
            "page-out before every pass",
            "0 of 8 resident",
            "8 of 8 resident",
            false,
        )
        .add_evidence("the file was read", "8 pages", "8 pages", true)
        .add_note_evidence("informational", "a", "b", false);
        r.apply_evidence();
        assert_eq!(r.status, Status::Withheld);
        assert_eq!(
            r.reason.as_deref(),
            Some("page-out before every pass: expected 0 of 8 resident, observed 8 of 8 resident")
        );
    }

    /// A listing tells a failed gating check (the result withheld) from
    /// an informational one that did not hold (the result stands).
    #[test]
    fn verdicts_tell_a_failed_check_from_a_note() {
        let mut r = BenchResult::new("m.x", "x", "m", Unit::Nanoseconds, Mode::Hot, "t");
        r.add_evidence("held", "a", "a", true)
            .add_evidence("gating, not held", "a", "b", false)
            .add_note_evidence("informational, held", "a", "a", true)
            .add_note_evidence("informational, not held", "a", "b", false);
        let got: Vec<_> = r.evidence.iter().map(Evidence::verdict).collect();
        assert_eq!(got, ["ok", "FAILED", "ok", "note"]);
    }

    #[test]
    fn formats_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_393_045), "2026-11-23T00:17:25Z");
    }

    /// One batch of a process hit by a preemption (the f32 divide of a
    /// quick run on a busy machine: 496 ns against 3.06 ns) leaves the
    /// within-process estimate alone and is named; a process far from the
    /// others is never left out.
    fn process_blocks(medians: &[f64], adds: &[f64]) -> Certainty {
        process_blocks_in_run(medians, adds, None)
    }

    /// [`process_blocks`] in a run whose best reading was `reference`.
    fn process_blocks_in_run(medians: &[f64], adds: &[f64], reference: Option<f64>) -> Certainty {
        let mut c = Certainty::from_blocks(
            BlockKind::Process,
            medians.to_vec(),
            vec![100; medians.len()],
            0.01,
            vec![3700.0; medians.len()],
        )
        .unwrap();
        c.leave_out_shared_core(adds.to_vec(), reference);
        c
    }

    /// Block cycles: each process block at its own clock; the batches of
    /// one process at that process's one clock; nothing where a process
    /// block's clock is missing.
    #[test]
    fn block_cycles_take_each_block_s_clock_or_its_process_s() {
        let from = |block, mhz: Vec<f64>| {
            Certainty::from_blocks(block, vec![100.0, 110.0], vec![5, 5], 0.0, mhz).unwrap()
        };
        let processes = from(BlockKind::Process, vec![3000.0, 2000.0]);
        assert_eq!(processes.block_cycles(), Some(vec![300.0, 220.0]));
        assert_eq!(processes.cycles.as_ref().unwrap().estimate, 260.0);
        let mut batches = from(BlockKind::Batch, vec![]);
        assert_eq!(batches.block_cycles(), None);
        batches.core_mhz = vec![3000.0];
        assert_eq!(batches.block_cycles(), Some(vec![300.0, 330.0]));
        let one_clock = from(BlockKind::Process, vec![3000.0]);
        assert!(one_clock.core_mhz.is_empty() && one_clock.cycles.is_none());
        assert_eq!(one_clock.block_cycles(), None);
    }

    /// The two-stage rule widens the interval to Stein's from the pilot,
    /// in time and in core cycles: the blocks below ran at three core
    /// clocks (a host moving turbo bins), so their cycles agree more
    /// closely than their times, and the pilot's spread, not the whole
    /// run's, sets both half-widths.
    #[test]
    fn the_two_stage_rule_widens_the_cycles_interval_too() {
        let ns = [500.0, 520.0, 510.0, 511.0, 509.0, 510.0, 510.5];
        let mhz = [3600.0, 3500.0, 3560.0, 3550.0, 3570.0, 3540.0, 3555.0];
        let mut c = Certainty::from_blocks(
            BlockKind::Process,
            ns.to_vec(),
            vec![100; 7],
            0.01,
            mhz.to_vec(),
        )
        .unwrap();
        let before = c.cycles.clone().unwrap();
        c.two_stage(3);
        assert_eq!(c.pilot, Some(3));
        let stein = |v: &[f64]| {
            let p = &v[..3];
            let m = p.iter().sum::<f64>() / 3.0;
            let s0 = (p.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt();
            yamba_stats::t_quantile(0.95, 2.0) * s0 / (v.len() as f64).sqrt()
        };
        let half = |e: &yamba_stats::BlockEstimate| e.ci.unwrap().half_width();
        assert!(
            (half(&c.estimate) - stein(&ns)).abs() < 1e-9,
            "{:?}",
            c.estimate
        );
        let cycles: Vec<f64> = ns.iter().zip(&mhz).map(|(t, f)| t * f / 1e3).collect();
        let after = c.cycles.clone().unwrap();
        assert!(half(&after) > half(&before) * 1.5, "{before:?} {after:?}");
        assert!((half(&after) - stein(&cycles)).abs() < 1e-9, "{after:?}");
        assert_eq!(after.estimate, before.estimate);
        // A run that ended at its pilot is left as it was.
        let mut c = Certainty::from_blocks(
            BlockKind::Process,
            ns[..3].to_vec(),
            vec![100; 3],
            0.01,
            mhz[..3].to_vec(),
        )
        .unwrap();
        let was = c.clone();
        c.two_stage(3);
        assert_eq!((c.pilot, c.cycles), (None, was.cycles));
    }

    /// A process that ran on a shared core (2.2 adds per cycle against
    /// 3.75: the Zen 4 guest's figures) and was 35% slower for it is named
    /// and left out; one the shared core did not move (a dependent chain)
    /// is named and kept; when half or more shared, nothing is left out.
    #[test]
    fn a_process_a_shared_core_moved_is_named_and_left_out() {
        let alone = 3.75;
        let c = process_blocks(
            &[201.4, 201.6, 201.2, 272.0, 201.5, 201.3],
            &[alone, alone, alone, 2.2, alone, alone],
        );
        assert_eq!(c.shared_core, vec![3]);
        assert_eq!(c.kept_blocks(), vec![0, 1, 2, 4, 5]);
        assert_eq!(c.estimate.blocks, 5);
        assert!(
            (c.estimate.estimate - 201.4).abs() < 0.01,
            "{:?}",
            c.estimate
        );
        assert!((c.cycles.as_ref().unwrap().estimate - 201.4 * 3.7).abs() < 0.1);
        let said = c.shared_core_sentence().unwrap();
        assert!(
            said.contains("process 4 of 6 ran on a shared core (2.2 adds per cycle against 3.8"),
            "{said}"
        );
        assert!(said.contains("left out of the value"), "{said}");
        assert!(c.note.as_deref().unwrap().contains(&said));
        // A chain a shared core does not slow: named, kept.
        let c = process_blocks(&[541.1; 6], &[alone, 2.0, alone, alone, alone, alone]);
        assert_eq!(c.shared_core, vec![1]);
        assert_eq!(c.estimate.blocks, 6);
        assert!(c.shared_core_sentence().unwrap().contains("kept"));
        // Half shared, two alone: the run describes a shared core; nothing
        // left out (ipc.ctxsw.pipe on the Zen 4 guest).
        let c = process_blocks(&[1856.0, 2950.0, 2038.0, 2517.0], &[alone, 2.4, alone, 2.2]);
        assert_eq!(c.shared_core, vec![1, 3]);
        assert_eq!(c.estimate.blocks, 4);
        assert!(c
            .shared_core_sentence()
            .unwrap()
            .contains("describes a shared core"));
        // Half shared, three alone (a pilot all shared, then replaced): the
        // value stands on the three that ran alone.
        let c = process_blocks(
            &[272.0, 201.4, 268.0, 201.2, 275.0, 201.5],
            &[2.2, alone, 2.3, alone, 2.4, alone],
        );
        assert_eq!(c.shared_core, vec![0, 2, 4]);
        assert_eq!(c.kept_blocks(), vec![1, 3, 5]);
        assert!(
            (c.estimate.estimate - 201.37).abs() < 0.01,
            "{:?}",
            c.estimate
        );
        assert!(c
            .shared_core_sentence()
            .unwrap()
            .contains("3 moved more than 3%"));
        // Unshared everywhere: nothing named, nothing in the note.
        let c = process_blocks(&[201.4, 201.6, 201.2, 201.5], &[alone, 3.74, alone, 3.76]);
        assert!(c.shared_core.is_empty() && c.note.is_none());
        assert_eq!(c.core_adds_per_cycle.len(), 4);
    }

    /// A result whose every process ran on a shared core agrees with
    /// itself: only the run's best reading tells it (`net.tcp.rtt` on the
    /// Zen 3 guest: four processes at 2.38–2.64 adds per cycle, 22.3 µs,
    /// while the run's other results read 3.75 and unshared runs 16.2 µs).
    /// Judged against the run, it is named and said to describe a shared
    /// core; the reference is stored only where it names blocks the
    /// result's own best would not, and a file's reader recomputes the
    /// same blocks from it.
    #[test]
    fn a_result_shared_in_every_process_is_told_by_the_run_s_best() {
        let tcp = [22.1, 22.6, 22.3, 22.4];
        let adds = [2.38, 2.52, 2.64, 2.45];
        let alone = process_blocks_in_run(&tcp, &adds, None);
        assert!(alone.shared_core.is_empty() && alone.note.is_none());
        let c = process_blocks_in_run(&tcp, &adds, Some(3.75));
        assert_eq!(c.shared_core, vec![0, 1, 2, 3]);
        assert_eq!(c.core_adds_reference, Some(3.75));
        assert_eq!(c.kept_blocks(), vec![0, 1, 2, 3]);
        let said = c.shared_core_sentence().unwrap();
        assert!(
            said.contains("processes 1, 2, 3, 4 of 4 ran on a shared core (2.4–2.6 adds per cycle against 3.8, the run's best"),
            "{said}"
        );
        assert!(said.contains("describes a shared core"), "{said}");
        let json = serde_json::to_string(&c).unwrap();
        let back: Certainty = serde_json::from_str(&json).unwrap();
        assert_eq!(
            shared_core_blocks(&back.core_adds_per_cycle, back.core_adds_reference),
            c.shared_core
        );
        // One process of three shared, the others at the run's best: the
        // result's own best says the same, and nothing more is stored.
        let c = process_blocks_in_run(&[201.4, 272.0, 201.2], &[3.75, 2.2, 3.74], Some(3.75));
        assert_eq!(c.shared_core, vec![1]);
        assert_eq!(c.core_adds_reference, None);
        // A run's best within 10% of the result's names nothing.
        let c = process_blocks_in_run(&[201.4, 201.6, 201.2], &[3.62, 3.62, 3.61], Some(3.75));
        assert!(c.shared_core.is_empty() && c.core_adds_reference.is_none());
        // The run's best reading is the highest of its results'.
        let with = |a: Option<f64>| {
            let mut r = BenchResult::new("a.b", "a.b", "a", Unit::Nanoseconds, Mode::Hot, "t");
            let mut m = Method::direct(1, 0.01, 1.0, 1.0, "budget");
            m.core_adds_per_cycle = a;
            r.method = Some(m);
            r
        };
        let run = [
            with(Some(2.4)),
            with(None),
            with(Some(3.75)),
            with(Some(3.6)),
        ];
        assert_eq!(run_best_adds(&run), Some(3.75));
        assert_eq!(run_best_adds(&[with(None)]), None);
    }

    /// The core's best is a reading others confirm. A Zen 5 guest's run
    /// (r1 of docs/certainty.md's six): 1538 readings, alone ones at
    /// 4.80–4.87 adds per cycle, shared ones below, and five far above
    /// (5.14–8.77) that confirm nothing; against the highest all but one
    /// were shared, against the confirmed best the shared ones are.
    #[test]
    fn the_core_s_best_is_a_reading_others_confirm() {
        let mut run: Vec<f64> = (0..1380).map(|i| 4.80 + (i % 8) as f64 * 0.01).collect();
        run.extend((0..153).map(|i| 3.3 + (i % 10) as f64 * 0.1));
        run.extend([8.767, 6.285, 5.65, 5.15, 5.142]);
        let best = core_best_adds(&run).unwrap();
        assert_eq!(best, 4.87);
        assert_eq!(shared_core_blocks(&run, None).len(), 153);
        assert_eq!(shared_below(&run, 8.767).len(), run.len() - 1);
        // Three blocks, one reading slow-clocked: the other two confirm
        // each other, and nothing is shared.
        assert_eq!(core_best_adds(&[6.61, 4.82, 4.83]), Some(4.83));
        assert!(shared_core_blocks(&[6.61, 4.82, 4.83], None).is_empty());
        // One reading confirms itself; readings all apart give the highest.
        assert_eq!(core_best_adds(&[3.75]), Some(3.75));
        assert_eq!(core_best_adds(&[3.75, 2.4, 3.1]), Some(3.75));
        assert_eq!(core_best_adds(&[f64::NAN, f64::INFINITY]), None);
        assert_eq!(core_best_adds(&[]), None);
        // The run's reference wins where it is higher than the blocks'.
        assert_eq!(judged_best_adds(&[2.4, 2.5], Some(3.75)), Some(3.75));
        assert_eq!(judged_best_adds(&[], Some(3.75)), Some(3.75));
        assert_eq!(judged_best_adds(&[4.8, 4.8], Some(3.75)), Some(4.8));
    }

    /// What the writer judged against is stored, and a file written before
    /// it was is read by the rule of its day (its highest reading).
    #[test]
    fn the_best_judged_against_is_stored() {
        // The run's 4.84 names nothing the blocks' own 4.83 does not, so
        // only the blocks' best is stored.
        let c = process_blocks_in_run(&[7.1, 7.0, 7.2], &[6.61, 4.82, 4.83], Some(4.84));
        assert_eq!(
            (c.core_adds_best, c.core_adds_reference),
            (Some(4.83), None)
        );
        assert!(c.shared_core.is_empty());
        assert_eq!(c.kept_blocks(), vec![0, 1, 2]);
        let mut old = c.clone();
        old.core_adds_best = None;
        assert_eq!(old.adds_best(), Some(6.61));
        old.core_adds_reference = Some(7.0);
        assert_eq!(old.adds_best(), Some(7.0));
    }

    #[test]
    fn disturbed_batch_is_named_and_left_out() {
        let mut obs: Vec<f64> = (0..100).map(|i| 3.06 + (i % 7) as f64 * 0.001).collect();
        for v in &mut obs[40..50] {
            *v = 496.0;
        }
        let c = Certainty::within_process(&obs, 0.0158, Some(3600.0)).unwrap();
        assert_eq!(c.estimate.outliers, vec![4]);
        assert_eq!(c.estimate.blocks, 9);
        assert!(
            (c.estimate.estimate - 3.063).abs() < 0.01,
            "{}",
            c.estimate.estimate
        );
        let ci = c.estimate.ci.unwrap();
        assert!(ci.lo > 3.0 && ci.hi < 3.1, "{ci:?}");
        assert!(c
            .note
            .as_deref()
            .unwrap()
            .contains("1 of 10 batches left out"));
        let cyc = c.cycles.unwrap();
        assert!(
            (cyc.estimate - 3.063 * 3.6).abs() < 0.05,
            "{}",
            cyc.estimate
        );
        // Without the disturbance, nothing is left out.
        let clean: Vec<f64> = (0..100).map(|i| 3.06 + (i % 7) as f64 * 0.001).collect();
        let c = Certainty::within_process(&clean, 0.0158, None).unwrap();
        assert!(c.estimate.outliers.is_empty());
        assert_eq!(c.estimate.blocks, 10);
        // Process blocks: named, kept.
        let medians = vec![100.0, 101.0, 100.5, 99.5, 100.2, 130.0];
        let c =
            Certainty::from_blocks(BlockKind::Process, medians, vec![10; 6], 0.1, vec![]).unwrap();
        assert_eq!(c.estimate.outliers, vec![5]);
        assert_eq!(c.estimate.blocks, 6);
    }

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(write_atomic(&dir.path().join("no/such/dir/x"), b"x").is_err());
    }

    #[test]
    fn a_zst_name_is_written_compressed_and_read_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/files/run-v0.1.0.json"),
        )
        .unwrap();
        let f = ResultsFile::from_json(&text).unwrap();
        let (z, plain) = (dir.path().join("r.json.zst"), dir.path().join("r.json"));
        f.write_atomic(&z).unwrap();
        f.write_atomic(&plain).unwrap();
        let zb = std::fs::read(&z).unwrap();
        assert!(zb.starts_with(&ZSTD_MAGIC));
        assert!(std::fs::read(&plain).unwrap().starts_with(b"{\n"));
        assert!(zb.len() * 4 < std::fs::metadata(&plain).unwrap().len() as usize);
        let same = |g: &ResultsFile| serde_json::to_string(g).unwrap();
        assert_eq!(same(&ResultsFile::read(&z).unwrap()), same(&f));
        assert_eq!(same(&ResultsFile::read(&plain).unwrap()), same(&f));
        // Recognised by content, whatever the name.
        let renamed = dir.path().join("renamed.json");
        std::fs::copy(&z, &renamed).unwrap();
        assert_eq!(same(&ResultsFile::read(&renamed).unwrap()), same(&f));
        // A truncated compressed file: one clear error naming the file.
        std::fs::write(&renamed, &zb[..zb.len() / 2]).unwrap();
        let e = ResultsFile::read(&renamed).unwrap_err().to_string();
        assert!(e.contains("renamed.json") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn withholds_on_failed_gating_evidence_only() {
        let mut r = BenchResult::new("x", "x", "t", Unit::Nanoseconds, Mode::Hot, "test");
        r.add_note_evidence("informational", "1", "2", false);
        r.apply_evidence();
        assert_eq!(r.status, Status::Ok);
        r.add_evidence("every access faulted", "100", "3", false);
        r.apply_evidence();
        assert_eq!(r.status, Status::Withheld);
        assert!(r.reason.unwrap().contains("every access faulted"));
    }

    #[test]
    fn rejects_foreign_and_future_files() {
        assert!(matches!(
            ResultsFile::from_json("{\"schema\":\"other\"}"),
            Err(ReadError::NotYamba(_))
        ));
        assert!(matches!(
            ResultsFile::from_json("{\"schema\":\"yamba-results\",\"schema_version\":99}"),
            Err(ReadError::Version(99))
        ));
        assert!(matches!(
            ResultsFile::from_json("[1,"),
            Err(ReadError::Json(_))
        ));
    }

    /// Whether a shared core moves a result, from its own processes: a
    /// shared one 35% above the alone ones says yes, 0.1% no, and a run
    /// with processes in one state only says nothing.
    #[test]
    fn a_result_shows_whether_a_shared_core_moves_it() {
        let moved = process_blocks(&[200.0, 270.0, 201.0, 200.5], &[3.75, 2.2, 3.75, 3.75]);
        assert_eq!(moved.shared_core_moves(), Some(true));
        let kept = process_blocks(&[200.0, 200.2, 201.0, 200.5], &[3.75, 2.2, 3.75, 3.75]);
        assert_eq!(kept.shared_core_moves(), Some(false));
        let alone = process_blocks(&[200.0, 270.0, 201.0], &[3.75; 3]);
        assert_eq!(alone.shared_core_moves(), None);
        let all_shared = process_blocks_in_run(&[270.0, 271.0, 272.0], &[2.2; 3], Some(3.75));
        assert_eq!(all_shared.shared_core.len(), 3);
        assert_eq!(all_shared.shared_core_moves(), None);
    }
}
