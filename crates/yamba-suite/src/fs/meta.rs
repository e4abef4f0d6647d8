//! P = one metadata operation on a small file: create, open+close, stat,
//! unlink, fsync.
//!
//! Create and unlink change the directory, so they cannot be repeated on
//! one name: each observation times a batch of K operations on K fresh
//! names (the names are built before the clock starts) and divides by K;
//! the opposite operation runs untimed between batches, so the directory
//! never grows. Stat and open+close repeat on one file with the loop
//! method. Fsync is timed singly, after a 4 KiB write made the file dirty.
//!
//! Cold (every one of them): one operation timed alone after the caches
//! were evicted and branch history disturbed; create and unlink then
//! work on one name, the opposite operation untimed before each.

use super::adapter;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;
use yamba_core::{Benchmark, Cold, Ctx, Mode, Unit};

macro_rules! meta_bench {
    ($name:ident, $id:expr, $desc:expr, $run:expr) => {
        pub static $name: Benchmark = Benchmark {
            id: $id,
            area: "fs",
            unit: Unit::Nanoseconds,
            description: $desc,
            cold: Cold::Measured,
            adapter: adapter::NAME,
            run: $run,
            ..Benchmark::TEMPLATE
        };
    };
}

meta_bench!(
    CREATE,
    "fs.meta.create",
    "create a new empty file: open(O_CREAT|O_EXCL) + close",
    |c| run_batch(c, Op::Create)
);
meta_bench!(
    UNLINK,
    "fs.meta.unlink",
    "remove a small file: unlink(2)",
    |c| run_batch(c, Op::Unlink)
);
meta_bench!(
    OPEN_CLOSE,
    "fs.meta.open_close",
    "open(2) + close(2) of an existing small file",
    run_open_close
);
meta_bench!(
    STAT,
    "fs.meta.stat",
    "stat(2) of an existing small file",
    run_stat
);
meta_bench!(
    FSYNC,
    "fs.meta.fsync",
    "fsync(2) of a small file after a 4 KiB write",
    run_fsync
);

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Create,
    Unlink,
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).expect("scratch paths have no NUL")
}

fn create(p: &CString) -> bool {
    // SAFETY: p is NUL-terminated; the fd is closed at once.
    unsafe {
        let fd = libc::open(
            p.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
            0o644,
        );
        fd >= 0 && libc::close(fd) == 0
    }
}

fn unlink(p: &CString) -> bool {
    // SAFETY: p is NUL-terminated.
    unsafe { libc::unlink(p.as_ptr()) == 0 }
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| d.count())
        .unwrap_or(usize::MAX)
}

fn run_batch(ctx: &mut Ctx, op: Op) -> Result<(), String> {
    let dir = ctx.scratch_dir().join("meta");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if ctx.mode == Mode::Cold {
        return run_single(ctx, op, &dir);
    }
    // k is a size (the directory holds k entries); batches are amounts.
    let k = if ctx.quick() { 64 } else { 256 };
    let names: Vec<CString> = (0..k)
        .map(|i| cpath(&dir.join(format!("f{i:05}"))))
        .collect();
    let (min_obs, budget) = (ctx.scaled(5), ctx.plan().budget);
    let clock = ctx.clock();
    let mut obs = Vec::new();
    let (mut failed, mut batches) = (0usize, 0usize);
    let mut count_after = Vec::new();
    let started = Instant::now();
    // One untimed round first: the directory's blocks and dentries exist.
    for n in &names {
        create(n);
    }
    for n in &names {
        unlink(n);
    }
    while obs.len() < min_obs || started.elapsed() < budget {
        if op == Op::Unlink {
            failed += names.iter().filter(|n| !create(n)).count();
        }
        let t0 = clock.start();
        let ok = match op {
            Op::Create => names.iter().filter(|n| create(n)).count(),
            Op::Unlink => names.iter().filter(|n| unlink(n)).count(),
        };
        let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0));
        failed += k - ok;
        batches += 1;
        obs.push(ns / k as f64);
        if batches <= 3 {
            count_after.push(entries(&dir));
        }
        if op == Op::Create {
            failed += names.iter().filter(|n| !unlink(n)).count();
        }
        if obs.len() >= 10_000 {
            break;
        }
    }
    let mut r = ctx.result(None);
    r.set_observations(obs);
    r.method = Some(direct_method(
        k as u64,
        "batch of K fresh names, time / K",
        started,
    ));
    r.param("batch", k).param("file_bytes", 0);
    r.add_evidence(
        "every call succeeded",
        format!("{} calls", batches * k * 2),
        format!("{failed} failed"),
        failed == 0,
    );
    let want = if op == Op::Create { k } else { 0 };
    r.add_evidence(
        "the directory held exactly the files the batch made or left",
        format!("{want} entries after each of the first batches"),
        format!("{count_after:?}"),
        count_after.iter().all(|&c| c == want),
    );
    if op == Op::Create {
        super::files::say_if_unjournaled(&mut r, &dir);
    }
    ctx.push(r);
    Ok(())
}

/// Cold: one create (or unlink) of one name at a time, timed alone after
/// the eviction; the opposite operation, untimed, before it.
fn run_single(ctx: &mut Ctx, op: Op, dir: &Path) -> Result<(), String> {
    let name = cpath(&dir.join("f00000"));
    let (mut calls, mut failed, mut setups, mut setups_failed) = (0u64, 0u64, 0u64, 0u64);
    let mut entries_seen = Vec::new();
    let m = ctx.measure_single(
        || {
            // The state the operation needs: no file (create; none is
            // there before the first) or one (unlink).
            let ready = match op {
                Op::Create => unlink(&name) || setups == 0,
                Op::Unlink => create(&name),
            };
            setups += 1;
            setups_failed += u64::from(!ready);
            if entries_seen.len() < 3 {
                entries_seen.push(entries(dir));
            }
        },
        || {
            calls += 1;
            let ok = match op {
                Op::Create => create(&name),
                Op::Unlink => unlink(&name),
            };
            failed += u64::from(!ok);
        },
    );
    failed += setups_failed;
    let mut r = ctx.measured_result(None, m);
    r.param("batch", 1).param("file_bytes", 0);
    r.add_evidence(
        "every call succeeded",
        format!("{} calls", calls * 2),
        format!("{failed} failed"),
        failed == 0 && calls > 0,
    );
    let need = match op {
        Op::Create => 0,
        Op::Unlink => 1,
    };
    let want = vec![need; entries_seen.len()];
    r.add_evidence(
        "the directory held exactly what each operation needed before it (no file to create, one to unlink)",
        format!("{want:?} entries before the first operations"),
        format!("{entries_seen:?}"),
        entries_seen == want,
    );
    if op == Op::Create {
        super::files::say_if_unjournaled(&mut r, dir);
    }
    ctx.push(r);
    Ok(())
}

fn direct_method(n: u64, how: &str, started: Instant) -> yamba_results::results::Method {
    yamba_results::results::Method {
        // Kept as given, even 0 (`Method::direct` would raise 0 to 1).
        iterations: n,
        ..yamba_results::results::Method::direct(n, 0.0, 0.0, started.elapsed().as_secs_f64(), how)
    }
}

/// A 100-byte file to stat and open.
fn small_file(ctx: &Ctx) -> Result<CString, String> {
    let p = ctx.scratch_dir().join("small");
    std::fs::write(&p, [7u8; 100]).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    Ok(cpath(&p))
}

fn run_open_close(ctx: &mut Ctx) -> Result<(), String> {
    let p = small_file(ctx)?;
    let (mut calls, mut bad) = (0u64, 0u64);
    let mut first_fd = None;
    let m = ctx.measure(|| {
        // SAFETY: p is NUL-terminated; the fd is closed at once.
        let fd = unsafe { libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        calls += 1;
        // SAFETY: closing the fd just opened, once.
        if fd < 0 || unsafe { libc::close(fd) } != 0 || *first_fd.get_or_insert(fd) != fd {
            bad += 1;
        }
    });
    let mut r = ctx.measured_result(None, m);
    r.param("file_bytes", 100);
    r.add_evidence(
        "every open succeeded and the close freed its descriptor (the same lowest fd each time)",
        format!("fd {:?} from all {calls} opens", first_fd),
        format!("{bad} failed or leaked"),
        bad == 0 && calls > 0,
    );
    ctx.push(r);
    Ok(())
}

fn run_stat(ctx: &mut Ctx) -> Result<(), String> {
    let p = small_file(ctx)?;
    let (mut calls, mut bad) = (0u64, 0u64);
    // SAFETY: st is a valid stat buffer for the kernel to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let m = ctx.measure(|| {
        calls += 1;
        // SAFETY: p is NUL-terminated; st is valid.
        if unsafe { libc::stat(p.as_ptr(), &mut st) } != 0 || st.st_size != 100 {
            bad += 1;
        }
    });
    let mut r = ctx.measured_result(None, m);
    r.param("file_bytes", 100);
    r.add_evidence(
        "every stat succeeded and saw the file's 100 bytes",
        format!("size 100 from all {calls} calls"),
        format!("{bad} failed or wrong"),
        bad == 0 && calls > 0,
    );
    ctx.push(r);
    Ok(())
}

fn run_fsync(ctx: &mut Ctx) -> Result<(), String> {
    use std::os::unix::fs::FileExt;
    let path = ctx.scratch_dir().join("fsync");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let block = [0x5au8; 4096];
    let (mut writes_bad, mut syncs, mut syncs_bad) = (0u64, 0u64, 0u64);
    let mut dirty_before = 0u64;
    let mut wrote = 0u8;
    let m = ctx.measure_single(
        || {
            wrote = wrote.wrapping_add(1);
            let mut b = block;
            b[0] = wrote;
            if file.write_at(&b, 0).map(|n| n != 4096).unwrap_or(true) {
                writes_bad += 1;
            }
            dirty_before += 1;
        },
        || {
            syncs += 1;
            if file.sync_all().is_err() {
                syncs_bad += 1;
            }
        },
    );
    let mut r = ctx.measured_result(None, m);
    r.param("file_bytes", 4096);
    r.add_evidence(
        "every fsync followed a 4 KiB write, and every write and fsync succeeded",
        format!("{syncs} writes and fsyncs"),
        format!("{dirty_before} writes, {writes_bad} writes failed, {syncs_bad} fsyncs failed"),
        writes_bad == 0 && syncs_bad == 0 && dirty_before == syncs && syncs > 0,
    );
    ctx.push(r);
    Ok(())
}
