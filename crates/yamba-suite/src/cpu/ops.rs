//! P = one step of a chain of dependent arithmetic operations: xor, add,
//! multiply, divide and remainder on 32- and 64-bit integers, add, multiply
//! and divide on single and double floats (lmbench's lat_ops); and the
//! same step on K independent chains at once (par_ops).
//!
//! `cpu.ops` — latency: each step needs the previous step's result, so a
//! block of 16 steps lasts 16 latencies. `cpu.ops.parallel` — how many
//! chains of one operation the core overlaps: par(K) = K · T(1 chain) /
//! T(K chains), the largest over K = 1..12 (lmbench goes to 16; beyond 12
//! values no longer fit in the registers and the chains spill).
//!
//! Each step's result passes through `adapter::opaque` (an empty asm
//! block, no instruction), so the compiler emits exactly the written
//! operation, in a register, and cannot fold the chain: compiled today,
//! lmbench's own integer add chain is folded away (0.01 ns). The
//! operands keep each chain's values in range: division alternates
//! between two quotients (x = s / x), the remainder chain is
//! x = (s mod x) + 1 at a fixed point (the add's measured latency is
//! subtracted), float multiplies alternate ×c and ×1/c (two multiplies per
//! step). There is no float remainder: no instruction computes one (fmod
//! is a library loop).
//!
//! Latencies are also given in core cycles, against the dependent-add
//! chain of `cpu.mhz` measured in turns with them. Evidence (gating): each
//! chain ran exactly the steps counted (its final value equals a plain
//! computation of the same steps), and the one-cycle operations (add, xor)
//! take one core cycle — which holds only if the chain's values stay in
//! registers.

use super::adapter::{chains, opaque::Opaque};

use crate::shared::interleave::{shared_plan, time_interleaved, Timed};
use yamba_core::{Benchmark, Cold, Ctx, Series, Unit};

pub static OPS: Benchmark = Benchmark {
    id: "cpu.ops",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "latency of dependent integer and floating-point operations: xor, add, mul, div, mod (cpu.ops.TYPE.OP)",
    adapter: super::adapter::NAME,
    run: run_latency,
    cold: Cold::NotMeaningful(
        "one instruction's latency (about a ns) is below what one timed operation can resolve, and register arithmetic reads no memory a cold cache would slow",
    ),
    ..Benchmark::TEMPLATE
};

pub static PARALLEL: Benchmark = Benchmark {
    id: "cpu.ops.parallel",
    area: "cpu",
    unit: Unit::Ratio,
    // More chains overlapped is more of the core: a drop is the regression.
    higher_is_better: Some(true),
    description: "parallelism of integer and floating-point operations: how many independent chains of one operation overlap (cpu.ops.parallel.TYPE.OP)",
    adapter: super::adapter::NAME,
    run: run_parallel,
    cold: Cold::NotMeaningful(
        "how many independent chains overlap is a throughput: one operation timed alone has nothing to overlap with",
    ),
    ..Benchmark::TEMPLATE
};

/// Dependent steps per block, per chain.
pub const STEPS: u64 = 16;

/// Chain counts the parallelism is measured at.
pub const CHAINS: &[usize] = &[1, 2, 3, 4, 6, 8, 10, 12];
const CHAINS_QUICK: &[usize] = &[1, 2, 4, 8, 12];

/// Latencies of one-cycle operations, in core cycles, accepted as one.
pub const ONE_CYCLE: std::ops::RangeInclusive<f64> = 0.8..=1.25;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    I32,
    I64,
    F32,
    F64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Bit,
    Add,
    Mul,
    Div,
    Mod,
}

/// One measured operation: its type, what a step is, and its operands.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub ty: Ty,
    pub op: Op,
    /// Operations per chain step (2 for the float multiply: ×c then ×1/c).
    pub ops_per_step: u32,
    pub step: &'static str,
}

impl Pair {
    pub fn name(&self) -> String {
        let ty = match self.ty {
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
        };
        let op = match self.op {
            Op::Bit => "bit",
            Op::Add => "add",
            Op::Mul => "mul",
            Op::Div => "div",
            Op::Mod => "mod",
        };
        format!("{ty}.{op}")
    }
}

macro_rules! pair {
    ($ty:ident, $op:ident, $ops:expr, $step:expr) => {
        Pair {
            ty: Ty::$ty,
            op: Op::$op,
            ops_per_step: $ops,
            step: $step,
        }
    };
}

/// Every operation measured, in report order.
pub const PAIRS: &[Pair] = &[
    pair!(I32, Bit, 1, "x = x ^ c"),
    pair!(I32, Add, 1, "x = x + 3"),
    pair!(I32, Mul, 1, "x = x · 3 (wrapping)"),
    pair!(I32, Div, 1, "x = 37000111 / x: x alternates 37, 1000003"),
    pair!(I32, Mod, 1, "x = (37000110 mod x) + 1 = x = 1000003"),
    pair!(I64, Bit, 1, "x = x ^ c"),
    pair!(I64, Add, 1, "x = x + 3"),
    pair!(I64, Mul, 1, "x = x · 3 (wrapping)"),
    pair!(
        I64,
        Div,
        1,
        "x = 9000000168000000703 / x: x alternates 3000000019, 3000000037"
    ),
    pair!(I64, Mod, 1, "x = (9000000056 mod x) + 1 = x = 3000000019"),
    pair!(F32, Add, 1, "x = x + 1"),
    pair!(F32, Mul, 2, "x = x · 1.5 · (1/1.5)"),
    pair!(F32, Div, 1, "x = (√2·π) / x: x alternates √2, π"),
    pair!(F64, Add, 1, "x = x + 1"),
    pair!(F64, Mul, 2, "x = x · 1.5 · (1/1.5)"),
    pair!(F64, Div, 1, "x = (√2·π) / x: x alternates √2, π"),
];

macro_rules! x16 {
    ($b:block) => {
        $b $b $b $b $b $b $b $b $b $b $b $b $b $b $b $b
    };
}

/// `$name::<K>(n, v, c, d)`: n blocks of 16 steps on each of K chains.
macro_rules! chain_fn {
    ($name:ident, $t:ty, |$x:ident, $c:ident, $d:ident| $step:expr) => {
        #[inline(never)]
        fn $name<const K: usize>(n: u64, v: &mut [$t; K], c: $t, d: $t) {
            let ($c, $d) = (c.opaque(), d.opaque());
            let _ = $d;
            let mut w = *v;
            for _ in 0..n {
                x16!({
                    for j in 0..K {
                        let $x = w[j];
                        w[j] = ($step).opaque();
                    }
                });
            }
            *v = w;
        }
    };
}

// SAFETY (divisions): x alternates between the two nonzero quotients (or
// sits at the remainder chain's fixed point), never 0 or −1; telling the
// compiler so removes its zero and overflow checks from the chain.
chain_fn!(i32_bit, i32, |x, c, d| x ^ c);
chain_fn!(i32_add, i32, |x, c, d| x.wrapping_add(c));
chain_fn!(i32_mul, i32, |x, c, d| x.wrapping_mul(c));
chain_fn!(i32_div, i32, |x, c, d| {
    // SAFETY: x is never 0 or −1 (see above).
    unsafe { std::hint::assert_unchecked(x != 0 && x != -1) };
    c / x
});
chain_fn!(i32_mod, i32, |x, c, d| {
    // SAFETY: x is never 0 or −1 (see above).
    unsafe { std::hint::assert_unchecked(x != 0 && x != -1) };
    (c % x).wrapping_add(d)
});
chain_fn!(i64_bit, i64, |x, c, d| x ^ c);
chain_fn!(i64_add, i64, |x, c, d| x.wrapping_add(c));
chain_fn!(i64_mul, i64, |x, c, d| x.wrapping_mul(c));
chain_fn!(i64_div, i64, |x, c, d| {
    // SAFETY: x is never 0 or −1 (see above).
    unsafe { std::hint::assert_unchecked(x != 0 && x != -1) };
    c / x
});
chain_fn!(i64_mod, i64, |x, c, d| {
    // SAFETY: x is never 0 or −1 (see above).
    unsafe { std::hint::assert_unchecked(x != 0 && x != -1) };
    (c % x).wrapping_add(d)
});
chain_fn!(f32_add, f32, |x, c, d| x + c);
chain_fn!(f32_mul, f32, |x, c, d| (x * c).opaque() * d);
chain_fn!(f32_div, f32, |x, c, d| c / x);
chain_fn!(f64_add, f64, |x, c, d| x + c);
chain_fn!(f64_mul, f64, |x, c, d| (x * c).opaque() * d);
chain_fn!(f64_div, f64, |x, c, d| c / x);

/// A boxed run of `$f::<K>` from `$x0` with constants `$c`, `$d`, and a
/// reading of its first chain's value (as f64 bits or the integer).
macro_rules! boxed {
    ($f:ident, $x0:expr, $c:expr, $d:expr, $k:expr) => {
        boxed!(@ $f, $x0, $c, $d, $k, [1, 2, 3, 4, 6, 8, 10, 12])
    };
    (@ $f:ident, $x0:expr, $c:expr, $d:expr, $k:expr, [$($kk:literal),*]) => {
        match $k {
            $($kk => {
                let mut s = [$x0; $kk];
                let (c, d) = ($c, $d);
                Chain {
                    run: Box::new(move |n: u64| {
                        $f::<$kk>(n, &mut s, c, d);
                        s.iter().map(|v| *v as f64).collect()
                    }),
                }
            })*
            k => panic!("no compiled chain for K = {k} (one of {CHAINS:?})"),
        }
    };
}

/// K independent chains of one operation, ready to run; each run returns
/// the chains' values afterwards.
pub struct Chain {
    run: Box<dyn FnMut(u64) -> Vec<f64>>,
}

impl Chain {
    pub fn new(p: &Pair, k: usize) -> Chain {
        const SQRT2: f64 = std::f64::consts::SQRT_2;
        const PI: f64 = std::f64::consts::PI;
        match (p.ty, p.op) {
            (Ty::I32, Op::Bit) => boxed!(i32_bit, 0x1234_5678i32, 0x0f0f_0f0f, 0, k),
            (Ty::I32, Op::Add) => boxed!(i32_add, 1i32, 3, 0, k),
            (Ty::I32, Op::Mul) => boxed!(i32_mul, 7i32, 3, 0, k),
            (Ty::I32, Op::Div) => boxed!(i32_div, 37i32, 37_000_111, 0, k),
            (Ty::I32, Op::Mod) => boxed!(i32_mod, 1_000_003i32, 37_000_110, 1, k),
            (Ty::I64, Op::Bit) => {
                boxed!(
                    i64_bit,
                    0x1234_5678_9abc_def0i64,
                    0x0f0f_0f0f_0f0f_0f0f,
                    0,
                    k
                )
            }
            (Ty::I64, Op::Add) => boxed!(i64_add, 1i64, 3, 0, k),
            (Ty::I64, Op::Mul) => boxed!(i64_mul, 7i64, 3, 0, k),
            (Ty::I64, Op::Div) => {
                boxed!(i64_div, 3_000_000_019i64, 9_000_000_168_000_000_703, 0, k)
            }
            (Ty::I64, Op::Mod) => boxed!(i64_mod, 3_000_000_019i64, 9_000_000_056, 1, k),
            (Ty::F32, Op::Add) => boxed!(f32_add, 1.0f32, 1.0, 0.0, k),
            (Ty::F32, Op::Mul) => boxed!(f32_mul, 1.0f32, 1.5, 1.0 / 1.5, k),
            (Ty::F32, Op::Div) => boxed!(f32_div, SQRT2 as f32, (SQRT2 * PI) as f32, 0.0, k),
            (Ty::F64, Op::Add) => boxed!(f64_add, 1.0f64, 1.0, 0.0, k),
            (Ty::F64, Op::Mul) => boxed!(f64_mul, 1.0f64, 1.5, 1.0 / 1.5, k),
            (Ty::F64, Op::Div) => boxed!(f64_div, SQRT2, SQRT2 * PI, 0.0, k),
            (ty, op) => panic!("no chain for {ty:?} {op:?}"),
        }
    }

    /// Runs n blocks; the chains' values afterwards.
    pub fn run(&mut self, n: u64) -> Vec<f64> {
        (self.run)(n)
    }
}

/// The value one chain must hold after `blocks` blocks from its start,
/// computed plainly (no barrier, one step at a time): the known count.
pub fn reference(p: &Pair, blocks: u64) -> f64 {
    let steps = blocks * STEPS;
    macro_rules! fold {
        ($x0:expr, |$x:ident| $e:expr) => {{
            let mut $x = $x0;
            for _ in 0..steps {
                $x = $e;
            }
            $x as f64
        }};
    }
    let (s2, pi) = (std::f64::consts::SQRT_2, std::f64::consts::PI);
    match (p.ty, p.op) {
        (Ty::I32, Op::Bit) => fold!(0x1234_5678i32, |x| x ^ 0x0f0f_0f0f),
        (Ty::I32, Op::Add) => fold!(1i32, |x| x.wrapping_add(3)),
        (Ty::I32, Op::Mul) => fold!(7i32, |x| x.wrapping_mul(3)),
        (Ty::I32, Op::Div) => fold!(37i32, |x| 37_000_111 / x),
        (Ty::I32, Op::Mod) => fold!(1_000_003i32, |x| (37_000_110 % x) + 1),
        (Ty::I64, Op::Bit) => fold!(0x1234_5678_9abc_def0i64, |x| x ^ 0x0f0f_0f0f_0f0f_0f0f),
        (Ty::I64, Op::Add) => fold!(1i64, |x| x.wrapping_add(3)),
        (Ty::I64, Op::Mul) => fold!(7i64, |x| x.wrapping_mul(3)),
        (Ty::I64, Op::Div) => fold!(3_000_000_019i64, |x| 9_000_000_168_000_000_703 / x),
        (Ty::I64, Op::Mod) => fold!(3_000_000_019i64, |x| (9_000_000_056 % x) + 1),
        (Ty::F32, Op::Add) => fold!(1.0f32, |x| x + 1.0),
        (Ty::F32, Op::Mul) => fold!(1.0f32, |x| std::hint::black_box(x * 1.5) * (1.0 / 1.5)),
        (Ty::F32, Op::Div) => fold!(s2 as f32, |x| (s2 * pi) as f32 / x),
        (Ty::F64, Op::Add) => fold!(1.0f64, |x| x + 1.0),
        (Ty::F64, Op::Mul) => fold!(1.0f64, |x| std::hint::black_box(x * 1.5) * (1.0 / 1.5)),
        (Ty::F64, Op::Div) => fold!(s2, |x| (s2 * pi) / x),
        (ty, op) => panic!("no reference for {ty:?} {op:?}"),
    }
}

/// Whether K chains of `p` run from their start for a few blocks hold
/// exactly the reference value: Err says what they held instead.
pub fn check_count(p: &Pair, k: usize) -> Result<(), String> {
    let blocks = 5;
    let want = reference(p, blocks);
    let got = Chain::new(p, k).run(blocks);
    if got.iter().all(|&g| g == want) {
        Ok(())
    } else {
        Err(format!("{got:?}, reference {want}"))
    }
}

fn plan_for(ctx: &Ctx, share: f64) -> yamba_core::Plan {
    let mut p = shared_plan(&ctx.plan(), share);
    // Each observation is a long block sequence; a few dozen suffice.
    p.max_observations = p.max_observations.min(2000);
    p
}

fn run_latency(ctx: &mut Ctx) -> Result<(), String> {
    let plan = plan_for(ctx, 1.0);
    let mut chains: Vec<Chain> = PAIRS.iter().map(|p| Chain::new(p, 1)).collect();
    let mut w = 1u64;
    let mut cycle_run = |n: u64| {
        for _ in 0..n {
            w = chains::adds(w);
        }
    };
    let mut runs: Vec<Box<dyn FnMut(u64) + '_>> = vec![Box::new(&mut cycle_run)];
    for c in chains.iter_mut() {
        runs.push(Box::new(move |n| {
            std::hint::black_box(c.run(n));
        }));
    }
    let mut refs: Vec<&mut dyn FnMut(u64)> = runs.iter_mut().map(|b| &mut **b as _).collect();
    let t = time_interleaved(ctx.clock(), &plan, &mut refs);
    drop(refs);
    drop(runs);
    let cycle_ns = t[0].median() / chains::BLOCK as f64;
    let add_ns = |ty: Ty| -> f64 {
        PAIRS
            .iter()
            .position(|p| p.ty == ty && p.op == Op::Add)
            .map_or(f64::NAN, |i| per_op(&t[i + 1], &PAIRS[i]).1)
    };
    for (i, p) in PAIRS.iter().enumerate() {
        let (obs, mut median) = per_op(&t[i + 1], p);
        let subtract = if p.op == Op::Mod { add_ns(p.ty) } else { 0.0 };
        median -= subtract;
        let mut r = ctx.result(Some(&p.name()));
        r.description = format!("latency of a dependent {} ({})", p.name(), p.step);
        r.set_observations(obs.iter().map(|o| o - subtract).collect());
        r.method = Some(t[i + 1].method.clone());
        let cycles = median / cycle_ns;
        r.param("type", format!("{:?}", p.ty).to_lowercase())
            .param("op", p.name())
            .param("step", p.step)
            .param("steps_per_block", STEPS)
            .param("ops_per_step", p.ops_per_step)
            .param("cycles", cycles)
            .param("core_cycle_ns", cycle_ns);
        if p.op == Op::Mod {
            r.param("subtracted_add_ns", subtract);
        }
        add_count_evidence(&mut r, p, 1);
        if !super::adapter::opaque::IN_REGISTERS {
            r.warn("no register-only barrier for this architecture: each step passes through memory and latencies read high");
        }
        if matches!(p.op, Op::Add | Op::Bit) && matches!(p.ty, Ty::I32 | Ty::I64) {
            r.add_evidence(
                "a dependent one-cycle operation takes one core cycle (the chain stays in registers)",
                format!("{:.2}–{:.2} cycles of cpu.mhz's add chain", ONE_CYCLE.start(), ONE_CYCLE.end()),
                format!("{cycles:.3} cycles"),
                ONE_CYCLE.contains(&cycles),
            );
        }
        ctx.push(r);
    }
    Ok(())
}

/// (ns per operation for each observation, median ns per operation).
fn per_op(t: &Timed, p: &Pair) -> (Vec<f64>, f64) {
    let per = (STEPS * p.ops_per_step as u64) as f64;
    let obs: Vec<f64> = t.ns_per_block.iter().map(|ns| ns / per).collect();
    let median = t.median() / per;
    (obs, median)
}

fn add_count_evidence(r: &mut yamba_core::BenchResult, p: &Pair, k: usize) {
    let check = check_count(p, k);
    r.add_evidence(
        "the chains ran exactly the steps counted (value after 5 blocks equals a plain computation)",
        format!("{k} chain(s) of {} steps", 5 * STEPS),
        match &check {
            Ok(()) => "equal".to_string(),
            Err(e) => e.clone(),
        },
        check.is_ok(),
    );
}

/// Parallelism of one operation: each K's time per block, in turns.
pub struct Parallelism {
    /// (K, median parallelism at K).
    pub curve: Vec<(usize, f64)>,
    /// The K with the largest parallelism, and its per-observation values.
    pub best_k: usize,
    pub best_obs: Vec<f64>,
    pub method: yamba_results::results::Method,
}

/// Measures par(K) = K · T(1) / T(K) for each K in `ks` (the first must be 1).
pub fn parallelism(
    clock: &yamba_core::Clock,
    plan: &yamba_core::Plan,
    p: &Pair,
    ks: &[usize],
) -> Parallelism {
    assert_eq!(ks.first(), Some(&1));
    let mut chains: Vec<Chain> = ks.iter().map(|&k| Chain::new(p, k)).collect();
    let mut runs: Vec<Box<dyn FnMut(u64) + '_>> = chains
        .iter_mut()
        .map(|c| {
            Box::new(move |n: u64| {
                std::hint::black_box(c.run(n));
            }) as Box<dyn FnMut(u64)>
        })
        .collect();
    let mut refs: Vec<&mut dyn FnMut(u64)> = runs.iter_mut().map(|b| &mut **b as _).collect();
    let t = time_interleaved(clock, plan, &mut refs);
    let t1 = t[0].median();
    let curve: Vec<(usize, f64)> = ks
        .iter()
        .zip(&t)
        .map(|(&k, tk)| (k, k as f64 * t1 / tk.median()))
        .collect();
    let (bi, _) = curve
        .iter()
        .enumerate()
        .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
        .expect("at least one chain count");
    let best_k = ks[bi];
    Parallelism {
        best_obs: t[bi]
            .ns_per_block
            .iter()
            .filter(|&&ns| ns > 0.0)
            .map(|ns| best_k as f64 * t1 / ns)
            .collect(),
        curve,
        best_k,
        method: t[bi].method.clone(),
    }
}

fn run_parallel(ctx: &mut Ctx) -> Result<(), String> {
    let ks = if ctx.quick() { CHAINS_QUICK } else { CHAINS };
    let kmax = *ks.last().unwrap();
    let plan = plan_for(ctx, 0.25);
    for p in PAIRS {
        let par = parallelism(ctx.clock(), &plan, p, ks);
        let mut r = ctx.result(Some(&p.name()));
        r.description = format!(
            "parallelism of {}: independent chains the core overlaps ({})",
            p.name(),
            p.step
        );
        r.set_observations(par.best_obs.clone());
        r.method = Some(par.method.clone());
        r.param("op", p.name())
            .param("step", p.step)
            .param("chains_tried", ks)
            .param("best_chains", par.best_k);
        r.series = Some(Series {
            x_label: "independent chains".into(),
            x_unit: "count".into(),
            y_label: "parallelism".into(),
            y_unit: "ratio".into(),
            log_x: false,
            log_y: false,
            points: par.curve.iter().map(|&(k, v)| [k as f64, v]).collect(),
        });
        add_count_evidence(&mut r, p, kmax);
        let best = par.curve.iter().map(|c| c.1).fold(0.0, f64::max);
        r.add_evidence(
            "the parallelism found is between 1 and the number of chains (K chains can neither slow one chain's steps nor beat K× its speed)",
            format!("0.9 ≤ par ≤ {:.1}", kmax as f64 * 1.05),
            format!("{best:.2} at {} chains; curve {:?}", par.best_k, round2(&par.curve)),
            best >= 0.9 && best <= kmax as f64 * 1.05,
        );
        let at_max = par.curve.last().map_or(0.0, |c| c.1);
        r.add_note_evidence(
            "the parallelism levelled off below the most chains tried (else it may be higher)",
            format!(
                "best at fewer than {kmax} chains, or par({kmax}) < {:.1}",
                0.8 * kmax as f64
            ),
            format!("best at {}, par({kmax}) = {at_max:.2}", par.best_k),
            par.best_k < kmax || at_max < 0.8 * kmax as f64,
        );
        ctx.push(r);
    }
    Ok(())
}

fn round2(c: &[(usize, f64)]) -> Vec<(usize, f64)> {
    c.iter()
        .map(|&(k, v)| (k, (v * 100.0).round() / 100.0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known count: every compiled chain, at every K, computes exactly the
    /// steps a plain loop computes.
    #[test]
    fn every_chain_runs_the_steps_it_counts() {
        for p in PAIRS {
            for &k in CHAINS {
                check_count(p, k).unwrap_or_else(|e| panic!("{} K={k}: {e}", p.name()));
            }
        }
    }

    /// The divisions' operands keep them away from 0 and −1 (the chains
    /// tell the compiler so) for as long as a run lasts.
    #[test]
    fn division_chains_stay_on_their_two_values() {
        let mut x = 37i32;
        let mut y = 3_000_000_019i64;
        for _ in 0..1000 {
            x = 37_000_111 / x;
            y = 9_000_000_168_000_000_703 / y;
            assert!(x == 37 || x == 1_000_003);
            assert!(y == 3_000_000_019 || y == 3_000_000_037);
        }
        assert_eq!((37_000_110 % 1_000_003) + 1, 1_000_003);
        assert_eq!((9_000_000_056i64 % 3_000_000_019) + 1, 3_000_000_019);
    }
}
