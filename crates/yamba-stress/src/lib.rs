//! `yamba stress`: random creation and destruction of the primitives the
//! suite measures, error tests with random and invalid arguments, the
//! invariants that must hold during and after, and what the stress costs
//! a chosen benchmark (the Go! report's stress and error tests, with the
//! evidence stress-ng does not give: whether the system stayed correct).
//!
//! A run (see [`run`]):
//! 1. baselines: unreclaimable kernel memory (the `space` area's
//!    accounting: slab, kernel stacks, page tables) and the memory in use
//!    that no live process holds (MemTotal − MemAvailable, netted),
//!    sampled until their spread is known;
//! 2. the idle measurement of each `--measure` benchmark;
//! 3. churn workers ([`churn`]) and the error-test process ([`errors`]),
//!    supervised ([`supervise`]), with the measurement under stress
//!    running alongside once they are up;
//! 4. after everything is reaped: kernel and free memory back to their
//!    baselines within a tolerance, no process left in the run's groups,
//!    no zombie, the scratch directory empty;
//! 5. results in yamba's schema ([`report`]), one per churned kind, per
//!    invariant, per error-tested primitive, per measurement.
//!
//! Linux only.

#![cfg(target_os = "linux")]

pub mod churn;
pub mod cost;
pub mod error;
pub mod errors;
pub mod limits;
pub mod plant;
pub mod report;
pub mod rng;
pub mod shared;
pub mod supervise;
pub mod sys;

pub use error::StressError;

use churn::{Churned, Kind, WorkerSpec};
use errors::{ErrorSpec, Finding, TablePlants};
use limits::{Confinement, Limits};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use yamba_core::{BenchResult, Mode, RunConfig, Session};

/// Run only the error tests of a seed, to reproduce what it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Replay {
    /// Calls 0..n.
    Calls(u64),
    /// Call k alone.
    Call(u64),
}

/// Defects planted on purpose, to prove the checks catch them. Tests
/// only: the CLI takes them from YAMBA_STRESS_PLANT, and a run with one
/// says so in its notes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plant {
    /// Forget to release every Nth destroyed object of this kind (close
    /// its fds, unmap its mapping, unlink its file).
    pub leak: Option<(Kind, u64)>,
    /// Churn worker 0 dies of SIGSEGV at this operation.
    pub crash_worker_at: Option<u64>,
    /// Churn worker 0 leaves this many MiB of kernel memory behind, in
    /// System V message queues ([`plant`]; remove them with
    /// [`plant::remove_kernel_leak`]).
    pub kernel_leak_mib: Option<u64>,
    #[serde(skip)]
    pub table: TablePlants,
}

impl Plant {
    /// `leak=eventfd:100`, `crash-worker=500`, `kernel-leak=128` (MiB),
    /// `wrong-errno`, `crash-call`, `hang-call`, comma-separated.
    pub fn parse(s: &str) -> Result<Plant, StressError> {
        let mut p = Plant::default();
        for part in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            match part.split_once('=') {
                Some(("leak", v)) => {
                    let (k, n) = v.split_once(':').ok_or(StressError::PlantLeakForm)?;
                    let kind = Kind::parse(k).ok_or_else(|| StressError::PlantKind(k.into()))?;
                    let n = n.parse().map_err(|_| plant_number("count", n))?;
                    p.leak = Some((kind, n));
                }
                Some(("kernel-leak", v)) => {
                    p.kernel_leak_mib = Some(v.parse().map_err(|_| plant_number("MiB", v))?)
                }
                Some(("crash-worker", v)) => {
                    p.crash_worker_at = Some(v.parse().map_err(|_| plant_number("op", v))?)
                }
                None if part == "wrong-errno" => p.table.wrong_errno = true,
                None if part == "crash-call" => p.table.crash = true,
                None if part == "hang-call" => p.table.hang = true,
                _ => return Err(StressError::UnknownPlant(part.into())),
            }
        }
        Ok(p)
    }

    pub fn active(&self) -> bool {
        self.leak.is_some()
            || self.crash_worker_at.is_some()
            || self.kernel_leak_mib.is_some()
            || self.table != TablePlants::default()
    }

    fn describe(&self) -> String {
        let mut v = Vec::new();
        if let Some((k, n)) = self.leak {
            v.push(format!(
                "leak the fds of every {n}th {} destroyed",
                k.name()
            ));
        }
        if let Some(m) = self.kernel_leak_mib {
            v.push(format!(
                "worker 0 leaves {m} MiB of kernel memory in System V message queues"
            ));
        }
        if let Some(op) = self.crash_worker_at {
            v.push(format!("worker 0 crashes at operation {op}"));
        }
        if self.table.wrong_errno {
            v.push("a wrong expected error code in the table".into());
        }
        if self.table.crash {
            v.push("a call that crashes".into());
        }
        if self.table.hang {
            v.push("a call that hangs".into());
        }
        v.join("; ")
    }
}

/// A plant's `what` (count, MiB, op) that is not a number.
fn plant_number(what: &'static str, value: &str) -> StressError {
    StressError::PlantNumber {
        what,
        value: value.into(),
    }
}

/// What `yamba stress` is asked to do.
#[derive(Debug, Clone, Serialize)]
pub struct StressConfig {
    /// Seed of every random choice; a fresh one (printed and recorded) when None.
    pub seed: Option<u64>,
    /// Stop after this long (the default when neither bound is given: 10 s).
    pub time: Option<Duration>,
    /// Stop each worker after this many operations, and the error tests after this many calls.
    pub ops: Option<u64>,
    pub workers: usize,
    /// CPUs for the workers, round robin (default: every usable CPU).
    pub cpus: Vec<usize>,
    pub stressors: Vec<Kind>,
    pub error_tests: bool,
    pub replay: Option<Replay>,
    /// Benchmarks to measure idle and under stress (`ipc.rtt.pipe`, …).
    pub measure: Vec<String>,
    /// CPU the measurement is pinned to (default: the suite's default CPU).
    pub measure_cpu: Option<usize>,
    pub modes: Vec<Mode>,
    pub quick: bool,
    pub budget_s: Option<f64>,
    pub settings: BTreeMap<String, String>,
    pub hang_timeout: Duration,
    /// Census of each worker every this many operations.
    pub check_every: u64,
    /// Where the scratch directory goes (default: the working directory).
    pub scratch_parent: Option<PathBuf>,
    /// The `yamba` binary, to run measurements in fresh processes.
    #[serde(skip)]
    pub bench_exe: Option<PathBuf>,
    pub limits: Limits,
    /// How long to wait for kernel and free memory to come back.
    pub settle: Duration,
    pub plant: Plant,
}

impl Default for StressConfig {
    fn default() -> Self {
        StressConfig {
            seed: None,
            time: None,
            ops: None,
            workers: yamba_core::affinity::usable_cpus().len().max(1),
            cpus: Vec::new(),
            stressors: Kind::default_set(),
            error_tests: true,
            replay: None,
            measure: Vec::new(),
            measure_cpu: None,
            modes: vec![Mode::Hot],
            quick: false,
            budget_s: None,
            settings: BTreeMap::new(),
            hang_timeout: Duration::from_secs(10),
            check_every: 256,
            scratch_parent: None,
            bench_exe: None,
            limits: Limits::default(),
            settle: Duration::from_secs(5),
            plant: Plant::default(),
        }
    }
}

/// Everything a run produced.
pub struct StressOutcome {
    pub seed: u64,
    pub session: Session,
    pub results: Vec<BenchResult>,
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
    pub interrupted: bool,
    pub started: String,
    pub config: StressConfig,
    /// The command that reproduces the churn of this run.
    pub reproduce: String,
    pub summary: report::Summary,
}

impl StressOutcome {
    /// Whether an invariant failed or an error test found something.
    pub fn failed(&self) -> bool {
        !self.findings.is_empty() || report::any_failed(&self.results)
    }

    /// 130 when interrupted, 1 when something failed, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.interrupted {
            130
        } else if self.failed() {
            1
        } else {
            0
        }
    }

    /// The results file, in yamba's schema.
    pub fn results_file(&self, command: Vec<String>) -> yamba_core::ResultsFile {
        use yamba_results::results::{now_rfc3339, Tool, SCHEMA_NAME, SCHEMA_VERSION};
        yamba_core::ResultsFile {
            schema: SCHEMA_NAME.into(),
            schema_version: SCHEMA_VERSION,
            tool: Tool::this(),
            started: self.started.clone(),
            finished: Some(now_rfc3339()),
            complete: !self.interrupted,
            interrupted: self.interrupted,
            command,
            config: serde_json::json!({
                "stress": self.config,
                "seed": self.seed,
                "run": self.session.config,
            }),
            machine: self.session.machine.clone(),
            clock: self.session.clock.info().clone(),
            base: self.session.base.clone(),
            results: self.results.clone(),
            notes: self.notes.clone(),
            timings: None,
        }
    }

    /// The findings and the stress's own summary, as text for after the table.
    pub fn text(&self) -> String {
        report::text(self)
    }
}

/// Kernel and free memory net of what live processes hold (see
/// [`sys::MemReading`]): a reading, and the spread of the baseline's.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Memory {
    pub kernel: f64,
    pub kernel_spread: f64,
    /// Memory in use that no live process holds ([`sys::MemReading::unowned`]).
    pub unowned: f64,
    pub unowned_spread: f64,
    pub reclaimable: f64,
    /// Kernel stack per task at the baseline, to net out others' threads.
    pub stack_per_thread: f64,
    /// The raw reading this came from.
    pub raw: sys::MemReading,
}

/// The median of `n` readings `every` apart, and their spread: the range of
/// the readings without the highest and the lowest (one reading taken while
/// a large process started elsewhere does not widen the tolerance).
fn baseline_memory(n: usize, every: Duration) -> Option<Memory> {
    let mut v = Vec::new();
    for i in 0..n {
        if i > 0 {
            std::thread::sleep(every);
        }
        v.push(sys::read_memory()?);
    }
    let spt = v[0].stack_per_thread();
    let med = |f: &dyn Fn(&sys::MemReading) -> f64| {
        let mut x: Vec<f64> = v.iter().map(f).collect();
        x.sort_by(f64::total_cmp);
        let trim = usize::from(x.len() >= 5);
        (x[x.len() / 2], x[x.len() - 1 - trim] - x[trim])
    };
    let (kernel, kernel_spread) = med(&|r| r.kernel_net(spt));
    let (unowned, unowned_spread) = med(&|r| r.unowned(spt));
    let (reclaimable, _) = med(&|r| r.reclaimable);
    Some(Memory {
        kernel,
        kernel_spread,
        unowned,
        unowned_spread,
        reclaimable,
        stack_per_thread: spt,
        raw: v[v.len() / 2],
    })
}

/// Runs `yamba stress` as configured.
pub fn run(config: &StressConfig) -> Result<StressOutcome, StressError> {
    let started_at = yamba_results::results::now_rfc3339();
    let seed = config.seed.unwrap_or_else(rng::fresh_seed);
    let mut notes = vec![format!(
        "seed {seed}: every random choice of this run follows from it"
    )];
    if config.plant.active() {
        notes.push(format!(
            "TEST PLANT ACTIVE ({}): defects were planted on purpose",
            config.plant.describe()
        ));
    }
    let cast = Cast::of(config)?;
    let session = prepare_session(config);
    let scratch = scratch_folder(config, &mut notes)?;
    let _cleanup = RemoveOnDrop(scratch.clone());
    let (deadline_len, ops) = match (config.time, config.ops, cast.replaying) {
        (_, _, true) => (None, None),
        (None, None, false) => (Some(Duration::from_secs(10)), None),
        (t, o, false) => (t, o),
    };
    let churn = churn_specs(config, &cast, seed, &scratch, ops);
    let errors = cast
        .error_tests
        .then(|| error_spec(config, &cast, seed, &scratch, ops));
    let confinement = confine(config, &cast, &churn, &mut notes);
    let plan = supervise::Plan {
        churn,
        errors,
        deadline: None,
        hang_timeout: config.hang_timeout,
        confinement,
        max_restarts: 64,
    };
    let stressed = stress(config, &cast, &session, &scratch, plan, deadline_len)?;
    let reproduce = reproduce(seed, &cast);
    let ctx = report::Context {
        seed,
        session: &session,
        sup: &stressed.sup,
        before: stressed.before,
        after: stressed.after,
        left: stressed.left,
        cases: errors::table(config.plant.table),
        idle: stressed.idle,
        stressed: stressed.measured.unwrap_or_default(),
        reproduce: reproduce.clone(),
        deadline: deadline_len,
    };
    let (results, summary) = report::results(&ctx);
    let sup = stressed.sup;
    notes.extend(sup.notes.iter().cloned());
    notes.extend(summary.notes.iter().cloned());
    let findings = sup.findings.clone();
    Ok(StressOutcome {
        seed,
        results,
        findings,
        notes,
        interrupted: sup.interrupted,
        started: started_at,
        config: StressConfig {
            seed: Some(seed),
            ..config.clone()
        },
        reproduce,
        summary,
        session,
    })
}

/// Who takes part in a run, checked against the machine: the churn
/// workers and their stressors, the error tests, the CPUs, the
/// benchmarks measured idle and under stress.
struct Cast {
    replaying: bool,
    stressors: Vec<Kind>,
    workers: usize,
    error_tests: bool,
    cpus: Vec<usize>,
    targets: Vec<cost::Target>,
}

impl Cast {
    fn of(config: &StressConfig) -> Result<Cast, StressError> {
        let replaying = config.replay.is_some();
        let stressors: Vec<Kind> = if replaying {
            Vec::new()
        } else {
            config.stressors.clone()
        };
        let workers = if stressors.is_empty() {
            0
        } else {
            config.workers
        };
        let error_tests = config.error_tests || replaying;
        if workers == 0 && !error_tests {
            return Err(StressError::NothingToRun);
        }
        if workers + 1 > shared::MAX_SLOTS {
            return Err(StressError::TooManyWorkers {
                workers,
                most: shared::MAX_SLOTS - 1,
            });
        }
        let usable = yamba_core::affinity::usable_cpus().to_vec();
        let cpus = if config.cpus.is_empty() {
            usable.clone()
        } else {
            config.cpus.clone()
        };
        if let Some(bad) = cpus.iter().find(|c| !usable.contains(c)) {
            return Err(StressError::UnusableCpu { cpu: *bad, usable });
        }
        let targets = if replaying {
            Vec::new()
        } else {
            config
                .measure
                .iter()
                .map(|m| cost::resolve(m))
                .collect::<Result<Vec<_>, _>>()?
        };
        Ok(Cast {
            replaying,
            stressors,
            workers,
            error_tests,
            cpus,
            targets,
        })
    }
}

/// The session the cost measurements run in.
fn prepare_session(config: &StressConfig) -> Session {
    let mut run_config = if config.quick {
        RunConfig::quick()
    } else {
        RunConfig::default()
    };
    run_config.cpu = config.measure_cpu;
    run_config.modes = config.modes.clone();
    if let Some(b) = config.budget_s {
        run_config.budget_s = b;
    }
    run_config.settings = config.settings.clone();
    let mut session = Session::prepare(run_config);
    session.bench_exe = config.bench_exe.clone();
    session
}

/// Creates the run's scratch folder, after removing those killed runs
/// left beside it (noted).
fn scratch_folder(config: &StressConfig, notes: &mut Vec<String>) -> Result<PathBuf, StressError> {
    let parent = config
        .scratch_parent
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let parent = std::fs::canonicalize(&parent).map_err(|error| StressError::ScratchFolder {
        path: parent.clone(),
        error,
    })?;
    let removed = remove_stale_scratch(&parent);
    if removed > 0 {
        notes.push(format!(
            "removed {removed} scratch folder(s) left in {} by runs that were killed (SIGKILL leaves no time to clean up)",
            parent.display()
        ));
    }
    let scratch = parent.join(format!(".yamba-stress-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(StressError::create(&scratch))?;
    Ok(scratch)
}

/// One spec per churn worker: its CPU (round robin), its folder, and the
/// plants worker 0 carries.
fn churn_specs(
    config: &StressConfig,
    cast: &Cast,
    seed: u64,
    scratch: &std::path::Path,
    ops: Option<u64>,
) -> Vec<WorkerSpec> {
    (0..cast.workers)
        .map(|i| {
            let dir = scratch.join(format!("w{i}"));
            let _ = std::fs::create_dir_all(&dir);
            WorkerSpec {
                index: i,
                seed,
                kinds: cast.stressors.clone(),
                ops,
                check_every: config.check_every.max(1),
                cpu: Some(cast.cpus[i % cast.cpus.len()]),
                scratch: dir,
                leak: config.plant.leak,
                crash_at: config.plant.crash_worker_at.filter(|_| i == 0),
                kernel_leak_bytes: config
                    .plant
                    .kernel_leak_mib
                    .filter(|_| i == 0)
                    .map(|m| m << 20),
            }
        })
        .collect()
}

/// The error tests' spec: the slot after the workers', and the calls to
/// make (all, or those a replay names).
fn error_spec(
    config: &StressConfig,
    cast: &Cast,
    seed: u64,
    scratch: &std::path::Path,
    ops: Option<u64>,
) -> ErrorSpec {
    let dir = scratch.join("errors");
    let _ = std::fs::create_dir_all(&dir);
    let (first, end) = match config.replay {
        Some(Replay::Calls(n)) => (0, Some(n)),
        Some(Replay::Call(k)) => (k, Some(k + 1)),
        None => (0, ops),
    };
    ErrorSpec {
        slot: cast.workers,
        seed,
        first,
        end,
        cpu: Some(cast.cpus[cast.workers % cast.cpus.len()]),
        scratch: dir,
        plants: config.plant.table,
    }
}

/// The limits the stress runs under, and the notes that describe them,
/// the error-test table and the workers.
fn confine(
    config: &StressConfig,
    cast: &Cast,
    churn: &[WorkerSpec],
    notes: &mut Vec<String>,
) -> Confinement {
    let workers = cast.workers;
    let per_worker_objects: usize = cast
        .stressors
        .iter()
        .filter(|k| k.pooled())
        .map(|k| k.cap())
        .sum();
    let confinement = Confinement::prepare(
        config.limits.clone(),
        // pids.max: every worker's pool of processes and threads, plus room.
        (workers as u64 + 1) * 64 + 64,
        // memory.max: what each worker may map, plus the error tests.
        (workers as u64 + 1) * (config.limits.address_space_bytes / 2).max(256 << 20),
    );
    notes.push(format!(
        "confinement: {} (each worker: up to {} more fds, {} MiB more address space, {} MiB files, no core dumps){}",
        confinement.kind,
        config.limits.fds,
        config.limits.address_space_bytes >> 20,
        config.limits.file_bytes >> 20,
        confinement
            .notes
            .iter()
            .map(|n| format!("; {n}"))
            .collect::<String>()
    ));
    if cast.error_tests {
        notes.push(format!(
            "error-test table: {}; a seed replays the same calls with this table only (same yamba version)",
            errors::fingerprint(&errors::table(config.plant.table))
        ));
    }
    if workers > 0 {
        notes.push(format!(
            "{workers} churn worker(s) on CPUs {:?}, each holding at most {per_worker_objects} objects; the loopback is the only network: sockets are AF_UNIX",
            churn.iter().filter_map(|w| w.cpu).collect::<Vec<_>>()
        ));
    }
    confinement
}

/// What the machine did around and under the stress.
struct Stressed {
    before: Option<Memory>,
    idle: Vec<Vec<BenchResult>>,
    sup: supervise::Supervision,
    measured: Option<Vec<Vec<BenchResult>>>,
    after: Option<Memory>,
    left: Vec<sys::ProcInfo>,
}

/// The run's four steps: the memory baselines, the idle measurements,
/// the stress with the measurement under it (from now to `deadline_len`),
/// and memory and processes after it.
fn stress(
    config: &StressConfig,
    cast: &Cast,
    session: &Session,
    scratch: &std::path::Path,
    mut plan: supervise::Plan,
    deadline_len: Option<Duration>,
) -> Result<Stressed, StressError> {
    let targets = &cast.targets;
    // 1. Baselines.
    let before = baseline_memory(7, Duration::from_millis(100));
    // 2. Idle measurements.
    let mut idle = Vec::new();
    for t in targets {
        let dir = scratch.join("measure-idle");
        let _ = std::fs::create_dir_all(&dir);
        idle.push(cost::measure(session, t, &config.modes, &dir, "idle"));
        if yamba_core::interrupt::interrupted() {
            break;
        }
    }
    // 3. The stress, with the measurement under it.
    plan.deadline = deadline_len.map(|d| Instant::now() + d);
    let measure_dir = scratch.join("measure-stressed");
    let _ = std::fs::create_dir_all(&measure_dir);
    let measure_stressed = || -> Vec<Vec<BenchResult>> {
        targets
            .iter()
            .map(|t| cost::measure(session, t, &config.modes, &measure_dir, "stressed"))
            .collect()
    };
    let during: Option<&(dyn Fn() -> Vec<Vec<BenchResult>> + Sync)> = if targets.is_empty() {
        None
    } else {
        Some(&measure_stressed)
    };
    let (sup, measured) = supervise::supervise(&plan, during, Duration::from_millis(250))?;
    plan.confinement.release();
    // 4. After: memory back, nothing left.
    // Interrupted: still check, but do not keep the user waiting long.
    let settle = if sup.interrupted {
        config.settle.min(Duration::from_secs(2))
    } else {
        config.settle
    };
    let after = settle_memory(before, settle);
    // A crashed worker's children, killed with it, are reparented and
    // reaped by init a moment later: give that up to 2 s.
    let mut left = sys::processes(&sup.groups, None);
    let t0 = Instant::now();
    while !left.is_empty() && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
        left = sys::processes(&sup.groups, None);
    }
    Ok(Stressed {
        before,
        idle,
        sup,
        measured,
        after,
        left,
    })
}

/// The command that replays this run's churn.
fn reproduce(seed: u64, cast: &Cast) -> String {
    format!(
        "yamba stress --seed {seed} --workers {} --stressors {} --cpu {}{}",
        cast.workers,
        cast.stressors
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(","),
        cast.cpus
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        if cast.error_tests { "" } else { " --no-errors" }
    )
}

/// Kernel and free memory after the run, read until both are back within
/// their tolerance or `settle` has passed: objects freed after an RCU grace
/// period or by a kworker come back a moment after the processes are gone.
/// Keeps, for each, the reading closest to the baseline over that window:
/// a leak stays, others' passing allocations do not.
fn settle_memory(before: Option<Memory>, settle: Duration) -> Option<Memory> {
    let b = before?;
    let spt = b.stack_per_thread;
    let t0 = Instant::now();
    let mut best: Option<Memory> = None;
    loop {
        if let Some(r) = sys::read_memory() {
            let (kernel, unowned) = (r.kernel_net(spt), r.unowned(spt));
            let m = match best {
                None => Memory {
                    kernel,
                    unowned,
                    reclaimable: r.reclaimable,
                    raw: r,
                    ..b
                },
                Some(p) => Memory {
                    kernel: p.kernel.min(kernel),
                    unowned: p.unowned.min(unowned),
                    reclaimable: p.reclaimable.min(r.reclaimable),
                    raw: r,
                    ..b
                },
            };
            best = Some(m);
            if report::kernel_within(&b, &m) && report::unowned_within(&b, &m) {
                return best;
            }
        }
        if t0.elapsed() >= settle {
            return best;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Removes the `.yamba-stress-PID` folders in `parent` whose process is
/// gone (a run killed by SIGKILL cannot remove its own); returns how many.
fn remove_stale_scratch(parent: &std::path::Path) -> usize {
    let Ok(dir) = std::fs::read_dir(parent) else {
        return 0;
    };
    dir.flatten()
        .filter(|e| {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(".yamba-stress-"))
                .and_then(|p| p.parse::<i32>().ok())
            else {
                return false;
            };
            // Alive (or another user's): kill(pid, 0) is 0 or EPERM.
            // SAFETY: signal 0 checks existence only.
            let gone = unsafe { libc::kill(pid, 0) } != 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            gone && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .filter(|e| std::fs::remove_dir_all(e.path()).is_ok())
        .count()
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
