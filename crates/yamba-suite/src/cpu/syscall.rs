//! P = a system call.
//!
//! `cpu.syscall.getppid` is the null system call: getppid does no work, and
//! is made with the raw instruction (adapter) so libc cannot cache or wrap
//! it. `cpu.syscall.read_devzero` is a cheap real one: a 1-byte read.

use super::adapter;
use yamba_core::{Benchmark, Ctx, Mode, Unit};

pub static GETPPID: Benchmark = Benchmark {
    id: "cpu.syscall.getppid",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "null system call: raw getppid(2), entering and leaving the kernel",
    modes: &[Mode::Hot, Mode::Cold],
    adapter: adapter::NAME,
    run: run_getppid,
    ..Benchmark::TEMPLATE
};

fn run_getppid(ctx: &mut Ctx) -> Result<(), String> {
    // SAFETY: getppid has no preconditions.
    let expected = unsafe { libc::getppid() } as i64;
    let mut wrong = 0u64;
    let mut calls = 0u64;
    let m = ctx.measure(|| {
        calls += 1;
        if adapter::syscall0(adapter::SYS_GETPPID) != expected {
            wrong += 1;
        }
    });
    let mut r = ctx.measured_result(None, m);
    r.add_evidence(
        "every raw call entered the kernel and returned the parent's pid",
        format!("{expected} from all {calls} calls"),
        format!("{} wrong", wrong),
        wrong == 0 && calls > 0,
    );
    ctx.push(r);
    Ok(())
}

pub static READ_DEVZERO: Benchmark = Benchmark {
    id: "cpu.syscall.read_devzero",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "cheap real system call: read(2) of 1 byte from /dev/zero",
    modes: &[Mode::Hot, Mode::Cold],
    adapter: "posix",
    run: run_read_devzero,
    ..Benchmark::TEMPLATE
};

fn run_read_devzero(ctx: &mut Ctx) -> Result<(), String> {
    let file =
        std::fs::File::open("/dev/zero").map_err(|e| format!("cannot open /dev/zero: {e}"))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let mut byte = [1u8; 1];
    let mut short = 0u64;
    let mut calls = 0u64;
    let m = ctx.measure(|| {
        calls += 1;
        // SAFETY: reading one byte into a valid one-byte buffer.
        if unsafe { libc::read(fd, byte.as_mut_ptr().cast(), 1) } != 1 {
            short += 1;
        }
    });
    let mut r = ctx.measured_result(None, m);
    r.add_evidence(
        "every read returned exactly one byte",
        format!("1 byte × {calls} reads"),
        format!("{short} short or failed"),
        short == 0 && calls > 0 && byte[0] == 0,
    );
    ctx.push(r);
    Ok(())
}
