//! Whether the measuring thread waited for a CPU: an informational check
//! the `proc` and `signal` benchmarks add to their results.

use yamba_core::BenchResult;

/// Time the calling thread has spent runnable but waiting for a CPU, in
/// ns.
fn run_queue_wait_ns() -> Option<u64> {
    yamba_os::sched::sched_times(None).map(|t| t.waited_ns)
}

/// Watches how long the measuring thread waited for a CPU while others'
/// work held it: on a busy machine a wake-up (after fork, wait, a signal,
/// an eviction sweep) may queue behind other tasks, and then the number
/// measures the scheduler's queue rather than the operation. Children's
/// own waits are not covered.
pub struct CpuWait {
    started: std::time::Instant,
    waited: Option<u64>,
}

impl CpuWait {
    pub fn start() -> CpuWait {
        CpuWait {
            started: std::time::Instant::now(),
            waited: run_queue_wait_ns(),
        }
    }

    /// Adds the informational check (and, in cold mode, a warning when it fails).
    pub fn record(&self, r: &mut BenchResult) {
        let wall = self.started.elapsed().as_nanos() as f64;
        let (Some(w0), Some(w1)) = (self.waited, run_queue_wait_ns()) else {
            r.warn("cannot tell whether the measurement waited for a CPU (the kernel keeps no scheduling statistics)");
            return;
        };
        let share = w1.saturating_sub(w0) as f64 / wall.max(1.0);
        r.extra.insert("run_queue_wait_share".into(), share.into());
        r.add_note_evidence(
            "the measuring thread seldom waited for a CPU (others' load)",
            "< 5% of the measurement's wall time runnable but not running",
            format!("{:.1}% of {:.2} s", share * 100.0, wall / 1e9),
            share < 0.05,
        );
        // In cold mode each operation follows a long eviction sweep, so a
        // wait lands inside the timed operation and moves the median too;
        // in hot mode it only lengthens the tail (the runner's "busy" note).
        if share >= 0.05 && r.mode == yamba_core::Mode::Cold {
            r.warn(format!(
                "waited for a CPU {:.0}% of the time: cold numbers include other tasks' time slices",
                share * 100.0
            ));
        }
    }
}
