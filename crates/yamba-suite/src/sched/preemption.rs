//! P = a preemption: the CPU time lost when the scheduler takes the CPU
//! from one CPU-bound thread and gives it to another (Go!'s "sched
//! overhead": the time from the first thread losing control to the second
//! receiving it).
//!
//! Method. Two threads pinned to one CPU both run the gap recorder
//! ([`gaps::record`]): each notes every step between its clock reads
//! longer than the threshold, as (last read before, first read after). On
//! one CPU only one of them runs at a time, so when A is preempted in
//! favour of B, A's gap [a₀, a₁] contains B's resumption: B has a gap
//! [b₀, b₁] with b₀ < a₀ < b₁ < a₁ (B was off the CPU when A stopped, and
//! came back before A did). The time lost at that switch is b₁ − a₀: from
//! A's last read to B's first — the tick or wake-up interrupt, the
//! scheduler, the switch of register state, the return to user space. It
//! is exact to one loop step (a read, tens of ns) at each end. Gaps with no
//! such partner are interruptions that did not switch to the other thread
//! (a tick that kept A running, a hypervisor exit, a third task); they are
//! counted, not mixed in. Switches through a third task (A → C → B) pair
//! too and show as outliers.
//!
//! The two threads run in a child process that leads a session of its own,
//! hence (autogroup scheduling) a scheduling group of its own, raised to
//! nice −20 when permitted (root or CAP_SYS_NICE): the machine's ordinary
//! tasks then get well under 1% of the CPU and rarely run inside a switch.
//! Otherwise the group keeps nice 0 and the evidence below says how much of
//! the CPU the threads had.
//!
//! Evidence (gating): the two threads' running time adds up to at most the
//! elapsed time (they really shared one CPU) and at least 80% of it (else
//! third tasks ran inside the switches); the
//! pairs found are between half and all of the involuntary switches the
//! kernel counted for the two threads; both stayed on the CPU.

use super::adapter;
use super::gaps::{self, Gap, Recording};
use serde_json::json;
use std::sync::{Arc, Barrier};
use std::time::Duration;
use yamba_core::{Benchmark, Clock, Cold, Ctx, Unit};
use yamba_results::results::Method;

pub static PREEMPTION: Benchmark = Benchmark {
    id: "sched.preemption",
    area: "sched",
    unit: Unit::Nanoseconds,
    description: "CPU time lost per preemption between two CPU-bound threads on one CPU",
    adapter: adapter::NAME,
    run: run_preemption,
    cold: Cold::NotMeaningful(
        "time lost per preemption, inferred from many time slices of two CPU-bound threads: no single operation to time after an eviction",
    ),
    ..Benchmark::TEMPLATE
};

/// Switches from `from` to `to`: for each gap of `from`, the gap of `to`
/// that began before it and ended inside it. Returns the cost of each
/// switch in ticks (`to`'s first read after minus `from`'s last read
/// before) and how many of `from`'s gaps had no partner. Gaps must be in
/// time order (as recorded).
pub fn pair_switches(from: &[Gap], to: &[Gap]) -> (Vec<Switch>, usize) {
    let mut found = Vec::new();
    let mut unpaired = 0;
    for (k, g) in from.iter().enumerate() {
        // The last gap of `to` that started before g.
        let i = to.partition_point(|h| h.start < g.start);
        match i.checked_sub(1).map(|i| to[i]) {
            Some(h) if h.end > g.start && h.end < g.end => found.push(Switch {
                gap: k,
                cost_ticks: h.end - g.start,
            }),
            _ => unpaired += 1,
        }
    }
    (found, unpaired)
}

/// A switch away from a thread: which of its gaps, and the ticks lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    pub gap: usize,
    pub cost_ticks: u64,
}

/// Time slices of a thread: from each return to the CPU after a switch
/// to its next switch away, in ticks.
fn slices(gaps: &[Gap], switched: &[Switch]) -> Vec<u64> {
    switched
        .windows(2)
        .map(|w| gaps[w[1].gap].start - gaps[w[0].gap].end)
        .collect()
}

/// Lengths (ticks) of the gaps that were not switches to the other thread.
fn unpaired_lengths<'a>(gaps: &'a [Gap], switched: &'a [Switch]) -> impl Iterator<Item = u64> + 'a {
    let mut paired = switched.iter().map(|s| s.gap).peekable();
    gaps.iter().enumerate().filter_map(move |(i, g)| {
        if paired.peek() == Some(&i) {
            paired.next();
            None
        } else {
            Some(g.ticks())
        }
    })
}

/// Room for the two recordings, as JSON, passed back from the child.
const SHARED_BYTES: usize = 16 << 20;

/// Both threads' recordings, and whether their group was raised to nice −20.
type Pair = (Recording, Recording, Result<(), String>);

/// Records two CPU-bound threads on `cpu` in a child of its own session.
fn record_pair(
    clock: &Clock,
    cpu: usize,
    duration_ns: f64,
    threshold: f64,
    max_gaps: usize,
) -> Result<Pair, String> {
    let buf = adapter::map_shared(SHARED_BYTES)?;
    let code = adapter::run_in_new_session(|| {
        let niced = adapter::set_autogroup_nice(-20);
        let Ok((a, b)) = record_two(clock, cpu, duration_ns, threshold, max_gaps) else {
            return 3;
        };
        let json = serde_json::to_vec(&(a, b, niced)).unwrap_or_default();
        if json.is_empty() || json.len() + 8 > SHARED_BYTES {
            return 2;
        }
        // SAFETY: buf is a SHARED_BYTES mapping; we write within it.
        unsafe {
            std::ptr::copy_nonoverlapping((json.len() as u64).to_le_bytes().as_ptr(), buf, 8);
            std::ptr::copy_nonoverlapping(json.as_ptr(), buf.add(8), json.len());
        }
        0
    });
    let out = match code {
        Ok(0) => {
            // SAFETY: the child wrote a length-prefixed JSON document within the mapping.
            let bytes = unsafe {
                let mut len = [0u8; 8];
                std::ptr::copy_nonoverlapping(buf, len.as_mut_ptr(), 8);
                let len = (u64::from_le_bytes(len) as usize).min(SHARED_BYTES - 8);
                std::slice::from_raw_parts(buf.add(8), len).to_vec()
            };
            serde_json::from_slice::<Pair>(&bytes)
                .map_err(|e| format!("unreadable recordings: {e}"))
        }
        Ok(3) => Err(format!(
            "the second thread could not be pinned to CPU {cpu}"
        )),
        Ok(c) => Err(format!("the recording process failed (exit status {c})")),
        Err(e) => Err(e),
    };
    // SAFETY: the mapping made above; the child that shared it has exited
    // and its bytes were copied out.
    unsafe { adapter::unmap(buf, SHARED_BYTES) };
    out
}

/// The two threads: this one and another, both pinned to `cpu`.
fn record_two(
    clock: &Clock,
    cpu: usize,
    duration_ns: f64,
    threshold: f64,
    max_gaps: usize,
) -> Result<(Recording, Recording), String> {
    yamba_core::affinity::pin_current_thread(cpu)?;
    let barrier = Arc::new(Barrier::new(2));
    let other = {
        let (clock, barrier) = (clock.clone(), barrier.clone());
        std::thread::spawn(move || -> Result<Recording, String> {
            let pinned = yamba_core::affinity::pin_current_thread(cpu);
            barrier.wait();
            pinned?;
            Ok(gaps::record(
                &clock,
                duration_ns,
                threshold,
                max_gaps,
                Some(cpu),
                |_| {},
            ))
        })
    };
    barrier.wait();
    let a = gaps::record(clock, duration_ns, threshold, max_gaps, Some(cpu), |_| {});
    let b = other
        .join()
        .map_err(|_| "the second thread panicked".to_string())??;
    Ok((a, b))
}

fn run_preemption(ctx: &mut Ctx) -> Result<(), String> {
    let cpu = ctx
        .cpu()
        .ok_or("needs pinning to put both threads on one CPU (run without --no-pin)")?;
    let clock = ctx.clock().clone();
    // Recording time is an amount: more switches of the same kind.
    let duration_ns = ctx.scaled_time(Duration::from_millis(600)).as_nanos() as f64;
    let threshold = gaps::default_threshold_ns(ctx.base_min_ns());
    let max_gaps = 1 << 16;
    let (a, b, niced) = record_pair(&clock, cpu, duration_ns, threshold, max_gaps)?;

    let (ab, un_a) = pair_switches(&a.gaps, &b.gaps);
    let (ba, un_b) = pair_switches(&b.gaps, &a.gaps);
    let costs: Vec<f64> = ab
        .iter()
        .chain(&ba)
        .map(|s| clock.ticks_to_ns(s.cost_ticks))
        .collect();
    let switches = costs.len() as u64;
    let invol = a.involuntary + b.involuntary;
    let union = a.last.max(b.last) - a.first.min(b.first);
    let ran = a.ran_ticks() + b.ran_ticks();
    let ran_share = ran as f64 / union.max(1) as f64;
    let a_share = a.ran_ticks() as f64 / ran.max(1) as f64;
    let mut sl: Vec<f64> = slices(&a.gaps, &ab)
        .into_iter()
        .chain(slices(&b.gaps, &ba))
        .map(|t| clock.ticks_to_ns(t))
        .collect();
    sl.sort_by(f64::total_cmp);
    let slice_median = (!sl.is_empty()).then(|| sl[sl.len() / 2]);

    let mut r = ctx.result(None);
    r.set_observations(costs);
    let iterations = a.iterations + b.iterations;
    r.method = Some(Method {
        // Kept as counted, even 0 (`Method::direct` would raise 0 to 1).
        iterations,
        ..Method::direct(
            iterations,
            0.0,
            duration_ns / 1e9,
            clock.ticks_to_ns(union) / 1e9,
            "duration reached",
        )
    });
    r.param("cpu", cpu)
        .param("threshold_ns", threshold)
        .param("threads", 2);
    r.param("group_nice", if niced.is_ok() { -20 } else { 0 });
    if let Err(e) = &niced {
        r.warn(format!(
            "threads ran at normal priority ({e}): other tasks may run inside switches"
        ));
    }
    r.extra.insert(
        "method".into(),
        json!("per switch: the next thread's first clock read after its gap minus the preempted thread's last read before its gap (two CPU-bound threads, one CPU)"),
    );
    r.extra.insert(
        "switches".into(),
        json!({"a_to_b": ab.len(), "b_to_a": ba.len(), "unpaired_gaps": un_a + un_b,
               "kernel_involuntary": invol, "kernel_voluntary": a.voluntary + b.voluntary}),
    );
    r.extra
        .insert("time_slice_median_ns".into(), json!(slice_median));
    // For comparison: interruptions that did not switch (ticks that kept
    // the thread running, other interrupts, hypervisor exits).
    let mut other: Vec<f64> = unpaired_lengths(&a.gaps, &ab)
        .chain(unpaired_lengths(&b.gaps, &ba))
        .map(|t| clock.ticks_to_ns(t))
        .collect();
    other.sort_by(f64::total_cmp);
    r.extra.insert(
        "unpaired_gap_median_ns".into(),
        json!((!other.is_empty()).then(|| other[other.len() / 2])),
    );
    r.extra
        .insert("share_of_cpu_thread_a".into(), json!(a_share));
    r.extra.insert(
        "loop_step_ns".into(),
        json!(clock.ticks_to_ns(a.mean_step_ticks() as u64)),
    );
    r.add_evidence(
        "the two threads shared one CPU: their running times add up to the elapsed time",
        "0.8 ≤ (ran A + ran B) / elapsed ≤ 1.01",
        format!("{ran_share:.3} (A had {:.1}% of it)", a_share * 100.0),
        (0.8..=1.01).contains(&ran_share),
    );
    r.add_evidence(
        "the switches found are the preemptions the kernel counted",
        format!(
            "between {} and {invol} (half and all of the involuntary switches)",
            invol / 2
        ),
        format!(
            "{switches} paired ({} A→B, {} B→A), {} gaps unpaired",
            ab.len(),
            ba.len(),
            un_a + un_b
        ),
        switches > 0 && switches <= invol + 2 && 2 * switches >= invol,
    );
    r.add_evidence(
        "both threads stayed on the pinned CPU (sched_getcpu after every gap)",
        format!("CPU {cpu}"),
        format!(
            "A {}/{}, B {}/{} samples elsewhere",
            a.wrong_cpu, a.cpu_samples, b.wrong_cpu, b.cpu_samples
        ),
        a.wrong_cpu == 0 && b.wrong_cpu == 0,
    );
    r.add_evidence(
        "no gap was dropped",
        format!("≤ {max_gaps} per thread"),
        format!("{} and {}", a.gaps.len(), b.gaps.len()),
        !a.overflowed && !b.overflowed,
    );
    ctx.push(r);
    Ok(())
}
