//! P = creating a file of a given size (open(O_CREAT|O_EXCL) + one write
//! of the size + close), and deleting it (unlink) — lmbench's lat_fs, in
//! files per second, for 0, 1, 4 and 10 KiB.
//!
//! A directory cannot create one name twice, so each observation times a
//! batch of K fresh names (built before the clock starts) and counts K / t;
//! create and delete batches alternate, so the directory holds at most K
//! files and both rates are sampled in turns. Nothing is synced: this is
//! the cost of the namespace and the page cache, as lmbench measures it.
//!
//! Evidence (gating): the files were counted — after each of the first
//! batches the directory held exactly K entries of exactly the size (and
//! none after the deletes) — and every call succeeded.

use super::adapter;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Unit};

macro_rules! create_delete {
    ($name:ident, $id:literal, $bytes:expr, $what:literal) => {
        pub static $name: Benchmark = Benchmark {
            id: $id,
            area: "fs",
            unit: Unit::PerSecond,
            description: concat!(
                "files of ",
                $what,
                " created (open O_CREAT + write + close) and deleted (unlink) per second (.create, .delete)"
            ),
            cold: Cold::NotMeaningful(
                "files per second over batches of many files: a rate; one file created or removed cold is fs.meta.create and fs.meta.unlink",
            ),
            adapter: adapter::NAME,
            run: |ctx| run(ctx, $bytes),
            ..Benchmark::TEMPLATE
        };
    };
}

create_delete!(SIZE_0K, "fs.create_delete.0k", 0, "0 bytes");
create_delete!(SIZE_1K, "fs.create_delete.1k", 1024, "1 KiB");
create_delete!(SIZE_4K, "fs.create_delete.4k", 4096, "4 KiB");
create_delete!(SIZE_10K, "fs.create_delete.10k", 10 * 1024, "10 KiB");

/// Files per batch: lmbench's files per directory.
pub const BATCH: usize = 100;

/// Creates `name` with `data` as its contents; false if any step failed.
fn create(name: &CString, data: &[u8]) -> bool {
    // SAFETY: name is NUL-terminated; data is valid for its length; the
    // descriptor is closed before returning.
    unsafe {
        let fd = libc::open(
            name.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return false;
        }
        let wrote = data.is_empty()
            || libc::write(fd, data.as_ptr().cast(), data.len()) == data.len() as isize;
        libc::close(fd) == 0 && wrote
    }
}

fn unlink(name: &CString) -> bool {
    // SAFETY: name is NUL-terminated.
    unsafe { libc::unlink(name.as_ptr()) == 0 }
}

/// (entries, entries of exactly `bytes`) in `dir`.
pub fn count_files(dir: &Path, bytes: u64) -> (usize, usize) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return (usize::MAX, 0);
    };
    let mut all = 0;
    let mut sized = 0;
    for e in rd.flatten() {
        all += 1;
        if e.metadata()
            .map(|m| m.is_file() && m.len() == bytes)
            .unwrap_or(false)
        {
            sized += 1;
        }
    }
    (all, sized)
}

/// One batch size's rates, and what was counted.
pub struct Rates {
    pub create_per_s: Vec<f64>,
    pub delete_per_s: Vec<f64>,
    pub failed: usize,
    /// (entries, entries of the size) after each of the first creates, and
    /// entries after each of the first deletes.
    pub after_create: Vec<(usize, usize)>,
    pub after_delete: Vec<usize>,
    pub calls: usize,
}

/// Alternates timed batches of `batch` creates and deletes of `bytes`-byte
/// files in `dir` until `min_batches` pairs and the budget are done.
pub fn measure(
    clock: &yamba_core::Clock,
    dir: &Path,
    bytes: usize,
    batch: usize,
    min_batches: usize,
    budget: std::time::Duration,
) -> Result<Rates, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let names: Vec<CString> = (0..batch)
        .map(|i| CString::new(dir.join(format!("f{i:05}")).as_os_str().as_bytes()).unwrap())
        .collect();
    let data = vec![0x5au8; bytes];
    let mut r = Rates {
        create_per_s: Vec::new(),
        delete_per_s: Vec::new(),
        failed: 0,
        after_create: Vec::new(),
        after_delete: Vec::new(),
        calls: 0,
    };
    // One untimed round: the directory's blocks and the dentries exist.
    for n in &names {
        create(n, &data);
    }
    for n in &names {
        unlink(n);
    }
    let started = Instant::now();
    let mut pairs = 0;
    while pairs < min_batches || (started.elapsed() < budget && pairs < 10_000) {
        let t0 = clock.start();
        let ok = names.iter().filter(|n| create(n, &data)).count();
        let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0));
        r.failed += batch - ok;
        r.create_per_s.push(batch as f64 * 1e9 / ns);
        if pairs < 3 {
            r.after_create.push(count_files(dir, bytes as u64));
        }
        let t0 = clock.start();
        let ok = names.iter().filter(|n| unlink(n)).count();
        let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0));
        r.failed += batch - ok;
        r.delete_per_s.push(batch as f64 * 1e9 / ns);
        if pairs < 3 {
            r.after_delete.push(count_files(dir, bytes as u64).0);
        }
        r.calls += 2 * batch;
        pairs += 1;
    }
    Ok(r)
}

fn run(ctx: &mut Ctx, bytes: usize) -> Result<(), String> {
    let dir = ctx.scratch_dir().join(format!("create_delete_{bytes}"));
    let started = Instant::now();
    let min_batches = ctx.scaled(5);
    let rates = measure(
        ctx.clock(),
        &dir,
        bytes,
        BATCH,
        min_batches,
        ctx.plan().budget,
    )?;
    let fs_type = adapter::fs_kind(&dir)
        .map(|k| format!("{} (magic {:#x})", k.name, k.magic))
        .unwrap_or_else(|e| format!("unknown: {e}"));
    for (suffix, obs, what) in [
        (
            "create",
            &rates.create_per_s,
            "open(O_CREAT|O_EXCL|O_WRONLY) + write + close",
        ),
        ("delete", &rates.delete_per_s, "unlink"),
    ] {
        let mut r = ctx.result(Some(suffix));
        r.description = format!("files of {bytes} bytes {suffix}d per second ({what})");
        r.set_observations(obs.clone());
        r.method =
            Some(ctx.direct_method(BATCH as u64, started, "batch of K fresh names: K / time"));
        r.param("file_bytes", bytes)
            .param("batch", BATCH)
            .param("operation", what)
            .param("fs_type", &fs_type)
            .param("synced", false);
        add_evidence(&mut r, &rates, bytes);
        if suffix == "create" {
            super::files::say_if_unjournaled(&mut r, &dir);
        }
        ctx.push(r);
    }
    Ok(())
}

fn add_evidence(r: &mut BenchResult, rates: &Rates, bytes: usize) {
    r.add_evidence(
        "every create, write, close and unlink succeeded",
        format!("{} calls", rates.calls),
        format!("{} failed", rates.failed),
        rates.failed == 0 && rates.calls > 0,
    );
    r.add_evidence(
        "the files were counted: each create batch left exactly K files of the size, each delete batch none",
        format!("{BATCH} files of {bytes} bytes, then 0"),
        format!(
            "after creates {:?} (entries, of the size); after deletes {:?}",
            rates.after_create, rates.after_delete
        ),
        !rates.after_create.is_empty()
            && rates.after_create.iter().all(|&(n, s)| n == BATCH && s == BATCH)
            && rates.after_delete.iter().all(|&n| n == 0),
    );
}
