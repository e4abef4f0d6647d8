//! Area `mem` against what the machine reports about itself: cache sizes
//! (sysfs), the line size (sysfs) and the data TLB's entries (CPUID), and
//! one ordering no memory system breaks. Measurement checks only
//! (docs/testing.md): each decides on the median of independent runs.

mod support;

use std::time::Duration;
use support::find;
use yamba_core::coreclock::{lowest_adds_per_cycle, SHARED_CORE_SHARE};
use yamba_core::Describe;
use yamba_core::{Machine, Plan, RunConfig, Session};
use yamba_suite::mem::adapter::Pages;
use yamba_suite::mem::chase::Order;
use yamba_suite::mem::curve::{measure_curve, CurveConfig};
use yamba_suite::mem::latency::{capacity_misfit, merge_within_sysfs, name_levels};
use yamba_suite::mem::plateau::detect;
use yamba_testkit::{alone, check, premise_unmet, skip, Accept};

fn session() -> Session {
    Session::prepare(RunConfig::quick())
}

fn pin() {
    let _ = yamba_core::affinity::pin_current_thread(yamba_core::affinity::default_cpu());
}

fn run(bench: &'static yamba_core::Benchmark) -> Vec<yamba_core::BenchResult> {
    let s = session();
    let dir = tempfile::Builder::new()
        .prefix("yamba-mem-test")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    yamba_core::runner::run_one(&s, bench, yamba_core::Mode::Hot, dir.path())
}

/// The latency curve's levels against sysfs. Each attempt measures a
/// curve; its value is the worst of three criteria, each scaled so 1 is
/// its bound: the L1 and L2 capacities (where the curve crosses the
/// midpoint to the next level) agreeing with sysfs (0.75–1.5 × its
/// size: `mem::latency::CAPACITY_ABOVE` says why above), and
/// memory at least 3× L1's latency (an attempt naming no such level gives
/// no value). Rule: the median at most 1.
#[test]
fn latency_curve_finds_l1_and_l2_and_memory() {
    let _alone = alone();
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
    check!(
        "worst of |L1, L2 capacity / sysfs - 1| / tolerance, 3 L1 latency / memory latency",
        Accept::at_most(1.0)
    )
    .attempts(5, 15)
    .on_own_core(lowest_adds_per_cycle, SHARED_CORE_SHARE)
    .run(|| {
        let curve = measure_curve(&s.clock, &cfg).unwrap();
        let p = merge_within_sysfs(&m, detect(&curve.xy()));
        let lat_l1 = curve.at(l1 / 4.0).unwrap().median_ns;
        let lat_mem = curve.at(2.0 * llc as f64).unwrap().median_ns;
        let levels = name_levels(&m, &curve, &p);
        for l in &levels {
            eprintln!(
                "{}: capacity {:?} flat to {:?} sysfs {:?}",
                l.name, l.capacity_bytes, l.flat_to_bytes, l.sysfs_bytes
            );
        }
        let off = |i: usize, want: f64| -> Result<f64, String> {
            levels
                .get(i)
                .and_then(|l| l.capacity_bytes)
                .map(|c| capacity_misfit(c / want))
                .ok_or_else(|| format!("no capacity for level {} in {p:?}", i + 1))
        };
        Ok::<f64, String>(off(0, l1)?.max(off(1, l2)?).max(3.0 * lat_l1 / lat_mem))
    });
}

/// Reading 16 KiB (L1) beats reading 8× the LLC (memory): rule, the
/// median bandwidth ratio at least 1.2 (about 2 on an AMD EPYC guest).
#[test]
fn read_bandwidth_in_l1_beats_memory() {
    use yamba_suite::mem::bandwidth::single;
    use yamba_suite::mem::kernels::Kernel;
    let _alone = alone();
    pin();
    let s = session();
    let llc = Machine::describe().llc_bytes() as usize;
    let plan = Plan::quick();
    let median = |v: &[f64]| yamba_stats::Summary::of(v).unwrap().median;
    check!("read GB/s, 16 KiB / 8x LLC", Accept::at_least(1.2))
        .attempts(5, 15)
        .run(|| {
            let small = single(&s.clock, &plan, Kernel::Read, 16 << 10).unwrap();
            let big = single(&s.clock, &plan, Kernel::Read, 8 * llc).unwrap();
            let (a, b) = (median(&small.gbps), median(&big.gbps));
            eprintln!("read: L1 {a:.1} GB/s, 8×LLC {b:.1} GB/s");
            a / b
        });
}

/// `id`'s value, or why there is none: a result withheld (the curve's
/// largest set not ≥ 4× the LLC's effective capacity measured in that run,
/// say) is an attempt without a value, which the check counts as outside
/// its region — it costs attempts, and a check whose attempts mostly give
/// none fails.
fn ok_value(rs: &[yamba_core::BenchResult], id: &str) -> Result<f64, String> {
    let r = rs
        .iter()
        .find(|r| r.id == id)
        .ok_or_else(|| format!("no result {id}"))?;
    if r.status != yamba_core::Status::Ok {
        return Err(format!("{id}: {:?} {:?}", r.status, r.reason));
    }
    r.value().ok_or_else(|| format!("{id} has no value"))
}

/// The read curve against mem.bandwidth.read measured in the same test:
/// the curve's largest point is that benchmark's measurement (same size,
/// same plan), so the two agree. Rule: the median over runs of curve /
/// read within 8% of 1 (runs seconds apart on a machine others share move
/// memory bandwidth: 15 runs here gave 0.92–1.24, median 1.02).
#[test]
fn read_curve_at_its_largest_is_mem_bandwidth_read() {
    use yamba_suite::mem::bandwidth::READ;
    use yamba_suite::mem::bandwidth_curve::READ_CURVE;
    let _alone = alone();
    pin();
    check!(
        "mem.bandwidth.read.curve at its largest / mem.bandwidth.read",
        Accept::within(1.0, 0.08)
    )
    .attempts(5, 15)
    .run(|| {
        let c = ok_value(&run(&READ_CURVE), "mem.bandwidth.read.curve")?;
        let r = ok_value(&run(&READ), "mem.bandwidth.read")?;
        eprintln!("curve {c:.2} GB/s, read {r:.2} GB/s");
        Ok::<f64, String>(c / r)
    });
}

/// The read curve's L1 plateau is far above its memory plateau. Rule: the
/// median over runs of L1 / memory at least 2.5 (3.7–4.7 on an AMD EPYC
/// Zen 4 guest with other work on the machine: 103–111 against 23–28
/// GB/s; the Golden Cove guest's one-thread memory bandwidth is no higher
/// and its L1 no slower, so its ratio is no smaller — not measured here).
#[test]
fn read_curve_steps_down_from_l1_to_memory() {
    use yamba_suite::mem::bandwidth_curve::READ_CURVE;
    let _alone = alone();
    pin();
    check!("read curve, L1 / memory", Accept::at_least(2.5))
        .attempts(5, 15)
        .run(|| {
            let curve = run(&READ_CURVE);
            let l1 = ok_value(&curve, "mem.bandwidth.read.curve.L1")?;
            let mem = ok_value(&curve, "mem.bandwidth.read.curve.memory")?;
            eprintln!("L1 {l1:.1}, memory {mem:.1} GB/s");
            Ok::<f64, String>(l1 / mem)
        });
}

/// Ground truth: sysfs's coherency_line_size. Rule: the median over runs
/// of |measured line − sysfs| is 0 (a run not ok gives no value).
#[test]
fn line_size_is_sysfs_coherency_line_size() {
    let _alone = alone();
    // Pinned, as `yamba run` is (and every check here that runs a
    // benchmark): a sweep whose thread moves to the other CPU finds its
    // lines in the other core's caches, and the sweeps disagree
    // (unpinned, CI withheld 8 of 15 attempts on an AMD EPYC Zen 3 guest
    // where pinned runs gave 64 in 15 of 15).
    pin();
    let m = Machine::describe();
    let Some(want) = m.caches.first().and_then(|c| c.line_bytes) else {
        skip!("sysfs gives no coherency_line_size here");
    };
    check!(
        "|mem.line - sysfs coherency_line_size|, bytes",
        Accept::at_most(0.0)
    )
    .attempts(5, 15)
    .run(|| {
        let rs = run(&yamba_suite::mem::line::LINE);
        let r = find(&rs, "mem.line");
        eprintln!("{:?} {:?} {:?}", r.status, r.reason, r.median());
        match (r.status, r.median()) {
            (yamba_core::Status::Ok, Some(l)) => Ok((l - want as f64).abs()),
            _ => Err(format!("{:?} {:?}", r.status, r.reason)),
        }
    });
}

/// The data TLB's entries for 4 KiB pages as the CPU reports them (first
/// level and second level, data or unified), from CPUID: Intel leaf 0x18
/// (deterministic address translation parameters: ways × sets of each
/// data, load or unified TLB that holds 4 KiB pages; CPUs since Skylake
/// point leaf 0x2 here with descriptor 0xFE), AMD leaves 0x80000005 (L1
/// DTLB, EBX[23:16]) and 0x80000006 (L2 DTLB, EBX[27:16]). Empty where
/// neither is reported (another architecture or vendor, or a hypervisor
/// that hides them).
fn reported_dtlb_entries() -> Vec<(String, u64)> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid_count;
        let cpuid = |leaf: u32, sub: u32| __cpuid_count(leaf, sub);
        let v = cpuid(0, 0);
        let vendor: Vec<u8> = [v.ebx, v.edx, v.ecx]
            .iter()
            .flat_map(|r| r.to_le_bytes())
            .collect();
        let mut out = Vec::new();
        match &vendor[..] {
            b"GenuineIntel" if v.eax >= 0x18 => {
                let subs = cpuid(0x18, 0).eax;
                for i in 0..=subs {
                    let r = cpuid(0x18, i);
                    let kind = r.edx & 0x1f;
                    let level = (r.edx >> 5) & 0x7;
                    let four_k = r.ebx & 1 == 1;
                    // 1 data, 3 unified, 4 load-only.
                    if four_k && matches!(kind, 1 | 3 | 4) {
                        let entries = u64::from(r.ebx >> 16) * u64::from(r.ecx);
                        out.push((format!("Intel L{level} TLB type {kind}"), entries));
                    }
                }
            }
            b"AuthenticAMD" | b"HygonGenuine" if cpuid(0x8000_0000, 0).eax >= 0x8000_0006 => {
                let l1 = (cpuid(0x8000_0005, 0).ebx >> 16) & 0xff;
                let l2 = (cpuid(0x8000_0006, 0).ebx >> 16) & 0xfff;
                out.push(("AMD L1 DTLB".into(), u64::from(l1)));
                out.push(("AMD L2 DTLB".into(), u64::from(l2)));
            }
            _ => {}
        }
        out.retain(|(_, n)| *n > 0);
        out
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec::new()
}

/// Why the reported levels cannot be the hardware's, if they cannot. AMD's
/// second-level data TLB has held 10–43× the first's entries on every
/// core from K8 (32 / 512) to Zen 4 (72 / 3072); a KVM guest on a Zen 5
/// host (family 26, "AMD EPYC") reported 96 and 128, and its 4 KiB reach
/// measured 2048–4096 pages. Whether that 128 is a hypervisor's number or
/// a new unit (×32 would give Zen 5's published 4096, and its second-level
/// instruction TLB's 64 the published 2048) is not known here, so the
/// check cannot decide rather than compare with a number that is not one.
fn implausible_dtlb_levels(levels: &[(String, u64)]) -> Option<String> {
    let l1 = levels.iter().find(|(n, _)| n == "AMD L1 DTLB")?.1;
    let l2 = levels.iter().find(|(n, _)| n == "AMD L2 DTLB")?.1;
    (l2 < 4 * l1).then(|| {
        format!(
            "the CPU reports a second-level data TLB of {l2} entries behind a first of {l1} \
             (AMD's second level has been 10-43x its first): not the hardware's sizes"
        )
    })
}

/// The TLB's share rises where a TLB level the CPU reports runs out: the
/// reach (the first step of the 4 KiB − 2 MiB difference) is within a
/// factor of 2 of one reported level's entries (the curve's points are
/// 1.5× apart, and an L1 miss that hits the second level may not show,
/// so either level may be the first step). Rule: the median over runs of
/// the distance in octaves to the nearest reported level at most 1 (a run
/// not ok gives no value).
#[test]
fn tlb_reach_is_a_rise_of_the_4k_over_2m_difference() {
    let _alone = alone();
    pin();
    let m = Machine::describe();
    if let Some(why) =
        yamba_suite::mem::adapter::thp_unavailable(m.transparent_hugepages.as_deref())
    {
        skip!("{why}");
    }
    let levels = reported_dtlb_entries();
    eprintln!("reported data TLB entries for 4 KiB pages: {levels:?}");
    if levels.is_empty() {
        premise_unmet!("the CPU reports no data TLB sizes (CPUID) to compare the reach with");
    }
    if let Some(why) = implausible_dtlb_levels(&levels) {
        premise_unmet!("{why}: no reported size to compare the reach with");
    }
    check!(
        "octaves from the reach to the nearest reported TLB level",
        Accept::at_most(1.0)
    )
    .attempts(5, 15)
    .run(|| {
        let rs = run(&yamba_suite::mem::tlb::TLB);
        let r = find(&rs, "mem.tlb");
        eprintln!(
            "{:?} {:?} {:?} {:?}",
            r.status,
            r.reason,
            r.median(),
            r.extra.get("steps")
        );
        match (r.status, r.median()) {
            (yamba_core::Status::Ok, Some(reach)) if reach > 0.0 => Ok(levels
                .iter()
                .map(|(_, n)| (reach / *n as f64).log2().abs())
                .fold(f64::INFINITY, f64::min)),
            _ => Err(format!("{:?} {:?}", r.status, r.reason)),
        }
    });
}
