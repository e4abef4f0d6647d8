//! The assumptions every `proc` benchmark checks, kept apart so the tests
//! can show that a failed check withholds the number.

use super::adapter::Exit;
use yamba_core::harness::Plan;
use yamba_core::{BenchResult, Ctx};

/// What became of the children (or threads) a benchmark created.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub created: u64,
    pub reaped: u64,
    /// Children that ended with the exit status only running them yields.
    pub ran: u64,
    /// The first thing that went wrong, if anything did.
    pub error: Option<String>,
}

impl Tally {
    /// Counts one child whose wait returned `exit`, expected to be `Code(want)`.
    pub fn record(&mut self, exit: Result<Exit, String>, want: i32) {
        match exit {
            Ok(e) => {
                self.reaped += 1;
                if e == Exit::Code(want) {
                    self.ran += 1;
                } else if self.error.is_none() {
                    self.error = Some(format!("a child ended with {e:?}, not exit status {want}"));
                }
            }
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    pub fn fail(&mut self, e: String) {
        self.error.get_or_insert(e);
    }

    /// Gating evidence: every child created was reaped, and every one ran
    /// to its own exit with status `want` (`what` says what proved it).
    pub fn add_evidence(&self, r: &mut BenchResult, want: i32, what: &str) {
        r.add_evidence(
            "every child created was reaped",
            format!("{} reaped", self.created),
            format!("{} of {} reaped", self.reaped, self.created),
            self.created > 0 && self.reaped == self.created,
        );
        r.add_evidence(
            format!("every child really ran ({what})"),
            format!("{} with exit status {want}", self.created),
            format!("{} did", self.ran),
            self.created > 0 && self.ran == self.created,
        );
        if let Some(e) = &self.error {
            r.add_evidence("no creation or wait failed", "none", e.clone(), false);
        }
    }
}

/// A plan for a tail: sample for the whole budget (no early stop on
/// precision), with enough observations for p99 to mean something.
pub fn tail_plan(ctx: &Ctx) -> Plan {
    let mut p = ctx.plan();
    p.target_precision = 0.0;
    p.min_observations = if ctx.quick() { 30 } else { 300 };
    p
}

/// Puts median, p99 and max (and p99/median) in `extra`, where a reader
/// looking for the tail finds it.
pub fn add_tail(r: &mut BenchResult) {
    if let Some(s) = r.summary.clone() {
        r.extra.insert("median_ns".into(), s.median.into());
        r.extra.insert("p99_ns".into(), s.p99.into());
        r.extra.insert("max_ns".into(), s.max.into());
        if s.median > 0.0 {
            r.extra
                .insert("p99_over_median".into(), (s.p99 / s.median).into());
        }
    }
}

/// Reads a numeric `--set key=value`, or `default` when absent.
pub fn setting_f64(ctx: &Ctx, key: &str, default: f64) -> Result<f64, String> {
    match ctx.setting(key) {
        None => Ok(default),
        Some(v) => v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("--set {key}={v}: expected a non-negative number")),
    }
}

/// Time the calling thread has spent runnable but waiting for a CPU, in
/// ns (the run_delay field of /proc/thread-self/schedstat).
fn run_queue_wait_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().nth(1)?.parse().ok()
}

/// Watches how long the measuring thread waited for a CPU while others'
/// work held it: on a busy machine a wake-up (after fork, wait, a signal,
/// an eviction sweep) may queue behind other tasks, and then the number
/// measures the scheduler's queue rather than the operation. Children's
/// own waits are not covered. Also used by the `signal` area.
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
            r.warn("cannot tell whether the measurement waited for a CPU (no /proc/thread-self/schedstat)");
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

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> BenchResult {
        serde_json::from_value(serde_json::json!({
            "id": "t", "benchmark": "t", "area": "proc", "description": "",
            "unit": "ns", "mode": "hot", "status": "ok", "adapter": "test"
        }))
        .unwrap()
    }

    /// Ground truth for the CPU-wait check: a thread sharing our CPU with
    /// a busy hog waits for it a large share of the time.
    #[test]
    fn cpu_wait_sees_a_hog_on_our_cpu() {
        let cpu = yamba_core::affinity::default_cpu();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let hog = std::thread::spawn(move || {
            yamba_core::affinity::pin_current_thread(cpu).unwrap();
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let share = std::thread::spawn(move || {
            yamba_core::affinity::pin_current_thread(cpu).unwrap();
            let w = CpuWait::start();
            let t0 = std::time::Instant::now();
            while t0.elapsed() < std::time::Duration::from_millis(300) {
                std::hint::spin_loop();
            }
            let mut r = blank();
            w.record(&mut r);
            r.extra["run_queue_wait_share"].as_f64().unwrap()
        })
        .join()
        .unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        hog.join().unwrap();
        assert!(share > 0.2, "waited only {share} of the time beside a hog");
    }

    #[test]
    fn tally_counts_wrong_exits_and_failures() {
        let mut t = Tally {
            created: 3,
            ..Tally::default()
        };
        t.record(Ok(Exit::Code(7)), 7);
        t.record(Ok(Exit::Code(127)), 7);
        t.record(Err("waitpid failed".into()), 7);
        assert_eq!((t.reaped, t.ran), (2, 1));
        let mut r = blank();
        t.add_evidence(&mut r, 7, "test");
        r.apply_evidence();
        assert_eq!(r.status, yamba_core::Status::Withheld);
        assert!(r.evidence.iter().filter(|e| !e.ok).count() == 3);
    }
}
