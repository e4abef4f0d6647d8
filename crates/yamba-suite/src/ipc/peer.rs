//! The other party of a measurement: a forked process pinned to a chosen
//! CPU, and the shared memory ([`Shared`]) through which it reports what it
//! saw.

use super::adapter;
use std::sync::atomic::{AtomicU64, Ordering};
use yamba_os::sched::{sched_times, SchedTimes};

/// Memory shared with the peer (yamba-os's, here for the area's files).
pub use yamba_os::Shared;

/// What a peer reports back, each field on its own cache line so the
/// reporting does not bounce lines the transport uses.
#[repr(C, align(64))]
#[derive(Default)]
pub struct PeerStats {
    /// Requests served.
    pub served: AtomicU64,
    _p0: [u64; 7],
    /// sched_getcpu samples taken, and how many were not the pinned CPU.
    pub cpu_samples: AtomicU64,
    pub wrong_cpu: AtomicU64,
    /// Malformed or failed receives/sends.
    pub errors: AtomicU64,
    /// Set once the peer is pinned and about to serve.
    pub ready: AtomicU64,
    /// The CPU it is pinned to, +1 (0: not yet known).
    pub cpu_plus_one: AtomicU64,
}

impl PeerStats {
    /// Samples the CPU on the 1st, 17th, 33rd… call (sched_getcpu through
    /// the vDSO is a few ns; sampling sparsely keeps it off the measured path).
    #[inline]
    pub fn sample_cpu(&self, count: u64, pinned: usize) {
        if count % 16 == 1 {
            self.cpu_samples.fetch_add(1, Ordering::Relaxed);
            if yamba_core::affinity::current_cpu() != Some(pinned) {
                self.wrong_cpu.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub fn wrong(&self) -> (u64, u64) {
        (
            self.wrong_cpu.load(Ordering::Relaxed),
            self.cpu_samples.load(Ordering::Relaxed),
        )
    }
}

/// A forked peer process; killed and reaped when dropped.
pub struct Peer {
    pub pid: i32,
}

impl Peer {
    /// Forks a process pinned to `cpu` that runs `serve` (which should
    /// loop until killed) and waits until it has set `stats.ready`.
    pub fn spawn<F: FnOnce()>(cpu: usize, stats: &PeerStats, serve: F) -> Result<Peer, String> {
        let pid = adapter::fork()?;
        if pid == 0 {
            let code = match yamba_core::affinity::pin_current_thread(cpu) {
                Ok(()) => {
                    stats.cpu_plus_one.store(cpu as u64 + 1, Ordering::Release);
                    stats.ready.store(1, Ordering::Release);
                    serve();
                    0
                }
                Err(_) => {
                    stats.ready.store(2, Ordering::Release);
                    1
                }
            };
            adapter::exit_now(code);
        }
        let peer = Peer { pid };
        let t0 = std::time::Instant::now();
        loop {
            match stats.ready.load(Ordering::Acquire) {
                1 => return Ok(peer),
                2 => {
                    return Err(format!(
                        "the peer process could not pin itself to CPU {cpu}"
                    ))
                }
                _ if t0.elapsed().as_secs() > 10 => {
                    return Err("the peer process did not start within 10 s".into())
                }
                _ => std::thread::sleep(std::time::Duration::from_micros(100)),
            }
        }
    }

    /// Its context switches so far: (voluntary, involuntary).
    pub fn switches(&self) -> Option<(u64, u64)> {
        adapter::process_switches(self.pid)
    }
}

/// Whether anything but the peer ran on the peer's CPU: a snapshot taken
/// before the measurement, compared after.
pub struct CpuShare {
    cpu: usize,
    pid: i32,
    busy0: Option<adapter::CpuTimes>,
    /// The peer's own scheduling times.
    peer0: Option<SchedTimes>,
    /// The initiator's (the thread that starts and finishes).
    initiator0: Option<SchedTimes>,
}

/// What other tasks did on the peer's CPU over the measurement.
#[derive(Debug, Clone, Copy)]
pub struct OthersOnCpu {
    /// Share of the CPU's time used by anything but the peer (0–1).
    pub others_share: f64,
    /// Length of the window /proc/stat saw, in ns (it counts in ticks of
    /// usually 10 ms, so a short window says little).
    pub window_ns: f64,
    /// Time the hypervisor took from the peer's CPU, in ns (/proc/stat's
    /// ticks, so coarse over a short window).
    pub steal_ns: f64,
    /// Time the peer spent runnable but not running, in ns.
    pub peer_wait_ns: Option<u64>,
    /// Time the initiator spent runnable but not running, in ns: waiting
    /// for its own CPU, which lengthens the operations but says nothing
    /// about the peer's.
    pub initiator_wait_ns: Option<u64>,
}

impl CpuShare {
    /// Called on the initiator's thread, as [`CpuShare::finish`] is.
    pub fn start(peer: &Peer, cpu: usize) -> CpuShare {
        CpuShare {
            cpu,
            pid: peer.pid,
            busy0: adapter::cpu_busy_ns(cpu),
            peer0: sched_times(Some(peer.pid)),
            initiator0: sched_times(None),
        }
    }

    /// None when /proc/stat or schedstat is not readable.
    pub fn finish(&self) -> Option<OthersOnCpu> {
        let a = self.busy0?;
        let b = adapter::cpu_busy_ns(self.cpu)?;
        let peer = sched_times(Some(self.pid))
            .zip(self.peer0)
            .map(|(now, then)| now.since(then));
        let own = peer?.ran_ns as f64;
        let total = (b.total_ns - a.total_ns).max(1.0);
        Some(OthersOnCpu {
            others_share: (((b.busy_ns - a.busy_ns) - own) / total).clamp(0.0, 1.0),
            window_ns: b.total_ns - a.total_ns,
            steal_ns: (b.steal_ns - a.steal_ns).max(0.0),
            peer_wait_ns: peer.map(|t| t.waited_ns),
            initiator_wait_ns: sched_times(None)
                .zip(self.initiator0)
                .map(|(now, then)| now.since(then).waited_ns),
        })
    }
}

/// /proc/stat windows shorter than this are too coarse to judge by.
const MIN_STAT_WINDOW_NS: f64 = 0.5e9;

/// Adds the gating check that both parties stayed on their pinned CPUs:
/// `cpus` (initiator's, peer's) and each side's (samples elsewhere,
/// samples) from sched_getcpu, taken on every 16th `step` ("call", "step").
pub fn add_pinned_evidence(
    r: &mut yamba_core::BenchResult,
    step: &str,
    cpus: (usize, usize),
    client: (u64, u64),
    peer: (u64, u64),
) {
    let ((cw, cs), (pw, ps)) = (client, peer);
    r.add_evidence(
        format!("initiator and peer stayed on their pinned CPUs (sched_getcpu sampled on every 16th {step})"),
        format!("initiator on CPU {}, peer on CPU {}", cpus.0, cpus.1),
        format!("initiator {cw}/{cs} samples elsewhere, peer {pw}/{ps} samples elsewhere"),
        cw == 0 && pw == 0 && cs > 0 && ps > 0,
    );
}

/// Adds the cross-CPU gating check: the peer had its CPU to itself, i.e.
/// it waited for it (schedstat run_delay, ns-exact) no more than 10% of
/// the operations' mean time less the initiator's own waits for its CPU
/// and less the time the hypervisor took from the peer's CPU (steal), and
/// — when the window is long enough for /proc/stat's ticks — other tasks
/// used no more than 10% of that CPU. Otherwise other tasks' time is in
/// the number. (A wake-up of an idle CPU is not counted as waiting: the
/// task is queued when the CPU is up.) Both come off because they
/// lengthen the mean without the peer's help: with both CPUs loaded by
/// other work, a peer kept from its CPU by a task at nice −20 waited
/// 194 µs an operation and passed against a mean the initiator's own
/// waits had stretched past 1.9 ms; on a busy host the same peer waited
/// 1.0 ms an operation and passed against a mean over 10 ms of which
/// neither side's run_delay held 9 ms. Time the host takes from the
/// peer's vCPU is in a task's run_delay only if the task was queued then
/// (a wake-up whose IPI waits for the vCPU is not), so it comes off too;
/// whether it was that time there is not shown. Where the peer was queued
/// during steal, its wait holds the steal and the rule is the stricter
/// for it: the host had the peer's CPU.
pub fn add_cpu_evidence(
    r: &mut yamba_core::BenchResult,
    cpu: usize,
    seen: Option<OthersOnCpu>,
    ops: u64,
    mean_ns: f64,
) {
    let check = "the peer had its CPU to itself (schedstat run_delay; /proc/stat busy time minus the peer's own)";
    let expected = format!(
        "waits ≤ 10% of the mean operation ({:.0} ns) less the initiator's waits and CPU {cpu}'s steal; other tasks ≤ 10% of CPU {cpu} (over ≥ {:.1} s)",
        0.1 * mean_ns,
        MIN_STAT_WINDOW_NS / 1e9
    );
    let Some(o) = seen.filter(|o| o.peer_wait_ns.is_some()) else {
        r.add_note_evidence(
            check,
            expected,
            "not checkable: schedstat or /proc/stat unreadable",
            false,
        );
        return;
    };
    let wait = o.peer_wait_ns.unwrap_or(0) as f64 / ops.max(1) as f64;
    let own_wait = o.initiator_wait_ns.unwrap_or(0) as f64 / ops.max(1) as f64;
    let steal = o.steal_ns / ops.max(1) as f64;
    let work = (mean_ns - own_wait - steal).max(0.0);
    let long = o.window_ns >= MIN_STAT_WINDOW_NS;
    let share = if long {
        format!("other tasks {:.1}%", o.others_share * 100.0)
    } else {
        format!("other tasks not judged ({:.2} s window)", o.window_ns / 1e9)
    };
    r.add_evidence(
        check,
        expected,
        format!(
            "waited {wait:.0} ns per operation (the initiator {own_wait:.0} ns for its own CPU; steal {steal:.0} ns); {share}"
        ),
        wait <= 0.1 * work && (!long || o.others_share <= 0.10),
    );
}

impl Drop for Peer {
    fn drop(&mut self) {
        adapter::kill_and_reap(self.pid);
    }
}
