//! The measurement harness.
//!
//! Hot (best case): for an operation P, time P'' — n/m iterations of a body
//! of m unrolled copies of P — and the dummy F, the same loop with an empty
//! body; then T(P) ≈ (M(P'') − M(F)) / n. n is chosen so one observation lasts
//! at least ~1000× the clock's resolution, m so the loop's own cost is under
//! 1% of the body's. P'' and F alternate, and each observation is P'' less
//! the F just before it, so drift affects both alike. Sampling goes on
//! until [`StopRule`] says so: the within-process interval is within the
//! target precision (never narrower than the clock's resolution allows),
//! or the time budget is spent.
//!
//! Cold (worst case): one operation at a time, caches evicted and branch
//! history disturbed before each, BASE subtracted.

use crate::clock::Clock;
use crate::cold::Evictor;
use crate::placement::{self, Placed};
use crate::stop::StopRule;
use crate::unroll::{loop_fn, run_unrolled, LoopFn, DEGREES};
use rand::SeedableRng;
use std::time::{Duration, Instant};
use yamba_results::results::{Method, MethodKind};
use yamba_results::{Phases, Placement};
use yamba_stats::Summary;

/// Limits and goals of one measurement.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Wall-time budget for sampling (warm-up and calibration not included).
    pub budget: Duration,
    /// Stop once the median's 95% CI half-width is within this share of the median.
    pub target_precision: f64,
    pub min_observations: usize,
    /// Sample for at least this long before stopping on precision, so the
    /// observations span the machine's slower fluctuations (a virtual
    /// machine's host, frequency changes) instead of one moment of them.
    pub min_sampling: Duration,
    pub max_observations: usize,
    /// Shortest observation, in ns (raised to 1000× the clock's resolution).
    pub min_observation_ns: f64,
    /// Warm-up time before sampling, in ns.
    pub warmup_ns: f64,
    /// Largest unroll degree to consider (a power of two ≤ 32).
    pub max_unroll: u32,
    /// Use exactly this many operations per observation (still a multiple of m).
    pub fixed_iterations: Option<u64>,
    /// Use exactly this unroll degree.
    pub fixed_unroll: Option<u32>,
    /// Where the measured code runs: at several placements drawn at
    /// random ([`crate::placement`]), or where the build put it.
    pub placement: Placing,
    /// For a block that is one of its result's several blocks (a precise
    /// run's replicated benchmark): the run's design its placements are
    /// drawn from, and which block it is ([`crate::placement::Design`]);
    /// its visits are then the longer ones ([`crate::placement::Visits`]).
    /// None: a block that is its result's whole, placements drawn alone.
    pub design: Option<crate::placement::Design>,
}

/// Where a plan runs its measured code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placing {
    /// Copies at placements drawn at random, one after another.
    Random,
    /// Where the build put it, for the reason given (recorded in the
    /// result's placement as why it was not placed; it starts with
    /// [`crate::placement::CHOSEN`], which tells a choice from a placement
    /// that failed).
    Fixed(&'static str),
}

impl Placing {
    /// What `--fixed-placement` asks for.
    pub const ASKED: Placing =
        Placing::Fixed("one placement asked for (--fixed-placement): where the build put the code");
}

impl Plan {
    pub fn precise() -> Plan {
        Plan {
            budget: Duration::from_millis(2000),
            target_precision: 0.01,
            min_observations: 30,
            min_sampling: Duration::from_millis(1000),
            max_observations: 100_000,
            min_observation_ns: 20_000.0,
            warmup_ns: 20e6,
            max_unroll: 32,
            fixed_iterations: None,
            fixed_unroll: None,
            placement: Placing::Random,
            design: None,
        }
    }

    /// One block of a run (a quick pass is one block): a short look at
    /// the machine. Certainty comes from blocks in fresh processes, not
    /// from sampling one process longer (docs/certainty.md).
    pub fn block() -> Plan {
        Plan {
            budget: Duration::from_millis(150),
            min_observations: 20,
            // Long enough to see more than one moment of the machine, short
            // enough for a rough pass.
            min_sampling: Duration::from_millis(30),
            warmup_ns: 2e6,
            ..Plan::precise()
        }
    }

    /// A quick pass: one block.
    pub fn quick() -> Plan {
        Plan::block()
    }

    /// The same plan for a block doing `effort` quick passes' worth:
    /// budget, minimum sampling and warm-up scaled (a block may do less
    /// than a quick pass: [`crate::bench::BLOCK_EFFORT`]).
    pub fn scaled(mut self, effort: f64) -> Plan {
        let e = effort.max(0.1);
        self.budget = self.budget.mul_f64(e);
        self.min_sampling = self.min_sampling.mul_f64(e);
        self.warmup_ns *= e;
        self
    }
}

/// Observations and how they were taken.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Per-operation values in ns, in the order taken.
    pub observations: Vec<f64>,
    pub method: Method,
}

impl Measured {
    pub fn summary(&self) -> Option<Summary> {
        Summary::of(&self.observations)
    }
}

/// Measures the hot cost of `op` with the loop method, `dummy` being the
/// body of F (usually empty: `|| {}`).
pub fn measure_loop<P: FnMut(), D: FnMut()>(
    clock: &Clock,
    plan: &Plan,
    mut op: P,
    mut dummy: D,
) -> Measured {
    let started = Instant::now();
    let Calibrated {
        per_op_ns,
        unroll: m,
        groups,
    } = calibrate(clock, plan, &mut op, &mut dummy);
    let iterations = groups * m as u64;

    // P'' and F at the placements of this block (or where the build put
    // them); `_placed` keeps the copies mapped while they run.
    // An observation lasts at least its P'' (its F, cheaper, comes on top).
    let obs_ns = per_op_ns * iterations as f64;
    let calibrated = Instant::now();
    let (_placed, entries, record) = place(
        plan,
        loop_fn::<P>(m) as usize,
        Some(loop_fn::<D>(m) as usize),
        obs_ns,
    );
    // SAFETY: the entries call P'' and F of degree m for P and D.
    let slots: Vec<(LoopFn<P>, LoopFn<D>)> = entries
        .iter()
        .map(|&[c, d]| unsafe { (as_loop::<P>(c), as_loop::<D>(d)) })
        .collect();
    let time_at = |slot: usize, op: &mut P| -> u64 {
        let f = slots[slot].0;
        let t0 = clock.start();
        // SAFETY: `f` is P'' (or a copy of it, still mapped) for P; `op`
        // is exclusively ours for the call.
        unsafe { f(groups, op) };
        clock.stop().wrapping_sub(t0)
    };
    let dummy_at = |slot: usize, d: &mut D| -> u64 {
        let f = slots[slot].1;
        let t0 = clock.start();
        // SAFETY: as above, for F.
        unsafe { f(groups, d) };
        clock.stop().wrapping_sub(t0)
    };
    let rotation = record.rotation();

    // Warm up: caches, branch predictors, frequency — every placement.
    // Its dummies seed each placement's window, topped up to two (F alone
    // is cheap), so that a placement's first observations are set against
    // two dummies or more (see [`DummyWindows`]).
    let warm_start = Instant::now();
    let warmup = Duration::from_nanos(plan.warmup_ns as u64);
    let mut recent_f = DummyWindows::new(slots.len());
    let mut warm_obs = 0;
    while warm_start.elapsed() < warmup || warm_obs < 3.max(slots.len()) {
        let slot = warm_obs % slots.len();
        std::hint::black_box(time_at(slot, &mut op));
        recent_f.push(slot, dummy_at(slot, &mut dummy));
        warm_obs += 1;
    }
    for slot in 0..slots.len() {
        while recent_f.recent[slot].len() < 2 {
            recent_f.push(slot, dummy_at(slot, &mut dummy));
        }
    }

    let sampling = Instant::now();
    let mut f_ticks: Vec<u64> = Vec::new();
    let mut observations: Vec<f64> = Vec::new();
    // One observation resolves one clock quantum spread over n operations.
    let mut rule =
        StopRule::new(plan, clock.info().resolution_ns / iterations as f64).rotating(rotation);
    // The core clock the observations ran at, read between them (see
    // `coreclock`): ~2.5% of the sampling time, none of any observation's.
    let mut core_clock = crate::coreclock::Track::default();
    let stopped = loop {
        core_clock.due();
        let slot = (observations.len() / rotation.stretch) % rotation.slots;
        let f = dummy_at(slot, &mut dummy);
        let p = time_at(slot, &mut op);
        f_ticks.push(f);
        recent_f.push(slot, f);
        observations.push(per_op(clock, p, recent_f.median(slot), iterations));
        if let Some(why) = rule.check(&observations, sampling.elapsed()) {
            break why;
        }
    };
    let f_ns: Vec<f64> = f_ticks.iter().map(|&t| clock.ticks_to_ns(t)).collect();
    let dummy = Summary::of(&f_ns);
    Measured {
        observations,
        method: Method {
            kind: MethodKind::Loop,
            iterations,
            unroll: m,
            dummy_ns: dummy.as_ref().map(|s| s.median),
            dummy,
            base_subtracted_ns: None,
            warmup_ns: warm_start.duration_since(started).as_nanos() as f64
                + sampling.duration_since(warm_start).as_nanos() as f64,
            target_precision: plan.target_precision,
            budget_s: plan.budget.as_secs_f64(),
            elapsed_s: started.elapsed().as_secs_f64(),
            stopped,
            core_mhz: core_clock.mhz(),
            core_adds_per_cycle: core_clock.adds_per_cycle(),
            placement: Some(record),
            phases: Some(Phases {
                calibrate_s: calibrated.duration_since(started).as_secs_f64(),
                place_s: warm_start.duration_since(calibrated).as_secs_f64(),
                warmup_s: sampling.duration_since(warm_start).as_secs_f64(),
                sample_s: sampling.elapsed().as_secs_f64(),
            }),
        },
    }
}

/// What calibration chose: the estimated cost of one operation, the
/// unroll degree m and the groups of m operations per observation.
struct Calibrated {
    per_op_ns: f64,
    unroll: u32,
    groups: u64,
}

/// Estimates one operation's cost (doubling n until an observation is long
/// enough to read well) and the loop's overhead from the dummy F, and
/// chooses the unroll degree m (the loop's overhead under 1% of m
/// operations) and the groups per observation.
fn calibrate<P: FnMut(), D: FnMut()>(
    clock: &Clock,
    plan: &Plan,
    op: &mut P,
    dummy: &mut D,
) -> Calibrated {
    let target_ns = plan
        .min_observation_ns
        .max(1000.0 * clock.info().resolution_ns);
    // Monomorphised per closure, so the body is inlined into the unrolled loop.
    let time_op = |m: u32, groups: u64, op: &mut P| -> u64 {
        let t0 = clock.start();
        run_unrolled(m, groups, op);
        clock.stop().wrapping_sub(t0)
    };
    let time_dummy = |m: u32, groups: u64, d: &mut D| -> u64 {
        let t0 = clock.start();
        run_unrolled(m, groups, d);
        clock.stop().wrapping_sub(t0)
    };

    // Estimate the cost of one operation, doubling n until an observation
    // is long enough to be read well.
    // The first runs pay for page faults and cold code; each step keeps the
    // fastest of three so one disturbance cannot end the search early.
    for _ in 0..3 {
        std::hint::black_box(time_op(1, 1, op));
    }
    let mut n: u64 = 1;
    let mut per_op_ns;
    loop {
        let best = (0..3).map(|_| time_op(1, n, op)).min().unwrap();
        let t = clock.ticks_to_ns(best);
        per_op_ns = t / n as f64;
        if t >= target_ns / 4.0 || n >= 1 << 40 {
            break;
        }
        n *= 2;
    }
    // Loop overhead per iteration, from the dummy at m = 1.
    let loop_ns = {
        let groups = ((target_ns / per_op_ns.max(0.1)) as u64).clamp(1, 1 << 32);
        let best = (0..5).map(|_| time_dummy(1, groups, dummy)).min().unwrap();
        clock.ticks_to_ns(best) / groups as f64
    };
    let m = plan.fixed_unroll.unwrap_or_else(|| {
        DEGREES
            .iter()
            .copied()
            .filter(|&d| d <= plan.max_unroll)
            .find(|&d| loop_ns <= 0.01 * d as f64 * per_op_ns)
            .unwrap_or(plan.max_unroll.min(32))
    });
    assert!(
        DEGREES.contains(&m),
        "unroll degree {m} is not one of {DEGREES:?}"
    );
    let groups = match plan.fixed_iterations {
        Some(iters) => (iters / m as u64).max(1),
        None => ((target_ns / (per_op_ns.max(0.01) * m as f64)).ceil() as u64).max(1),
    };
    Calibrated {
        per_op_ns,
        unroll: m,
        groups,
    }
}

/// Entry points of the measured code at each placement of a block — P''
/// (or a single operation's call) and F, or 0 where there is no F —
/// copies at placements drawn at random, or, placement off or impossible
/// here, the compiled functions themselves with the reason in the record.
/// `obs_ns`: about how long one observation lasts (its dummy aside), which
/// sets how many observations in a row make one visit of a placement
/// ([`placement::VISIT_NS`]) and so how many placements the minimum
/// sampling time visits once each. The `Placed` keeps the copies mapped:
/// hold it while calling them.
fn place(
    plan: &Plan,
    code: usize,
    dummy: Option<usize>,
    obs_ns: f64,
) -> (Option<Placed>, Vec<[usize; 2]>, Placement) {
    let here = vec![[code, dummy.unwrap_or(0)]];
    if let Placing::Fixed(why) = plan.placement {
        return (None, here, Placement::not_placed(why));
    }
    // A block with a design is one of its result's several blocks.
    let one_of_blocks = plan.design.is_some();
    let visits = placement::Visits::plan(plan.min_sampling, plan.budget, obs_ns, one_of_blocks)
        .within(plan.max_observations);
    let mut rng = rand::rngs::StdRng::from_entropy();
    match Placed::new(code, dummy, visits.slots, plan.design, &mut rng) {
        Ok(p) => {
            let entries = (0..visits.slots).map(|slot| p.entries(slot)).collect();
            let mut record = p.record.clone();
            record.stretch = visits.stretch;
            (Some(p), entries, record)
        }
        Err(why) => (None, here, Placement::not_placed(why)),
    }
}

/// An entry point as the loop function it calls.
///
/// # Safety
/// `entry` must be a function of type `LoopFn<F>` (or a stub calling a
/// copy of one), still mapped.
unsafe fn as_loop<F>(entry: usize) -> LoopFn<F> {
    // SAFETY: as the caller promises.
    unsafe { std::mem::transmute::<usize, LoopFn<F>>(entry) }
}

/// Dummy loops F whose median each observation of P'' is set against.
const F_WINDOW: usize = 9;

/// (M(P''ᵢ) − M(F))/n, M(F) from [`DummyWindows::median`]: the dummy's
/// uncertainty and drift between the two enter the observations — and so
/// their interval — instead of hiding in one median subtracted from all,
/// while one interrupted dummy cannot make an observation absurd.
fn per_op(clock: &Clock, p: u64, f: u64, n: u64) -> f64 {
    (clock.ticks_to_ns(p) - clock.ticks_to_ns(f)) / n as f64
}

/// The last [`F_WINDOW`] dummies F timed at each placement (warm-up's
/// included, at least two, so a placement's first observations have
/// some), and their lower median: an interruption only lengthens a dummy,
/// so of an even count the lower middle one is taken. Two dummies or more, and one
/// interrupted dummy cannot be the one subtracted. Before the warm-up
/// seeded them, a placement's first observation was set against its one
/// dummy and its second against the larger of two: one dummy interrupted
/// for 33 µs put two consecutive observations of a 183 ns getppid at
/// −122 ns (AMD EPYC guest).
struct DummyWindows {
    recent: Vec<Vec<u64>>,
}

impl DummyWindows {
    fn new(slots: usize) -> Self {
        DummyWindows {
            recent: vec![Vec::with_capacity(F_WINDOW + 1); slots],
        }
    }

    fn push(&mut self, slot: usize, f: u64) {
        let window = &mut self.recent[slot];
        window.push(f);
        if window.len() > F_WINDOW {
            window.remove(0);
        }
    }

    /// The lower median of placement `slot`'s window; panics on an empty
    /// one (the warm-up times every placement's dummy first).
    fn median(&self, slot: usize) -> u64 {
        let mut s = self.recent[slot].clone();
        s.sort_unstable();
        s[(s.len() - 1) / 2]
    }
}

/// Measures single operations, each timed alone with BASE (its mean, see
/// [`crate::base`]) subtracted.
/// `setup` runs untimed before each (e.g. re-arming state); when `evictor`
/// is given (cold mode) caches are evicted and branch history disturbed
/// after `setup` and before the timed operation.
pub fn measure_single<S: FnMut(), P: FnMut()>(
    clock: &Clock,
    base_ns: f64,
    plan: &Plan,
    mut evictor: Option<&mut Evictor>,
    mut setup: S,
    mut op: P,
) -> Measured {
    let started = Instant::now();
    let mut obs = Vec::new();
    // One warm-up, not counted, so first-use costs (lazy binding, first
    // faults) are not taken for the operation's; a benchmark may count on
    // exactly one. Its time, first costs and all, sizes the turns at each
    // placement (an overestimate: fewer turns, never more).
    setup();
    let t0 = clock.start();
    op();
    let once_ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0));
    let calibrated = Instant::now();
    // The operation is the body of a one-iteration P'' at each placement.
    let (_placed, entries, record) = place(plan, loop_fn::<P>(1) as usize, None, once_ns);
    // SAFETY: the entries call P'' of degree 1 for P.
    let slots: Vec<LoopFn<P>> = entries
        .iter()
        .map(|&[c, _]| unsafe { as_loop::<P>(c) })
        .collect();
    let rotation = record.rotation();
    let placed = Instant::now();
    let sampling = placed;
    let mut rule = StopRule::new(plan, clock.info().resolution_ns).rotating(rotation);
    let mut core_clock = crate::coreclock::Track::default();
    let stopped = loop {
        core_clock.due();
        let f = slots[(obs.len() / rotation.stretch) % rotation.slots];
        setup();
        if let Some(e) = evictor.as_deref_mut() {
            e.evict();
        }
        let t0 = clock.start();
        // SAFETY: `f` calls P'' of degree 1 for P, still mapped; `op` is ours.
        unsafe { f(1, &mut op) };
        let t1 = clock.stop();
        obs.push(clock.ticks_to_ns(t1.wrapping_sub(t0)) - base_ns);
        if let Some(why) = rule.check(&obs, started.elapsed()) {
            break why;
        }
    };
    Measured {
        observations: obs,
        method: Method {
            kind: MethodKind::Single,
            iterations: 1,
            unroll: 1,
            dummy_ns: None,
            dummy: None,
            base_subtracted_ns: Some(base_ns),
            warmup_ns: 0.0,
            target_precision: plan.target_precision,
            budget_s: plan.budget.as_secs_f64(),
            elapsed_s: started.elapsed().as_secs_f64(),
            stopped,
            core_mhz: core_clock.mhz(),
            core_adds_per_cycle: core_clock.adds_per_cycle(),
            placement: Some(record),
            phases: Some(Phases {
                calibrate_s: calibrated.duration_since(started).as_secs_f64(),
                place_s: placed.duration_since(calibrated).as_secs_f64(),
                warmup_s: sampling.duration_since(placed).as_secs_f64(),
                sample_s: sampling.elapsed().as_secs_f64(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A placement's early observations: one interrupted dummy among its
    /// first two is never the one subtracted, and among nine it takes
    /// five to move the median.
    #[test]
    fn one_interrupted_dummy_is_never_subtracted() {
        let (quiet, hit) = (80, 33_000);
        let mut w = DummyWindows::new(2);
        w.push(0, hit);
        w.push(0, quiet);
        assert_eq!(w.median(0), quiet, "the lower of two");
        w.push(0, quiet);
        assert_eq!(w.median(0), quiet);
        // The windows are per placement.
        w.push(1, 90);
        assert_eq!(w.median(1), 90);
        // Nine at most: four interrupted of nine leave the median quiet,
        // five move it, and old ones leave the window.
        let mut w = DummyWindows::new(1);
        for f in [quiet; 5].into_iter().chain([hit; 4]) {
            w.push(0, f);
        }
        assert_eq!(w.median(0), quiet);
        w.push(0, hit);
        assert_eq!(w.recent[0].len(), F_WINDOW);
        assert_eq!(w.median(0), hit);
        for _ in 0..F_WINDOW {
            w.push(0, quiet);
        }
        assert_eq!(w.median(0), quiet);
    }
}
