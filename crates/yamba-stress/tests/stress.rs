//! `yamba stress` against planted defects and ground truth: a worker that
//! forgets to close one fd in N is caught and the fd named; kernel memory
//! left in System V message queues is caught at its size; a wrong
//! expectation in the error table is reported with a seed whose replay
//! gives the same report; a crashing and a hanging call are reported and
//! the tests go on; a crashing worker is reported with its operation; a
//! stress of a fixed number of operations leaves fds, processes and kernel
//! memory at their baseline. The planted kernel memory's size, the
//! timeline's sampling and what a CPU-bound stressor does to a measurement
//! are measurement checks (measure_stress.rs).
//!
//! The tests run one at a time: they count this process's fds and the
//! machine's memory.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use yamba_core::{BenchResult, Status};
use yamba_stress::churn::{Churned, Kind};
use yamba_stress::errors::FindingKind;
use yamba_stress::{Plant, Replay, StressConfig, StressOutcome};

fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn config(dir: &std::path::Path) -> StressConfig {
    StressConfig {
        scratch_parent: Some(dir.to_path_buf()),
        quick: true,
        workers: 2,
        ..StressConfig::default()
    }
}

fn find<'a>(o: &'a StressOutcome, id: &str) -> &'a BenchResult {
    o.results
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no result {id}: {:?}", ids(o)))
}

fn ids(o: &StressOutcome) -> Vec<(String, Status)> {
    o.results.iter().map(|r| (r.id.clone(), r.status)).collect()
}

fn run(c: &StressConfig) -> StressOutcome {
    let o = yamba_stress::run(c).expect("stress runs");
    eprintln!("{}", o.text());
    o
}

/// Every churn invariant and the cleanup held.
fn assert_invariants_held(o: &StressOutcome) {
    for name in [
        "fds",
        "threads",
        "processes",
        "mappings",
        "files",
        "signals",
        "data",
        "workers",
        "cleanup",
    ] {
        let r = find(o, &format!("stress.invariant.{name}"));
        assert_eq!(r.status, Status::Ok, "{name}: {:?}", r.reason);
    }
}

#[test]
fn a_planted_fd_leak_is_detected_and_named() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let every = 40;
    let c = StressConfig {
        seed: Some(7),
        ops: Some(3000),
        workers: 1,
        stressors: vec![Kind::Eventfd, Kind::Pipe],
        error_tests: false,
        plant: Plant {
            leak: Some((Kind::Eventfd, every)),
            ..Plant::default()
        },
        ..config(dir.path())
    };
    let o = run(&c);
    let fds = find(&o, "stress.invariant.fds");
    assert_eq!(fds.status, Status::Failed);
    assert_eq!(o.exit_code(), 1);
    // Ground truth: the worker destroyed D eventfds and forgot every 40th.
    let destroyed = find(&o, "stress.churn.eventfd").params["destroyed"]
        .as_u64()
        .unwrap();
    let planted = destroyed / every;
    assert!(planted >= 5, "too few destructions to test: {destroyed}");
    let leaks: Vec<&(String, usize, u64, String)> = o
        .summary
        .violations
        .iter()
        .filter(|v| v.0 == "fds")
        .collect();
    assert_eq!(leaks.len() as u64, planted, "{leaks:#?}");
    for (_, worker, _, detail) in &leaks {
        assert_eq!(*worker, 0);
        // Named: what the fd is, and the operation that should have closed it.
        assert!(
            detail.contains("anon_inode:[eventfd] (eventfd)")
                && detail.contains("(eventfd destroy) but still open"),
            "{detail}"
        );
    }
    assert!(o.text().contains("reproduce: yamba stress --seed 7"));
    // Everything else held, and the leaked fds died with the worker.
    for name in ["threads", "processes", "data", "workers", "cleanup"] {
        assert_eq!(
            find(&o, &format!("stress.invariant.{name}")).status,
            Status::Ok,
            "{name}"
        );
    }

    // The same run without the plant is clean.
    let clean = run(&StressConfig {
        plant: Plant::default(),
        ..c
    });
    assert_eq!(find(&clean, "stress.invariant.fds").status, Status::Ok);
    assert_eq!(clean.exit_code(), 0, "{:?}", ids(&clean));
}

#[test]
fn planted_mapping_and_file_leaks_are_detected() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    for (kind, invariant, says) in [
        (Kind::MmapAnon, "mappings", "left mapped: "),
        (
            Kind::File,
            "files",
            "file(s) left in the scratch directory: f",
        ),
    ] {
        let o = run(&StressConfig {
            seed: Some(8),
            ops: Some(1500),
            workers: 1,
            stressors: vec![kind, Kind::Pipe],
            error_tests: false,
            plant: Plant {
                leak: Some((kind, 20)),
                ..Plant::default()
            },
            ..config(dir.path())
        });
        let r = find(&o, &format!("stress.invariant.{invariant}"));
        assert_eq!(r.status, Status::Failed, "{invariant}");
        assert!(
            r.reason.as_deref().unwrap().contains(says),
            "{:?}",
            r.reason
        );
        assert_eq!(o.exit_code(), 1);
    }
}

#[test]
fn a_planted_wrong_error_code_is_reported_with_a_seed_that_replays_it() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let plant = Plant::parse("wrong-errno").unwrap();
    let c = StressConfig {
        seed: Some(1234),
        ops: Some(1500),
        stressors: vec![],
        plant,
        ..config(dir.path())
    };
    let o = run(&c);
    assert_eq!(o.exit_code(), 1);
    assert!(!o.findings.is_empty());
    // Only the planted entry is reported: the real table holds on this kernel.
    for f in &o.findings {
        assert_eq!(f.case, "close.bad_fd.PLANTED_WRONG", "{f:#?}");
        assert_eq!(f.kind, FindingKind::UnexpectedError);
        assert_eq!(
            (f.seed, f.expected.as_str(), f.got.as_str()),
            (1234, "EINVAL", "EBADF")
        );
        assert!(f.syscall.starts_with("close(fd=<"), "{}", f.syscall);
    }
    let r = find(&o, "stress.errors.fd");
    assert_eq!(r.status, Status::Failed);
    assert!(r
        .reason
        .as_deref()
        .unwrap()
        .contains("--seed 1234 --replay --call"));
    let total: u64 = o.findings.iter().map(|f| f.occurrences).sum();

    // Replaying the seed's sequence gives the same report.
    let replay = run(&StressConfig {
        replay: Some(Replay::Calls(1500)),
        ops: None,
        ..c.clone()
    });
    assert_eq!(replay.findings, o.findings);
    assert_eq!(
        replay.findings.iter().map(|f| f.occurrences).sum::<u64>(),
        total
    );
    // And one call alone replays its finding.
    let first = &o.findings[0];
    let one = run(&StressConfig {
        replay: Some(Replay::Call(first.call)),
        ops: None,
        ..c
    });
    assert_eq!(one.findings.len(), 1);
    assert_eq!(one.findings[0].key(), first.key());
    assert_eq!(one.findings[0].call, first.call);
}

#[test]
fn a_crashing_and_a_hanging_call_are_reported_and_the_tests_go_on() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let calls = 400;
    let o = run(&StressConfig {
        seed: Some(99),
        ops: Some(calls),
        stressors: vec![],
        hang_timeout: Duration::from_millis(500),
        plant: Plant::parse("crash-call,hang-call").unwrap(),
        ..config(dir.path())
    });
    let crash = o
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Crash)
        .expect("a crash reported");
    assert_eq!(crash.got, "killed by SIGSEGV");
    assert!(crash.syscall.starts_with("tgkill(") && crash.syscall.contains("sig=SIGSEGV"));
    let hang = o
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Hang)
        .expect("a hang reported");
    // Seen by the supervisor at the timeout or later (later on a loaded machine).
    let waited: f64 = hang
        .got
        .strip_prefix("no return after ")
        .and_then(|r| r.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{}", hang.got));
    assert!(waited >= 0.5, "{}", hang.got);
    // What the process was doing: blocked in its read, not kept from a CPU.
    assert!(hang.got.contains("(hang; asleep"), "{}", hang.got);
    assert!(!hang.got.contains("kept it from a CPU"), "{}", hang.got);
    // Its scheduling was read half-way and at the end, where the kernel
    // keeps schedstats.
    if std::path::Path::new("/proc/self/schedstat").exists() {
        assert!(hang.got.contains("; over the last "), "{}", hang.got);
    }
    assert!(hang
        .syscall
        .starts_with("read(fd=<empty blocking pipe read end>"));
    // The error tests went on after each: every call was made.
    assert_eq!(o.summary.error_calls, calls);
    assert!(o
        .findings
        .iter()
        .all(|f| f.case.ends_with("PLANTED_CRASH") || f.case.ends_with("PLANTED_HANG")));
    assert_eq!(find(&o, "stress.invariant.cleanup").status, Status::Ok);
}

#[test]
fn a_crashing_worker_is_reported_with_its_operation() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let o = run(&StressConfig {
        seed: Some(5),
        ops: Some(2000),
        error_tests: false,
        plant: Plant {
            crash_worker_at: Some(700),
            ..Plant::default()
        },
        ..config(dir.path())
    });
    let w = find(&o, "stress.invariant.workers");
    assert_eq!(w.status, Status::Failed);
    let why = w.reason.as_deref().unwrap();
    assert!(
        why.contains("worker 0 killed by SIGSEGV during operation #700"),
        "{why}"
    );
    // Worker 1 finished its operations; nothing of worker 0 was left running.
    assert!(w
        .evidence
        .iter()
        .any(|e| e.check.starts_with("worker 1") && e.ok));
    assert_eq!(find(&o, "stress.invariant.cleanup").status, Status::Ok);
    assert_eq!(o.exit_code(), 1);
}

/// Fds of this process (the test binary), by readlink.
fn own_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Processes whose parent is this process.
fn own_children() -> Vec<i32> {
    let me = std::process::id() as i32;
    yamba_stress::sys::processes(&[], None);
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| yamba_stress::sys::proc_stat(pid).is_some_and(|p| p.ppid == me))
        // The run's guardian (yamba_core::lifeline) lives as long as we do.
        .filter(|&pid| Some(pid) != yamba_core::lifeline::guardian_pid())
        .collect()
}

/// A fixed amount of work from a fixed seed (3000 operations per worker
/// and 3000 error-test calls), so every count asserted is one the work
/// guarantees, not one a time budget allows.
#[test]
fn a_stress_leaves_fds_processes_and_kernel_memory_at_baseline() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let fds = own_fds();
    assert!(own_children().is_empty());
    let o = run(&StressConfig {
        seed: Some(10),
        ops: Some(3000),
        ..config(dir.path())
    });
    assert_eq!(o.exit_code(), 0, "{:?}\n{}", ids(&o), o.text());
    assert_invariants_held(&o);
    // It did stress: every kind was created and destroyed many times.
    for k in Kind::default_set().into_iter().filter(|k| k.pooled()) {
        let r = find(&o, &format!("stress.churn.{}", k.name()));
        let created = r.params["created"].as_u64().unwrap();
        assert!(created >= 100, "{}: {created}", k.name());
        assert_eq!(r.params["destroyed"].as_u64().unwrap(), created);
    }
    assert!(o.summary.error_calls >= 1000, "{}", o.summary.error_calls);
    // Back to baseline, seen from outside the stress's own checks.
    assert_eq!(own_fds(), fds, "fds of the test process");
    assert!(own_children().is_empty(), "{:?}", own_children());
    let k = find(&o, "stress.invariant.kernel_memory");
    assert_eq!(k.status, Status::Ok, "{:?}", k.reason);
    let dev = k.extra["after_minus_baseline_bytes"].as_f64().unwrap();
    let tol = k.extra["tolerance_bytes"].as_f64().unwrap();
    assert!(
        dev <= tol,
        "kernel memory {dev} B above its baseline (tolerance {tol})"
    );
    // The results file is yamba's schema.
    let file = o.results_file(vec!["yamba".into(), "stress".into()]);
    let v = serde_json::to_value(&file).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/results.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn a_measurement_the_stress_ended_before_is_reported_not_dropped() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let o = run(&StressConfig {
        seed: Some(4),
        ops: Some(50),
        workers: 1,
        stressors: vec![Kind::Pipe],
        error_tests: false,
        measure: vec!["ipc.rtt.pipe".into()],
        ..config(dir.path())
    });
    let c = find(&o, "stress.cost.ipc.rtt.pipe.same_cpu");
    assert_eq!(c.status, Status::Failed);
    assert!(
        c.reason
            .as_deref()
            .unwrap()
            .starts_with("not measured under stress: the stress ended before"),
        "{:?}",
        c.reason
    );
    // A measurement is not an invariant: the run itself passed.
    assert_eq!(o.exit_code(), 0, "{:?}", ids(&o));
}
