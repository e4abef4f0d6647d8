//! P = a signal to oneself: tgkill(2) to this thread → the kernel delivers
//! it on the way out of the call → the handler runs → sigreturn. Hot (tight
//! loop) and cold (caches and branch history disturbed before each), side
//! by side as the Go! report gives exception latency.

use super::adapter::{self, Handler};
use super::check::exact_count;
use crate::shared::CpuWait;
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static SELF: Benchmark = Benchmark {
    id: "signal.self",
    area: "signal",
    unit: Unit::Nanoseconds,
    description: "signal to oneself: tgkill(self, SIGUSR1) → handler → return",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_self,
    ..Benchmark::TEMPLATE
};

fn run_self(ctx: &mut Ctx) -> Result<(), String> {
    let _saved = adapter::install(libc::SIGUSR1, Handler::Counting)?;
    let (pid, tid) = (adapter::getpid(), adapter::gettid());
    adapter::reset_handled();
    let (mut sent, mut failed) = (0u64, 0u64);
    let wait = CpuWait::start();
    let m = ctx.measure(|| {
        if adapter::send(pid, tid, libc::SIGUSR1) {
            sent += 1;
        } else {
            failed += 1;
        }
    });
    let ran = adapter::handled();
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    r.param("signal", "SIGUSR1");
    r.param("send", "tgkill to the calling thread");
    exact_count(&mut r, "the handler ran once per signal sent", sent, ran);
    r.add_evidence("no tgkill failed", "0", failed.to_string(), failed == 0);
    ctx.push(r);
    Ok(())
}
