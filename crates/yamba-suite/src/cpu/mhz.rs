//! P = a block of 100 dependent register adds (`adapter::chains::adds`):
//! each needs the previous one's result, and every x86-64 and Armv8 core
//! executes a dependent add in one cycle, so the block lasts 100 core
//! cycles and the core clock is f = 100 / T(P) (lmbench's mhz, with one
//! chain whose cycle count is known instead of a GCD over nine loops).
//!
//! The time comes from the session's clock — on x86-64 the time-stamp
//! counter, which ticks at a constant nominal rate whatever the core's
//! frequency (turbo, power saving, or, under a hypervisor, whatever the
//! host gives the vCPU). The two are reported side by side: they differ,
//! and the difference is the point.
//!
//! Evidence (gating): two independent chains interleaved take no longer
//! than one — the block's time is the chain's latency, not the adders'
//! throughput, so it counts cycles. Informational: a dependent multiply
//! chain measured at the same clock takes the 3 cycles per multiply that
//! every current x86-64 core documents.

use super::adapter::chains;
use crate::shared::interleave::{shared_plan, time_interleaved};
use serde_json::json;
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static MHZ: Benchmark = Benchmark {
    id: "cpu.mhz",
    area: "cpu",
    unit: Unit::PerSecond,
    description: "core clock in cycles per second (Hz), from a chain of dependent one-cycle adds; the time-stamp counter's rate beside it",
    adapter: super::adapter::NAME,
    run: run_mhz,
    cold: Cold::NotMeaningful(
        "a clock rate read from a long chain of one-cycle adds: a rate has no cold case, and adds touch no memory",
    ),
    ..Benchmark::TEMPLATE
};

/// Two interleaved chains may take at most this much longer than one.
pub const MAX_TWO_CHAIN_RATIO: f64 = 1.25;

/// The core clock measured: Hz per observation, and the cross-checks.
pub struct CoreClock {
    pub hz: Vec<f64>,
    pub method: yamba_results::results::Method,
    /// ns per block of two interleaved chains / ns per block of one.
    pub two_chain_ratio: f64,
    /// Cycles per dependent multiply at the measured clock.
    pub mul_cycles: f64,
}

impl CoreClock {
    pub fn median_hz(&self) -> f64 {
        yamba_stats::Summary::of(&self.hz).map_or(f64::NAN, |s| s.median)
    }
}

/// Measures the core clock with `plan` (also used by `cpu.ops` to express
/// latencies in cycles).
pub fn measure(clock: &yamba_core::Clock, plan: &yamba_core::Plan) -> CoreClock {
    let (mut x, mut y, mut z) = (1u64, 2u64, 3u64);
    let mut one = |n: u64| {
        for _ in 0..n {
            x = chains::adds(x);
        }
    };
    let mut two = |n: u64| {
        for _ in 0..n {
            (y, z) = chains::adds_two(y, z);
        }
    };
    let mut w = 5u64;
    let mut mul = |n: u64| {
        for _ in 0..n {
            w = chains::muls(w);
        }
    };
    let t = time_interleaved(clock, plan, &mut [&mut one, &mut two, &mut mul]);
    std::hint::black_box((x, y, z, w));
    let one_ns = t[0].median();
    CoreClock {
        hz: t[0]
            .ns_per_block
            .iter()
            .filter(|&&ns| ns > 0.0)
            .map(|ns| chains::BLOCK as f64 * 1e9 / ns)
            .collect(),
        method: t[0].method.clone(),
        two_chain_ratio: t[1].median() / one_ns,
        mul_cycles: t[2].median() / one_ns,
    }
}

fn run_mhz(ctx: &mut Ctx) -> Result<(), String> {
    let plan = shared_plan(&ctx.plan(), 1.0);
    let c = measure(ctx.clock(), &plan);
    let mut r = ctx.result(None);
    r.set_observations(c.hz.clone());
    r.method = Some(c.method.clone());
    let hz = c.median_hz();
    let info = ctx.clock().info();
    let counter_hz = info.calibration.frequency_hz;
    r.param(
        "chain",
        format!("{} dependent adds per block", chains::BLOCK),
    )
    .param("clock", format!("{:?}", info.kind))
    .param("adds_per_cycle_assumed", 1);
    r.extra.insert(
        "core_clock".into(),
        json!({
            "mhz": hz / 1e6,
            "cycle_ns": 1e9 / hz,
            "timer_counter_hz": counter_hz,
            "core_over_counter": hz / counter_hz,
            "cpuinfo_mhz": ctx.machine().cpu_mhz,
            "hypervisor": ctx.machine().hypervisor,
        }),
    );
    r.add_evidence(
        "the block's time is the chain's latency: two independent chains interleaved take no longer than one",
        format!("two-chain / one-chain time ≤ {MAX_TWO_CHAIN_RATIO}"),
        format!("{:.3}", c.two_chain_ratio),
        c.two_chain_ratio <= MAX_TWO_CHAIN_RATIO,
    );
    if let Some(cycles) = chains::MUL_CYCLES {
        r.add_note_evidence(
            "a dependent 64-bit multiply takes its documented cycles at this clock",
            format!("{cycles} cycles (±10%)"),
            format!("{:.2} cycles", c.mul_cycles),
            (c.mul_cycles / cycles - 1.0).abs() <= 0.10,
        );
    }
    if info.kind == yamba_core::clock::ClockKind::MonotonicRaw {
        r.add_note_evidence(
            "timed with a cycle-independent clock",
            "a constant-rate counter or CLOCK_MONOTONIC_RAW",
            "CLOCK_MONOTONIC_RAW",
            true,
        );
    } else {
        r.add_note_evidence(
            "the core clock and the timer counter are different clocks",
            "the counter ticks at a constant nominal rate; the core at its current frequency",
            format!(
                "core {:.0} MHz, counter {:.0} MHz (core/counter {:.3})",
                hz / 1e6,
                counter_hz / 1e6,
                hz / counter_hz
            ),
            true,
        );
    }
    if let Some(hv) = ctx.machine().hypervisor_name() {
        r.warn(format!(
            "under a hypervisor ({hv}) the core clock is the frequency the host gives this vCPU now; the time-stamp counter runs at the rate the host advertises, and the two may differ"
        ));
    }
    ctx.push(r);
    Ok(())
}
