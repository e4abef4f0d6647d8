//! A crashing and a hanging benchmark are reported as failed, and the rest
//! of the run completes; the results file round-trips.

use yamba_core::runner::{run_benchmarks, Quiet};
use yamba_core::{Benchmark, RunConfig, Session, Status, Unit};
use yamba_results::results::ResultsFile;

static CRASH: Benchmark = Benchmark {
    id: "t.crash",
    area: "t",
    description: "dies of SIGSEGV",
    run: |_| {
        // A real invalid access (not raise(): std's SIGSEGV handler would
        // return from a raised one). SAFETY: deliberately ends this child process.
        let v = unsafe { std::ptr::read_volatile(16 as *const u8) };
        Err(format!("survived reading address 16: {v}"))
    },
    ..Benchmark::TEMPLATE
};

static HANG: Benchmark = Benchmark {
    id: "t.hang",
    area: "t",
    description: "never returns",
    timeout_s: 1,
    run: |_| loop {
        std::thread::sleep(std::time::Duration::from_millis(100));
    },
    ..Benchmark::TEMPLATE
};

static PANIC: Benchmark = Benchmark {
    id: "t.panic",
    area: "t",
    description: "panics",
    run: |_| panic!("on purpose"),
    ..Benchmark::TEMPLATE
};

static ERR: Benchmark = Benchmark {
    id: "t.err",
    area: "t",
    description: "returns an error",
    run: |_| Err("no such device".into()),
    ..Benchmark::TEMPLATE
};

static NEEDS: Benchmark = Benchmark {
    id: "t.needs",
    area: "t",
    description: "needs something missing",
    requires: |_, _| Err("needs a flux capacitor".into()),
    ..Benchmark::TEMPLATE
};

static GOOD: Benchmark = Benchmark {
    id: "t.good",
    area: "t",
    unit: Unit::Nanoseconds,
    description: "a sum",
    run: |ctx| {
        let mut x = 0u64;
        let m = ctx.measure(|| x = std::hint::black_box(x + 1));
        let r = ctx.measured_result(None, m);
        ctx.push(r);
        Ok(())
    },
    ..Benchmark::TEMPLATE
};

/// The interrupt flag is process-wide: the test that raises it must not
/// run beside one that expects a whole run.
static INTERRUPT_FLAG: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn failures_are_isolated_and_the_run_goes_on() {
    let _flag = INTERRUPT_FLAG.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut config = RunConfig::quick();
    config.scratch_dir = Some(dir.path().to_path_buf());
    let session = Session::prepare(config);
    let benches: Vec<&'static Benchmark> = vec![&CRASH, &HANG, &PANIC, &ERR, &NEEDS, &GOOD];
    let results = run_benchmarks(&session, &benches, &mut Quiet);
    let by_id = |id: &str| results.iter().find(|r| r.id == id).unwrap();
    assert_eq!(results.len(), 6, "{results:#?}");

    let crash = by_id("t.crash");
    assert_eq!(crash.status, Status::Failed);
    assert!(
        crash.reason.as_ref().unwrap().contains("SIGSEGV"),
        "{:?}",
        crash.reason
    );
    let hang = by_id("t.hang");
    assert_eq!(hang.status, Status::Failed);
    assert!(
        hang.reason.as_ref().unwrap().contains("timed out"),
        "{:?}",
        hang.reason
    );
    assert_eq!(by_id("t.panic").status, Status::Failed);
    assert_eq!(by_id("t.err").reason.as_deref(), Some("no such device"));
    let needs = by_id("t.needs");
    assert_eq!(needs.status, Status::Skipped);
    assert_eq!(needs.reason.as_deref(), Some("needs a flux capacitor"));

    let good = by_id("t.good");
    assert_eq!(good.status, Status::Ok, "{good:#?}");
    assert!(good.summary.as_ref().unwrap().n >= 3);
    let acct = good.accounting.as_ref().unwrap();
    assert!(acct.max_rss_kib > 0 && acct.wall_s > 0.0);
    // Scratch directories are gone, whatever happened.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");

    // The results file round-trips.
    let mut file = ResultsFile::new(
        vec!["test".into()],
        serde_json::to_value(&session.config).unwrap(),
        session.machine.clone(),
        session.clock.info().clone(),
        session.base.clone(),
    );
    file.results = results.clone();
    file.finish(false);
    let path = dir.path().join("r.json");
    file.write_atomic(&path).unwrap();
    let back = ResultsFile::read(&path).unwrap();
    assert_eq!(back.results, file.results);
    assert_eq!(back.machine, file.machine);
    assert_eq!(back.clock, file.clock);
    // It matches the published JSON Schema, and the schema is not vacuous.
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let schema_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/results.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    v["results"][0]["status"] = "bogus".into();
    assert!(!validator.is_valid(&v));
    v["results"][0]["status"] = "failed".into();
    v["results"][0].as_object_mut().unwrap().remove("reason");
    assert!(
        !validator.is_valid(&v),
        "a failed result without a reason must not validate"
    );
}

#[test]
fn interrupt_stops_the_run_and_keeps_what_finished() {
    let _flag = INTERRUPT_FLAG.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut config = RunConfig::quick();
    config.scratch_dir = Some(dir.path().to_path_buf());
    let session = Session::prepare(config);
    struct StopAfterFirst;
    impl yamba_core::runner::Observer for StopAfterFirst {
        fn finished(&mut self, _: &[yamba_core::BenchResult]) {
            yamba_core::interrupt::set_interrupted(true);
        }
    }
    let results = run_benchmarks(&session, &[&GOOD, &GOOD, &GOOD], &mut StopAfterFirst);
    yamba_core::interrupt::set_interrupted(false);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].status, Status::Ok);
}
