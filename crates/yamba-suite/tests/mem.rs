//! Area `mem` against ground truth built here: bytes a copy must have
//! moved, page faults the kernel must have counted, huge pages the kernel
//! must have given. The tests run one at a time (a shared lock). Cache
//! sizes, the line and the TLB against what the machine reports are
//! measurement checks (measure_mem.rs).

mod support;

use support::{find, serial};
use yamba_core::Describe;
use yamba_core::{Machine, RunConfig, Session};
use yamba_suite::mem::adapter::Pages;
use yamba_suite::mem::chase::Order;

fn session() -> Session {
    Session::prepare(RunConfig::quick())
}

fn run(bench: &'static yamba_core::Benchmark) -> Vec<yamba_core::BenchResult> {
    let s = session();
    let dir = tempfile::Builder::new()
        .prefix("yamba-mem-test")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    yamba_core::runner::run_one(&s, bench, yamba_core::Mode::Hot, dir.path())
}

#[test]
fn major_faults_are_verified_page_outs() {
    let _g = serial();
    let rs = run(&yamba_suite::mem::major::MAJOR);
    for r in &rs {
        eprintln!(
            "{} {:?} {:?} median {:?} {}",
            r.id,
            r.status,
            r.reason,
            r.median(),
            r.extra
                .get("verification")
                .map(|v| v.to_string())
                .unwrap_or_default()
        );
    }
    let h = find(&rs, "mem.pagefault.major");
    if h.status == yamba_core::Status::Skipped {
        // Only acceptable reason: the scratch directory cannot page out.
        let why = h.reason.clone().unwrap_or_default();
        assert!(why.contains("cannot be paged out"), "{why}");
        yamba_testkit::skip!("{why}");
    }
    eprintln!("{}", serde_json::to_string_pretty(&h.extra).unwrap());
    assert_eq!(h.status, yamba_core::Status::Ok, "{:?}", h.reason);
    // Readahead off, every page touched: one major fault per access, one
    // page in per fault, exactly.
    let v = &find(&rs, "mem.pagefault.major.k1.ra_off").extra["verification"];
    let accesses = v["accesses_per_pass"].as_u64().unwrap();
    for f in v["major_faults_per_pass"].as_array().unwrap() {
        assert_eq!(f.as_u64().unwrap(), accesses);
    }
    assert_eq!(v["share_of_accesses_faulted"].as_f64(), Some(1.0));
    assert_eq!(v["pages_in_per_fault"].as_f64(), Some(1.0));
    for r in v["resident_before"].as_array().unwrap() {
        assert_eq!(r.as_u64(), Some(0));
    }
    assert!(
        h.extra["fit"]["r_squared"].is_number(),
        "{}",
        h.extra["fit"]
    );
}

#[test]
fn naive_msync_is_withheld_because_nothing_was_evicted() {
    let _g = serial();
    let rs = run(&yamba_suite::mem::naive::NAIVE_MSYNC);
    let r = find(&rs, "mem.pagefault.naive_msync");
    eprintln!(
        "{:?} {:?} median {:?} {}",
        r.status,
        r.reason,
        r.median(),
        r.extra["verification"]
    );
    assert_eq!(r.status, yamba_core::Status::Withheld);
    let e = r
        .evidence
        .iter()
        .find(|e| e.check.starts_with("page-out before every pass"))
        .unwrap();
    assert!(!e.ok && e.gating, "{e:?}");
    assert!(
        r.extra["verification"]["resident_before"][0]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn minor_faults_one_per_access() {
    let _g = serial();
    for b in [
        &yamba_suite::mem::pagefault::ANON,
        &yamba_suite::mem::pagefault::CACHED,
    ] {
        let rs = run(b);
        let r = find(&rs, b.id);
        eprintln!(
            "{} {:?} {:?} median {:?} {:?}",
            r.id,
            r.status,
            r.reason,
            r.median(),
            r.evidence
        );
        assert_eq!(r.status, yamba_core::Status::Ok, "{:?}", r.reason);
        let e = r
            .evidence
            .iter()
            .find(|e| {
                e.check
                    .starts_with("each pass took exactly one minor fault per access")
            })
            .unwrap();
        assert!(e.ok && e.gating, "{e:?}");
    }
}

#[test]
fn copy_moves_the_bytes_it_claims() {
    let _g = serial();
    let rs = run(&yamba_suite::mem::bandwidth::COPY);
    for id in ["mem.bandwidth.copy", "mem.bandwidth.copy.all_cpus"] {
        let r = find(&rs, id);
        eprintln!(
            "{id}: {:?} {:?} median {:?} GB/s",
            r.status,
            r.reason,
            r.median()
        );
        assert_eq!(r.status, yamba_core::Status::Ok, "{:?}", r.reason);
        let e = r
            .evidence
            .iter()
            .find(|e| e.check.contains("checksum"))
            .expect("checksum evidence");
        assert!(e.ok && e.gating, "{e:?}");
        assert!(r.median().unwrap() > 0.0);
    }
}

/// One effective-LLC probe per run: the first memory benchmark's process
/// probes, the run's later processes (here a second benchmark, then a
/// second block of the first) size from the same curve, and say so.
#[test]
fn a_run_s_memory_benchmarks_size_from_one_probe() {
    let _g = serial();
    let s = Session::prepare(RunConfig::quick());
    let run_scratch = tempfile::Builder::new()
        .prefix("yamba-mem-test")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let probe_of = |bench: &'static yamba_core::Benchmark, id: &str| {
        let rs = yamba_core::runner::run_one(&s, bench, yamba_core::Mode::Hot, run_scratch.path());
        let r = find(&rs, id);
        assert_eq!(r.status, yamba_core::Status::Ok, "{:?}", r.reason);
        r.params["bytes_per_array_rule"]["probe"].clone()
    };
    let first = probe_of(&yamba_suite::mem::bandwidth::READ, "mem.bandwidth.read");
    let second = probe_of(&yamba_suite::mem::bandwidth::COPY, "mem.bandwidth.copy");
    let third = probe_of(&yamba_suite::mem::bandwidth::READ, "mem.bandwidth.read");
    assert_eq!(first["source"], "measured in this process", "{first}");
    for later in [&second, &third] {
        assert_eq!(
            later["source"], "measured once in the run by an earlier process, reused",
            "{later}"
        );
        assert_eq!(later["points"], first["points"]);
    }
    // Another run probes afresh.
    let other = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let rs = yamba_core::runner::run_one(
        &s,
        &yamba_suite::mem::bandwidth::READ,
        yamba_core::Mode::Hot,
        other.path(),
    );
    let r = find(&rs, "mem.bandwidth.read");
    assert_eq!(
        r.params["bytes_per_array_rule"]["probe"]["source"],
        "measured in this process"
    );
}

#[test]
fn huge_page_chain_is_seen_on_huge_pages() {
    use yamba_suite::mem::adapter::{anon_huge_bytes, thp_unavailable};
    use yamba_suite::mem::chase::Chain;
    let _g = serial();
    let m = Machine::describe();
    if let Some(why) = thp_unavailable(m.transparent_hugepages.as_deref()) {
        yamba_testkit::skip!("{why}");
    }
    let before = anon_huge_bytes().expect("smaps_rollup");
    let huge = Chain::new(4 << 20, 64, Order::Random, Pages::Huge, 1).unwrap();
    let grown = anon_huge_bytes().unwrap() - before;
    assert!(grown >= 4 << 20, "AnonHugePages grew by {grown} bytes only");
    drop(huge);
    let before = anon_huge_bytes().unwrap();
    let _base = Chain::new(4 << 20, 64, Order::Random, Pages::Base, 1).unwrap();
    assert_eq!(anon_huge_bytes().unwrap().saturating_sub(before), 0);
}
