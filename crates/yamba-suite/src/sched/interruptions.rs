//! How often, and for how long, the CPU is taken away from a program that
//! never gives it up: timer ticks, other interrupts, preemption, hypervisor
//! exits. Also the machine's noise report, which the runner can call to add
//! a run note when the machine is too noisy to trust small numbers.
//!
//! A pinned thread reads the clock in a tight loop ([`gaps::record`]) and
//! keeps every step longer than the threshold (10 × BASE, at least 250 ns).
//! Results: `sched.interruptions` — the gap lengths (ns), one observation
//! per gap; `.rate` — gaps per second in each window of the pass (/s);
//! `.lost` — the share of each window spent in gaps (ratio).
//!
//! Evidence (gating): the loop's own step is well below the threshold (else
//! it would see gaps everywhere); every involuntary switch the kernel
//! counted for the thread shows up as a gap (a preemption the loop missed
//! would mean the detector is blind); the thread stayed on its CPU; no gap
//! was dropped for want of room.

use super::adapter;
use super::gaps::{self, Recording};
use serde::Serialize;
use serde_json::json;
use std::time::Duration;
use yamba_core::{BenchResult, Benchmark, Clock, Cold, Ctx, Replication, Unit};
use yamba_results::results::Method;

/// Gaps kept at most per pass (a precise run's 1.8 s pass at 1 kHz ticks has ~1800).
const MAX_GAPS: usize = 1 << 20;

pub static INTERRUPTIONS: Benchmark = Benchmark {
    id: "sched.interruptions",
    replication: Replication::OneProcess {
        why: "a survey of the machine's noise over seconds, not a cost to replicate",
    },
    area: "sched",
    unit: Unit::Nanoseconds,
    description:
        "interruptions of a CPU-bound loop: gap lengths, gaps per second, share of time lost",
    adapter: adapter::NAME,
    run: run_interruptions,
    cold: Cold::NotMeaningful(
        "counts the gaps in a CPU-bound loop over its whole run: there is no operation to time after an eviction",
    ),
    ..Benchmark::TEMPLATE
};

/// The machine's noise, from one pass of the gap recorder.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseReport {
    pub duration_s: f64,
    pub threshold_ns: f64,
    pub cpu: Option<usize>,
    pub gaps: usize,
    /// Gaps per second.
    pub rate_per_s: f64,
    /// Share of the pass spent in gaps (0–1).
    pub lost_share: f64,
    pub median_gap_ns: Option<f64>,
    pub p99_gap_ns: Option<f64>,
    pub max_gap_ns: Option<f64>,
    /// Kernel-counted involuntary switches of the recording thread.
    pub involuntary_switches: u64,
}

/// Share of time lost above which the machine is called noisy.
pub const NOISY_LOST_SHARE: f64 = 0.02;
/// Longest single interruption before the machine is called noisy, in ns.
pub const NOISY_MAX_GAP_NS: f64 = 5e6;

impl NoiseReport {
    fn from_recording(
        clock: &Clock,
        rec: &Recording,
        threshold_ns: f64,
        cpu: Option<usize>,
    ) -> NoiseReport {
        let mut lens: Vec<f64> = rec
            .gaps
            .iter()
            .map(|g| clock.ticks_to_ns(g.ticks()))
            .collect();
        lens.sort_by(f64::total_cmp);
        let span = clock.ticks_to_ns(rec.span_ticks()).max(1.0);
        let pct = |q: f64| (!lens.is_empty()).then(|| yamba_stats::percentile_sorted(&lens, q));
        NoiseReport {
            duration_s: span / 1e9,
            threshold_ns,
            cpu,
            gaps: lens.len(),
            rate_per_s: lens.len() as f64 / (span / 1e9),
            lost_share: lens.iter().sum::<f64>() / span,
            median_gap_ns: pct(50.0),
            p99_gap_ns: pct(99.0),
            max_gap_ns: lens.last().copied(),
            involuntary_switches: rec.involuntary,
        }
    }

    /// A one-line run note when the machine is too noisy to trust small
    /// numbers (more than 2% of the time lost, or one interruption over
    /// 5 ms); None when it is quiet enough.
    pub fn note(&self) -> Option<String> {
        let max = self.max_gap_ns.unwrap_or(0.0);
        (self.lost_share > NOISY_LOST_SHARE || max > NOISY_MAX_GAP_NS).then(|| {
            format!(
                "noisy machine: a CPU-bound loop{} lost {:.1}% of {:.1} s to {} interruptions ({:.0}/s, longest {:.2} ms)",
                self.cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default(),
                self.lost_share * 100.0,
                self.duration_s,
                self.gaps,
                self.rate_per_s,
                max / 1e6
            )
        })
    }
}

/// Runs the gap recorder on the calling thread for `duration` (pin it
/// first to measure one CPU) and summarises what it saw.
pub fn noise_report(clock: &Clock, duration: Duration) -> NoiseReport {
    let base = yamba_core::base::measure_base(clock, 2_000).base_ns;
    let threshold = gaps::default_threshold_ns(base);
    let cpu = yamba_core::affinity::current_cpu();
    let rec = gaps::record(
        clock,
        duration.as_nanos() as f64,
        threshold,
        MAX_GAPS,
        None,
        |_| {},
    );
    NoiseReport::from_recording(clock, &rec, threshold, cpu)
}

fn run_interruptions(ctx: &mut Ctx) -> Result<(), String> {
    let clock = ctx.clock().clone();
    // Recording time and windows are amounts: a quick pass's 12 windows of
    // 50 ms, more of them at a higher effort (each window as long).
    let duration_ns = ctx.scaled_time(Duration::from_millis(600)).as_nanos() as f64;
    let threshold = gaps::default_threshold_ns(ctx.base_min_ns());
    let cpu = ctx.cpu();
    let rec = gaps::record(&clock, duration_ns, threshold, MAX_GAPS, cpu, |_| {});
    let report = NoiseReport::from_recording(&clock, &rec, threshold, cpu);

    // Per-window rate and lost share.
    let windows = ctx.scaled(12);
    let span = rec.span_ticks().max(1);
    let w_ticks = span as f64 / windows as f64;
    let mut counts = vec![0u64; windows];
    let mut lost = vec![0f64; windows];
    for g in &rec.gaps {
        let i = ((g.start.wrapping_sub(rec.first)) as f64 / w_ticks) as usize;
        let i = i.min(windows - 1);
        counts[i] += 1;
        lost[i] += g.ticks() as f64;
    }
    let w_s = clock.ticks_to_ns(w_ticks as u64) / 1e9;
    let rates: Vec<f64> = counts.iter().map(|&c| c as f64 / w_s).collect();
    let lost_share: Vec<f64> = lost.iter().map(|&l| l / w_ticks).collect();

    let step_ns = clock.ticks_to_ns(rec.mean_step_ticks() as u64);
    let method = Method {
        // Kept as counted, even 0 (`Method::direct` would raise 0 to 1).
        iterations: rec.iterations,
        ..Method::direct(
            rec.iterations,
            0.0,
            duration_ns / 1e9,
            report.duration_s,
            "duration reached",
        )
    };
    let evidence = |r: &mut BenchResult| {
        r.add_evidence(
            "the loop's own step is well below the gap threshold",
            format!("mean step < {:.0} ns (threshold / 3)", threshold / 3.0),
            format!("{step_ns:.1} ns over {} reads", rec.iterations),
            step_ns < threshold / 3.0,
        );
        r.add_evidence(
            "every preemption the kernel counted shows up as a gap",
            format!("gaps ≥ {} involuntary switches", rec.involuntary),
            format!(
                "{} gaps ({} voluntary switches)",
                rec.gaps.len(),
                rec.voluntary
            ),
            rec.gaps.len() as u64 >= rec.involuntary,
        );
        r.add_evidence(
            "the loop stayed on its CPU (sched_getcpu after every gap)",
            format!("CPU {}", cpu.map_or("any".into(), |c| c.to_string())),
            format!("{}/{} samples elsewhere", rec.wrong_cpu, rec.cpu_samples),
            rec.wrong_cpu == 0,
        );
        r.add_evidence(
            "no gap was dropped",
            format!("≤ {MAX_GAPS} gaps"),
            format!("{} kept, overflow {}", rec.gaps.len(), rec.overflowed),
            !rec.overflowed,
        );
        r.param("threshold_ns", threshold)
            .param("duration_s", report.duration_s);
        r.method = Some(method.clone());
    };

    let mut lens = ctx.result(None);
    lens.set_observations(
        rec.gaps
            .iter()
            .map(|g| clock.ticks_to_ns(g.ticks()))
            .collect(),
    );
    lens.extra.insert("noise_report".into(), json!(report));
    if let Some(n) = report.note() {
        lens.warn(n);
    }
    evidence(&mut lens);
    ctx.push(lens);

    let mut rate = ctx.result(Some("rate"));
    rate.unit = Unit::PerSecond;
    rate.description =
        "interruptions of a CPU-bound loop per second, one observation per window".into();
    rate.set_observations(rates);
    rate.param("window_s", w_s);
    evidence(&mut rate);
    ctx.push(rate);

    let mut share = ctx.result(Some("lost"));
    share.unit = Unit::Ratio;
    share.description =
        "share of time a CPU-bound loop lost to interruptions, one observation per window".into();
    share.set_observations(lost_share);
    share.param("window_s", w_s);
    evidence(&mut share);
    ctx.push(share);
    Ok(())
}
