//! Test-only benchmarks: some misbehave on purpose, to prove the runner
//! isolates them; others do known work or report a known value, the
//! ground truth for the certainty tests. Hidden unless
//! YAMBA_TEST_BENCHMARKS=1.

use yamba_core::{Benchmark, Cold, Ctx, Kind, Setting, Unit};

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
    cold: Cold::NotMeaningful("test only: crashes before measuring"),
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
    cold: Cold::NotMeaningful("test only: never returns"),
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

/// `--set testing.work.process_spread_pct`: a spread between processes of
/// known size — each process does its steps × (1 + S/100 · z), z a
/// standard normal draw of its own — so that the mean over processes is
/// the work without it.
pub const PROCESS_SPREAD: Setting = Setting {
    key: "testing.work.process_spread_pct",
    kind: Kind::Number {
        min: 0.0,
        max: 30.0,
    },
    default: "0",
    help:
        "test only: standard deviation, in percent, of a per-process factor on testing.work's steps",
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
    settings: &[EXTRA_PCT, PROCESS_SPREAD],
    run: run_work,
    cold: Cold::NotMeaningful(
        "test only: a planted chain of known cost, hot by design",
    ),
    ..Benchmark::TEMPLATE
};

fn run_work(ctx: &mut Ctx) -> Result<(), String> {
    let extra = ctx.number(EXTRA_PCT.key)?.unwrap_or(0.0);
    let spread = ctx.number(PROCESS_SPREAD.key)?.unwrap_or(0.0) / 100.0;
    let factor = (1.0 + spread * standard_normal(&mut crate::shared::process_rng())).max(0.1);
    let steps = (WORK_STEPS as f64 * (1.0 + extra / 100.0) * factor).round() as u64;
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
    cold: Cold::NotMeaningful(
        "test only: a known value with no timing",
    ),
    ..Benchmark::TEMPLATE
};

/// Observations OFFSET_TRUE + d + e: d ~ N(0, sigma) drawn once for the
/// process, e ~ N(0, sigma/10) per observation — a benchmark whose
/// processes disagree by a known amount.
fn run_offset(ctx: &mut Ctx) -> Result<(), String> {
    let sigma = ctx.number(SIGMA.key)?.unwrap_or(10.0);
    let mut rng = crate::shared::process_rng();
    let mut normal = || standard_normal(&mut rng);
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

/// A standard normal draw (Box–Muller).
fn standard_normal(rng: &mut impl rand::Rng) -> f64 {
    let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Extra dependent steps `testing.placed` does for each unit of its code's
/// position: 0 to 3 (the KiB its code sits in, modulo 4) × this.
pub const PLACED_STEP: u64 = 100;

/// `--set testing.placed.position=K`: take the position from the setting
/// instead of from the code's address (the test's ground truth: each
/// position's cost, measured wherever the code sits).
pub const POSITION: Setting = Setting {
    key: "testing.placed.position",
    kind: Kind::Integer { min: 0, max: 3 },
    default: "from the code's address",
    help: "test only: the position testing.placed costs as (0–3), instead of its code's",
    aliases: &[],
};

pub static PLACED: Benchmark = Benchmark {
    id: "testing.placed",
    area: "testing",
    unit: Unit::Nanoseconds,
    description: "test only: 400 dependent steps plus 100 × (the KiB its code sits in, mod 4): a cost that depends on code placement by construction",
    default: false,
    hidden: true,
    settings: &[POSITION],
    requires: |_, _| {
        if cfg!(target_arch = "x86_64") {
            Ok(())
        } else {
            Err("reads its own code address with x86-64's RIP-relative lea".into())
        }
    },
    run: run_placed,
    cold: Cold::NotMeaningful(
        "test only: a cost set by code placement, hot by design",
    ),
    ..Benchmark::TEMPLATE
};

/// P = WORK_STEPS + PLACED_STEP × k dependent steps, k = (the address of
/// P's own code / 1 KiB) mod 4: wherever the harness places the loop, the
/// address is read where the code runs. Over all placements k is uniform,
/// so the mean cost is that of WORK_STEPS + 1.5 × PLACED_STEP steps.
fn run_placed(ctx: &mut Ctx) -> Result<(), String> {
    let forced = ctx.integer(POSITION.key)?;
    let mut x = 1u64;
    let mut positions = [0u64; 4];
    let m = ctx.measure(|| {
        let k = forced.unwrap_or_else(|| (code_address() >> 10) & 3);
        positions[k as usize] += 1;
        let mut v = std::hint::black_box(x);
        for _ in 0..std::hint::black_box(WORK_STEPS + PLACED_STEP * k) {
            v = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        x = v;
    });
    std::hint::black_box(x);
    let mut r = ctx.measured_result(None, m);
    r.param(
        "position",
        forced.map_or("from the code's address".into(), |k| k.to_string()),
    );
    r.extra
        .insert("positions_run".into(), serde_json::json!(positions));
    ctx.push(r);
    Ok(())
}

/// The address of the instruction that reads it: RIP-relative, so a copy
/// of the code elsewhere reads its own.
#[inline(always)]
fn code_address() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let a: u64;
        // SAFETY: lea reads no memory; it computes the next instruction's address.
        unsafe { std::arch::asm!("lea {a}, [rip]", a = out(reg) a, options(nomem, nostack)) };
        a
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// Dependent steps `testing.locked` does while it holds the lock: about
/// 20 µs, long beside the lock's own two system calls.
pub const LOCKED_STEPS: u64 = 40 * WORK_STEPS;

/// The file `testing.locked` locks: in the run's scratch folder, shared by
/// every copy of one run (each copy's own folder is inside it).
pub const LOCK_FILE: &str = "testing.locked.lock";

pub static LOCKED: Benchmark = Benchmark {
    id: "testing.locked",
    area: "testing",
    unit: Unit::Nanoseconds,
    description: "test only: an exclusive flock on a file every copy of the run shares, held for 16 000 dependent steps: simultaneous copies serialize on it",
    default: false,
    hidden: true,
    adapter: "posix",
    run: run_locked,
    cold: Cold::NotMeaningful(
        "test only: a lock the copies share is the experiment, not the caches",
    ),
    ..Benchmark::TEMPLATE
};

/// One operation of `testing.locked`: flock(LOCK_EX) on `fd`,
/// [`LOCKED_STEPS`] dependent steps on `x`, flock(LOCK_UN). False when
/// the lock was refused (nothing done). Public so that a measurement check
/// can time the very same operation as its ground truth.
#[inline(always)]
pub fn hold_lock(fd: std::os::fd::RawFd, x: &mut u64) -> bool {
    // SAFETY: flock on a descriptor the caller keeps open.
    if unsafe { libc::flock(fd, libc::LOCK_EX) } != 0 {
        return false;
    }
    let mut v = std::hint::black_box(*x);
    for _ in 0..std::hint::black_box(LOCKED_STEPS) {
        v = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    *x = v;
    // SAFETY: as above; releases the lock taken above.
    unsafe { libc::flock(fd, libc::LOCK_UN) };
    true
}

/// P = [`hold_lock`] on a file in the run's scratch folder: N copies can
/// only take turns.
fn run_locked(ctx: &mut Ctx) -> Result<(), String> {
    let shared = ctx.scratch_dir().parent().unwrap_or(ctx.scratch_dir());
    let path = shared.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let (mut held, mut refused) = (0u64, 0u64);
    let mut x = 1u64;
    let m = ctx.measure(|| {
        if hold_lock(fd, &mut x) {
            held += 1;
        } else {
            refused += 1;
        }
    });
    std::hint::black_box(x);
    let mut r = ctx.measured_result(None, m);
    r.param("steps", LOCKED_STEPS)
        .param("lock_file", path.display().to_string());
    r.add_evidence(
        "every operation held the lock",
        format!("{held} of {held}"),
        format!("{held} held, {refused} refused"),
        refused == 0 && held > 0,
    );
    ctx.push(r);
    Ok(())
}

pub static BENCHMARKS: &[&Benchmark] = &[&CRASH, &HANG, &WORK, &OFFSET, &PLACED, &LOCKED];
