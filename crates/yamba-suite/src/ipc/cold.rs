//! Best case and worst case for operations that involve a second party.
//!
//! Hot is the harness's loop method. Cold times one operation at a time
//! after the initiator evicted the caches and disturbed branch history, as
//! the harness does, and then yields the CPU once: the sweep takes longer
//! than a scheduler time slice, and without the yield the timed operation
//! would start at the end of a spent slice, so that on a busy machine the
//! scheduler hands the CPU to other tasks in the middle of it and their run
//! time is counted as the operation's. (The yield only lets such tasks run
//! first; their work leaves the caches no warmer.)

use super::adapter;
use yamba_core::cold::Evictor;
use yamba_core::harness::{self, Measured};
use yamba_core::{Ctx, Mode};

/// Measures `op` in the context's mode: loop method (hot) or single
/// operations after eviction and a yield (cold). Also returns the calling
/// thread's context switches (voluntary, involuntary) spent outside the
/// timed operations, in the preparation (the yields), so that evidence
/// counting switches per operation can leave them out.
pub fn measure<P: FnMut()>(ctx: &mut Ctx, op: P) -> (Measured, (u64, u64)) {
    match ctx.mode {
        Mode::Hot => (ctx.measure(op), (0, 0)),
        Mode::Cold => {
            let mut evictor = Evictor::new(ctx.machine());
            let plan = ctx.plan();
            let mut outside = (0u64, 0u64);
            let mut m = harness::measure_single(
                ctx.clock(),
                ctx.base_ns(),
                &plan,
                None,
                || {
                    let s0 = adapter::thread_switches();
                    evictor.evict();
                    adapter::sched_yield();
                    let s1 = adapter::thread_switches();
                    outside.0 += s1.0 - s0.0;
                    outside.1 += s1.1 - s0.1;
                },
                op,
            );
            // Single operations: evict, disturb branches, sched_yield, then time one.
            m.method.kind = yamba_core::MethodKind::Single;
            (m, outside)
        }
    }
}

/// Prepares the initiator for one cold operation outside the harness
/// (see the module comment); nothing in hot mode.
pub fn prepare(evictor: Option<&mut Evictor>) {
    if let Some(e) = evictor {
        e.evict();
        adapter::sched_yield();
    }
}
