//! A churn worker: one process that creates, uses and destroys primitives
//! in a random order drawn from its own stream of the run's seed, keeping
//! between 0 and a cap of each alive (the Go! report's stress test:
//! "randomly creating and destroying instances"), and checking as it goes
//! that what the kernel says it holds is exactly what it believes it holds.
//!
//! Every `check_every` operations and at the end, against its own pool:
//! - its fd table (/proc/self/fd) is its baseline plus the pool's fds —
//!   an extra fd is named by what it points to and by the operation that
//!   last released that number;
//! - its threads (/proc/self/status) and children (/proc/self/task/…/children,
//!   zombies included) are the pool's;
//! - every signal it sent itself was handled.
//!
//! At each destruction: the object's data is intact (bytes through a pipe
//! or socket, an eventfd's count, a mapping's pages, a file's contents, a
//! shared mapping seen through read(2)), a child exits cleanly having
//! handled every signal sent to it, an unmapped range is really gone.
//!
//! At the end, with everything destroyed: fds, mappings (/proc/self/maps),
//! threads, children and files are back to the baseline.
//!
//! The sequence of operations depends only on the seed and the worker's
//! index (as long as creations succeed), so `--seed S --ops N` replays it.

pub mod kind;
mod objects;
pub mod signals;

use crate::rng::{self, Domain, Rng};
use crate::shared::{Slot, DRAINING, RUNNING};
use crate::sys;
use crate::StressError;
pub use kind::{op_code, op_name, Action, Churned, Kind};
use objects::Object;
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// What one worker is asked to do.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    pub index: usize,
    pub seed: u64,
    pub kinds: Vec<Kind>,
    /// Stop after this many operations (else when told).
    pub ops: Option<u64>,
    pub check_every: u64,
    pub cpu: Option<usize>,
    /// The worker's own scratch directory (created by the supervisor).
    pub scratch: PathBuf,
    /// Test plant: forget to release every Nth destroyed object of this kind.
    pub leak: Option<(Kind, u64)>,
    /// Test plant: die of SIGSEGV at this operation.
    pub crash_at: Option<u64>,
    /// Test plant: leave this much kernel memory behind at the first operation.
    pub kernel_leak_bytes: Option<u64>,
}

/// Per kind: what was done, and how creations failed (errno → count).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KindStats {
    pub created: u64,
    pub destroyed: u64,
    pub used: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed: BTreeMap<String, u64>,
}

/// An invariant that did not hold, where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// fds, threads, processes, mappings, files, signals, data.
    pub invariant: String,
    /// The worker's operation count when it was seen.
    pub op: u64,
    pub detail: String,
}

/// Signals sent and handled.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SignalCount {
    pub self_sent: u64,
    pub self_handled: u64,
    pub child_sent: u64,
    pub child_handled: u64,
}

/// Largest gap between what /proc said and what the pool expected, per check kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Deviations {
    pub fds: u64,
    pub threads: u64,
    pub children: u64,
}

/// What a worker sends back when it ends.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkerReport {
    pub index: usize,
    pub cpu: Option<usize>,
    pub ops: u64,
    pub elapsed_s: f64,
    pub kinds: BTreeMap<Kind, KindStats>,
    pub checks: u64,
    pub violations: Vec<Violation>,
    /// Violations seen beyond those kept.
    pub violations_dropped: u64,
    pub deviations: Deviations,
    pub signals: SignalCount,
    pub peak_objects: usize,
    pub peak_fds: usize,
    pub baseline_fds: usize,
    pub end_fds: usize,
    pub limits_failed: Vec<String>,
    /// CPU time of the worker (user, system) and of the children it reaped, in s.
    pub cpu_s: (f64, f64),
    pub children_cpu_s: (f64, f64),
    pub max_rss_kib: u64,
}

const MAX_VIOLATIONS: usize = 32;

/// The worker's state.
pub struct Worker<'a> {
    spec: &'a WorkerSpec,
    slot: &'a Slot,
    stop: &'a std::sync::atomic::AtomicU32,
    rng: Rng,
    pool: Vec<Object>,
    counts: BTreeMap<Kind, usize>,
    report: WorkerReport,
    /// fd number → (operation, kind) that last released it.
    released: BTreeMap<i32, (u64, Kind)>,
    reported_fds: BTreeSet<i32>,
    baseline_fds: BTreeMap<i32, String>,
    baseline_maps: Vec<String>,
    page: usize,
    op: u64,
    /// Counters the worker's children publish their handled signals into.
    child_counts: yamba_os::Shared<[AtomicU64; objects::CHILD_SLOTS]>,
    free_child_slots: Vec<usize>,
    free_file_slots: Vec<usize>,
    backing: PathBuf,
    file_seq: u64,
    destroyed_by_kind: BTreeMap<Kind, u64>,
}

impl<'a> Worker<'a> {
    pub fn new(
        spec: &'a WorkerSpec,
        slot: &'a Slot,
        stop: &'a std::sync::atomic::AtomicU32,
    ) -> Result<Worker<'a>, StressError> {
        let child_counts = yamba_os::Shared::<[AtomicU64; objects::CHILD_SLOTS]>::new_zeroed()?;
        signals::CHILD_COUNTS.store(child_counts.as_ptr() as *mut AtomicU64, Ordering::SeqCst);
        signals::install();
        let page = sys::page_size();
        let backing = spec.scratch.join("backing");
        objects::create_backing(&backing, page)?;
        let mut w = Worker {
            spec,
            slot,
            stop,
            rng: rng::stream(spec.seed, Domain::Worker, spec.index as u64),
            pool: Vec::with_capacity(512),
            counts: BTreeMap::new(),
            report: WorkerReport {
                index: spec.index,
                cpu: spec.cpu,
                ..WorkerReport::default()
            },
            released: BTreeMap::new(),
            reported_fds: BTreeSet::new(),
            baseline_fds: BTreeMap::new(),
            baseline_maps: Vec::new(),
            page,
            op: 0,
            child_counts,
            free_child_slots: (0..objects::CHILD_SLOTS).rev().collect(),
            free_file_slots: (0..objects::FILE_SLOTS).rev().collect(),
            backing,
            file_seq: 0,
            destroyed_by_kind: BTreeMap::new(),
        };
        for &k in &spec.kinds {
            w.report.kinds.insert(k, KindStats::default());
        }
        // Everything allocated up front: the baseline then holds.
        w.report.violations.reserve(MAX_VIOLATIONS);
        w.baseline_fds = sys::fd_table();
        w.baseline_maps = sys::maps();
        w.report.baseline_fds = w.baseline_fds.len();
        Ok(w)
    }

    /// Runs until told to stop or the operation bound, then destroys
    /// everything and checks the end state.
    pub fn run(mut self) -> WorkerReport {
        let t0 = std::time::Instant::now();
        self.slot.state.store(RUNNING, Ordering::Release);
        while !self.done() {
            self.step();
            self.op += 1;
            self.slot.end();
            if self.op.is_multiple_of(self.spec.check_every) {
                self.check();
            }
        }
        self.slot.state.store(DRAINING, Ordering::Release);
        self.slot.begin(0);
        self.check();
        while let Some(obj) = self.pool.pop() {
            self.destroy(obj);
        }
        self.check();
        self.final_check();
        self.report.ops = self.op;
        self.report.elapsed_s = t0.elapsed().as_secs_f64();
        self.report.signals.self_handled = signals::HANDLED.load(Ordering::SeqCst);
        let (me, rss) = rusage(libc::RUSAGE_SELF);
        self.report.cpu_s = me;
        self.report.max_rss_kib = rss;
        self.report.children_cpu_s = rusage(libc::RUSAGE_CHILDREN).0;
        self.report
    }

    fn done(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0 || self.spec.ops.is_some_and(|n| self.op >= n)
    }

    fn step(&mut self) {
        if let Some(bytes) = self.spec.kernel_leak_bytes.filter(|_| self.op == 0) {
            crate::plant::leak_kernel_memory(bytes);
        }
        if self.spec.crash_at == Some(self.op) {
            // Test plant. SAFETY: deliberately ends this worker with SIGSEGV.
            let v = unsafe { std::ptr::read_volatile(16 as *const u8) };
            std::hint::black_box(v);
        }
        let kinds = &self.spec.kinds;
        let kind = kinds[self.rng.gen_range(0..kinds.len())];
        match kind {
            Kind::Signal => {
                self.slot.begin(op_code(kind, Action::Use));
                self.signal();
                return;
            }
            Kind::Cpu => {
                self.slot.begin(op_code(kind, Action::Use));
                objects::spin(100_000);
                self.stats(kind).used += 1;
                return;
            }
            _ => {}
        }
        let n = self.counts.get(&kind).copied().unwrap_or(0);
        let action = if n == 0 {
            Action::Create
        } else if n >= kind.cap() {
            Action::Destroy
        } else {
            // A process or a thread has nothing to use (signals to
            // children are the `signal` kind's): create or destroy.
            let choices = if matches!(kind, Kind::Process | Kind::Thread) {
                2
            } else {
                3
            };
            match self.rng.gen_range(0..choices) {
                0 => Action::Create,
                1 => Action::Destroy,
                _ => Action::Use,
            }
        };
        self.slot.begin(op_code(kind, action));
        match action {
            Action::Create => match self.create(kind) {
                Ok(obj) => {
                    self.stats(kind).created += 1;
                    *self.counts.entry(kind).or_default() += 1;
                    self.pool.push(obj);
                    self.report.peak_objects = self.report.peak_objects.max(self.pool.len());
                }
                Err(e) => {
                    *self
                        .stats(kind)
                        .failed
                        .entry(sys::errno_name(e))
                        .or_default() += 1
                }
            },
            Action::Destroy | Action::Use => {
                let of_kind: Vec<usize> = (0..self.pool.len())
                    .filter(|&i| self.pool[i].kind() == kind)
                    .collect();
                let i = of_kind[self.rng.gen_range(0..of_kind.len())];
                if action == Action::Destroy {
                    let obj = self.pool.swap_remove(i);
                    self.destroy(obj);
                } else {
                    self.use_object(i);
                    self.stats(kind).used += 1;
                }
            }
        }
    }

    fn destroy(&mut self, obj: Object) {
        let kind = obj.kind();
        if let Some(c) = self.counts.get_mut(&kind) {
            *c = c.saturating_sub(1);
        }
        let nth = {
            let d = self.destroyed_by_kind.entry(kind).or_default();
            *d += 1;
            *d
        };
        let forget = self
            .spec
            .leak
            .is_some_and(|(k, every)| k == kind && every > 0 && nth % every == 0);
        for fd in obj.fds() {
            self.released.insert(fd, (self.op, kind));
        }
        self.destroy_object(obj, forget);
        self.stats(kind).destroyed += 1;
    }

    fn stats(&mut self, kind: Kind) -> &mut KindStats {
        self.report.kinds.entry(kind).or_default()
    }

    fn violation(&mut self, invariant: &str, detail: String) {
        if self.report.violations.len() >= MAX_VIOLATIONS {
            self.report.violations_dropped += 1;
            return;
        }
        self.report.violations.push(Violation {
            invariant: invariant.into(),
            op: self.op,
            detail,
        });
    }

    fn pool_fds(&self) -> BTreeSet<i32> {
        self.pool.iter().flat_map(|o| o.fds()).collect()
    }

    /// The census against the pool (see the module documentation).
    fn check(&mut self) {
        self.report.checks += 1;
        let table = sys::fd_table();
        self.report.peak_fds = self.report.peak_fds.max(table.len());
        let mut expected: BTreeSet<i32> = self.baseline_fds.keys().copied().collect();
        expected.extend(self.pool_fds());
        let extra: Vec<(i32, String)> = table
            .iter()
            .filter(|(fd, _)| !expected.contains(fd))
            .map(|(fd, l)| (*fd, l.clone()))
            .collect();
        let missing: Vec<i32> = expected
            .iter()
            .filter(|fd| !table.contains_key(fd))
            .copied()
            .collect();
        let gap = (extra.len() + missing.len()) as u64;
        self.report.deviations.fds = self.report.deviations.fds.max(gap);
        for (fd, link) in extra {
            if !self.reported_fds.insert(fd) {
                continue;
            }
            let how = match self.released.get(&fd) {
                Some((op, kind)) => format!(
                    "released by operation #{op} ({} destroy) but still open",
                    kind.name()
                ),
                None => "opened by nothing this worker tracks".into(),
            };
            self.violation(
                "fds",
                format!("fd {fd} → {link} ({}): {how}", sys::fd_kind(&link)),
            );
        }
        for fd in missing {
            if self.reported_fds.insert(fd) {
                self.violation("fds", format!("fd {fd} closed behind the worker's back"));
            }
        }
        let threads = self.count_threads();
        let want_threads = 1 + self.counts.get(&Kind::Thread).copied().unwrap_or(0) as u64;
        let gap = threads.abs_diff(want_threads);
        self.report.deviations.threads = self.report.deviations.threads.max(gap);
        if gap != 0 {
            self.violation(
                "threads",
                format!("{threads} threads, the pool holds {want_threads} (main included)"),
            );
        }
        let children = self.count_children();
        let want_children = self.counts.get(&Kind::Process).copied().unwrap_or(0) as u64;
        let gap = children.abs_diff(want_children);
        self.report.deviations.children = self.report.deviations.children.max(gap);
        if gap != 0 {
            self.violation(
                "processes",
                format!("{children} children (zombies included), the pool holds {want_children}"),
            );
        }
        let (sent, handled) = (
            self.report.signals.self_sent,
            signals::HANDLED.load(Ordering::SeqCst),
        );
        if sent != handled {
            self.violation(
                "signals",
                format!("sent itself {sent} signals, handled {handled}"),
            );
        }
    }

    /// /proc/self/status counts a thread until the kernel has released it,
    /// a moment after pthread_join returned: look again briefly before
    /// calling a difference real.
    fn count_threads(&self) -> u64 {
        let want = 1 + self.counts.get(&Kind::Thread).copied().unwrap_or(0) as u64;
        settle(sys::threads, want)
    }

    fn count_children(&self) -> u64 {
        let want = self.counts.get(&Kind::Process).copied().unwrap_or(0) as u64;
        settle(sys::children, want)
    }

    /// With the pool empty: everything is as it was before the first operation.
    fn final_check(&mut self) {
        let table = sys::fd_table();
        self.report.end_fds = table.len();
        let changed: Vec<String> = self
            .baseline_fds
            .iter()
            .filter(|(fd, link)| table.get(fd) != Some(link) && !self.reported_fds.contains(fd))
            .map(|(fd, link)| {
                let now = table.get(fd).cloned().unwrap_or_else(|| "closed".into());
                format!("baseline fd {fd} was {link}, is now {now}")
            })
            .collect();
        for c in changed {
            self.violation("fds", c);
        }
        let added = sys::outside(&sys::maps(), &sys::coverage(&self.baseline_maps));
        for m in added.into_iter().take(8) {
            self.violation("mappings", format!("left mapped: {m}"));
        }
        let files: Vec<String> = std::fs::read_dir(&self.spec.scratch)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n != "backing")
                    .collect()
            })
            .unwrap_or_default();
        if !files.is_empty() {
            self.violation(
                "files",
                format!(
                    "{} file(s) left in the scratch directory: {}",
                    files.len(),
                    files.join(", ")
                ),
            );
        }
        let s = &self.report.signals;
        if s.child_sent != s.child_handled {
            let d = format!(
                "children handled {} of the {} signals sent to them",
                s.child_handled, s.child_sent
            );
            self.violation("signals", d);
        }
        let _ = std::fs::remove_file(&self.backing);
    }
}

/// (user, system) seconds and max RSS in KiB, from getrusage.
fn rusage(who: i32) -> ((f64, f64), u64) {
    // SAFETY: ru is a valid rusage for getrusage to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(who, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    ((s(ru.ru_utime), s(ru.ru_stime)), ru.ru_maxrss as u64)
}

/// Reads `f` until it gives `want`, at most ~50 ms; returns the last value.
fn settle(f: impl Fn() -> u64, want: u64) -> u64 {
    let mut v = f();
    for _ in 0..50 {
        if v == want {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        v = f();
    }
    v
}

/// Runs a worker in this (freshly forked) process and writes its report to
/// the report fd. Never returns.
pub fn worker_main(
    spec: &WorkerSpec,
    control: &crate::shared::Control,
    limits_failed: Vec<String>,
) -> ! {
    let slot = &control.slots[spec.index];
    slot.pid.store(sys::getpid(), Ordering::Release);
    if let Some(cpu) = spec.cpu {
        let _ = yamba_core::affinity::pin_current_thread(cpu);
    }
    let report = match Worker::new(spec, slot, &control.stop) {
        Ok(w) => {
            let mut r = w.run();
            r.limits_failed = limits_failed;
            r
        }
        Err(e) => WorkerReport {
            index: spec.index,
            violations: vec![Violation {
                invariant: "setup".into(),
                op: 0,
                detail: e.to_string(),
            }],
            ..WorkerReport::default()
        },
    };
    let mut line = serde_json::to_vec(&report).unwrap_or_default();
    line.push(b'\n');
    sys::write_all(sys::REPORT_FD, &line);
    // SAFETY: ends the worker without running the parent's destructors.
    unsafe { libc::_exit(0) }
}
