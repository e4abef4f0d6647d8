//! P = creating a process that runs something else, and reaping it:
//! vfork + _exit (the cheapest creation: no address space copied),
//! posix_spawn of a tiny program, and fork + exec of the same program.
//! The program is `/bin/true` (recorded with its size); its exit status 0
//! proves the exec happened, since a failed exec exits 127.

use super::adapter::{self, Program, VforkStack};
use super::check::{add_tail, forking_plan, tail_plan, Tally};
use crate::shared::CpuWait;
use yamba_core::cold::Evictor;
use yamba_core::harness::{measure_single, Plan};
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Machine, Mode, RunConfig, Unit};

/// Candidates for the tiny program, first found wins.
const TINY: &[&str] = &["/bin/true", "/usr/bin/true"];

fn tiny_program() -> Option<&'static str> {
    TINY.iter()
        .copied()
        .find(|p| std::path::Path::new(p).is_file())
}

fn needs_tiny(_: &Machine, _: &RunConfig) -> Result<(), String> {
    tiny_program()
        .map(|_| ())
        .ok_or_else(|| format!("needs a tiny program to run: none of {TINY:?} exists"))
}

pub static VFORK: Benchmark = Benchmark {
    id: "proc.vfork",
    area: "proc",
    unit: Unit::Nanoseconds,
    description: "vfork + _exit + wait (clone with CLONE_VM|CLONE_VFORK: no address space copy)",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_vfork,
    ..Benchmark::TEMPLATE
};

pub static SPAWN: Benchmark = Benchmark {
    id: "proc.posix_spawn",
    area: "proc",
    unit: Unit::Nanoseconds,
    description:
        "posix_spawn of /bin/true + wait (exec and run of a tiny dynamically linked program)",
    adapter: adapter::NAME,
    requires: needs_tiny,
    run: run_spawn,
    cold: Cold::Measured,
    ..Benchmark::TEMPLATE
};

pub static FORK_EXEC: Benchmark = Benchmark {
    id: "proc.fork_exec",
    area: "proc",
    unit: Unit::Nanoseconds,
    description: "fork + execve of /bin/true + wait",
    adapter: adapter::NAME,
    requires: needs_tiny,
    run: run_fork_exec,
    cold: Cold::NotMeaningful(
        "fork would copy the evictor's sweep buffer (2× the last-level cache, written) before the exec, as in proc.fork.light; proc.posix_spawn is the cold exec",
    ),
    ..Benchmark::TEMPLATE
};

/// Times `create` + wait one at a time over the budget with `plan`; every
/// child must exit with `want`.
fn measure_children<C: FnMut() -> Result<i32, String>>(
    ctx: &mut Ctx,
    plan: &Plan,
    want: i32,
    mut create: C,
) -> (yamba_core::Measured, Tally, CpuWait) {
    let mut evictor = (ctx.mode == Mode::Cold).then(|| Evictor::new(ctx.machine()));
    let mut tally = Tally::default();
    let wait = CpuWait::start();
    let m = measure_single(
        ctx.clock(),
        ctx.base_ns(),
        plan,
        evictor.as_mut(),
        || {},
        || {
            tally.created += 1;
            match create() {
                Ok(pid) => tally.record(adapter::wait(pid), want),
                Err(e) => tally.fail(e),
            }
        },
    );
    (m, tally, wait)
}

fn run_vfork(ctx: &mut Ctx) -> Result<(), String> {
    let mut stack = VforkStack::new();
    let (m, tally, wait) =
        measure_children(ctx, &tail_plan(ctx), 7, || adapter::vfork_exit(&mut stack));
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    tally.add_evidence(&mut r, 7, "exit status only the child returns");
    add_tail(&mut r);
    ctx.push(r);
    Ok(())
}

fn describe_program(r: &mut BenchResult, path: &str) {
    r.param("program", path);
    r.param(
        "program_bytes",
        std::fs::metadata(path).map(|m| m.len()).ok(),
    );
    r.param("environment", "empty");
}

/// posix_spawn shares the address space until the exec (vfork's way), so
/// its code may be placed; fork + exec copies it first ([`forking_plan`]).
fn run_spawn(ctx: &mut Ctx) -> Result<(), String> {
    run_program(ctx, &tail_plan(ctx), adapter::spawn)
}

fn run_fork_exec(ctx: &mut Ctx) -> Result<(), String> {
    run_program(ctx, &forking_plan(ctx), adapter::fork_exec)
}

/// Times `start` (posix_spawn, or fork + exec) running the tiny program,
/// with the same checks for both. Generic, not a fn pointer, so the timed
/// loop calls `start` directly.
fn run_program<S: Fn(&Program) -> Result<i32, String>>(
    ctx: &mut Ctx,
    plan: &Plan,
    start: S,
) -> Result<(), String> {
    let path = tiny_program().ok_or("no tiny program")?;
    let prog = Program::new(path)?;
    let (m, tally, wait) = measure_children(ctx, plan, 0, || start(&prog));
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    describe_program(&mut r, path);
    tally.add_evidence(&mut r, 0, "the program ran: a failed exec exits 127");
    add_tail(&mut r);
    ctx.push(r);
    Ok(())
}
