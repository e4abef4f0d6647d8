//! P = one load of a dependent pointer chase whose elements lie 128 bytes
//! apart in ascending addresses, over a working set far past the
//! last-level cache: lmbench's "Main mem" (`lat_mem_rd`'s stride-128
//! walk, its largest size). Prefetchers see the stream, so the latency is
//! what they leave of memory's, not memory's own — that is
//! `mem.latency.memory` (a random cycle), lmbench's "Rand mem". F is the
//! harness's dummy loop, as for every chase.
//!
//! The loop's code moves the figure, likely through which prefetcher keeps
//! up (no PMU showed it): at a 128-byte stride the stream prefetcher alone
//! falls behind, and one that learns each load instruction's own stride
//! helps while that stride (loads a loop turn × 128 bytes) stays short. On an
//! AMD EPYC Zen 4 guest a C chase of this shape read 12 ns a load at one
//! load a loop turn, 5.0–5.5 at 4 to 16, 20–21 at lmbench's 100, and
//! 2.4 ns at every count with a 64-byte stride. So each process also
//! times the chain at 1 and 32 loads a turn, records the three
//! (`ns_per_load_by_loads_per_turn`), and warns when they spread beyond
//! [`SHAPE_SPREAD`]: the figure is then the code's as much as memory's.
//!
//! Assumptions, checked: the chain is one cycle through every element (no
//! load skipped, none visited twice), and the working set is at least
//! twice the run's last-level cache, so the loads come from memory: the
//! effective one the run's probe measured (`llc::Sizing`), sysfs's where
//! it measured none. Not sysfs's alone: a guest's share of the host's LLC
//! can be far smaller (on an Intel Xeon guest sysfs said 260 MiB, and the
//! probe's chase read 35 ns at 4 MiB and 121–139 ns from 8 MiB to 256
//! MiB), and a check against the host's size withheld a figure read well
//! inside memory.
//! Working set: `mem.latency`'s largest (8× the effective LLC, at least
//! 256 MiB; quick 4×, at least 64 MiB; at most MemAvailable/4), or
//! `--set mem.max_size`. Base pages, as `mem.latency`.

use super::adapter::{self, Pages};
use super::chase::{Chain, Order};
use super::latency::{largest_working_set, MAX_SIZE};
use super::llc::Sizing;
use std::time::Duration;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Unit};

/// lmbench's summary stride: `getsummary` reads "Main mem" from the
/// stride-128 block of `lat_mem_rd`.
pub const STRIDE: usize = 128;

/// A working set under this many times the LLC may still be cached.
pub const LLC_MULTIPLE: u64 = 2;

/// Per-load times this far apart between loop shapes are the code's, not
/// memory's.
pub const SHAPE_SPREAD: f64 = 1.25;

pub static LATENCY_SEQUENTIAL: Benchmark = Benchmark {
    id: "mem.latency.sequential",
    area: "mem",
    unit: Unit::Nanoseconds,
    description: "load-to-use latency of a dependent chase through memory in ascending addresses, 128 bytes apart (lmbench's \"Main mem\"): what prefetchers leave",
    adapter: adapter::NAME,
    run,
    settings: &[MAX_SIZE],
    cold: Cold::NotMeaningful(
        "its working set is far past the last-level cache: every load is already the uncached case",
    ),
    ..Benchmark::TEMPLATE
};

fn run(ctx: &mut Ctx) -> Result<(), String> {
    let sizing = Sizing::for_run(ctx);
    let (bytes, rule) = largest_working_set(ctx, &sizing)?;
    let chain = Chain::new(bytes, STRIDE, Order::Sequential, Pages::Base, 0x5EED)?;
    // One trip round the cycle: the check, and the page tables warm.
    let one_cycle = chain.follow(chain.elements) == chain.start();
    let mut plan = ctx.plan();
    plan.min_observation_ns = 50_000.0;
    plan.budget = ctx.scaled_time(Duration::from_millis(20));
    plan.min_observations = ctx.scaled(5);
    plan.warmup_ns = 2e6;
    let measured = chain.measure(ctx.clock(), &plan);
    let chosen = measured.method.unroll;
    // The same chain with one and with 32 loads a loop turn: how many
    // loads a turn the loop runs moves the figure (module doc,
    // docs/lmbench.md).
    plan.budget = ctx.scaled_time(Duration::from_millis(10));
    let mut by_turn: Vec<(u32, Option<f64>)> = [1, 32]
        .into_iter()
        .filter(|&u| u != chosen)
        .map(|u| {
            let mut p = plan.clone();
            p.fixed_unroll = Some(u);
            (
                u,
                chain.measure(ctx.clock(), &p).summary().map(|s| s.median),
            )
        })
        .collect();
    by_turn.push((chosen, measured.summary().map(|s| s.median)));
    by_turn.sort_by_key(|t| t.0);
    let mut r = ctx.measured_result(None, measured);
    r.param("stride", STRIDE)
        .param("order", Order::Sequential.as_str())
        .param("pages", "base (MADV_NOHUGEPAGE)")
        .param("working_set_bytes", chain.bytes)
        .param("elements", chain.elements)
        .param("working_set_rule", rule);
    r.add_evidence(
        "the chain is one cycle through every element",
        format!(
            "back at its start after {} loads, not before",
            chain.elements
        ),
        if one_cycle { "yes" } else { "no" },
        one_cycle,
    );
    add_code_shape_evidence(&mut r, &by_turn);
    let (llc, basis) = run_llc(&sizing);
    r.add_evidence(
        "the working set is at least twice the last-level cache, so loads come from memory",
        format!("≥ {} bytes (2 × {basis})", LLC_MULTIPLE * llc),
        format!("{} bytes", chain.bytes),
        chain.bytes as u64 >= LLC_MULTIPLE * llc,
    );
    ctx.push(r);
    Ok(())
}

/// The last-level cache a working set must outgrow, and what it is: the
/// one the run's sizes scale from (`Sizing::llc`: what its probe found,
/// never above sysfs's; sysfs's where the probe never left the LLC).
fn run_llc(sizing: &Sizing) -> (u64, &'static str) {
    (sizing.llc as u64, sizing.basis().short())
}

/// Says whether the loop's shape moves the figure: the per-load medians at
/// each count of loads a loop turn, and a warning when they spread more
/// than [`SHAPE_SPREAD`]. On an AMD EPYC Zen 4 guest a C chase of this
/// shape read 12 ns a load at 1 a turn, 5.0–5.5 at 4–16, 20–21 at 100
/// (lmbench's), and 2.4 ns at every count with a 64-byte stride.
fn add_code_shape_evidence(r: &mut BenchResult, by_turn: &[(u32, Option<f64>)]) {
    let got: Vec<(u32, f64)> = by_turn
        .iter()
        .filter_map(|&(u, m)| m.map(|m| (u, m)))
        .collect();
    let described = got
        .iter()
        .map(|(u, m)| format!("{m:.2} ns at {u}"))
        .collect::<Vec<_>>()
        .join(", ");
    r.param(
        "ns_per_load_by_loads_per_turn",
        got.iter()
            .map(|(u, m)| (u.to_string(), *m))
            .collect::<std::collections::BTreeMap<_, _>>(),
    );
    let (lo, hi) = got
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &(_, m)| {
            (lo.min(m), hi.max(m))
        });
    let steady = got.len() < 2 || hi <= SHAPE_SPREAD * lo;
    r.add_note_evidence(
        "the figure does not depend on the loop's code (loads a loop turn)",
        format!("per-load medians within {SHAPE_SPREAD}× of each other"),
        format!("{described} loads a loop turn"),
        steady,
    );
    if !steady {
        // One sentence for every process, so a precise run says it once;
        // the figures are in the evidence and the params.
        r.warn(
            "the loop's code moves this figure: its per-load time differs by the loads a loop turn (likely through which prefetcher keeps up; lmbench's lat_mem_rd runs 100 a turn; see the evidence, docs/lmbench.md)",
        );
    }
}
