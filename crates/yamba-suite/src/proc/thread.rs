//! P = pthread_create + pthread_join of a thread that only counts that it
//! ran: creating and destroying the lightest schedulable entity. Cold mode
//! (caches evicted and branch history disturbed before each) is the worst
//! case the Go! report pairs with the best.

use super::adapter;
use super::check::add_tail;
use crate::shared::CpuWait;
use std::sync::atomic::{AtomicU64, Ordering};
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static THREAD: Benchmark = Benchmark {
    id: "proc.thread",
    area: "proc",
    unit: Unit::Nanoseconds,
    description: "pthread_create + pthread_join of a thread that does nothing but count itself",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_thread,
    ..Benchmark::TEMPLATE
};

fn run_thread(ctx: &mut Ctx) -> Result<(), String> {
    let ran = AtomicU64::new(0);
    let mut created = 0u64;
    let mut error: Option<String> = None;
    let wait = CpuWait::start();
    let m = ctx.measure_single(
        || {},
        || {
            created += 1;
            if let Err(e) = adapter::thread_create_join(&ran) {
                error.get_or_insert(e);
            }
        },
    );
    let mut r = ctx.measured_result(None, m);
    wait.record(&mut r);
    let ran = ran.load(Ordering::SeqCst);
    r.add_evidence(
        "every thread created ran and was joined",
        format!("{created} ran"),
        format!("{ran} ran"),
        created > 0 && ran == created,
    );
    if let Some(e) = error {
        r.add_evidence("no create or join failed", "none", e, false);
    }
    add_tail(&mut r);
    ctx.push(r);
    Ok(())
}
