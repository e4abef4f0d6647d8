//! The supervisor: forks the churn workers and the error-test process,
//! each leading a process group of its own and dying with the supervising
//! thread (PR_SET_PDEATHSIG); reads what they send; watches their progress
//! in shared memory to name the operation a crash or a hang happened in;
//! restarts the error tests after a crash, a hang or a leak at the next
//! call; samples the machine (kernel memory, free memory, processes and
//! zombies of the run's groups) as it goes; runs the cost measurement
//! alongside once the stress is up; and on the time bound, the operation
//! bound, Ctrl-C or SIGTERM stops everything, kills what does not stop
//! within a grace period, and reaps it all.

use crate::churn::{self, op_name, Violation, WorkerReport, WorkerSpec};
use crate::errors::{self, Board, CaseCounts, ErrorSpec, Finding, FindingKind, Message};
use crate::limits::Confinement;
use crate::shared::{now_ns, Control, DONE, DRAINING, RUNNING, STARTING};
use crate::sys;
use crate::StressError;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use yamba_os::{OsError, Shared};

/// What to run.
pub struct Plan {
    pub churn: Vec<WorkerSpec>,
    pub errors: Option<ErrorSpec>,
    /// Stop at this time (else when the operation bounds are reached).
    pub deadline: Option<Instant>,
    pub hang_timeout: Duration,
    pub confinement: Confinement,
    /// Most times the error tests are restarted after a crash or a hang.
    pub max_restarts: u64,
}

/// One sample of the machine while the stress ran.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub t_s: f64,
    pub memory: Option<sys::MemReading>,
    /// Processes in the run's process groups.
    pub processes: usize,
    pub zombies: usize,
}

/// What happened.
pub struct Supervision {
    pub reports: Vec<WorkerReport>,
    pub findings: Vec<Finding>,
    /// Error-test calls made (over all the error processes).
    pub error_calls: u64,
    pub error_restarts: u64,
    pub elapsed: Duration,
    /// When each churn worker ended, from the start.
    pub worker_end: Vec<Option<Duration>>,
    /// Zombies that stayed (pid, parent, how long), seen by the supervisor.
    pub lingering_zombies: Vec<String>,
    pub timeline: Vec<Sample>,
    pub interrupted: bool,
    /// Process groups of everything the run started.
    pub groups: Vec<i32>,
    /// Notes (restarts given up, measurement cut short, …).
    pub notes: Vec<String>,
    pub case_counts: Vec<(u64, u64, u64)>,
    /// When the measurement under stress ran, from the start.
    pub measured: Option<(Duration, Duration)>,
}

enum Role {
    Churn(usize),
    Errors { first: u64 },
}

struct Child {
    pid: i32,
    slot: usize,
    role: Role,
    fd: i32,
    buf: Vec<u8>,
    done_next: Option<u64>,
    report: Option<WorkerReport>,
    /// The child's scheduling read once its operation had run for half
    /// the hang timeout: (that operation's start, when read, the reading).
    stall: Option<(u64, u64, sys::TaskWait)>,
}

/// A child killed for hanging: how long its operation had run, and what
/// its process was doing (see [`sys::TaskWait::explain`]).
struct Hang {
    after: Duration,
    doing: String,
}

/// Forks `body` as a supervised child in slot `slot`.
fn spawn(
    slot: &crate::shared::Slot,
    confinement: &Confinement,
    body: impl FnOnce(Vec<String>),
) -> Result<(i32, i32), OsError> {
    let mut p = [0i32; 2];
    // SAFETY: p is a valid 2-int array.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(OsError::last("pipe2"));
    }
    slot.state.store(STARTING, Ordering::Release);
    slot.since_ns.store(now_ns(), Ordering::Release);
    let parent = sys::getpid();
    // SAFETY: the child sets itself up (become_child) and runs `body`,
    // which ends with _exit; it never returns into the caller.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing the pipe we just made.
        unsafe {
            libc::close(p[0]);
            libc::close(p[1]);
        }
        return Err(OsError::last("fork"));
    }
    if pid == 0 {
        // SAFETY: freshly forked child.
        unsafe { sys::become_child(parent, p[1]) };
        let failed = confinement.apply_in_child();
        body(failed);
        // SAFETY: bodies end with _exit; this is only a backstop.
        unsafe { libc::_exit(1) };
    }
    // SAFETY: our copy of the write end; the child's group; non-blocking reads.
    unsafe {
        libc::close(p[1]);
        libc::setpgid(pid, pid);
        libc::fcntl(p[0], libc::F_SETFL, libc::O_NONBLOCK);
    }
    Ok((pid, p[0]))
}

/// Reads what is available on a child's pipe; true at EOF.
fn drain(c: &mut Child) -> bool {
    let mut b = [0u8; 65536];
    loop {
        // SAFETY: reading into a local buffer.
        let n = unsafe { libc::read(c.fd, b.as_mut_ptr().cast(), b.len()) };
        if n > 0 {
            c.buf.extend_from_slice(&b[..n as usize]);
        } else if n == 0 {
            return true;
        } else {
            return sys::errno() != libc::EINTR && sys::errno() != libc::EAGAIN;
        }
    }
}

struct State<'a> {
    plan: &'a Plan,
    control: &'a Shared<Control>,
    counts: &'a Shared<CaseCounts>,
    board: &'a Shared<Board>,
    children: Vec<Child>,
    reports: BTreeMap<usize, WorkerReport>,
    findings: Vec<Finding>,
    finding_index: BTreeMap<(FindingKind, String, String, String), usize>,
    error_calls: u64,
    restarts: u64,
    worker_end: Vec<Option<Duration>>,
    groups: Vec<i32>,
    notes: Vec<String>,
    started: Instant,
    /// Error tests: where the next process starts, if one is to be started.
    errors_next: Option<u64>,
}

impl State<'_> {
    fn add_finding(&mut self, f: Finding) {
        match self.finding_index.get(&f.key()) {
            Some(&i) => self.findings[i].occurrences += 1,
            None => {
                self.finding_index.insert(f.key(), self.findings.len());
                self.findings.push(f);
            }
        }
    }

    fn start_errors(&mut self, first: u64) {
        let Some(spec) = &self.plan.errors else {
            return;
        };
        if spec.end.is_some_and(|e| first >= e) || self.control.stopping() {
            self.errors_next = None;
            return;
        }
        let spec = ErrorSpec {
            first,
            ..spec.clone()
        };
        let slot = &self.control.slots[spec.slot];
        slot.current.store(first, Ordering::Release);
        self.board.clear();
        let (control, counts, board) = (self.control, self.counts, self.board);
        match spawn(slot, &self.plan.confinement, |_| {
            errors::errors_main(&spec, control, counts, board)
        }) {
            Ok((pid, fd)) => {
                self.groups.push(pid);
                self.children.push(Child {
                    stall: None,
                    pid,
                    slot: spec.slot,
                    role: Role::Errors { first },
                    fd,
                    buf: Vec::new(),
                    done_next: None,
                    report: None,
                });
                self.errors_next = None;
            }
            Err(e) => {
                self.notes
                    .push(format!("could not start the error tests: {e}"));
                self.errors_next = None;
            }
        }
    }

    fn parse_lines(&mut self, i: usize) {
        let mut lines = Vec::new();
        {
            let c = &mut self.children[i];
            while let Some(nl) = c.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = c.buf.drain(..=nl).collect();
                lines.push(line);
            }
        }
        for line in lines {
            match self.children[i].role {
                Role::Churn(_) => {
                    if let Ok(r) = serde_json::from_slice::<WorkerReport>(&line) {
                        self.children[i].report = Some(r);
                    }
                }
                Role::Errors { .. } => match serde_json::from_slice::<Message>(&line) {
                    Ok(Message::Finding(f)) => self.add_finding(f),
                    Ok(Message::Done { next }) => self.children[i].done_next = Some(next),
                    Err(_) => {}
                },
            }
        }
    }

    /// A child ended (`status` from waitpid, or None when we killed it for hanging).
    fn ended(&mut self, i: usize, status: Option<i32>, hang: Option<Hang>) {
        drain(&mut self.children[i]);
        self.parse_lines(i);
        let c = self.children.remove(i);
        // SAFETY: closing our read end; killing what the child may have left in its group.
        unsafe {
            libc::close(c.fd);
            libc::killpg(c.pid, libc::SIGKILL);
        }
        let slot = &self.control.slots[c.slot];
        let why = match (status, &hang) {
            (_, Some(h)) => Some(format!(
                "no return after {:.1} s (hang; {})",
                h.after.as_secs_f64(),
                h.doing
            )),
            (Some(s), None) if libc::WIFSIGNALED(s) => {
                Some(format!("killed by {}", sys::signal_name(libc::WTERMSIG(s))))
            }
            (Some(s), None) if libc::WIFEXITED(s) && libc::WEXITSTATUS(s) != 0 => {
                Some(format!("exited with status {}", libc::WEXITSTATUS(s)))
            }
            _ => None,
        };
        match c.role {
            Role::Churn(index) => {
                self.worker_end[index] = Some(self.started.elapsed());
                let mut r = c.report.unwrap_or_else(|| WorkerReport {
                    index,
                    ops: slot.done.load(Ordering::Acquire),
                    ..WorkerReport::default()
                });
                if let Some(why) = why.clone().or_else(|| {
                    (r.checks == 0 && r.violations.is_empty())
                        .then(|| "ended without sending its report".to_string())
                }) {
                    let op = slot.done.load(Ordering::Acquire);
                    let what = op_name(slot.current.load(Ordering::Acquire));
                    r.violations.push(Violation {
                        invariant: if hang.is_some() { "hang" } else { "crash" }.into(),
                        op,
                        detail: format!(
                            "worker {index} {why} during operation #{op} ({what}); reproduce its sequence with the same --seed and --ops {}",
                            op + 1
                        ),
                    });
                }
                self.reports.insert(index, r);
            }
            Role::Errors { first } => {
                let current = slot.current.load(Ordering::Acquire);
                let made = match c.done_next {
                    Some(next) => next - first,
                    None => current.saturating_sub(first),
                };
                self.error_calls += made;
                if let Some(why) = why {
                    let mut f =
                        self.board
                            .read()
                            .filter(|f| f.call == current)
                            .unwrap_or(Finding {
                                kind: FindingKind::Crash,
                                seed: self.plan.errors.as_ref().map_or(0, |s| s.seed),
                                call: current,
                                primitive: "between calls".into(),
                                case: "between calls".into(),
                                syscall: "(no call in progress)".into(),
                                raw: String::new(),
                                expected: "the process to go on".into(),
                                got: String::new(),
                                doc: String::new(),
                                occurrences: 1,
                            });
                    f.kind = if hang.is_some() {
                        FindingKind::Hang
                    } else {
                        FindingKind::Crash
                    };
                    f.got = why;
                    f.occurrences = 1;
                    self.add_finding(f);
                    self.error_calls += 1;
                    self.restarts += 1;
                    if self.restarts > self.plan.max_restarts {
                        self.notes.push(format!(
                            "error tests stopped after {} crashes or hangs",
                            self.restarts
                        ));
                    } else {
                        self.errors_next = Some(current + 1);
                    }
                } else if let Some(next) = c.done_next {
                    // Ended early after a leak: go on from where it stopped.
                    self.errors_next = Some(next);
                }
            }
        }
    }

    fn reap(&mut self) {
        let mut i = 0;
        while i < self.children.len() {
            let pid = self.children[i].pid;
            let mut st = 0;
            // SAFETY: polling our own child.
            let r = unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
            if r == pid {
                self.ended(i, Some(st), None);
            } else {
                i += 1;
            }
        }
    }

    /// Kills a child whose operation has run past the hang timeout, saying
    /// what its process was doing: a worker starved of a CPU or stalled in
    /// the kernel by the machine (as once in CI beside two builds and an
    /// emulator: 11.8 s in one pipe destroy) is told apart from one stuck on
    /// its own. Half-way to the timeout its scheduling is read once, so the
    /// report covers the stall's second half.
    fn check_hangs(&mut self) {
        let now = now_ns();
        let limit = self.plan.hang_timeout.as_nanos() as u64;
        for i in 0..self.children.len() {
            let slot = &self.control.slots[self.children[i].slot];
            let state = slot.state.load(Ordering::Acquire);
            let since = slot.since_ns.load(Ordering::Acquire);
            if !(state == RUNNING || state == DRAINING || state == STARTING) {
                continue;
            }
            let stalled = now.saturating_sub(since);
            let child = &mut self.children[i];
            if stalled > limit / 2 && child.stall.as_ref().is_none_or(|s| s.0 != since) {
                child.stall = sys::task_wait(child.pid).map(|w| (since, now, w));
            }
            if stalled > limit {
                let pid = child.pid;
                let doing = match (&child.stall, sys::task_wait(pid)) {
                    (Some((s, at, first)), Some(last)) if *s == since => {
                        last.explain(Some((first, Duration::from_nanos(now - at))))
                    }
                    (_, Some(last)) => last.explain(None),
                    (_, None) => "its process could not be read".into(),
                };
                // SAFETY: killing our own child's group, then reaping it.
                unsafe {
                    libc::killpg(pid, libc::SIGKILL);
                    let mut st = 0;
                    libc::waitpid(pid, &mut st, 0);
                }
                let after = Duration::from_nanos(stalled);
                self.ended(i, None, Some(Hang { after, doing }));
                return;
            }
        }
    }
}

/// Runs the plan; `during` (the cost measurement) runs in a thread of its
/// own once every worker is running, while the stress goes on.
pub fn supervise<R: Send>(
    plan: &Plan,
    during: Option<&(dyn Fn() -> R + Sync)>,
    sample_every: Duration,
) -> Result<(Supervision, Option<R>), StressError> {
    let control = Shared::<Control>::new_zeroed()?;
    let counts = Shared::<CaseCounts>::new_zeroed()?;
    let board = Shared::<Board>::new_zeroed()?;
    let mut st = State {
        plan,
        control: &control,
        counts: &counts,
        board: &board,
        children: Vec::new(),
        reports: BTreeMap::new(),
        findings: Vec::new(),
        finding_index: BTreeMap::new(),
        error_calls: 0,
        restarts: 0,
        worker_end: vec![None; plan.churn.len()],
        groups: Vec::new(),
        notes: Vec::new(),
        started: Instant::now(),
        errors_next: None,
    };
    st.start_workers();
    if let Some(e) = &plan.errors {
        st.start_errors(e.first);
    }
    let mut sampler = Sampler::default();
    let watched = st.watch(during, &mut sampler, sample_every);
    st.end_all();
    let case_counts = (0..errors::MAX_CASES)
        .map(|i| {
            (
                counts.calls[i].load(Ordering::Relaxed),
                counts.passed[i].load(Ordering::Relaxed),
                counts.skipped[i].load(Ordering::Relaxed),
            )
        })
        .collect();
    let _ = DONE;
    Ok((
        Supervision {
            reports: st.reports.into_values().collect(),
            findings: st.findings,
            error_calls: st.error_calls,
            error_restarts: st.restarts,
            elapsed: st.started.elapsed(),
            worker_end: st.worker_end,
            lingering_zombies: sampler.lingering,
            timeline: sampler.timeline,
            interrupted: watched.interrupted,
            groups: st.groups,
            notes: st.notes,
            case_counts,
            measured: watched.measured_at,
        },
        watched.result,
    ))
}

/// How the watch ended: interrupted or not, and the measurement under
/// stress with when it ran.
struct Watched<R> {
    interrupted: bool,
    measured_at: Option<(Duration, Duration)>,
    result: Option<R>,
}

impl State<'_> {
    /// Forks every churn worker; one that cannot start stops the run (noted).
    fn start_workers(&mut self) {
        let plan = self.plan;
        for spec in &plan.churn {
            let slot = &self.control.slots[spec.index];
            let c: &Control = self.control;
            match spawn(slot, &plan.confinement, |failed| {
                churn::worker_main(spec, c, failed)
            }) {
                Ok((pid, fd)) => {
                    self.groups.push(pid);
                    self.children.push(Child {
                        stall: None,
                        pid,
                        slot: spec.index,
                        role: Role::Churn(spec.index),
                        fd,
                        buf: Vec::new(),
                        done_next: None,
                        report: None,
                    });
                }
                Err(e) => {
                    self.control.stop.store(1, Ordering::SeqCst);
                    self.notes
                        .push(format!("could not start worker {}: {e}", spec.index));
                }
            }
        }
    }

    /// The supervisor's loop: reads the children, restarts the error
    /// tests, starts the measurement once the stress is up, samples the
    /// machine, and stops everything on a bound or an interruption
    /// (killing what has not stopped after a grace period).
    fn watch<R: Send>(
        &mut self,
        during: Option<&(dyn Fn() -> R + Sync)>,
        sampler: &mut Sampler,
        sample_every: Duration,
    ) -> Watched<R> {
        let mut stop_at: Option<Instant> = None;
        let mut interrupted = false;
        let mut measured_at = None;
        let mut result = None;
        let grace = self.plan.hang_timeout.max(Duration::from_secs(5));
        std::thread::scope(|scope| {
            let mut handle: Option<(std::thread::ScopedJoinHandle<'_, R>, Duration)> = None;
            let mut measuring_done = during.is_none();
            loop {
                self.read_children();
                if stop_at.is_none() {
                    self.check_hangs();
                    if let Some(next) = self.errors_next {
                        self.start_errors(next);
                    }
                }
                // The cost measurement: once every worker runs, in a thread.
                if let (Some(f), None, false) = (during, &handle, measuring_done) {
                    if self.all_running() && stop_at.is_none() {
                        let at = self.started.elapsed();
                        handle = Some((scope.spawn(f), at));
                    } else if stop_at.is_some() {
                        measuring_done = true;
                        self.notes.push(
                            "the stress ended before the measurement under stress could start"
                                .into(),
                        );
                    }
                }
                if handle.as_ref().is_some_and(|(h, _)| h.is_finished()) {
                    let (h, at) = handle.take().unwrap();
                    measured_at = Some((at, self.started.elapsed()));
                    result = h.join().ok();
                    measuring_done = true;
                }
                sampler.sample_if_due(sample_every, &self.groups, self.started);
                // When to stop.
                if stop_at.is_none() {
                    let plan = self.plan;
                    let time_up =
                        plan.deadline.is_some_and(|d| Instant::now() >= d) && measuring_done;
                    let ops_done = plan.deadline.is_none()
                        && self.children.is_empty()
                        && self.errors_next.is_none();
                    if yamba_core::interrupt::interrupted() {
                        interrupted = true;
                    }
                    if time_up || ops_done || interrupted {
                        self.control.stop.store(1, Ordering::SeqCst);
                        stop_at = Some(Instant::now());
                    }
                }
                if let Some(t) = stop_at {
                    if self.children.is_empty() && handle.is_none() {
                        break;
                    }
                    if t.elapsed() > grace {
                        for c in &self.children {
                            // SAFETY: killing our own children's groups.
                            unsafe { libc::killpg(c.pid, libc::SIGKILL) };
                        }
                    }
                    if yamba_core::interrupt::interrupted() {
                        interrupted = true;
                    }
                }
            }
        });
        Watched {
            interrupted,
            measured_at,
            result,
        }
    }

    /// Waits for output (or 25 ms), reads what every child sent, and
    /// reaps those that ended.
    fn read_children(&mut self) {
        let mut pfds: Vec<libc::pollfd> = self
            .children
            .iter()
            .map(|c| libc::pollfd {
                fd: c.fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: pfds is a valid array of pollfd.
        unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 25) };
        for i in 0..self.children.len() {
            drain(&mut self.children[i]);
            self.parse_lines(i);
        }
        self.reap();
    }

    /// Whether every churn worker runs (and, with workers, 300 ms have
    /// passed): when the measurement under stress may start.
    fn all_running(&self) -> bool {
        let plan = self.plan;
        plan.churn
            .iter()
            .all(|s| self.control.slots[s.index].state.load(Ordering::Acquire) == RUNNING)
            && (plan.churn.is_empty() || self.started.elapsed() > Duration::from_millis(300))
    }

    /// Kills anything still around (a child of a child that left its
    /// group), and gives every worker a report, empty if it sent none.
    fn end_all(&mut self) {
        for &g in &self.groups {
            // SAFETY: the run's own process groups.
            unsafe { libc::killpg(g, libc::SIGKILL) };
        }
        for (index, spec) in self.plan.churn.iter().enumerate() {
            self.reports
                .entry(spec.index)
                .or_insert_with(|| WorkerReport {
                    index,
                    ..WorkerReport::default()
                });
        }
    }
}

/// Samples of the machine while the stress runs, and the zombies that
/// stayed.
#[derive(Default)]
struct Sampler {
    timeline: Vec<Sample>,
    last: Option<Instant>,
    /// Each zombie of the run's groups: when first seen, and its parent.
    zombie_seen: BTreeMap<i32, (Instant, i32)>,
    lingering: Vec<String>,
}

impl Sampler {
    /// A sample of the run's `groups` (and of memory), if `every` has
    /// passed since the last.
    fn sample_if_due(&mut self, every: Duration, groups: &[i32], started: Instant) {
        if self.last.is_some_and(|t| t.elapsed() < every) {
            return;
        }
        self.last = Some(Instant::now());
        let procs = sys::processes(groups, None);
        let now = Instant::now();
        let mut zombies = 0;
        for p in &procs {
            if p.state == 'Z' {
                zombies += 1;
                let e = self.zombie_seen.entry(p.pid).or_insert((now, p.ppid));
                if now - e.0 > Duration::from_secs(2)
                    && !self
                        .lingering
                        .iter()
                        .any(|l| l.starts_with(&format!("pid {} ", p.pid)))
                {
                    self.lingering.push(format!(
                        "pid {} (child of {}) stayed a zombie for over 2 s",
                        p.pid, p.ppid
                    ));
                }
            }
        }
        self.zombie_seen
            .retain(|pid, _| procs.iter().any(|p| p.pid == *pid && p.state == 'Z'));
        self.timeline.push(Sample {
            t_s: started.elapsed().as_secs_f64(),
            memory: sys::read_memory_once(false).map(|(m, _)| m),
            processes: procs.len(),
            zombies,
        });
    }
}
