//! `yamba run --copies N`: every block of a benchmark also runs as N
//! simultaneous copies, each a process pinned to a CPU of its own, started
//! together behind a barrier ([`spawn`]). Each copy measures the benchmark
//! as one process would; for every result the N copies' values become one
//! result, `<id>.copiesN`, whose observations are the copies' values (its
//! value per block: their median), with where each copy ran and, once the
//! run's one-copy blocks are pooled beside it, the scaling: the N copies'
//! total throughput over one copy's (N: perfect, 1: serialized).
//! The one-copy blocks are the run's ordinary blocks, each followed by its
//! N-copy block, so drift between them hits both alike (docs/copies.md).

mod combine;
mod spawn;

pub use combine::attach_scaling;
pub use spawn::serve_copy;

use crate::bench::{Benchmark, Session};
use crate::cpustates::CpuTimes;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;
use yamba_results::results::{BenchResult, Mode, Status};

/// A process's part in a block of simultaneous copies, as its session
/// hands it over: which copy it is and the barrier's two descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyRole {
    /// 0-based.
    pub index: usize,
    pub count: usize,
    /// The write end of the pipe a copy writes one byte to when ready.
    pub ready_fd: i32,
    /// The read end of the pipe whose end releases every copy at once.
    pub start_fd: i32,
}

/// What a copy says of itself beside each result (`extra.copy` on the
/// way to its parent, which takes it off): where it ran and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyReport {
    pub index: usize,
    /// The CPU it was pinned to.
    pub cpu: Option<usize>,
    /// The CPU it ran on when released, and when it had measured.
    pub cpu_at_start: Option<usize>,
    pub cpu_at_end: Option<usize>,
    /// CLOCK_MONOTONIC when it was released and when it had measured.
    pub started_ns: u64,
    pub finished_ns: u64,
}

const REPORT_KEY: &str = "copy";

impl CopyReport {
    fn attach(&self, r: &mut BenchResult) {
        if let Ok(v) = serde_json::to_value(self) {
            r.extra.insert(REPORT_KEY.into(), v);
        }
    }

    fn take(r: &mut BenchResult) -> Option<CopyReport> {
        serde_json::from_value(r.extra.remove(REPORT_KEY)?).ok()
    }
}

/// The id of a result measured as `count` simultaneous copies.
pub fn copies_id(id: &str, count: usize) -> String {
    format!("{id}.copies{count}")
}

/// The CPUs `count` copies run on, one each: `first` (the run's CPU), then
/// the other `usable` CPUs from the last down (CPU 0, which usually takes
/// more of the machine's interrupts, last). Refused, in one line, when
/// pinning is off or fewer CPUs are allowed than copies: copies sharing a
/// CPU would measure the scheduler's time slicing, and their scaling would
/// read as a resource they serialize on.
pub fn copy_cpus(
    count: usize,
    first: Option<usize>,
    usable: &[usize],
) -> Result<Vec<usize>, String> {
    let Some(first) = first else {
        return Err(format!(
            "--copies {count}: each copy is pinned to a CPU of its own; drop --no-pin"
        ));
    };
    if count > usable.len() {
        return Err(format!(
            "--copies {count}: only {} CPU(s) allowed ({}); copies sharing a CPU would measure its time slicing",
            usable.len(),
            usable
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut cpus = vec![first];
    cpus.extend(usable.iter().rev().copied().filter(|&c| c != first));
    cpus.truncate(count);
    Ok(cpus)
}

/// The count `--copies all` means: every CPU this process may run on.
pub fn all_cpus() -> usize {
    crate::affinity::usable_cpus().len().max(1)
}

/// Why `bench` is not run as copies in `mode` here, as the skipped
/// result's reason; None when it is (or when its one-copy block already
/// says why it does not run at all).
fn not_as_copies(session: &Session, bench: &Benchmark, mode: Mode) -> Option<Option<String>> {
    if !bench.supports(mode) || bench.runnable(&session.machine, &session.config).is_err() {
        return Some(None);
    }
    bench
        .one_copy_only
        .map(|why| Some(format!("cannot run as simultaneous copies: {why}")))
}

/// One block of `session.config.copies` simultaneous copies of `bench` in
/// `mode`: one result per result the benchmark gives, `<id>.copiesN`. A
/// benchmark that cannot run as copies gives one skipped result saying
/// why; one that does not run here at all, none (its one-copy block says
/// why).
pub fn run_copies(
    session: &Session,
    bench: &'static Benchmark,
    mode: Mode,
    scratch_root: &Path,
) -> Vec<BenchResult> {
    let count = session.config.copies;
    let unmeasured = |status: Status, why: String| {
        let mut r = crate::runner::failed(session, bench, mode, why);
        r.id = copies_id(bench.id, count);
        r.status = status;
        r.params.insert("copies".into(), count.into());
        vec![r]
    };
    match not_as_copies(session, bench, mode) {
        Some(None) => return Vec::new(),
        Some(Some(why)) => return unmeasured(Status::Skipped, why),
        None => {}
    }
    let cpus = match copy_cpus(count, session.cpu, crate::affinity::usable_cpus()) {
        Ok(c) => c,
        Err(why) => return unmeasured(Status::Failed, why),
    };
    let scratches: Vec<_> = (0..count)
        .map(|i| scratch_root.join(format!("{}-{}-copy{}", bench.id, mode.as_str(), i + 1)))
        .collect();
    for s in &scratches {
        if let Err(e) = std::fs::create_dir_all(s) {
            let why = format!("cannot create scratch directory {}: {e}", s.display());
            return unmeasured(Status::Failed, why);
        }
    }
    let timeout = Duration::from_secs(session.config.timeout_s.unwrap_or(bench.timeout_s));
    let before = CpuTimes::read().ok();
    let procs = spawn::run_together(session, bench, mode, &scratches, &cpus, timeout);
    let after = CpuTimes::read().ok();
    for s in &scratches {
        let _ = std::fs::remove_dir_all(s);
        let _ = std::fs::remove_dir_all(spawn::again_dir(s));
    }
    let cpu_states = match (before, after) {
        (Some(b), Some(a)) => Some(b.states_until(&a)),
        _ => None,
    };
    combine::combine(session, bench, mode, &cpus, procs, cpu_states)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_go_to_distinct_cpus_the_runs_first_and_cpu_0_last() {
        assert_eq!(copy_cpus(1, Some(3), &[0, 1, 2, 3]).unwrap(), vec![3]);
        assert_eq!(copy_cpus(3, Some(1), &[0, 1, 2, 3]).unwrap(), vec![1, 3, 2]);
        assert_eq!(
            copy_cpus(4, Some(3), &[0, 1, 2, 3]).unwrap(),
            vec![3, 2, 1, 0]
        );
        let too_many = copy_cpus(3, Some(1), &[0, 1]).unwrap_err();
        assert!(
            too_many.starts_with("--copies 3: only 2 CPU(s) allowed (0, 1)"),
            "{too_many}"
        );
        let unpinned = copy_cpus(2, None, &[0, 1]).unwrap_err();
        assert!(unpinned.contains("--no-pin"), "{unpinned}");
        assert!(!unpinned.contains('\n') && !too_many.contains('\n'));
    }

    /// Reports the CPU it runs on as its only observation: each copy's
    /// value is then where it ran. It lasts 0.3 s, so that the copies'
    /// start spread (a few ms when a test runs at idle priority beside
    /// builds) is well within a tenth of it.
    static WHERE: Benchmark = Benchmark {
        id: "test.where",
        area: "test",
        unit: crate::Unit::Count,
        description: "the CPU this process runs on",
        run: |ctx| {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let mut r = ctx.result(None);
            let cpu = crate::affinity::current_cpu().ok_or("no current CPU")?;
            r.set_observations(vec![cpu as f64]);
            ctx.push(r);
            Ok(())
        },
        ..Benchmark::TEMPLATE
    };

    static ALONE: Benchmark = Benchmark {
        id: "test.alone",
        area: "test",
        description: "cannot run as copies",
        one_copy_only: Some("it needs the machine to itself"),
        run: |_| panic!("a benchmark that cannot run as copies must not run as copies"),
        ..Benchmark::TEMPLATE
    };

    /// Forked copies (a library caller's, no executable): each ran where
    /// the block says, on distinct CPUs, its value its own CPU.
    #[test]
    fn forked_copies_run_where_the_block_says() {
        if crate::affinity::usable_cpus().len() < 2 {
            yamba_testkit::skip!("one usable CPU: two copies need two");
        }
        let session = Session::prepare(crate::RunConfig {
            copies: 2,
            ..crate::RunConfig::quick()
        });
        let dir = tempfile::tempdir().unwrap();
        let rs = run_copies(&session, &WHERE, Mode::Hot, dir.path());
        assert_eq!(rs.len(), 1, "{rs:#?}");
        let r = &rs[0];
        // Placement is what this test is about; whether the copies started
        // within 10% of their measuring time of each other is a check of
        // timing, which tests running beside this one can disturb.
        let together = "the copies measured together";
        let failed: Vec<&str> = r
            .evidence
            .iter()
            .filter(|e| !e.ok)
            .map(|e| e.check.as_str())
            .collect();
        assert!(
            r.id == "test.where.copies2"
                && (r.status == Status::Ok
                    || (r.status == Status::Withheld
                        && failed.iter().all(|c| c.starts_with(together)))),
            "{r:#?}"
        );
        let block = &r.copies.as_ref().unwrap().blocks[0];
        assert_ne!(block.cpus[0], block.cpus[1]);
        assert_eq!(
            block.cpus[0],
            session.cpu.unwrap(),
            "copy 1 on the run's CPU"
        );
        let seen: Vec<Option<f64>> = block.cpus.iter().map(|&c| Some(c as f64)).collect();
        assert_eq!(block.values, seen);
        assert!(
            r.evidence
                .iter()
                .all(|e| e.ok || e.check.starts_with(together)),
            "{:#?}",
            r.evidence
        );

        let skipped = run_copies(&session, &ALONE, Mode::Hot, dir.path());
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].status, Status::Skipped);
        assert_eq!(
            skipped[0].reason.as_deref(),
            Some("cannot run as simultaneous copies: it needs the machine to itself")
        );
    }

    /// A busy copy's folder has its measuring folder's parent: what the
    /// copies share there, the busy copy shares too.
    #[test]
    fn a_busy_copy_runs_beside_its_scratch_folder() {
        let s = Path::new("/run/yamba-1/testing.locked-hot-copy2");
        let again = spawn::again_dir(s);
        assert_eq!(
            again,
            Path::new("/run/yamba-1/testing.locked-hot-copy2-again")
        );
        assert_eq!(again.parent(), s.parent());
    }

    #[test]
    fn a_copy_report_travels_in_extra_and_is_taken_off() {
        let mut r = BenchResult::new("a.b", "a.b", "a", crate::Unit::Nanoseconds, Mode::Hot, "t");
        let report = CopyReport {
            index: 1,
            cpu: Some(0),
            cpu_at_start: Some(0),
            cpu_at_end: Some(0),
            started_ns: 5,
            finished_ns: 9,
        };
        report.attach(&mut r);
        assert_eq!(CopyReport::take(&mut r), Some(report));
        assert!(r.extra.is_empty());
    }
}
