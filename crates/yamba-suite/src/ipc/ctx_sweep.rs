//! P = a context switch among N processes on one CPU, each touching a
//! working set of S bytes when it runs (lmbench's lat_ctx -s S N…, the
//! sweep its summary reads: S = 0, 16, 64 KiB; N = 2 to 96).
//!
//! The processes form a ring of pipes: the benchmark process writes a
//! token into the first pipe, each of the N − 1 others reads it from its
//! predecessor, sums its own S bytes, and writes it on; the benchmark
//! reads it back from the last pipe and sums its own S bytes. One round
//! is N hops, each a write, a read, a sum and a switch. The same write,
//! read and sum without a switch is timed in the benchmark process alone
//! (its one buffer, the ring's N pipes in turn), and
//!
//!   switch(N, S) = round / N − alone.
//!
//! With N × S beyond the caches each switch also pays for reloading the
//! working set: that is what the curve shows. One result per size, the
//! curve over N in `series`, the headline at N = 2.
//!
//! The ring runs in SCHED_BATCH (no privilege needed; a real-time run
//! stays real-time), which only turns off wake-up preemption: otherwise, with several processes runnable,
//! the scheduler often lets the woken process preempt the one that woke
//! it before that one blocks, and such a hop is two switches (up to 1.4
//! per hop at 8 processes here). With it, every hop is one switch.
//!
//! Evidence (gating): the working set was really touched — every process
//! reports (shared memory) its hops and the sum of its buffer's words,
//! which must equal hops × the known sum; every token came back; the
//! kernel switched each process once per round; all stayed on the CPU.

use super::adapter;
use super::peer::Shared;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Series, Unit};

pub static SWEEP: Benchmark = Benchmark {
    id: "ipc.ctxsw.sweep",
    area: "ipc",
    unit: Unit::Nanoseconds,
    description: "context switch among 2 to 96 processes on one CPU, each touching 0, 16 or 64 KiB (ipc.ctxsw.sweep.SIZE: curve over processes, headline at 2)",
    adapter: adapter::NAME,
    run: run_sweep,
    timeout_s: 300,
    cold: Cold::NotMeaningful(
        "the working sets each process touches (0, 16, 64 KiB over 2–96 processes) are the experiment: each size is its own cache case",
    ),
    ..Benchmark::TEMPLATE
};

/// Working-set sizes per process, bytes.
pub const SIZES: &[usize] = &[0, 16 << 10, 64 << 10];
/// Process counts (lmbench's standard run); the quick pass keeps those
/// lmbench's summary reads, and the largest.
pub const PROCS: &[usize] = &[2, 4, 8, 16, 24, 32, 64, 96];
const PROCS_QUICK: &[usize] = &[2, 8, 16, 96];
pub const MAX_PROCS: usize = 96;

/// Switches per round per process accepted: one, plus a few preemptions.
const SWITCHES_PER_ROUND: std::ops::RangeInclusive<f64> = 0.97..=1.3;

/// What one ring process reports, on a cache line of its own.
#[repr(C, align(64))]
#[derive(Default)]
pub struct Slot {
    pub hops: AtomicU64,
    pub sum: AtomicU64,
    pub cpu_samples: AtomicU64,
    pub wrong_cpu: AtomicU64,
    pub errors: AtomicU64,
}

/// Every ring process's slot (index 0: the benchmark process).
pub struct Slots {
    pub slot: [Slot; MAX_PROCS],
}

/// Sum of the words of `buf`, out of the optimiser's sight: it cannot know
/// the contents, so every word is loaded.
#[inline(never)]
pub fn sum_words(buf: &[u64]) -> u64 {
    std::hint::black_box(buf)
        .iter()
        .fold(0u64, |s, &w| s.wrapping_add(w))
}

/// Fills a working set with its known pattern (word j = j + 1).
pub fn fill(buf: &mut [u64]) {
    for (j, w) in buf.iter_mut().enumerate() {
        *w = j as u64 + 1;
    }
}

/// The sum [`sum_words`] must find in a filled working set of `words`.
pub fn known_sum(words: usize) -> u64 {
    let w = words as u64;
    w.wrapping_mul(w + 1) / 2
}

/// One point of the sweep.
#[derive(Debug, Clone)]
pub struct Point {
    pub procs: usize,
    pub bytes: usize,
    /// Switch time per observation, ns.
    pub switch_ns: Vec<f64>,
    pub round_ns: f64,
    pub alone_ns: f64,
    /// Rounds in the timed part.
    pub rounds: u64,
    pub tokens_lost: u64,
    /// Processes whose reported hops or sums were wrong (and the first).
    pub untouched: usize,
    pub untouched_first: Option<String>,
    /// Kernel-counted switches per round per child (fewest, mean over the
    /// children), and the benchmark process's.
    pub child_switches: (f64, f64),
    pub own_switches: f64,
    pub wrong_cpu: (u64, u64),
}

/// A ring of `procs` processes (this one and procs − 1 children) on this
/// thread's CPU, each with `bytes` of working set; killed when dropped.
struct Ring {
    pipes: Vec<(i32, i32)>,
    pids: Vec<i32>,
}

impl Drop for Ring {
    fn drop(&mut self) {
        for &pid in &self.pids {
            adapter::kill_and_reap(pid);
        }
        for &(r, w) in &self.pipes {
            adapter::close(r);
            adapter::close(w);
        }
    }
}

/// Measures one point: `min_obs` observations at least, then until `budget`.
pub fn measure_point(
    clock: &yamba_core::Clock,
    cpu: usize,
    procs: usize,
    bytes: usize,
    min_obs: usize,
    budget: Duration,
) -> Result<Point, String> {
    assert!((2..=MAX_PROCS).contains(&procs));
    let words = bytes / 8;
    let slots = Shared::<Slots>::new_zeroed()?;
    // Every child's working set, allocated before forking (no allocation
    // after fork); each child fills its own, which gives it private pages.
    let mut sets: Vec<Vec<u64>> = (0..procs).map(|_| vec![0u64; words]).collect();
    let want = known_sum(words);
    let ring = spawn_ring(cpu, &mut sets, &slots)?;
    fill(&mut sets[0]);
    let own = &sets[0];
    let first_w = ring.pipes[0].1;
    let last_r = ring.pipes[procs - 1].0;
    let mut own_sums = OwnSums::default();
    let mut lost = 0u64;
    let round = |n: u64, lost: &mut u64, own_sums: &mut OwnSums| {
        let mut tok = [7u8, 0, 0, 0];
        for _ in 0..n {
            if !(adapter::write_all(first_w, &tok) && adapter::read_exact(last_r, &mut tok)) {
                *lost += 1;
            }
            own_sums.add(sum_words(own));
        }
    };
    // Warm up (every child has run and faulted its set in), and choose
    // rounds per observation: ~200 µs each.
    for _ in 0..3 {
        round(1, &mut lost, &mut own_sums);
    }
    let t0 = clock.start();
    round(4, &mut lost, &mut own_sums);
    let per_round = clock.ticks_to_ns(clock.stop().wrapping_sub(t0)) / 4.0;
    let n = ((200_000.0 / per_round.max(1.0)).ceil() as u64).clamp(1, 10_000);

    let children0 = ring.switches();
    let own0 = adapter::thread_switches();
    let started = Instant::now();
    let mut rounds_ns = Vec::new();
    let mut rounds = 0u64;
    while rounds_ns.len() < min_obs || (started.elapsed() < budget && rounds_ns.len() < 10_000) {
        let t0 = clock.start();
        round(n, &mut lost, &mut own_sums);
        rounds_ns.push(clock.ticks_to_ns(clock.stop().wrapping_sub(t0)) / n as f64);
        rounds += n;
        if lost > 0 {
            break;
        }
    }
    let own1 = adapter::thread_switches();
    let children1 = ring.switches();
    drop(ring);

    let alone_reps = (n * procs as u64).max(1);
    let alone_ns = measure_alone(
        clock,
        procs,
        alone_reps,
        (min_obs, budget),
        own,
        &mut own_sums,
        &mut lost,
    )?;
    let seen = children_seen(&slots, procs, 3 + 4 + rounds, want, &own_sums);
    let per_child: Vec<f64> = children0
        .iter()
        .zip(&children1)
        .map(|(a, b)| match (a, b) {
            (Some(a), Some(b)) => ((b.0 + b.1) - (a.0 + a.1)) as f64 / rounds.max(1) as f64,
            _ => f64::NAN,
        })
        .collect();
    let child_switches = (
        per_child.iter().copied().fold(f64::INFINITY, f64::min),
        per_child.iter().sum::<f64>() / per_child.len().max(1) as f64,
    );
    let own_switches = ((own1.0 + own1.1) - (own0.0 + own0.1)) as f64 / rounds.max(1) as f64;
    Ok(Point {
        procs,
        bytes,
        switch_ns: rounds_ns
            .iter()
            .map(|r| r / procs as f64 - alone_ns)
            .collect(),
        round_ns: median(&rounds_ns),
        alone_ns,
        rounds,
        tokens_lost: lost,
        untouched: seen.untouched,
        untouched_first: seen.untouched_first,
        child_switches,
        own_switches,
        wrong_cpu: seen.wrong_cpu,
    })
}

/// The ring: a pipe per process and `sets.len() - 1` children, child `i`
/// reading the token from pipe `i - 1`, summing its working set
/// (`sets[i]`) and passing the token on through pipe `i`; what it did goes
/// to its slot.
fn spawn_ring(cpu: usize, sets: &mut [Vec<u64>], slots: &Shared<Slots>) -> Result<Ring, String> {
    let mut ring = Ring {
        pipes: Vec::new(),
        pids: Vec::new(),
    };
    for _ in 0..sets.len() {
        ring.pipes.push(adapter::pipe()?);
    }
    for (i, buf) in sets.iter_mut().enumerate().skip(1) {
        let rd = ring.pipes[i - 1].0;
        let wr = ring.pipes[i].1;
        let pid = adapter::fork()?;
        if pid == 0 {
            pass_tokens(cpu, rd, wr, buf, &slots.slot[i]);
        }
        ring.pids.push(pid);
    }
    Ok(ring)
}

/// A child's life: forever read the token, sum the working set, record,
/// pass the token on; exit on a broken pipe.
fn pass_tokens(cpu: usize, rd: i32, wr: i32, buf: &mut [u64], slot: &Slot) -> ! {
    fill(buf);
    let mut tok = [0u8; 4];
    let mut hops = 0u64;
    let mut total = 0u64;
    loop {
        if !adapter::read_exact(rd, &mut tok) {
            slot.errors.fetch_add(1, Ordering::Relaxed);
            adapter::exit_now(1);
        }
        total = total.wrapping_add(sum_words(buf));
        hops += 1;
        slot.sum.store(total, Ordering::Relaxed);
        slot.hops.store(hops, Ordering::Release);
        if hops % 16 == 1 {
            slot.cpu_samples.fetch_add(1, Ordering::Relaxed);
            if yamba_core::affinity::current_cpu() != Some(cpu) {
                slot.wrong_cpu.fetch_add(1, Ordering::Relaxed);
            }
        }
        if !adapter::write_all(wr, &tok) {
            slot.errors.fetch_add(1, Ordering::Relaxed);
            adapter::exit_now(1);
        }
    }
}

impl Ring {
    /// Each child's (voluntary, involuntary) context switches so far.
    fn switches(&self) -> Vec<Option<(u64, u64)>> {
        self.pids
            .iter()
            .map(|&p| adapter::process_switches(p))
            .collect()
    }
}

/// The benchmark process's own sums of its working set, checked at the end
/// like each child's.
#[derive(Default)]
struct OwnSums {
    total: u64,
    hops: u64,
}

impl OwnSums {
    fn add(&mut self, sum: u64) {
        self.total = self.total.wrapping_add(sum);
        self.hops += 1;
    }
}

/// Alone: the same write, read and sum without a switch, in this process
/// only, cycling through `procs` pipes of its own (the ring's are gone with
/// its processes): the median per hop over `reps`-hop observations.
fn measure_alone(
    clock: &yamba_core::Clock,
    procs: usize,
    reps: u64,
    (min_obs, budget): (usize, Duration),
    own: &[u64],
    own_sums: &mut OwnSums,
    lost: &mut u64,
) -> Result<f64, String> {
    let mut pipes = Vec::new();
    for _ in 0..procs {
        pipes.push(adapter::pipe()?);
    }
    let mut alone = Vec::new();
    let mut i = 0usize;
    let mut tok = [7u8, 0, 0, 0];
    let alone_started = Instant::now();
    while alone.len() < min_obs.max(5)
        || (alone_started.elapsed() < budget / 4 && alone.len() < 1000)
    {
        let t0 = clock.start();
        for _ in 0..reps {
            let (r, w) = pipes[i];
            if !(adapter::write_all(w, &tok) && adapter::read_exact(r, &mut tok)) {
                *lost += 1;
            }
            own_sums.add(sum_words(own));
            i = (i + 1) % procs;
        }
        alone.push(clock.ticks_to_ns(clock.stop().wrapping_sub(t0)) / reps as f64);
    }
    for (r, w) in pipes {
        adapter::close(r);
        adapter::close(w);
    }
    Ok(median(&alone))
}

/// What the children saw: how many processes missed a hop or summed
/// wrong (the first in words), and the CPU samples off the pinned CPU.
struct Seen {
    untouched: usize,
    untouched_first: Option<String>,
    wrong_cpu: (u64, u64),
}

fn children_seen(
    slots: &Shared<Slots>,
    procs: usize,
    total_rounds: u64,
    want: u64,
    own: &OwnSums,
) -> Seen {
    let mut seen = Seen {
        untouched: 0,
        untouched_first: None,
        wrong_cpu: (0, 0),
    };
    for i in 1..procs {
        let s = &slots.slot[i];
        let hops = s.hops.load(Ordering::Acquire);
        let sum = s.sum.load(Ordering::Relaxed);
        let ok = hops == total_rounds
            && sum == want.wrapping_mul(hops)
            && s.errors.load(Ordering::Relaxed) == 0;
        if !ok {
            seen.untouched += 1;
            seen.untouched_first.get_or_insert(format!(
                "process {i}: {hops} hops of {total_rounds}, sum {sum} (want {})",
                want.wrapping_mul(hops)
            ));
        }
        seen.wrong_cpu.0 += s.wrong_cpu.load(Ordering::Relaxed);
        seen.wrong_cpu.1 += s.cpu_samples.load(Ordering::Relaxed);
    }
    if own.total != want.wrapping_mul(own.hops) {
        seen.untouched += 1;
        seen.untouched_first
            .get_or_insert("the benchmark process's own sums were wrong".into());
    }
    seen
}

fn median(v: &[f64]) -> f64 {
    yamba_stats::Summary::of(v).map_or(f64::NAN, |s| s.median)
}

fn run_sweep(ctx: &mut Ctx) -> Result<(), String> {
    let cpu = ctx
        .cpu()
        .ok_or("needs pinning to keep every process on one CPU (run without --no-pin)")?;
    // A precise run's replicating blocks measure only the headline (2
    // processes): the curve comes from its first block.
    let procs = if !ctx.measures_curve() {
        &PROCS[..1]
    } else if ctx.quick() {
        PROCS_QUICK
    } else {
        PROCS
    };
    // Per point: amounts, an eighth of the block's budget (itself scaled
    // by effort; 19 ms in a quick pass).
    let (min_obs, budget) = (ctx.scaled(5), ctx.plan().budget / 8);
    let batch = adapter::set_batch(true);
    for &bytes in SIZES {
        let started = Instant::now();
        let mut points = Vec::new();
        for &n in procs {
            match measure_point(ctx.clock(), cpu, n, bytes, min_obs, budget) {
                Ok(p) => points.push(p),
                Err(e) => {
                    let _ = adapter::set_batch(false);
                    return Err(e);
                }
            }
        }
        let mut r = sweep_result(ctx, bytes, &points, started);
        match &batch {
            Ok(true) => r.param("policy", "SCHED_BATCH (no wake-up preemption)"),
            Ok(false) => r.param(
                "policy",
                "real-time, as the run asked (no wake-up preemption)",
            ),
            Err(e) => r.param("policy", "SCHED_OTHER").warn(format!(
                "could not use SCHED_BATCH ({e}): some hops may be two switches"
            )),
        };
        ctx.push(r);
    }
    let _ = adapter::set_batch(false);
    Ok(())
}

fn sweep_result(ctx: &Ctx, bytes: usize, points: &[Point], started: Instant) -> BenchResult {
    let mut r = ctx.result(Some(&format!("{}k", bytes >> 10)));
    let head = &points[0];
    r.description = format!(
        "context switch among processes on one CPU each touching {} KiB (headline: {} processes; curve over 2–{})",
        bytes >> 10,
        head.procs,
        points.last().map_or(0, |p| p.procs)
    );
    r.set_observations(head.switch_ns.clone());
    r.method = Some(ctx.direct_method(
        head.rounds,
        started,
        "switch = round / N − (write + read + sum alone)",
    ));
    r.param("working_set_bytes", bytes)
        .param("processes", head.procs)
        .param("cpu", ctx.cpu())
        .param("token", "4 bytes through a ring of pipes");
    r.series = Some(Series {
        x_label: "processes".into(),
        x_unit: "count".into(),
        y_label: "context switch".into(),
        y_unit: "ns".into(),
        log_x: true,
        log_y: false,
        points: points
            .iter()
            .map(|p| [p.procs as f64, median(&p.switch_ns)])
            .collect(),
    });
    r.extra.insert(
        "points".into(),
        json!(points
            .iter()
            .map(|p| json!({
                "processes": p.procs, "switch_ns": median(&p.switch_ns),
                "round_ns": p.round_ns, "alone_ns": p.alone_ns, "rounds": p.rounds,
                "child_switches_per_round_min_mean": [p.child_switches.0, p.child_switches.1],
                "own_switches_per_round": p.own_switches,
            }))
            .collect::<Vec<_>>()),
    );
    let lost: u64 = points.iter().map(|p| p.tokens_lost).sum();
    r.add_evidence(
        "every token came back around the ring",
        "0 lost",
        format!("{lost} lost"),
        lost == 0,
    );
    let untouched: Vec<String> = points
        .iter()
        .filter(|p| p.untouched > 0)
        .map(|p| {
            format!(
                "{} processes: {} wrong, {}",
                p.procs,
                p.untouched,
                p.untouched_first.clone().unwrap_or_default()
            )
        })
        .collect();
    r.add_evidence(
        "every process summed its whole working set at every hop (reported hops × the set's known sum)",
        format!("{} bytes per process per hop, every process", bytes),
        if untouched.is_empty() {
            "all as expected".to_string()
        } else {
            untouched.join("; ")
        },
        untouched.is_empty(),
    );
    let sw_ok = points.iter().all(|p| {
        p.child_switches.0 >= *SWITCHES_PER_ROUND.start()
            && SWITCHES_PER_ROUND.contains(&p.child_switches.1)
            && SWITCHES_PER_ROUND.contains(&p.own_switches)
    });
    r.add_evidence(
        "the kernel switched each process out once per round (voluntary + involuntary switches / rounds)",
        format!(
            "every process ≥ {:.2}, the mean {:.2}–{:.2}",
            SWITCHES_PER_ROUND.start(),
            SWITCHES_PER_ROUND.start(),
            SWITCHES_PER_ROUND.end()
        ),
        points
            .iter()
            .map(|p| {
                format!(
                    "{}p: children ≥ {:.2}, mean {:.2}; benchmark {:.2}",
                    p.procs, p.child_switches.0, p.child_switches.1, p.own_switches
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        sw_ok,
    );
    let (wrong, samples) = points
        .iter()
        .fold((0, 0), |a, p| (a.0 + p.wrong_cpu.0, a.1 + p.wrong_cpu.1));
    r.add_evidence(
        "every process ran on the pinned CPU (sched_getcpu sampled in each)",
        "0 samples elsewhere",
        format!("{wrong} of {samples} samples elsewhere"),
        wrong == 0 && samples > 0,
    );
    let positive = points
        .iter()
        .all(|p| p.round_ns / p.procs as f64 > p.alone_ns);
    r.add_evidence(
        "the switch is a positive share of each hop",
        "round / N > alone at every point",
        points
            .iter()
            .map(|p| {
                format!(
                    "{}p: {:.0} vs {:.0} ns",
                    p.procs,
                    p.round_ns / p.procs as f64,
                    p.alone_ns
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        positive,
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sum_is_what_a_filled_set_sums_to() {
        for words in [0usize, 1, 2, 2048, 8192] {
            let mut v = vec![0u64; words];
            fill(&mut v);
            assert_eq!(sum_words(&v), known_sum(words));
        }
    }
}
