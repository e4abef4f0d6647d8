//! P = installing a signal handler: sigaction(2) with a prepared action.
//! Afterwards the installed handler is read back and one signal is sent,
//! so the measured calls are known to have installed a working handler.

use super::adapter::{self, Handler};
use super::check::exact_count;
use crate::shared::CpuWait;
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static SIGACTION: Benchmark = Benchmark {
    id: "signal.sigaction",
    area: "signal",
    unit: Unit::Nanoseconds,
    description: "install a signal handler: sigaction(2) for SIGUSR2",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_sigaction,
    ..Benchmark::TEMPLATE
};

fn run_sigaction(ctx: &mut Ctx) -> Result<(), String> {
    let _saved = adapter::install(libc::SIGUSR2, Handler::Counting)?;
    let act = adapter::action(Handler::Counting);
    let (mut calls, mut failed) = (0u64, 0u64);
    let wait = CpuWait::start();
    let m = ctx.measure(|| {
        calls += 1;
        if !adapter::sigaction(libc::SIGUSR2, &act) {
            failed += 1;
        }
    });
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    r.add_evidence(
        "every sigaction call succeeded",
        format!("0 failures in {calls}"),
        format!("{failed}"),
        calls > 0 && failed == 0,
    );
    let installed = adapter::is_installed(libc::SIGUSR2, Handler::Counting);
    adapter::reset_handled();
    let sent = adapter::send(adapter::getpid(), adapter::gettid(), libc::SIGUSR2);
    r.add_evidence(
        "the handler is installed (read back)",
        "ours",
        if installed { "ours" } else { "another" },
        installed,
    );
    exact_count(
        &mut r,
        "a signal sent afterwards ran the handler once",
        u64::from(sent),
        adapter::handled(),
    );
    ctx.push(r);
    Ok(())
}
