//! The assumptions every `proc` benchmark checks, kept apart so the tests
//! can show that a failed check withholds the number.

use super::adapter::Exit;
use yamba_core::harness::{Placing, Plan};
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
    // An amount, but a quick pass's 30 make p99 the maximum: a precise
    // block takes 100 at effort 1 (p99 then has one observation above
    // it; 300 pooled over 3 blocks), 300 in one block.
    p.min_observations = if ctx.quick() { 30 } else { ctx.scaled(100) };
    p
}

/// Why a benchmark that forks keeps its code where the build put it: code
/// placement's copies live in a mapping of up to 1 MiB, written whole, and
/// fork copies every page table entry of it (and exit frees them). On an
/// AMD EPYC (Zen 3) guest `proc.fork.light` measured 218–222 µs placed and
/// 166 µs not, in three interleaved rounds: the window's 256 pages were a
/// quarter of the result. The code placement would move is two calls into
/// libc around a kernel operation of ~100 µs, so nothing is lost.
pub const FORK_COPIES_PLACEMENT: &str = "one placement by design: fork copies the whole address space, and code placement's 1 MiB window of copies would be part of it (+30% on proc.fork.light on an AMD EPYC guest)";

/// [`tail_plan`] for an operation that forks: the measured code stays where
/// the build put it ([`FORK_COPIES_PLACEMENT`]).
pub fn forking_plan(ctx: &Ctx) -> Plan {
    let mut p = tail_plan(ctx);
    p.placement = Placing::Fixed(FORK_COPIES_PLACEMENT);
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
