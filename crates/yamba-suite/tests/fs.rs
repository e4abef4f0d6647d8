//! Ground truth for the `fs` area: byte counts of passes, eviction seen by
//! mincore, and the benchmarks run end to end with their evidence. Times,
//! orderings and the cache's knee are measurement checks (measure_fs.rs).

mod support;

use std::path::Path;
use support::{find, serial};
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

fn uncached_method(dir: &Path) -> Result<files::Caching, String> {
    files::uncached_method(dir)
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
    if let Err(why) = uncached_method(dir.path()) {
        yamba_testkit::skip!("{why}");
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
        _ => yamba_testkit::skip!("/dev/shm is not a tmpfs here"),
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
    }
}

#[test]
fn metadata_benchmarks_run() {
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
}

#[test]
fn eviction_fallback_reads_uncached_too() {
    let _serial = serial();
    let dir = scratch();
    if let Err(why) = uncached_method(dir.path()) {
        yamba_testkit::skip!("{why}");
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

/// The pattern the scratch files hold is the one `pattern_byte` describes
/// (the reread's expected sums are computed from it, not from the file),
/// and `expected_sum` is the sum of the words of such a file.
#[test]
fn scratch_files_hold_the_known_pattern_and_its_sum() {
    let _serial = serial();
    let dir = scratch();
    for size in [8u64, 4096, (3 << 20) + 65536] {
        let p = dir.path().join(format!("pat{size}"));
        files::write_file(&p, size).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len() as u64, size);
        assert!(bytes
            .iter()
            .enumerate()
            .all(|(i, &b)| b == files::pattern_byte(i as u64)));
        let by_hand = bytes.chunks(8).fold(0u64, |s, w| {
            s.wrapping_add(u64::from_ne_bytes(w.try_into().unwrap()))
        });
        assert_eq!(fs::reread::expected_sum(size), by_hand, "size {size}");
        assert_eq!(fs::reread::word_sum(&bytes), by_hand, "size {size}");
    }
}

/// The reread's four ways each report a bandwidth whose evidence held: the
/// pattern's sum every pass, the file resident, no fault over the mapping
/// made once, faults over each fresh one.
#[test]
fn reread_reports_four_ways_with_their_evidence() {
    let _serial = serial();
    let rs = run(&fs::reread::REREAD);
    for access in fs::reread::Access::ALL {
        let r = find(&rs, &format!("fs.reread.{}", access.suffix()));
        assert_ok(r);
        assert!(r.median().unwrap() > 0.0);
        assert!(r
            .evidence
            .iter()
            .any(|e| e.check.starts_with("every pass summed") && e.ok));
    }
    let m = find(&rs, "fs.reread.mmap");
    assert!(m.evidence.iter().any(|e| e
        .check
        .starts_with("passes over the mapping made once took no page fault")));
    let o = find(&rs, "fs.reread.mmap.open2close");
    let faults = o
        .evidence
        .iter()
        .find(|e| e.check.starts_with("each fresh mapping faults"))
        .unwrap();
    assert!(faults.ok, "{faults:?}");
}

/// A block device's stat line: field 7 is sectors written, field 16 flushes.
#[test]
fn device_stat_lines_parse() {
    let line = "20410502 123290 717563026 18471561 1358999 734337 913468488 4794285 0 1664356 23618690 1114787 1478 814638472 324703 304252 28139\n";
    let io = adapter::parse_device_stat(line).unwrap();
    assert_eq!(io.sectors_written, 913_468_488);
    assert_eq!(io.flushes, Some(304_252));
    // Kernels before 5.5: 11 fields, no flush counter.
    let old = adapter::parse_device_stat("1 2 3 4 5 6 7 8 9 10 11").unwrap();
    assert_eq!((old.sectors_written, old.flushes), (7, None));
    assert!(adapter::parse_device_stat("1 2 3").is_none());
}

/// The scratch directory's block device is found from st_dev, and its
/// counters see an O_DIRECT write and an fsync'ed buffered write of known
/// size (others' writes may only add); a memory filesystem has none.
#[test]
fn the_block_device_counts_what_reaches_it() {
    let _serial = serial();
    let dir = scratch();
    let dev = match adapter::block_device(dir.path()) {
        Ok(d) => d,
        Err(why) => yamba_testkit::skip!("{why}"),
    };
    eprintln!("{dev:?}");
    let size = 4u64 << 20;
    let p = dir.path().join("dev");
    files::write_file(&p, size).unwrap();
    let buf = vec![fs::write_point::FILL; 1 << 20];
    let mut aligned = files::AlignedBuf::new(1 << 20);
    aligned.as_mut_slice().copy_from_slice(&buf);
    for direct in [true, false] {
        let f = if direct {
            match adapter::open_direct_write(&p).unwrap() {
                Some(f) => f,
                None => continue,
            }
        } else {
            std::fs::OpenOptions::new().write(true).open(&p).unwrap()
        };
        let before = adapter::device_io(&dev).unwrap();
        let t = fs::write_point::seq_write_pass(&f, size, 1 << 20, aligned.as_mut_slice()).unwrap();
        if !direct {
            f.sync_all().unwrap();
        }
        let after = adapter::device_io(&dev).unwrap();
        assert_eq!(t.bytes, size);
        let sectors = after.sectors_written - before.sectors_written;
        assert!(
            sectors >= size / 512,
            "direct {direct}: {sectors} sectors for {size} bytes"
        );
    }
    if let Ok(k) = adapter::fs_kind(Path::new("/dev/shm")) {
        if k.memory_only {
            let err = adapter::block_device(Path::new("/dev/shm")).unwrap_err();
            assert!(err.contains("anonymous device"), "{err}");
        }
    }
}

/// Every variant of the write benchmarks reports, or is skipped with a
/// reason; each reported one's blocks read back as written, and where it
/// claims the device, the device's counters agree (when a device is found).
#[test]
fn write_benchmarks_report_every_variant_with_its_evidence() {
    let _serial = serial();
    let dir = scratch();
    let device = adapter::block_device(dir.path());
    for bench in [&fs::write::SEQ, &fs::write::RANDOM] {
        let rs = run(bench);
        for v in fs::write::VARIANTS {
            for suffix in [v.label().to_string(), format!("{}.latency", v.label())] {
                let r = find(&rs, &format!("{}.{suffix}", bench.id));
                if r.status == Status::Skipped && v.claims_device() {
                    eprintln!("{}: skipped: {:?}", r.id, r.reason);
                    assert!(r.reason.is_some());
                    continue;
                }
                assert_ok(r);
                let s = r.series.as_ref().unwrap();
                let largest = *fs::write::sizes(true, fs::write::DEFAULT_SIZE)
                    .last()
                    .unwrap();
                assert_eq!(s.points.len(), fs::write::blocks(true, largest).len());
                assert!(s.points.iter().all(|p| p[1] > 0.0 && p[1].is_finite()));
                let has = |start: &str| {
                    r.evidence
                        .iter()
                        .any(|e| e.check.starts_with(start) && e.ok)
                };
                assert!(has("every block written reads back"), "{:?}", r.evidence);
                if v.claims_device() && device.is_ok() {
                    assert!(has("the block device"), "{}: {:?}", r.id, r.evidence);
                }
            }
        }
    }
}
