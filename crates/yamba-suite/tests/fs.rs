//! Ground truth for the `fs` area: byte counts of passes, eviction seen by
//! mincore, 2× the bytes ⇒ 2× the time for uncached reads, a knee at a
//! memory cgroup's limit, and the benchmarks run end to end.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};
use support::{find, serial};
use yamba_core::Describe;
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Session, Status};
use yamba_suite::fs::{self, adapter, cache_size, files};

/// A scratch directory on the target directory's filesystem (a disk here,
/// unlike /tmp on many machines).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn run(bench: &'static Benchmark) -> Vec<BenchResult> {
    let dir = scratch();
    let session = Session::prepare(RunConfig::quick());
    yamba_core::runner::run_one(&session, bench, Mode::Hot, dir.path())
}

fn assert_ok(r: &BenchResult) {
    assert_eq!(
        r.status,
        Status::Ok,
        "{}: {:?} {:#?}",
        r.id,
        r.reason,
        r.evidence
    );
}

fn uncached_or_skip(dir: &Path) -> Option<files::Caching> {
    match files::uncached_method(dir) {
        Ok(m) => Some(m),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

#[test]
fn passes_read_exactly_the_file() {
    let _serial = serial();
    let dir = scratch();
    let mut buf = files::AlignedBuf::new(16 << 10);
    for (size, block, calls) in [
        (1u64, 4096, 1),
        (4095, 4096, 1),
        (4096, 4096, 1),
        (100_000, 16384, 7),
    ] {
        let p = dir.path().join(format!("f{size}"));
        let f = files::write_file(&p, size).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), size);
        let t = files::seq_pass(&f, size, block, &mut buf).unwrap();
        assert_eq!(
            (t.bytes, t.calls),
            (size, calls),
            "size {size} block {block}"
        );
        // A pass told the file is longer than it is must fail, not count short.
        assert!(files::seq_pass(&f, size + 5000, block, &mut buf).is_err());
    }
    let offs = files::random_offsets(1 << 20, 4096, 1000, 7);
    assert_eq!(offs.len(), 256, "at most one read per block");
    let mut sorted = offs.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 256, "distinct blocks");
    assert!(offs.iter().all(|o| o % 4096 == 0 && *o < 1 << 20));
    assert_ne!(offs, sorted, "random order");
}

#[test]
fn eviction_empties_the_cache_and_rereads_hit_storage() {
    let _serial = serial();
    let dir = scratch();
    if uncached_or_skip(dir.path()).is_none() {
        return;
    }
    let size = 4u64 << 20;
    let p = dir.path().join("evict");
    let f = files::write_file(&p, size).unwrap();
    let mut buf = files::AlignedBuf::new(1 << 16);
    files::seq_pass(&f, size, 1 << 16, &mut buf).unwrap();
    assert_eq!(files::resident_fraction(&f, size).unwrap(), 1.0);
    adapter::evict(&f).unwrap();
    let (resident, total) = adapter::resident_pages(&f, size).unwrap();
    assert_eq!(
        (resident, total),
        (0, (size / 4096) as usize),
        "mincore after DONTNEED"
    );
    let before = adapter::storage_read_bytes();
    files::seq_pass(&f, size, 1 << 16, &mut buf).unwrap();
    if let (Some(a), Some(b)) = (before, adapter::storage_read_bytes()) {
        assert!(
            b - a >= size,
            "re-read after eviction fetched {} of {size} bytes",
            b - a
        );
    }
    assert_eq!(files::resident_fraction(&f, size).unwrap(), 1.0);
}

#[test]
fn memory_filesystems_have_no_uncached_read() {
    let _serial = serial();
    let shm = Path::new("/dev/shm");
    match adapter::fs_kind(shm) {
        Ok(k) if k.memory_only => {
            let d = tempfile::tempdir_in(shm).unwrap();
            let err = files::uncached_method(d.path()).unwrap_err();
            assert!(err.contains(k.name), "{err}");
        }
        _ => eprintln!("skipped: /dev/shm is not a tmpfs here"),
    }
}

/// Time of one uncached sequential pass over `path`.
fn uncached_pass(path: &Path, size: u64, how: files::Caching) -> Duration {
    let f = files::open_for(path, how).unwrap();
    adapter::evict(&f).unwrap();
    let mut buf = files::AlignedBuf::new(256 << 10);
    let t = Instant::now();
    let tally = files::seq_pass(&f, size, 256 << 10, &mut buf).unwrap();
    let d = t.elapsed();
    assert_eq!(tally.bytes, size);
    d
}

#[test]
fn uncached_sequential_read_of_twice_the_bytes_takes_twice_the_time() {
    let _serial = serial();
    let dir = scratch();
    let Some(how) = uncached_or_skip(dir.path()) else {
        return;
    };
    let (small, large) = (16u64 << 20, 32u64 << 20);
    let ps = dir.path().join("small");
    let pl = dir.path().join("large");
    files::write_file(&ps, small).unwrap();
    files::write_file(&pl, large).unwrap();
    let mut ratios = Vec::new();
    for _attempt in 0..3 {
        let (mut ts, mut tl) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            ts.push(uncached_pass(&ps, small, how).as_secs_f64());
            tl.push(uncached_pass(&pl, large, how).as_secs_f64());
        }
        let ratio = fs::point::median(&tl) / fs::point::median(&ts);
        ratios.push(ratio);
        if (1.6..=2.5).contains(&ratio) {
            eprintln!("uncached {how:?}: 32 MiB / 16 MiB time ratio {ratio:.2}");
            return;
        }
    }
    panic!("2× the bytes did not take ~2× the time: ratios {ratios:?}");
}

#[test]
fn cache_knee_matches_a_memory_cgroup_limit() {
    let _serial = serial();
    let dir = scratch();
    if uncached_or_skip(dir.path()).is_none() {
        return;
    }
    let clock = yamba_core::Clock::detect(50);
    // Two limits: the knee must follow the limit, not sit at some size of its own.
    for limit in [64u64 << 20, 128 << 20] {
        let mut seen = Vec::new();
        let found = (0..3).any(|_| {
            let out = adapter::run_in_memory_cgroup(limit, || {
                let curve = cache_size::measure_curve(
                    &clock,
                    dir.path(),
                    4 * limit,
                    Duration::from_secs(30),
                    32 << 20,
                );
                match curve {
                    Ok(c) => serde_json::to_string(&c).unwrap(),
                    Err(e) => format!("ERR {e}"),
                }
            });
            let curve: cache_size::Curve = match out {
                Ok(text) => serde_json::from_str(&text).unwrap(),
                Err(why) => {
                    seen.push(format!("not run: {why}"));
                    return false;
                }
            };
            eprintln!(
                "cgroup limit {} MiB: cache {} MiB, knee {:?} MiB",
                limit >> 20,
                curve.cache_bytes >> 20,
                curve.knee_bytes.map(|k| k >> 20)
            );
            seen.push(format!("{:?}", (curve.cache_bytes, curve.knee_bytes)));
            curve.knee_bytes.is_some()
                && curve.cache_bytes >= limit / 2
                && curve.cache_bytes <= limit * 2
                && curve.points.iter().all(|p| p.bytes_ok)
        });
        // Not permitted here (not root, no memory controller): skip, saying why.
        let refused = |s: &String| {
            [
                "cannot create cgroup",
                "no cgroup memory",
                "cannot set memory",
                "cannot join cgroup",
            ]
            .iter()
            .any(|m| s.contains(m))
        };
        if !found && seen.iter().all(refused) {
            eprintln!("skipped: {}", seen[0]);
            return;
        }
        assert!(
            found,
            "knee not within 2× of the {limit}-byte limit: {seen:?}"
        );
    }
}

#[test]
fn cache_size_quick_reports_at_least_when_no_knee() {
    let _serial = serial();
    let rs = run(&cache_size::CACHE_SIZE);
    let r = find(&rs, "fs.cache_size");
    assert_ok(r);
    let at_least = r.extra["at_least"].as_bool().unwrap();
    assert_eq!(at_least, r.extra.contains_key("bound"));
    if at_least {
        assert!(
            r.warnings.iter().any(|w| w.contains("at least")),
            "{:?}",
            r.warnings
        );
    }
    let s = r.series.as_ref().unwrap();
    assert!(s.points.len() >= 4 && s.points[0][0] == 1024.0);
    assert!(s.points.iter().all(|p| p[1] > 0.0));
    assert!(r.median().unwrap() >= 1024.0);
}

#[test]
fn read_benchmarks_report_cached_and_uncached_curves() {
    let _serial = serial();
    for bench in [&fs::read::SEQ, &fs::read::RANDOM] {
        let rs = run(bench);
        for suffix in ["cached", "cached.latency", "uncached", "uncached.latency"] {
            let r = find(&rs, &format!("{}.{suffix}", bench.id));
            if r.status == Status::Skipped && suffix.starts_with("uncached") {
                eprintln!("{}: skipped: {:?}", r.id, r.reason);
                continue;
            }
            assert_ok(r);
            let s = r.series.as_ref().unwrap();
            assert_eq!(s.points.len(), fs::read::sizes(true).len(), "{}", r.id);
            assert!(s.points.iter().all(|p| p[1] > 0.0 && p[1].is_finite()));
            assert!(r.median().unwrap() > 0.0);
        }
        // Reading from memory beats reading from the device, for the largest file.
        let c = find(&rs, &format!("{}.cached", bench.id));
        let u = find(&rs, &format!("{}.uncached", bench.id));
        if u.status == Status::Ok {
            assert!(
                c.median().unwrap() > u.median().unwrap(),
                "cached {:?} vs uncached {:?}",
                c.median(),
                u.median()
            );
        }
    }
}

#[test]
fn metadata_benchmarks_run_and_fsync_costs_more_than_stat() {
    let _serial = serial();
    let mut medians = std::collections::BTreeMap::new();
    for bench in [
        &fs::meta::CREATE,
        &fs::meta::OPEN_CLOSE,
        &fs::meta::STAT,
        &fs::meta::UNLINK,
        &fs::meta::FSYNC,
    ] {
        let rs = run(bench);
        let r = find(&rs, bench.id);
        assert_ok(r);
        medians.insert(bench.id, r.median().unwrap());
    }
    eprintln!("{medians:?}");
    assert!(medians.values().all(|&m| m > 0.0));
    // fsync waits for the device; stat touches only cached metadata.
    assert!(
        medians["fs.meta.fsync"] > 5.0 * medians["fs.meta.stat"],
        "{medians:?}"
    );
}

#[test]
fn contention_slows_the_fixed_reader() {
    let _serial = serial();
    let mut last = Vec::new();
    for _attempt in 0..3 {
        let rs = run(&fs::contention::CONTENTION);
        let c = find(&rs, "fs.contention.cached");
        assert_ok(c);
        let u = find(&rs, "fs.contention.uncached");
        if u.status != Status::Skipped {
            assert_ok(u);
        }
        let pts = &c.series.as_ref().unwrap().points;
        assert_eq!(
            pts.iter().map(|p| p[0]).collect::<Vec<_>>(),
            vec![1.0, 2.0, 4.0, 8.0]
        );
        // Cached reads are CPU work: 8 readers on this machine's CPUs leave
        // the pinned reader at most a fair share once readers outnumber CPUs.
        let cpus = yamba_core::Machine::describe().online_cpus as f64;
        let share = pts[3][1] / pts[0][1];
        eprintln!("cached: 8 readers leave the fixed one {share:.2} of its solo bandwidth");
        if cpus >= 8.0 || share < 0.75 {
            return;
        }
        last.push(share);
    }
    panic!("no slowdown with 8 readers: shares {last:?}");
}

#[test]
fn eviction_fallback_reads_uncached_too() {
    let _serial = serial();
    let dir = scratch();
    if uncached_or_skip(dir.path()).is_none() {
        return;
    }
    let mut config = RunConfig::quick();
    config.settings.insert("fs.uncached".into(), "evict".into());
    let session = Session::prepare(config.clone());
    let rs = yamba_core::runner::run_one(&session, &fs::read::SEQ, Mode::Hot, dir.path());
    let u = find(&rs, "fs.read.seq.uncached");
    assert_ok(u);
    assert_eq!(u.params["caching"], "fadvise DONTNEED before each pass");
    assert!(u
        .evidence
        .iter()
        .any(|e| e.check.contains("started with none of the file") && e.ok));
    let c = find(&rs, "fs.read.seq.cached");
    assert!(c.median().unwrap() > u.median().unwrap());
    // A bad setting is one clear error.
    config
        .settings
        .insert("fs.uncached".into(), "sometimes".into());
    let rs = yamba_core::runner::run_one(
        &Session::prepare(config),
        &fs::read::SEQ,
        Mode::Hot,
        dir.path(),
    );
    assert_eq!(rs[0].status, Status::Failed);
    assert!(
        rs[0].reason.as_deref().unwrap().contains("fs.uncached"),
        "{:?}",
        rs[0].reason
    );
}
