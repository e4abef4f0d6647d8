//! What a benchmark is, and the context it runs in.

use crate::base::{measure_base, Base};
use crate::clock::Clock;
use crate::cold::Evictor;
use crate::harness::{measure_loop, measure_single, Measured, Plan};
use crate::machine::{Describe, Machine};
use crate::settings::Setting;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use yamba_results::results::{BenchResult, Certainty, Method, Mode};
use yamba_results::units::Unit;
use yamba_results::Rotation;

/// Below this many clock quanta a single timing is withheld.
pub const MIN_QUANTA: f64 = 2.0;
/// Below this many it is labelled resolution-limited (each quantum more
/// than 5% of the value).
pub const RESOLVED_QUANTA: f64 = 20.0;

/// A registered benchmark: a generic template whose `run` calls its
/// platform adapter, described well enough for `yamba list`.
#[derive(Clone, Copy)]
pub struct Benchmark {
    /// Dotted id, area first: `cpu.syscall.getppid`.
    pub id: &'static str,
    pub area: &'static str,
    pub unit: Unit,
    /// Whether a larger value is the better one, where [`Unit`] does not
    /// say (a ratio): written on each result, for `compare` to tell a
    /// regression from an improvement. None: the unit's rule.
    pub higher_is_better: Option<bool>,
    /// One line: what operation P is.
    pub description: &'static str,
    /// Whether it has a worst case (`--mode cold`), or why one would not
    /// mean something for it: every benchmark chooses (see [`Cold`]). Its
    /// modes follow ([`Benchmark::modes`]).
    pub cold: Cold,
    /// Part of the default suite (`yamba run` with no names).
    pub default: bool,
    /// Test-only: listed and runnable only with YAMBA_TEST_BENCHMARKS=1.
    pub hidden: bool,
    /// The platform adapter this build uses for it: the area's
    /// `adapter::NAME`, or [`NO_ADAPTER`] where the area has none for this
    /// platform (the runner then skips it and says so).
    pub adapter: &'static str,
    /// Seconds after which the run is killed and reported as hung.
    pub timeout_s: u64,
    /// The `--set` settings it reads (see [`crate::settings`]).
    pub settings: &'static [Setting],
    /// How a precise run replicates it (see docs/certainty.md).
    pub replication: Replication,
    /// Why it cannot run as simultaneous copies (`--copies N`): it uses
    /// every CPU, a partner on another CPU, or a resource of the whole
    /// machine. None: it can.
    pub one_copy_only: Option<&'static str>,
    /// Whether it can run here; Err says why not (needs root, missing feature).
    pub requires: fn(&Machine, &RunConfig) -> Result<(), String>,
    pub run: fn(&mut Ctx) -> Result<(), String>,
}

impl Benchmark {
    /// Defaults to build on with struct-update syntax.
    pub const TEMPLATE: Benchmark = Benchmark {
        id: "",
        area: "",
        unit: Unit::Nanoseconds,
        higher_is_better: None,
        description: "",
        cold: Cold::Unchosen,
        default: true,
        hidden: false,
        adapter: "generic",
        timeout_s: 120,
        settings: &[],
        replication: Replication::Processes,
        one_copy_only: None,
        requires: |_, _| Ok(()),
        run: |_| Err("no run function".into()),
    };

    /// The modes it measures: hot always, cold when [`Cold::Measured`].
    pub fn modes(&self) -> &'static [Mode] {
        match self.cold {
            Cold::Measured => &[Mode::Hot, Mode::Cold],
            Cold::NotMeaningful(_) | Cold::Unchosen => &[Mode::Hot],
        }
    }

    pub fn supports(&self, mode: Mode) -> bool {
        self.modes().contains(&mode)
    }

    /// Why it has no cold mode (None when it has one): what `yamba list`
    /// shows and a cold run's skip says.
    pub fn no_cold(&self) -> Option<&'static str> {
        match self.cold {
            Cold::Measured => None,
            Cold::NotMeaningful(why) => Some(why),
            Cold::Unchosen => Some(Cold::UNCHOSEN),
        }
    }

    /// Whether it can run here: Err says why not — no adapter for this
    /// platform, or what its own `requires` says (needs root, a feature).
    pub fn runnable(&self, machine: &Machine, config: &RunConfig) -> Result<(), String> {
        if self.adapter == NO_ADAPTER {
            return Err(no_adapter_reason());
        }
        (self.requires)(machine, config)
    }
}

/// A benchmark's worst case (seed 001: caches and branch predictors
/// flushed before each operation): cold mode times one operation alone
/// after [`crate::cold::Evictor`] swept the caches and disturbed branch
/// history ([`Ctx::measure_single`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cold {
    /// It measures a cold case beside the hot one.
    Measured,
    /// A cold case would not mean something for it — why, in one line
    /// (the working-set sizes are the experiment; one operation cannot
    /// be timed alone; …).
    NotMeaningful(&'static str),
    /// Not chosen: [`Benchmark::TEMPLATE`]'s value, so that a new
    /// benchmark must choose; measured hot only, and refused by the
    /// suite's test of every registered benchmark.
    Unchosen,
}

impl Cold {
    /// What an unchosen benchmark says for its missing cold mode.
    pub const UNCHOSEN: &'static str =
        "no cold case chosen (the benchmark states neither a cold mode nor why not)";
}

/// The adapter name of an area's `unsupported` adapter, and why a benchmark
/// naming it did not run: defined beside the adapters of yamba-os, whose
/// `unsupported` ones name it too.
pub use yamba_os::{no_adapter_reason, NO_ADAPTER};

/// The unit of replication of a benchmark's results in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replication {
    /// Each of the run's blocks is a fresh process, interleaved with the
    /// other benchmarks; the interval comes from the processes' medians.
    Processes,
    /// Measured in one process only, whatever the run's block count — a
    /// curve, a sweep or a setup too costly to repeat — giving `why`; its
    /// interval is within-process and labelled so.
    OneProcess { why: &'static str },
}

impl std::fmt::Debug for Benchmark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Benchmark").field("id", &self.id).finish()
    }
}

/// How a run was asked to go.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    /// A rough pass: short budgets.
    pub quick: bool,
    /// Modes to measure, for benchmarks that support them.
    pub modes: Vec<Mode>,
    /// CPU to pin to; `None` picks [`crate::affinity::default_cpu`].
    pub cpu: Option<usize>,
    /// Do not pin at all.
    pub no_pin: bool,
    /// Ask for SCHED_FIFO.
    pub realtime: bool,
    /// Sampling budget per measured quantity, in seconds.
    pub budget_s: f64,
    /// Override of each benchmark's own timeout, in seconds.
    pub timeout_s: Option<u64>,
    /// Where scratch files go (default: a fresh directory in the working directory).
    pub scratch_dir: Option<PathBuf>,
    /// A `yamba serve` agent for the remote benchmarks.
    pub remote: Option<String>,
    /// Its token.
    pub remote_token: Option<String>,
    /// Run each benchmark in a child process (crash and hang isolation).
    pub isolate: bool,
    /// Blocks: run the whole list at least this many times, interleaved,
    /// each time in fresh processes; a result's interval comes from the
    /// blocks' values. With `max_blocks` above it, a benchmark whose
    /// interval is still wider than the target gets more blocks (see
    /// [`crate::runner`]: the two-stage rule).
    #[serde(default = "one")]
    pub repetitions: usize,
    /// The most blocks a benchmark may get (0 or ≤ `repetitions`: exactly
    /// `repetitions`, as `--repeat N` asks).
    #[serde(default)]
    pub max_blocks: usize,
    /// Extra blocks may take at most this share of the pilot's time, or
    /// [`EXTRA_FLOOR_S`] when that is more (none when it is zero).
    #[serde(default = "extra_share")]
    pub extra_share: f64,
    /// Benchmark-specific settings (`--set key=value`).
    pub settings: BTreeMap<String, String>,
    /// Measure code where the build put it (one placement per process,
    /// as other tools do) instead of at placements drawn at random.
    #[serde(default)]
    pub fixed_placement: bool,
    /// Also measure every benchmark as this many simultaneous copies, each
    /// on its own CPU, beside one copy (`--copies N`; 1: one copy only).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub copies: usize,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            quick: false,
            modes: vec![Mode::Hot],
            cpu: None,
            no_pin: false,
            realtime: false,
            budget_s: BLOCK_BUDGET_S,
            timeout_s: None,
            scratch_dir: None,
            remote: None,
            remote_token: None,
            isolate: true,
            repetitions: PRECISE_BLOCKS,
            max_blocks: MAX_BLOCKS,
            extra_share: EXTRA_SHARE,
            settings: BTreeMap::new(),
            fixed_placement: false,
            copies: 1,
        }
    }
}

pub use yamba_results::results::PRECISE_BLOCKS;

/// The most blocks a precise run gives one benchmark by default.
pub const MAX_BLOCKS: usize = 10;

/// Sampling budget per measured quantity in one block, in seconds: a
/// block is a short look at the machine; certainty comes from blocks.
pub const BLOCK_BUDGET_S: f64 = 0.15;

/// A precise run's effort per benchmark in its pilot, in quick passes:
/// spent as [`PRECISE_BLOCKS`] replicated blocks where the benchmark
/// replicates ([`BLOCK_EFFORT`] each, half a pass), and as one longer
/// block where it is measured in one process only. Less than one pass per
/// block: the interval rests on the spread between blocks, not on each
/// block's own precision, and a pilot of three whole quick passes would
/// alone cost 3× a quick run, the bound a whole precise run is held to.
/// Half a pass, not two thirds: what a block's own work costs regardless
/// of its effort (its process, its files) and the blocks that replace
/// processes on a shared core took a precise run over 3× at two thirds
/// (docs/certainty.md, "Where the time goes").
pub const PRECISE_EFFORT: f64 = 1.5;

/// What one replicated block of a precise run does, in quick passes.
pub const BLOCK_EFFORT: f64 = PRECISE_EFFORT / PRECISE_BLOCKS as f64;

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn extra_share() -> f64 {
    EXTRA_SHARE
}

/// Extra blocks may cost at most this share of the pilot's time by
/// default: a precise run's length stays within a known multiple of its
/// pilot's, and a time bound that does not look at the blocks' values
/// leaves the two-stage interval's coverage as it is.
pub const EXTRA_SHARE: f64 = 0.10;

/// Extra blocks may always take this many seconds, whatever the pilot's
/// share allows: a run of one or two benchmarks has a pilot of about half
/// a second, whose 10% buys no block, so its interval rested on three
/// blocks however far apart they were (on an AMD EPYC Zen 3 guest one
/// getppid block in a few runs at ~174 ns beside two at ~135, read as
/// 148 ± 39%). A fixed time looks at no value, so the two-stage
/// interval's coverage is kept; a whole default suite's share is larger.
pub const EXTRA_FLOOR_S: f64 = 1.0;

impl RunConfig {
    pub fn quick() -> RunConfig {
        RunConfig {
            quick: true,
            repetitions: 1,
            max_blocks: 1,
            ..RunConfig::default()
        }
    }

    /// Blocks `bench` is measured in at least: the run's, or one when it
    /// measures in one process only.
    pub fn blocks_for(&self, bench: &Benchmark) -> usize {
        match bench.replication {
            Replication::Processes => self.repetitions.max(1),
            Replication::OneProcess { .. } => 1,
        }
    }

    /// The most blocks `bench` may get: more than [`Self::blocks_for`]
    /// only when the run adapts its block count.
    pub fn max_blocks_for(&self, bench: &Benchmark) -> usize {
        match bench.replication {
            Replication::Processes => self.max_blocks.max(self.repetitions).max(1),
            Replication::OneProcess { .. } => 1,
        }
    }

    /// How much one block of `bench` does, in quick passes: 1 in a quick
    /// run, [`BLOCK_EFFORT`] in each block of a precise run's replicated
    /// benchmark (the blocks replicate it), [`PRECISE_EFFORT`] in a
    /// precise run's benchmark measured in one block (a curve, or
    /// `--repeat 1`).
    pub fn effort_for(&self, bench: &Benchmark) -> f64 {
        if self.quick {
            1.0
        } else if self.blocks_for(bench) == 1 {
            PRECISE_EFFORT
        } else {
            BLOCK_EFFORT
        }
    }

    /// The harness plan of one block at effort 1: sampling at most
    /// `budget_s` per quantity.
    pub fn plan(&self) -> Plan {
        let mut p = Plan::block();
        // A budget from a session handed in (not only from the command
        // line, which bounds it) must not panic when absurd: at most a day.
        p.budget = Duration::try_from_secs_f64(self.budget_s.clamp(0.001, 86_400.0))
            .unwrap_or(Duration::from_secs(2));
        if self.fixed_placement {
            p.placement = crate::harness::Placing::ASKED;
        }
        p
    }
}

/// What every benchmark of a run shares: the clock, BASE, the machine.
#[derive(Debug, Clone)]
pub struct Session {
    pub clock: Clock,
    pub base: Base,
    pub machine: Machine,
    pub config: RunConfig,
    /// CPU benchmarks are pinned to (None when pinning is off).
    pub cpu: Option<usize>,
    /// An executable that runs one benchmark as `EXE __bench ID MODE
    /// SCRATCH`, reading [`SessionState`] on stdin (the `yamba` binary):
    /// when set, isolated benchmarks run in fresh processes, not forks.
    pub bench_exe: Option<std::path::PathBuf>,
    /// Which block of its benchmark this session runs, from 0
    /// ([`Session::at_block`]; see [`Ctx::measures_curve`]).
    pub block: usize,
    /// The run's seed of its placement design, the same in every process
    /// of the run ([`crate::placement::Design`]).
    pub placement_seed: u64,
}

/// A session as a child process receives it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionState {
    pub clock: crate::clock::ClockInfo,
    pub base: Base,
    pub machine: Machine,
    pub config: RunConfig,
    pub cpu: Option<usize>,
    /// Which block of its benchmark the process runs ([`Session::block`]).
    #[serde(default)]
    pub block: usize,
    #[serde(default)]
    pub placement_seed: u64,
    /// Set when this process is one of N simultaneous copies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<crate::copies::CopyRole>,
}

impl Session {
    /// Detects and calibrates the clock and measures BASE.
    pub fn prepare(config: RunConfig) -> Session {
        let clock = Clock::detect(if config.quick { 50 } else { 250 });
        let base = measure_base(&clock, if config.quick { 10_000 } else { 20_000 });
        // Remember the CPUs usable before any benchmark pins itself.
        crate::affinity::usable_cpus();
        let cpu = if config.no_pin {
            None
        } else {
            Some(config.cpu.unwrap_or_else(crate::affinity::default_cpu))
        };
        Session {
            clock,
            base,
            machine: Machine::describe(),
            config,
            cpu,
            bench_exe: None,
            block: 0,
            // From the OS, not the thread's generator: drawing from that
            // here would seed it in the parent, and every forked block
            // would then draw the same numbers from its copy.
            placement_seed: rand::RngCore::next_u64(&mut rand::rngs::OsRng),
        }
    }

    /// This session for block `block` of a benchmark (0: the first).
    pub fn at_block(&self, block: usize) -> Session {
        Session {
            block,
            ..self.clone()
        }
    }

    pub fn state(&self) -> SessionState {
        SessionState {
            clock: self.clock.info().clone(),
            base: self.base.clone(),
            machine: self.machine.clone(),
            config: self.config.clone(),
            cpu: self.cpu,
            block: self.block,
            placement_seed: self.placement_seed,
            copy: None,
        }
    }

    /// The session a parent handed over; nothing is calibrated again.
    pub fn from_state(s: SessionState) -> Session {
        // Remember the CPUs usable before the benchmark pins itself, as the
        // parent did in `prepare` (this process inherited its mask).
        crate::affinity::usable_cpus();
        Session {
            clock: Clock::from_info(s.clock),
            base: s.base,
            machine: s.machine,
            config: s.config,
            cpu: s.cpu,
            bench_exe: None,
            block: s.block,
            placement_seed: s.placement_seed,
        }
    }

    /// A context for `bench` in `mode`, scratch files under `scratch`.
    pub fn context<'a>(&'a self, bench: &'static Benchmark, mode: Mode, scratch: &Path) -> Ctx<'a> {
        Ctx {
            session: self,
            bench,
            mode,
            scratch: scratch.to_path_buf(),
            memo: crate::memo::Memo::none(),
            results: Vec::new(),
            evictor: None,
        }
    }
}

/// What a running benchmark sees: the session's clock and BASE, its mode,
/// its scratch directory, and where its results go.
pub struct Ctx<'a> {
    pub session: &'a Session,
    pub bench: &'static Benchmark,
    pub mode: Mode,
    scratch: PathBuf,
    memo: crate::memo::Memo,
    results: Vec<BenchResult>,
    evictor: Option<Evictor>,
}

impl<'a> Ctx<'a> {
    pub fn clock(&self) -> &'a Clock {
        &self.session.clock
    }

    /// BASE as subtracted from a single timing: the mean of its central
    /// readings (see [`crate::base`]).
    pub fn base_ns(&self) -> f64 {
        self.session.base.subtract_ns()
    }

    /// The fastest reading of BASE: the floor of what the clock can show.
    pub fn base_min_ns(&self) -> f64 {
        self.session.base.base_ns
    }

    pub fn config(&self) -> &'a RunConfig {
        &self.session.config
    }

    pub fn machine(&self) -> &'a Machine {
        &self.session.machine
    }

    pub fn quick(&self) -> bool {
        self.session.config.quick
    }

    /// The harness plan for this block of the run, scaled by its
    /// [`Ctx::effort`].
    pub fn plan(&self) -> Plan {
        let mut plan = self.session.config.plan().scaled(self.effort());
        let config = &self.session.config;
        if !config.quick && config.blocks_for(self.bench) > 1 {
            plan.design = Some(crate::placement::Design {
                seed: self.session.placement_seed,
                block: self.session.block,
            });
        }
        plan
    }

    /// How much this block does, in quick passes ([`RunConfig::effort_for`]):
    /// what a benchmark multiplies its own repetition counts, passes and
    /// time budgets by. Sizes (what is measured) follow [`Ctx::quick`].
    pub fn effort(&self) -> f64 {
        self.session.config.effort_for(self.bench)
    }

    /// Whether this block measures a benchmark's whole curve (every size,
    /// process count or block size it reports), or only the points its
    /// results' values come from. A quick run's one block and a precise
    /// run's first block measure the curve; a precise run's other blocks
    /// replicate only the headline points, since only those are pooled
    /// into an interval — the pooled result keeps the first block's curve
    /// and table (`runner::merge_blocks`). Measuring the curve again in
    /// every block cost most of a precise run's time and was thrown away.
    pub fn measures_curve(&self) -> bool {
        self.quick() || self.session.block == 0
    }

    /// `quick_amount` (a count of repetitions, passes or rounds a quick
    /// pass makes) at this block's effort, rounded up.
    pub fn scaled(&self, quick_amount: usize) -> usize {
        (quick_amount as f64 * self.effort()).ceil() as usize
    }

    /// `quick_budget` (a time a quick pass spends) at this block's effort.
    pub fn scaled_time(&self, quick_budget: Duration) -> Duration {
        quick_budget.mul_f64(self.effort())
    }

    /// The CPU this benchmark is pinned to, if pinning is on.
    pub fn cpu(&self) -> Option<usize> {
        self.session.cpu
    }

    /// The raw value of a setting this benchmark declares (given with
    /// `--set key=value`, under its key or an old name), if it was given.
    /// Benchmarks use the typed accessors below, which parse, bound-check
    /// and refuse a key the benchmark did not declare.
    fn setting(&self, key: &str) -> Option<&'a str> {
        let settings = &self.session.config.settings;
        let names = self.declaration(key).map(|d| d.aliases).unwrap_or(&[]);
        std::iter::once(key)
            .chain(names.iter().copied())
            .find_map(|k| settings.get(k))
            .map(String::as_str)
    }

    fn declaration(&self, key: &str) -> Option<&'static Setting> {
        self.bench.settings.iter().find(|s| s.key == key)
    }

    /// Parses a declared setting with `parse`; None when not given.
    fn typed<T>(
        &self,
        key: &str,
        parse: impl FnOnce(&'static Setting, &'a str) -> Result<T, crate::settings::SettingError>,
    ) -> Result<Option<T>, String> {
        let Some(d) = self.declaration(key) else {
            return Err(format!(
                "{} reads setting {key} without declaring it (a bug in the benchmark)",
                self.bench.id
            ));
        };
        self.setting(key)
            .map(|v| parse(d, v).map_err(String::from))
            .transpose()
    }

    /// A size in bytes (`64`, `4K`, `8M`), within the declared bounds.
    pub fn bytes(&self, key: &str) -> Result<Option<u64>, String> {
        self.typed(key, |d, v| d.parse_bytes(v))
    }

    /// A whole number, within the declared bounds.
    pub fn integer(&self, key: &str) -> Result<Option<u64>, String> {
        self.typed(key, |d, v| d.parse_integer(v))
    }

    /// A number, within the declared bounds.
    pub fn number(&self, key: &str) -> Result<Option<f64>, String> {
        self.typed(key, |d, v| d.parse_number(v))
    }

    /// One of the declared words.
    pub fn choice(&self, key: &str) -> Result<Option<&'a str>, String> {
        self.typed(key, |d, v| d.parse_choice(v))
    }

    /// Some of the declared words, comma-separated.
    pub fn list(&self, key: &str) -> Result<Option<Vec<&'a str>>, String> {
        self.typed(key, |d, v| d.parse_list(v))
    }

    /// Free text (a path).
    pub fn text(&self, key: &str) -> Result<Option<&'a str>, String> {
        self.typed(key, |_, v| Ok(v))
    }

    /// A directory for scratch files, removed by the runner afterwards
    /// whatever happens to the benchmark.
    pub fn scratch_dir(&self) -> &Path {
        &self.scratch
    }

    /// Shares facts with the run's other processes ([`crate::memo`]); the
    /// runner sets it, a context made by hand shares nothing.
    pub fn share_with_run(&mut self, memo: crate::memo::Memo) {
        self.memo = memo;
    }

    /// The run's fact `name`, measured by the first process that asks
    /// ([`crate::memo::Memo::get_or_measure`]).
    pub fn run_fact<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        name: &str,
        measure: impl FnOnce() -> T,
    ) -> (T, crate::memo::Source) {
        self.memo.get_or_measure(name, measure)
    }

    /// A new result for this benchmark, id `bench.id` plus `.suffix` when given.
    pub fn result(&self, suffix: Option<&str>) -> BenchResult {
        let b = self.bench;
        let id = match suffix {
            Some(s) => format!("{}.{s}", b.id),
            None => b.id.to_string(),
        };
        let mut r = BenchResult::new(id, b.id, b.area, b.unit, self.mode, b.adapter);
        r.description = b.description.to_string();
        r.better_higher = b.higher_is_better;
        r
    }

    /// How a benchmark that timed its own observations measured:
    /// `iterations` operations per observation, sampling since `started`.
    pub fn direct_method(
        &self,
        iterations: u64,
        started: std::time::Instant,
        stopped: impl Into<String>,
    ) -> Method {
        let plan = self.plan();
        Method::direct(
            iterations,
            plan.target_precision,
            plan.budget.as_secs_f64(),
            started.elapsed().as_secs_f64(),
            stopped,
        )
    }

    /// A result filled from a measurement.
    pub fn measured_result(&self, suffix: Option<&str>, m: Measured) -> BenchResult {
        let mut r = self.result(suffix);
        r.set_observations(m.observations);
        r.method = Some(m.method);
        r
    }

    /// Records a finished result: its within-process interval, a check
    /// that single timings are long enough for the clock to resolve; then
    /// failed gating evidence withholds it.
    pub fn push(&mut self, mut r: BenchResult) {
        let resolution = self.resolution(&r);
        // The loop and single methods read the clock during sampling;
        // results timed by the benchmark itself get it read right after.
        if let Some(m) = r.method.as_mut().filter(|m| m.core_mhz.is_none()) {
            let t = crate::coreclock::probe();
            m.core_mhz = t.mhz();
            m.core_adds_per_cycle = t.adds_per_cycle();
        }
        if r.certainty.is_none() {
            let mhz = r.method.as_ref().and_then(|m| m.core_mhz);
            let mhz = mhz.filter(|_| r.unit == Unit::Nanoseconds);
            let rotation = r.method.as_ref().map_or(Rotation::NONE, Method::rotation);
            r.certainty = if rotation == Rotation::NONE {
                Certainty::within_process(&r.observations, resolution, mhz)
            } else {
                Certainty::within_process_placed(&r.observations, rotation, resolution, mhz)
            };
            crate::placement::evidence(&mut r);
        }
        self.check_resolution(&mut r);
        r.apply_evidence();
        self.results.push(r);
    }

    /// The smallest step one observation of `r` can show, in its unit: the
    /// clock's quantum over the operations per observation (times only).
    fn resolution(&self, r: &BenchResult) -> f64 {
        let n = r.method.as_ref().map_or(1, |m| m.iterations.max(1));
        match r.unit {
            Unit::Nanoseconds => self.clock().info().resolution_ns / n as f64,
            _ => 0.0,
        }
    }

    /// A single operation timed alone must last a few clock quanta for
    /// its number to mean anything: under [`MIN_QUANTA`] the result is
    /// withheld, under [`RESOLVED_QUANTA`] it is labelled.
    fn check_resolution(&self, r: &mut BenchResult) {
        let single = r.method.as_ref().is_some_and(|m| m.iterations == 1);
        let quantum = self.clock().info().resolution_ns;
        let (Some(v), true, true) = (
            r.median(),
            single,
            r.unit == Unit::Nanoseconds && quantum > 0.0,
        ) else {
            return;
        };
        let quanta = v / quantum;
        r.add_evidence(
            format!(
                "one operation lasts at least {MIN_QUANTA} clock quanta (the clock resolves it)"
            ),
            format!(
                "≥ {:.1} ns ({MIN_QUANTA} × {quantum:.1} ns)",
                MIN_QUANTA * quantum
            ),
            format!("{v:.1} ns ({quanta:.1} quanta)"),
            quanta >= MIN_QUANTA,
        );
        if (MIN_QUANTA..RESOLVED_QUANTA).contains(&quanta) {
            r.warn(format!(
                "resolution-limited: one operation is {quanta:.1} clock quanta of {quantum:.1} ns (each quantum is {:.0}% of it)",
                100.0 / quanta
            ));
        }
    }

    /// Hot: the loop method. Cold: one operation at a time after eviction.
    pub fn measure<P: FnMut()>(&mut self, op: P) -> Measured {
        match self.mode {
            Mode::Hot => measure_loop(self.clock(), &self.plan(), op, || {}),
            Mode::Cold => self.measure_single(|| {}, op),
        }
    }

    /// The loop method with an explicit dummy body F.
    pub fn measure_loop<P: FnMut(), D: FnMut()>(&self, op: P, dummy: D) -> Measured {
        measure_loop(self.clock(), &self.plan(), op, dummy)
    }

    /// Single operations with BASE subtracted; in cold mode caches are
    /// evicted and branch history disturbed before each.
    pub fn measure_single<S: FnMut(), P: FnMut()>(&mut self, setup: S, op: P) -> Measured {
        let plan = self.plan();
        let base = self.base_ns();
        let clock = self.session.clock.clone();
        if self.mode == Mode::Cold && self.evictor.is_none() {
            self.evictor = Some(Evictor::new(&self.session.machine));
        }
        let ev = if self.mode == Mode::Cold {
            self.evictor.as_mut()
        } else {
            None
        };
        measure_single(&clock, base, &plan, ev, setup, op)
    }

    pub fn into_results(self) -> Vec<BenchResult> {
        self.results
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yamba_results::results::Status;

    static WITHOUT_ADAPTER: Benchmark = Benchmark {
        id: "test.no_adapter",
        area: "test",
        description: "an area with no adapter for this platform",
        adapter: NO_ADAPTER,
        run: |_| panic!("a benchmark without an adapter must never run"),
        ..Benchmark::TEMPLATE
    };

    static ONE_PROCESS: Benchmark = Benchmark {
        id: "test.one_process",
        area: "test",
        description: "a curve measured in one process",
        replication: Replication::OneProcess { why: "a test" },
        run: |_| Ok(()),
        ..Benchmark::TEMPLATE
    };

    /// A precise run's pilot does one and a half quick passes' worth of
    /// every benchmark: three blocks of ½ where it replicates, one block of
    /// 1.5 where it does not; `--repeat N` keeps a block's effort; a quick
    /// pass is 1. The plan's budget follows a block's effort below 1 too.
    #[test]
    fn a_precise_pilot_does_one_and_a_half_quick_passes() {
        let precise = RunConfig::default();
        let replicated = &WITHOUT_ADAPTER;
        let pilot = precise.blocks_for(replicated) as f64 * precise.effort_for(replicated);
        assert!((pilot - 1.5).abs() < 1e-12, "{pilot}");
        assert_eq!(precise.effort_for(&ONE_PROCESS), PRECISE_EFFORT);
        let repeat_1 = RunConfig {
            repetitions: 1,
            max_blocks: 1,
            ..RunConfig::default()
        };
        assert_eq!(repeat_1.effort_for(replicated), PRECISE_EFFORT);
        let repeat_6 = RunConfig {
            repetitions: 6,
            max_blocks: 6,
            ..RunConfig::default()
        };
        assert_eq!(repeat_6.effort_for(replicated), BLOCK_EFFORT);
        let quick = RunConfig::quick();
        assert_eq!(quick.effort_for(replicated), 1.0);
        assert_eq!(quick.effort_for(&ONE_PROCESS), 1.0);
        let block = precise.plan().scaled(BLOCK_EFFORT);
        assert_eq!(block.budget, precise.plan().budget.mul_f64(0.5));
    }

    /// What a new platform sees: skipped with the reason, never run (its
    /// `run` would panic into a failed result), and `yamba list` says the same.
    #[test]
    fn no_adapter_is_skipped_with_its_reason() {
        let session = Session::prepare(RunConfig::quick());
        let dir = tempfile::tempdir().unwrap();
        let results = crate::runner::run_one(&session, &WITHOUT_ADAPTER, Mode::Hot, dir.path());
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].status, Status::Skipped);
        let reason = results[0].reason.as_deref().unwrap_or("");
        assert!(
            reason.starts_with("no adapter for this platform (")
                && reason.contains(std::env::consts::OS),
            "{reason}"
        );
        let listed = WITHOUT_ADAPTER.runnable(&session.machine, &session.config);
        assert_eq!(listed.unwrap_err(), reason);
    }
}
