//! Ground truth for the `space` area: a thread costs one kernel stack
//! (16 KiB on x86-64) in KernelStack; a mapped touched page costs one page
//! of RSS; 2N pipes cost twice N pipes (per-object cost independent of N);
//! every primitive's cost is positive and of plausible order; and a machine
//! whose other kernel allocations change the counters while the objects are
//! made withholds the number or leaves it right; creating and destroying
//! primitives: N creates take N times one, and the pairs order as the
//! kernel's work does. Measurement checks only
//! (docs/testing.md), each deciding on the median of independent runs (the
//! `#[ignore]`d disturber_child is a part of one: the child process it
//! runs).

mod support;

use yamba_core::coreclock::{lowest_adds_per_cycle, SHARED_CORE_SHARE};
use yamba_core::runner::run_one;
use yamba_core::{BenchResult, Benchmark, Mode, Session, Status};
use yamba_suite::space::{create_destroy, primitives};
use yamba_testkit::{alone, check, skip, Accept};

fn session() -> (&'static Session, std::sync::MutexGuard<'static, ()>) {
    support::quick_session(false)
}

fn with(s: &Session, settings: &[(&str, &str)]) -> Session {
    let mut s = s.clone();
    for (k, v) in settings {
        s.config.settings.insert(k.to_string(), v.to_string());
    }
    s
}

/// Runs `b`, returning its (.kernel, .user) results. A kernel result
/// withheld only because the machine's other kernel allocations were
/// large beside the objects' (another program, a previous test's frees)
/// is measured again, up to 3 times: that verdict is the benchmark
/// working, not a wrong number.
fn run(s: &Session, b: &'static Benchmark) -> (BenchResult, BenchResult) {
    let mut attempt = run_once(s, b);
    for _ in 1..3 {
        let failed: Vec<&str> = attempt
            .0
            .evidence
            .iter()
            .filter(|e| e.gating && !e.ok)
            .map(|e| e.check.as_str())
            .collect();
        if failed.is_empty()
            || !failed
                .iter()
                .all(|c| c.contains("other kernel allocations"))
        {
            break;
        }
        eprintln!("{}: disturbed by the machine, measuring again", b.id);
        attempt = run_once(s, b);
    }
    attempt
}

fn run_once(s: &Session, b: &'static Benchmark) -> (BenchResult, BenchResult) {
    let dir = tempfile::tempdir().unwrap();
    let mut rs = run_one(s, b, Mode::Hot, dir.path());
    for r in &rs {
        eprintln!(
            "{}: {:?} median {:?} obs {:?} {:?}\n   extra {:?}",
            r.id,
            r.status,
            r.median(),
            r.observations,
            r.reason,
            r.extra
        );
    }
    assert_eq!(rs.len(), 2, "{rs:?}");
    let user = rs.pop().unwrap();
    let kernel = rs.pop().unwrap();
    assert!(kernel.id.ends_with(".kernel") && user.id.ends_with(".user"));
    (kernel, user)
}

fn assert_ok(r: &BenchResult) {
    assert_eq!(
        r.status,
        Status::Ok,
        "{}: {:?} {:?}",
        r.id,
        r.reason,
        r.evidence
    );
    for c in [
        "all objects existed while measured",
        "everything created was destroyed",
    ] {
        assert!(
            r.evidence
                .iter()
                .any(|e| e.check.contains(c) && e.ok && e.gating),
            "{}: no passing '{c}'",
            r.id
        );
    }
}

fn component(r: &BenchResult, key: &str) -> f64 {
    r.extra[key]["median"].as_f64().unwrap()
}

/// A run's results ok, or why not (an attempt without a value).
fn ok(r: &BenchResult) -> Result<(), String> {
    if r.status != Status::Ok {
        return Err(format!("{}: {:?} {:?}", r.id, r.status, r.reason));
    }
    assert_ok(r);
    Ok(())
}

/// Every attempt: the user side's RSS per thread is in (0, 64 KiB) (its
/// stack and guard are mapped but only a few pages touched). Rule: the
/// median KernelStack per thread / 16 KiB (x86-64) is 1 within 5%.
#[test]
fn a_thread_costs_one_kernel_stack() {
    let _alone = alone();
    let (s, _g) = session();
    if !cfg!(target_arch = "x86_64") {
        skip!("the kernel stack's size is known here for x86-64 only (16 KiB)");
    }
    let stack = 16384.0;
    check!("KernelStack per thread / 16 KiB", Accept::within(1.0, 0.05))
        .attempts(5, 15)
        .run(|| {
            let (k, u) = run(s, &primitives::THREAD);
            ok(&k)?;
            ok(&u)?;
            let rss = u.median().unwrap();
            assert!(rss > 0.0 && rss < 64.0 * 1024.0, "user {rss}");
            Ok::<f64, String>(component(&k, "kernel_stack") / stack)
        });
}

/// Every attempt: the kernel side (a VMA, ~200 B of slab, plus a share of
/// a page-table page) in (50, 4096) B. Rule: the median RSS per mapping /
/// 4096 is 1 within 5%.
#[test]
fn a_mapped_touched_page_costs_one_page_of_rss() {
    let _alone = alone();
    let (s, _g) = session();
    check!("RSS per mapping / 4096 B", Accept::within(1.0, 0.05))
        .attempts(5, 15)
        .run(|| {
            let (k, u) = run(s, &primitives::MAPPING);
            ok(&k)?;
            ok(&u)?;
            let kern = k.median().unwrap();
            if !(kern > 50.0 && kern < 4096.0) {
                return Err(format!("kernel {kern} B per mapping"));
            }
            Ok::<f64, String>(u.median().unwrap() / 4096.0)
        });
}

/// Per-object costs equal ⇔ totals in ratio 2: rule, the median slab total
/// of 2000 pipes / 1000 pipes is 2 within 10%.
#[test]
fn twice_the_pipes_cost_twice_the_slab() {
    let _alone = alone();
    let (s, _g) = session();
    let n = with(s, &[("space.n", "1000")]);
    let n2 = with(s, &[("space.n", "2000")]);
    check!("slab of 2N pipes / N pipes", Accept::within(2.0, 0.1))
        .attempts(5, 15)
        .run(|| {
            let (k1, _) = run(&n, &primitives::PIPE);
            let (k2, _) = run(&n2, &primitives::PIPE);
            ok(&k1)?;
            ok(&k2)?;
            Ok::<f64, String>((k2.median().unwrap() * 2000.0) / (k1.median().unwrap() * 1000.0))
        });
}

/// Every primitive's kernel cost is positive and of plausible order (32 B
/// to 1 MB per object), a process costs more than a thread (a kernel
/// stack, a task and an address space of its own, against a stack and a
/// task), and a thread more than 16000 B. Each attempt measures them all;
/// its value counts the bounds broken (a result not ok gives no value).
/// Rule: the median 0.
#[test]
fn every_primitive_has_a_positive_plausible_cost() {
    let _alone = alone();
    let (s, _g) = session();
    check!("plausibility bounds broken", Accept::at_most(0.0))
        .attempts(5, 15)
        .run(|| {
            let mut kernel = std::collections::BTreeMap::new();
            let mut broken = 0;
            for b in yamba_suite::space::BENCHMARKS
                .iter()
                .filter(|b| b.unit == yamba_core::Unit::Bytes)
            {
                let (k, u) = run(s, b);
                ok(&k)?;
                ok(&u)?;
                let v = k.median().unwrap();
                if !(v > 32.0 && v < 1e6) {
                    eprintln!("{}: {v} B per object", k.id);
                    broken += 1;
                }
                kernel.insert(b.id, v);
            }
            eprintln!("{kernel:#?}");
            broken += (kernel["space.process"] <= kernel["space.thread"]) as u32;
            broken += (kernel["space.thread"] <= 16000.0) as u32;
            Ok::<f64, String>(f64::from(broken))
        });
}

/// Environment variable that turns [`disturber_child`] into a disturber.
const DISTURBER: &str = "YAMBA_SPACE_TEST_DISTURBER";

/// 2 MiB regions each disturber maps and touches once (one page-table page
/// each), and the time over which it unmaps them, evenly.
const DISTURBER_REGIONS: usize = 16_384;
const DISTURBER_SECONDS: f64 = 3.0;
const REGION: usize = 2 << 20;

/// Not a test of its own: [`a_machine_freeing_kernel_memory_withholds_or_stays_right`]
/// runs it in child processes. It touches one page in each of its
/// regions (huge pages refused, so each touch costs a page-table page),
/// says "ready", waits for a line on stdin, then unmaps the regions evenly
/// over [`DISTURBER_SECONDS`]: kernel memory freed steadily, machine-wide,
/// as a previous test's exits did in a CI run that measured 12–15 KB per
/// thread instead of ~27 KB. Page tables, not slab: frees into the slab
/// caches the measured objects use would leave room that no counter shows
/// (see `space::measure`), which this check cannot judge.
#[test]
#[ignore = "a child process of another test"]
fn disturber_child() {
    use std::io::BufRead;
    if std::env::var_os(DISTURBER).is_none() {
        return;
    }
    let len = DISTURBER_REGIONS * REGION;
    // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert_ne!(base, libc::MAP_FAILED);
    // SAFETY: the range is the mapping just made.
    unsafe { libc::madvise(base, len, libc::MADV_NOHUGEPAGE) };
    let base = base as usize;
    for r in 0..DISTURBER_REGIONS {
        // SAFETY: inside the mapping, readable and writable.
        unsafe { ((base + r * REGION) as *mut u8).write_volatile(1) };
    }
    println!("ready {DISTURBER_REGIONS}");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    let start = std::time::Instant::now();
    for r in 0..DISTURBER_REGIONS {
        // SAFETY: each region is unmapped once, front to back, never used after.
        unsafe { libc::munmap((base + r * REGION) as *mut libc::c_void, REGION) };
        let due = DISTURBER_SECONDS * (r + 1) as f64 / DISTURBER_REGIONS as f64;
        let ahead = due - start.elapsed().as_secs_f64();
        if ahead > 0.0005 {
            std::thread::sleep(std::time::Duration::from_secs_f64(ahead));
        }
    }
}

/// Ground truth for the background check: with other processes freeing
/// tens of MB of page tables a second, a thread's kernel cost is either
/// withheld by the check (which allows the background 10%) or within 15%
/// of the same benchmark measured just before on the quiet machine —
/// never a silently wrong number. Each attempt: a calm run, then a run
/// beside four disturbers (one in which they freed under 8 MB meanwhile
/// gives no value); its value is 0 when withheld, else |run / calm − 1| /
/// 15%. Rule: the median at most 1.
#[test]
fn a_machine_freeing_kernel_memory_withholds_or_stays_right() {
    let _alone = alone();
    let (s, _g) = session();
    check!(
        "withheld (0), or |disturbed / calm - 1| / 15%",
        Accept::at_most(1.0)
    )
    .attempts(5, 15)
    .run(|| disturbed(s));
}

fn disturbed(s: &Session) -> Result<f64, String> {
    use std::io::{BufRead, BufReader, Write};
    let (calm, _) = run(s, &primitives::THREAD);
    ok(&calm)?;
    let calm = calm.median().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--exact", "disturber_child", "--ignored", "--nocapture"])
                .env(DISTURBER, "1")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Their output stays open until they are killed: a child whose stdout
    // was closed printed "io error when listing tests: Broken pipe" into
    // every CI log.
    let mut outputs = Vec::new();
    for c in &mut children {
        let mut out = BufReader::new(c.stdout.take().unwrap());
        let mut line = String::new();
        while !line.starts_with("ready") {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "disturber ended early"
            );
        }
        eprintln!("disturber: {}", line.trim());
        outputs.push(out);
    }
    let page_tables = || yamba_suite::space::adapter::kernel().unwrap().page_tables;
    let before = page_tables();
    for c in &mut children {
        writeln!(c.stdin.as_mut().unwrap(), "go").unwrap();
    }
    let (k, _) = run_once(s, &primitives::THREAD);
    let freed = before - page_tables();
    for mut c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
    drop(outputs);
    eprintln!(
        "calm {calm:.0} B per thread; the disturbers freed {freed:.0} B of page tables meanwhile"
    );
    if freed <= 8e6 {
        return Err(format!(
            "the disturbance did not happen: {freed:.0} B freed"
        ));
    }
    let background = k
        .evidence
        .iter()
        .find(|e| e.check.contains("other kernel allocations"))
        .expect("the background check");
    if background.ok {
        let v = k.median().unwrap();
        eprintln!(
            "{v:.0} B per thread passed the background check ({}); the quiet machine measured {calm:.0}",
            background.observed
        );
        Ok((v / calm - 1.0).abs() / 0.15)
    } else {
        assert_eq!(k.status, Status::Withheld);
        Ok(0.0)
    }
}

/// The median of `b`'s result `id` in session `s`, or why it was not ok.
fn time_of(s: &Session, b: &'static Benchmark, id: &str) -> Result<f64, String> {
    let dir = tempfile::tempdir().unwrap();
    let rs = run_one(s, b, Mode::Hot, dir.path());
    let r = rs
        .iter()
        .find(|r| r.id == id)
        .ok_or_else(|| format!("no {id} in {rs:?}"))?;
    match (r.status, r.median()) {
        (Status::Ok, Some(v)) => Ok(v),
        _ => Err(format!("{}: {:?} {:?}", r.id, r.status, r.reason)),
    }
}

/// N creates cost N×: a batch of 128 pipes takes four times a batch of
/// 32 (the per-object times agree). Were a batch's interval not the sum
/// of its creates (a fixed cost per batch, or objects left out), the
/// ratio would move away from 4. Rule: the median (128 × t₁₂₈) / (32 ×
/// t₃₂) of the create halves is 4 within 15%.
///
/// Batches small enough for the pipes' kernel objects (two files, an
/// inode, a ring of buffers: ~2 KiB a pipe) to stay in a 512 KiB L2: on
/// the AMD EPYC (Zen 3) guest a pipe in a batch of 256 cost 11–30% more
/// than in one of 64 (the ratio read 4.4–4.6, undecided in CI against
/// this region), one in 128 3–4% more than in 32 (4.15).
#[test]
fn four_times_the_creates_take_four_times_as_long() {
    let _alone = alone();
    let (s, _g) = session();
    let small = with(s, &[("space.create_destroy.batch", "32")]);
    let large = with(s, &[("space.create_destroy.batch", "128")]);
    let id = "space.create_destroy.pipe.create";
    check!("128 pipe creates / 32", Accept::within(4.0, 0.15))
        .attempts(5, 15)
        .on_own_core(lowest_adds_per_cycle, SHARED_CORE_SHARE)
        .run(|| {
            let t32 = time_of(&small, &create_destroy::PIPE, id)?;
            let t128 = time_of(&large, &create_destroy::PIPE, id)?;
            eprintln!("per pipe: {t32:.0} ns in 32, {t128:.0} ns in 128");
            Ok::<f64, String>(128.0 * t128 / (32.0 * t32))
        });
}

/// Orderings the kernel's work sets, create + destroy as a pair: a
/// mapping (mmap, a page fault that zeroes a page, munmap freeing it and
/// flushing its TLB entry) costs more than an eventfd (one small object
/// and a descriptor); a file (a path lookup, a dentry and an inode made
/// and removed) more than an eventfd; a pipe (two descriptors, two pipe
/// buffers' ring) more than an eventfd. Each attempt measures the four;
/// its value counts the orderings broken. Rule: the median 0.
#[test]
fn create_destroy_costs_order_as_the_kernel_work_does() {
    let _alone = alone();
    let (s, _g) = session();
    check!("create_destroy orderings broken", Accept::at_most(0.0))
        .attempts(5, 15)
        .run(|| {
            let mut t = std::collections::BTreeMap::new();
            for b in [
                &create_destroy::EVENTFD,
                &create_destroy::PIPE,
                &create_destroy::MAPPING,
                &create_destroy::FILE,
            ] {
                t.insert(b.id, time_of(s, b, b.id)?);
            }
            eprintln!("{t:?}");
            let eventfd = t["space.create_destroy.eventfd"];
            let broken = [
                "space.create_destroy.mapping",
                "space.create_destroy.file",
                "space.create_destroy.pipe",
            ]
            .iter()
            .filter(|id| t[*id] <= eventfd)
            .count();
            Ok::<f64, String>(broken as f64)
        });
}
