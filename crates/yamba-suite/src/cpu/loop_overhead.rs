//! P = one iteration of an empty loop: the dummy F itself, per iteration.
//! Every loop-method result has this subtracted already; it is reported so
//! the size of what was subtracted is known.

use yamba_core::unroll::run_unrolled;
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static LOOP: Benchmark = Benchmark {
    id: "cpu.loop",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "loop overhead: one iteration of the empty counted loop F (BASE subtracted)",
    adapter: "generic",
    run: run_loop,
    cold: Cold::NotMeaningful(
        "the overhead of one iteration of the empty loop F exists only inside the loop: one iteration cannot be timed alone",
    ),
    ..Benchmark::TEMPLATE
};

fn run_loop(ctx: &mut Ctx) -> Result<(), String> {
    let clock = ctx.clock();
    let base = ctx.base_ns();
    let plan = ctx.plan();
    let iterations: u64 = 100_000;
    let time_loop = || {
        let t0 = clock.start();
        run_unrolled(1, iterations, &mut || {});
        let t1 = clock.stop();
        (clock.ticks_to_ns(t1 - t0) - base) / iterations as f64
    };
    for _ in 0..50 {
        time_loop();
    }
    let started = std::time::Instant::now();
    let mut obs = Vec::new();
    while obs.len() < plan.min_observations || (started.elapsed() < plan.budget && obs.len() < 2000)
    {
        obs.push(time_loop());
    }
    let mut r = ctx.result(None);
    r.set_observations(obs);
    r.param("iterations_per_observation", iterations);
    let cycles_guess = r.median().unwrap_or(0.0) * ctx.machine().cpu_mhz.unwrap_or(0.0) / 1000.0;
    r.add_note_evidence(
        "an iteration costs about one cycle (counter, compare, branch)",
        "0.2–5 cycles at the nominal frequency",
        format!("{cycles_guess:.2} cycles"),
        ctx.machine().cpu_mhz.is_none() || (0.2..=5.0).contains(&cycles_guess),
    );
    ctx.push(r);
    Ok(())
}
