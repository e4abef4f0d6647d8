//! Error tests (the Go! report's "error-test": calls with random and
//! invalid parameters): in a child process of their own, call after call
//! drawn from the table in `table.rs` — each call's case and arguments from
//! its own stream of the seed, so any single call replays alone — and
//! each result checked against the error codes the documentation allows.
//!
//! Reported, with the seed and the exact call: an unexpected success, an
//! unexpected error code, a crash of the process (the supervisor reads the
//! call in progress from shared memory and starts a new process at the next
//! call), a hang (no return within the hang timeout), and anything a call
//! left behind (fds, children, mappings, files: the process's census is
//! compared with its baseline every 256 calls and at the end).

pub mod gen;
pub mod table;

use crate::rng::{self, Domain};
use crate::shared::{Control, DONE, RUNNING};
use crate::sys;
use gen::{Env, Gen};
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use table::Case;
use yamba_os::Shared;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    UnexpectedSuccess,
    UnexpectedError,
    Crash,
    Hang,
    /// Something calls left behind (an fd, a child, a mapping, a file).
    Leak,
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::UnexpectedSuccess => "unexpected success",
            FindingKind::UnexpectedError => "unexpected error code",
            FindingKind::Crash => "crash",
            FindingKind::Hang => "hang",
            FindingKind::Leak => "leak",
        }
    }
}

/// One thing an error test found, with what replays it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub seed: u64,
    /// The call's index in the seed's sequence (the first one, when it recurred).
    pub call: u64,
    pub primitive: String,
    pub case: String,
    /// The call with symbolic arguments (identical in a replay).
    pub syscall: String,
    /// The same call with the raw values passed.
    pub raw: String,
    pub expected: String,
    pub got: String,
    pub doc: String,
    /// How many calls found the same (set by the supervisor).
    #[serde(default)]
    pub occurrences: u64,
}

impl Finding {
    /// What identifies "the same report" across runs and replays.
    pub fn key(&self) -> (FindingKind, String, String, String) {
        // A success returns values (pids, fds, addresses) that differ call
        // to call: the same report all the same.
        let got = match self.kind {
            FindingKind::UnexpectedSuccess => String::new(),
            _ => self.got.clone(),
        };
        (self.kind, self.case.clone(), self.syscall.clone(), got)
    }

    /// The command that replays this call alone.
    pub fn replay_one(&self) -> String {
        format!(
            "yamba stress --seed {} --replay --call {}",
            self.seed, self.call
        )
    }

    /// The command that replays the sequence up to and including this call.
    pub fn replay_sequence(&self) -> String {
        format!(
            "yamba stress --seed {} --replay --calls {}",
            self.seed,
            self.call + 1
        )
    }
}

/// Which test plants are in the table (tests only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TablePlants {
    pub wrong_errno: bool,
    pub crash: bool,
    pub hang: bool,
}

/// The table this run uses: the real entries, then any planted ones.
pub fn table(plants: TablePlants) -> Vec<&'static Case> {
    let mut t: Vec<&'static Case> = table::CASES.iter().collect();
    if plants.wrong_errno {
        t.push(&table::PLANT_WRONG_ERRNO);
    }
    if plants.crash {
        t.push(&table::PLANT_CRASH);
    }
    if plants.hang {
        t.push(&table::PLANT_HANG);
    }
    t
}

/// Names the table: a seed replays the same calls only with the same
/// table (its entries, in this order).
pub fn fingerprint(cases: &[&'static Case]) -> String {
    let h = cases
        .iter()
        .flat_map(|c| c.name.bytes().chain([0]))
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    format!("{} cases, fingerprint {h:016x}", cases.len())
}

/// Room for per-case counters (the table has fewer entries).
pub const MAX_CASES: usize = 256;

/// Per-case counters, shared so that they survive a crash of the process.
pub struct CaseCounts {
    pub calls: [AtomicU64; MAX_CASES],
    pub passed: [AtomicU64; MAX_CASES],
    pub skipped: [AtomicU64; MAX_CASES],
}

/// The call in progress, as a finding waiting for its verdict: what the
/// supervisor reports if the process dies or hangs in it.
pub struct Board {
    len: AtomicU32,
    bytes: [std::sync::atomic::AtomicU8; 8192],
}

impl Board {
    fn write(&self, f: &Finding) {
        let json = serde_json::to_vec(f).unwrap_or_default();
        let n = json.len().min(self.bytes.len());
        for (slot, b) in self.bytes.iter().zip(&json[..n]) {
            slot.store(*b, Ordering::Relaxed);
        }
        self.len.store(n as u32, Ordering::Release);
    }

    /// The call in progress, if one was written.
    pub fn read(&self) -> Option<Finding> {
        let n = self.len.load(Ordering::Acquire) as usize;
        let b: Vec<u8> = self.bytes[..n.min(self.bytes.len())]
            .iter()
            .map(|x| x.load(Ordering::Relaxed))
            .collect();
        serde_json::from_slice(&b).ok()
    }

    pub fn clear(&self) {
        self.len.store(0, Ordering::Release);
    }
}

/// What an error-test process is asked to do.
#[derive(Debug, Clone)]
pub struct ErrorSpec {
    pub slot: usize,
    pub seed: u64,
    /// Calls `first..end` (end exclusive; `None`: until told to stop).
    pub first: u64,
    pub end: Option<u64>,
    pub cpu: Option<usize>,
    pub scratch: PathBuf,
    pub plants: TablePlants,
}

/// A line the process sends.
#[derive(Debug, Serialize, Deserialize)]
pub enum Message {
    Finding(Finding),
    /// Ended normally after `next` − first calls.
    Done {
        next: u64,
    },
}

fn errno_list(v: &[i32]) -> String {
    if v.is_empty() {
        "success".into()
    } else {
        v.iter()
            .map(|&e| sys::errno_name(e))
            .collect::<Vec<_>>()
            .join(" or ")
    }
}

/// Runs call `k` of `seed`; a finding when its result is not what the table allows.
pub fn run_call(
    seed: u64,
    k: u64,
    cases: &[&'static Case],
    env: &Env,
    counts: &CaseCounts,
    board: &Board,
) -> Option<Finding> {
    let mut rng = rng::stream(seed, Domain::ErrorCall, k);
    let i = rng.gen_range(0..cases.len());
    let case = cases[i];
    let mut g = Gen::new(rng, env);
    let call = (case.build)(&mut g);
    counts.calls[i].fetch_add(1, Ordering::Relaxed);
    if g.unavailable.is_some() {
        counts.skipped[i].fetch_add(1, Ordering::Relaxed);
        g.finish(-1);
        return None;
    }
    let mut f = Finding {
        kind: FindingKind::Crash,
        seed,
        call: k,
        primitive: case.primitive.into(),
        case: case.name.into(),
        syscall: call.describe(),
        raw: call.raw(),
        expected: errno_list(case.expect),
        got: String::new(),
        doc: case.doc.into(),
        occurrences: 1,
    };
    board.write(&f);
    let (ret, e) = call.invoke();
    g.finish(ret);
    let verdict = if case.expect.is_empty() {
        (ret < 0).then(|| (FindingKind::UnexpectedError, sys::errno_name(e)))
    } else if ret == -1 {
        (!case.expect.contains(&e)).then(|| (FindingKind::UnexpectedError, sys::errno_name(e)))
    } else {
        Some((FindingKind::UnexpectedSuccess, format!("returned {ret}")))
    };
    match verdict {
        None => {
            counts.passed[i].fetch_add(1, Ordering::Relaxed);
            None
        }
        Some((kind, got)) => {
            f.kind = kind;
            f.got = got;
            Some(f)
        }
    }
}

/// What the process holds between calls: all of it must stay as it was.
struct Census {
    fds: std::collections::BTreeMap<i32, String>,
    maps: Vec<String>,
    files: BTreeSet<String>,
}

fn census(scratch: &std::path::Path) -> Census {
    let files = std::fs::read_dir(scratch)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    Census {
        fds: sys::fd_table(),
        maps: sys::maps(),
        files,
    }
}

/// What differs from the baseline, if anything.
fn leaks(base: &Census, now: &Census) -> Option<String> {
    let mut what = Vec::new();
    for (fd, link) in &now.fds {
        if base.fds.get(fd) != Some(link) {
            what.push(format!("fd {fd} → {link} ({})", sys::fd_kind(link)));
        }
    }
    for fd in base.fds.keys().filter(|fd| !now.fds.contains_key(fd)) {
        what.push(format!("fd {fd} of the baseline closed"));
    }
    let children = sys::children();
    if children > 0 {
        what.push(format!("{children} child process(es) not reaped"));
    }
    for m in sys::outside(&now.maps, &sys::coverage(&base.maps))
        .iter()
        .take(4)
    {
        what.push(format!("mapping {m}"));
    }
    for f in now.files.difference(&base.files).take(4) {
        what.push(format!("file {f}"));
    }
    (!what.is_empty()).then(|| what.join("; "))
}

/// The error-test process: runs its calls and sends findings as JSON lines
/// on the report fd. Never returns.
pub fn errors_main(
    spec: &ErrorSpec,
    control: &Control,
    counts: &Shared<CaseCounts>,
    board: &Shared<Board>,
) -> ! {
    let slot = &control.slots[spec.slot];
    slot.pid.store(sys::getpid(), Ordering::Release);
    if let Some(cpu) = spec.cpu {
        let _ = yamba_core::affinity::pin_current_thread(cpu);
    }
    let send = |m: &Message| {
        let mut line = serde_json::to_vec(m).unwrap_or_default();
        line.push(b'\n');
        sys::write_all(sys::REPORT_FD, &line);
    };
    let env = match Env::new(&spec.scratch) {
        Ok(e) => e,
        Err(e) => {
            send(&Message::Finding(Finding {
                kind: FindingKind::Crash,
                seed: spec.seed,
                call: spec.first,
                primitive: "setup".into(),
                case: "setup".into(),
                syscall: String::new(),
                raw: String::new(),
                expected: "a working test environment".into(),
                got: e.to_string(),
                doc: String::new(),
                occurrences: 1,
            }));
            // SAFETY: leaving the child process.
            unsafe { libc::_exit(1) }
        }
    };
    let cases = table(spec.plants);
    let base = census(&spec.scratch);
    let mut since = spec.first;
    let mut k = spec.first;
    slot.state.store(RUNNING, Ordering::Release);
    let end = spec.end.unwrap_or(u64::MAX);
    while k < end && !control.stopping() {
        slot.begin(k);
        if let Some(f) = run_call(spec.seed, k, &cases, &env, counts, board) {
            send(&Message::Finding(f));
        }
        board.clear();
        k += 1;
        slot.end();
        if (k - spec.first).is_multiple_of(256) || k == end {
            if let Some(what) = leaks(&base, &census(&spec.scratch)) {
                send(&Message::Finding(leak_finding(spec.seed, since, k, what)));
                // What is left now would be reported again at every check:
                // end here; the supervisor starts a fresh process at call k.
                break;
            }
            since = k;
        }
    }
    if !(k - spec.first).is_multiple_of(256) && k != end {
        if let Some(what) = leaks(&base, &census(&spec.scratch)) {
            send(&Message::Finding(leak_finding(spec.seed, since, k, what)));
        }
    }
    send(&Message::Done { next: k });
    slot.state.store(DONE, Ordering::Release);
    // SAFETY: leaving the child process.
    unsafe { libc::_exit(0) }
}

fn leak_finding(seed: u64, from: u64, to: u64, what: String) -> Finding {
    Finding {
        kind: FindingKind::Leak,
        seed,
        call: to.saturating_sub(1),
        primitive: "census".into(),
        case: "left behind".into(),
        syscall: format!("calls {from}..{to}"),
        raw: String::new(),
        expected: "fds, children, mappings and files as before the calls".into(),
        got: what,
        doc: "every call's setup is undone after it; the kernel must not keep what a failed call created".into(),
        occurrences: 1,
    }
}
