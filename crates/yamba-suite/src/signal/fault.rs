//! P = a memory-protection fault handled in user space, the analogue of
//! the Go! report's exception latency: a store to a PROT_NONE page →
//! SIGSEGV → the handler makes the page accessible and returns → the store
//! restarts and succeeds. Timed one at a time (each needs the page revoked
//! again, untimed). The handler's own mprotect is measured alone too, so
//! the fault-and-signal part can be read off (`extra`).

use super::adapter::{self, Handler, ProtPage};
use super::check::exact_count;
use crate::shared::CpuWait;
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static FAULT: Benchmark = Benchmark {
    id: "signal.fault",
    area: "signal",
    unit: Unit::Nanoseconds,
    description: "protection fault: store to a PROT_NONE page → SIGSEGV handler mprotects it → store restarts",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_fault,
    ..Benchmark::TEMPLATE
};

fn run_fault(ctx: &mut Ctx) -> Result<(), String> {
    let page = ProtPage::new(ctx.machine().page_size as usize)?;
    let saved = adapter::install(libc::SIGSEGV, Handler::Fault)?;
    let (mut touches, mut revoke_failed) = (0u64, 0u64);
    let wait = CpuWait::start();
    let m = ctx.measure_single(
        || {
            if !page.revoke() {
                revoke_failed += 1;
            }
        },
        || {
            touches += 1;
            page.store(touches);
        },
    );
    let faults = adapter::faults();
    drop(saved);
    let stored = page.load();
    // The handler's mprotect alone, on a revoked page as in the handler.
    let mut grant_failed = 0u64;
    let mp = ctx.measure_single(
        || {
            page.revoke();
        },
        || {
            if !page.grant() {
                grant_failed += 1;
            }
        },
    );
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    r.param("page_bytes", ctx.machine().page_size);
    r.param(
        "handler",
        "SA_SIGINFO; checks si_addr, mprotect(READ|WRITE), returns",
    );
    exact_count(
        &mut r,
        "one handled fault per touch of the revoked page",
        touches,
        faults,
    );
    r.add_evidence(
        "every store completed after its fault (last value reads back)",
        touches.to_string(),
        stored.to_string(),
        stored == touches,
    );
    r.add_evidence(
        "every revoke and grant succeeded",
        "0 failures",
        format!("{} failures", revoke_failed + grant_failed),
        revoke_failed + grant_failed == 0,
    );
    if let (Some(f), Some(g)) = (r.median(), mp.summary().map(|s| s.median)) {
        r.extra.insert("handler_mprotect_ns".into(), g.into());
        r.extra
            .insert("fault_signal_return_ns".into(), (f - g).into());
    }
    ctx.push(r);
    Ok(())
}
