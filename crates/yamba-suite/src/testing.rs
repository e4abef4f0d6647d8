//! Test-only benchmarks: some misbehave on purpose, to prove the runner
//! isolates them; others do known work or report a known value, the
//! ground truth for the certainty tests. Hidden unless
//! YAMBA_TEST_BENCHMARKS=1.

use yamba_core::{Benchmark, Ctx, Kind, Setting, Unit};

pub static CRASH: Benchmark = Benchmark {
    id: "testing.crash",
    area: "testing",
    unit: Unit::Nanoseconds,
    description: "test only: dies of SIGSEGV",
    default: false,
    hidden: true,
    run: |_| {
        // A real invalid access (not raise(): std's SIGSEGV handler would
        // return from a raised one). SAFETY: deliberately ends this child process.
        let v = unsafe { std::ptr::read_volatile(16 as *const u8) };
        Err(format!("survived reading address 16: {v}"))
    },
    ..Benchmark::TEMPLATE
};

pub static HANG: Benchmark = Benchmark {
    id: "testing.hang",
    area: "testing",
    description: "test only: never returns",
    default: false,
    hidden: true,
    timeout_s: 2,
    run: |_| loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    },
    ..Benchmark::TEMPLATE
};

/// Dependent xor-shift-multiply steps in one operation of `testing.work`.
pub const WORK_STEPS: u64 = 400;

/// `--set testing.work.extra_pct`: how much more work `testing.work` does.
pub const EXTRA_PCT: Setting = Setting {
    key: "testing.work.extra_pct",
    kind: Kind::Number {
        min: 0.0,
        max: 1000.0,
    },
    default: "0",
    help: "percent more steps in each operation of testing.work",
    aliases: &[],
};

/// `--set testing.offset.sigma`: the spread between `testing.offset`'s processes.
pub const SIGMA: Setting = Setting {
    key: "testing.offset.sigma",
    kind: Kind::Number { min: 0.0, max: 1e6 },
    default: "10",
    help: "standard deviation of testing.offset's per-process offset",
    aliases: &[],
};

pub static WORK: Benchmark = Benchmark {
    id: "testing.work",
    area: "testing",
    unit: Unit::Nanoseconds,
    description: "test only: a dependent chain of xor-shift-multiplies; --set testing.work.extra_pct=P adds P% more",
    default: false,
    hidden: true,
    settings: &[EXTRA_PCT],
    run: run_work,
    ..Benchmark::TEMPLATE
};

fn run_work(ctx: &mut Ctx) -> Result<(), String> {
    let extra = ctx.number(EXTRA_PCT.key)?.unwrap_or(0.0);
    let steps = (WORK_STEPS as f64 * (1.0 + extra / 100.0)).round() as u64;
    let mut x = 1u64;
    let m = ctx.measure(|| {
        let mut v = std::hint::black_box(x);
        for _ in 0..std::hint::black_box(steps) {
            // Not affine, so no closed form can shortcut the chain.
            v = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        x = v;
    });
    std::hint::black_box(x);
    let mut r = ctx.measured_result(None, m);
    r.param("steps", steps).param("extra_pct", extra);
    ctx.push(r);
    Ok(())
}

/// What `testing.offset` reports, before its process's offset.
pub const OFFSET_TRUE: f64 = 1000.0;

pub static OFFSET: Benchmark = Benchmark {
    id: "testing.offset",
    area: "testing",
    unit: Unit::Ratio,
    description: "test only: a known value plus a random offset per process (--set testing.offset.sigma=S), no timing",
    default: false,
    hidden: true,
    settings: &[SIGMA],
    run: run_offset,
    ..Benchmark::TEMPLATE
};

/// Observations OFFSET_TRUE + d + e: d ~ N(0, sigma) drawn once for the
/// process, e ~ N(0, sigma/10) per observation — a benchmark whose
/// processes disagree by a known amount.
fn run_offset(ctx: &mut Ctx) -> Result<(), String> {
    use rand::Rng;
    let sigma = ctx.number(SIGMA.key)?.unwrap_or(10.0);
    let mut rng = rand::thread_rng();
    let mut normal = || {
        let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    };
    let offset = sigma * normal();
    let obs: Vec<f64> = (0..200)
        .map(|_| OFFSET_TRUE + offset + sigma / 10.0 * normal())
        .collect();
    let mut r = ctx.result(None);
    r.set_observations(obs);
    r.param("sigma", sigma);
    ctx.push(r);
    Ok(())
}

pub static BENCHMARKS: &[&Benchmark] = &[&CRASH, &HANG, &WORK, &OFFSET];
