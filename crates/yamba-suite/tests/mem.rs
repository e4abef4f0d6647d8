//! Area `mem` against ground truth built here: cache sizes sysfs reports,
//! bytes a copy must have moved, page faults the kernel must have counted.
//! Timing checks compare ratios measured in one run, with up to three
//! attempts; the tests run one at a time (a shared lock) so they do not
//! disturb each other's timings.

mod support;

use std::time::Duration;
use support::{find, serial};
use yamba_core::Describe;
use yamba_core::{Machine, Plan, RunConfig, Session};
use yamba_suite::mem::adapter::Pages;
use yamba_suite::mem::chase::Order;
use yamba_suite::mem::curve::{measure_curve, CurveConfig};
use yamba_suite::mem::latency::{merge_within_sysfs, name_levels, CAPACITY_TOLERANCE};
use yamba_suite::mem::plateau::detect;

fn session() -> Session {
    Session::prepare(RunConfig::quick())
}

fn pin() {
    let _ = yamba_core::affinity::pin_current_thread(yamba_core::affinity::default_cpu());
}

#[test]
fn latency_curve_finds_l1_and_l2_and_memory() {
    let _g = serial();
    pin();
    let s = session();
    let m = Machine::describe();
    let l1 = m.cache_bytes(1).expect("sysfs L1d size") as f64;
    let l2 = m.cache_bytes(2).expect("sysfs L2 size") as f64;
    // Sizes from the effective LLC (sysfs's may be the host's 480 MiB).
    let sizing = yamba_suite::mem::llc::Sizing::new(&s.clock, &m);
    let max = yamba_suite::mem::latency::max_bytes(true, &sizing);
    let llc = sizing.llc;
    let mut plan = Plan::quick();
    plan.budget = Duration::from_millis(25);
    plan.min_observation_ns = 50_000.0;
    plan.min_observations = 5;
    let cfg = CurveConfig {
        min_bytes: 4096,
        max_bytes: max,
        points_per_octave: 3,
        stride: 64,
        order: Order::Random,
        pages: Pages::Base,
        plan,
        total_budget: Duration::from_secs(20),
        mandatory_bytes: max,
        max_warmup_ns: 20e6,
    };
    let mut last = String::new();
    for attempt in 1..=3 {
        let curve = measure_curve(&s.clock, &cfg).unwrap();
        let p = merge_within_sysfs(&m, detect(&curve.xy()));
        let lat_l1 = curve.at(l1 / 4.0).unwrap().median_ns;
        let lat_mem = curve.at(2.0 * llc as f64).unwrap().median_ns;
        // Capacity: where the curve crosses the midpoint to the next level.
        let levels = name_levels(&m, &curve, &p);
        let size_ok = |i: usize, want: f64| {
            levels.get(i).is_some_and(|l| {
                l.capacity_bytes
                    .is_some_and(|c| (c / want - 1.0).abs() <= CAPACITY_TOLERANCE)
            })
        };
        eprintln!("attempt {attempt}: curve {:?}", curve.xy());
        eprintln!("plateaus {p:?}");
        for l in &levels {
            eprintln!(
                "{}: capacity {:?} flat to {:?} sysfs {:?}",
                l.name, l.capacity_bytes, l.flat_to_bytes, l.sysfs_bytes
            );
        }
        last = format!(
            "L1 {} L2 {} mem/L1 {:.1}",
            size_ok(0, l1),
            size_ok(1, l2),
            lat_mem / lat_l1
        );
        if size_ok(0, l1) && size_ok(1, l2) && lat_mem >= 3.0 * lat_l1 {
            return;
        }
    }
    panic!("latency curve did not show the caches sysfs reports: {last}");
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
        eprintln!("skipped: {why}");
        return;
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

#[test]
fn read_bandwidth_in_l1_beats_memory() {
    use yamba_suite::mem::bandwidth::single;
    use yamba_suite::mem::kernels::Kernel;
    let _g = serial();
    pin();
    let s = session();
    let llc = Machine::describe().llc_bytes() as usize;
    let plan = Plan::quick();
    let median = |v: &[f64]| yamba_stats::Summary::of(v).unwrap().median;
    let mut last = (0.0, 0.0);
    for _ in 0..3 {
        let small = single(&s.clock, &plan, Kernel::Read, 16 << 10).unwrap();
        let big = single(&s.clock, &plan, Kernel::Read, 8 * llc).unwrap();
        last = (median(&small.gbps), median(&big.gbps));
        eprintln!("read: L1 {:.1} GB/s, 8×LLC {:.1} GB/s", last.0, last.1);
        if last.0 > last.1 {
            return;
        }
    }
    panic!(
        "read bandwidth in L1 ({:.1} GB/s) not above memory ({:.1} GB/s)",
        last.0, last.1
    );
}

#[test]
fn huge_page_chain_is_seen_on_huge_pages() {
    use yamba_suite::mem::adapter::{anon_huge_bytes, thp_unavailable};
    use yamba_suite::mem::chase::Chain;
    let _g = serial();
    let m = Machine::describe();
    if let Some(why) = thp_unavailable(m.transparent_hugepages.as_deref()) {
        eprintln!("skipped: {why}");
        return;
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

/// Ground truth: sysfs's coherency_line_size. The stride sweep's line
/// must be it (up to three attempts for noise).
#[test]
fn line_size_is_sysfs_coherency_line_size() {
    let _g = serial();
    let m = Machine::describe();
    let Some(want) = m.caches.first().and_then(|c| c.line_bytes) else {
        eprintln!("skipped: sysfs gives no coherency_line_size here");
        return;
    };
    support::attempts(|| {
        let rs = run(&yamba_suite::mem::line::LINE);
        let r = find(&rs, "mem.line");
        eprintln!(
            "{:?} {:?} {:?} {:?}",
            r.status,
            r.reason,
            r.median(),
            r.series
        );
        match (r.status, r.median()) {
            (yamba_core::Status::Ok, Some(l)) if l as u64 == want => Ok(()),
            _ => Err(format!(
                "line {:?} ({:?}), sysfs {want}",
                r.median(),
                r.reason
            )),
        }
    });
}

/// The TLB's share: nothing at a few pages, a rise before 64K pages, and
/// the 2 MiB chases really on huge pages (where THP can be had).
#[test]
fn tlb_reach_is_a_rise_of_the_4k_over_2m_difference() {
    let _g = serial();
    let m = Machine::describe();
    if let Some(why) =
        yamba_suite::mem::adapter::thp_unavailable(m.transparent_hugepages.as_deref())
    {
        eprintln!("skipped: {why}");
        return;
    }
    support::attempts(|| {
        let rs = run(&yamba_suite::mem::tlb::TLB);
        let r = find(&rs, "mem.tlb");
        eprintln!(
            "{:?} {:?} {:?} {:?}",
            r.status,
            r.reason,
            r.median(),
            r.extra.get("steps")
        );
        let reach = r.median().unwrap_or(0.0);
        if r.status == yamba_core::Status::Ok && (16.0..65536.0).contains(&reach) {
            Ok(())
        } else {
            Err(format!("{:?} {:?} reach {reach}", r.status, r.reason))
        }
    });
}
