//! P = reading the clock.
//!
//! `cpu.base` is the seed's BASE: two consecutive timestamps, the cost of
//! measuring nothing. `cpu.clock_gettime` is the call most programs use,
//! served by the vDSO without entering the kernel when the clocksource allows.

use super::adapter;
use yamba_core::base::measure_base;
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static BASE: Benchmark = Benchmark {
    id: "cpu.base",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description:
        "BASE: two consecutive timestamps on the harness clock (the cost of measuring nothing)",
    adapter: "clock",
    run: run_base,
    cold: Cold::NotMeaningful(
        "BASE is the harness's own cost of reading the clock, subtracted from every timing, cold ones too: it has no operation to be cold",
    ),
    ..Benchmark::TEMPLATE
};

fn run_base(ctx: &mut Ctx) -> Result<(), String> {
    let b = measure_base(ctx.clock(), ctx.scaled(10_000));
    let mut r = ctx.result(None);
    r.set_observations(b.observations);
    r.param("clock", ctx.clock().info().kind);
    r.adapter = format!("{:?}", ctx.clock().kind()).to_lowercase();
    r.add_note_evidence(
        "distribution is narrow (most observations within 2× the minimum)",
        "> 50% of observations",
        format!("{:.1}%", b.share_within_2x_min * 100.0),
        b.share_within_2x_min > 0.5,
    );
    r.extra.insert("base_ns".into(), b.base_ns.into());
    r.extra
        .insert("share_within_2x_min".into(), b.share_within_2x_min.into());
    ctx.push(r);
    Ok(())
}

pub static CLOCK_GETTIME: Benchmark = Benchmark {
    id: "cpu.clock_gettime",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "clock_gettime(CLOCK_MONOTONIC) through libc and the vDSO",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_clock_gettime,
    ..Benchmark::TEMPLATE
};

fn clock_gettime_monotonic() -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts
}

fn run_clock_gettime(ctx: &mut Ctx) -> Result<(), String> {
    let m = ctx.measure(|| {
        std::hint::black_box(clock_gettime_monotonic());
    });
    let mut r = ctx.measured_result(None, m);
    let vdso = adapter::vdso_mapped();
    let source = ctx.machine().clocksource.clone().unwrap_or_default();
    let vdso_capable = matches!(
        source.as_str(),
        "tsc" | "kvm-clock" | "arch_sys_counter" | "hyperv_clocksource_tsc_page"
    );
    r.add_note_evidence(
        "served in user space by the vDSO (no system call)",
        "vDSO mapped and a vDSO-capable clocksource",
        format!(
            "vDSO {}, clocksource {source}",
            if vdso { "mapped" } else { "absent" }
        ),
        vdso && vdso_capable,
    );
    if !(vdso && vdso_capable) {
        r.warn(format!(
            "clock_gettime likely enters the kernel here (clocksource {source}): this measures a system call"
        ));
    }
    ctx.push(r);
    Ok(())
}
