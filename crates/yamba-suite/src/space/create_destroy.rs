//! P = creating one primitive, and destroying it: the time beside
//! `space.*`'s memory per primitive (the Go! report asks for both).
//!
//! A created object must be destroyed before another can take its place
//! without the process running out of descriptors, so P'' is a batch: K
//! objects created by the space adapter's `Batch` (the same objects
//! `space.*` counts: a pipe, an AF_UNIX socketpair, an eventfd, an epoll
//! instance, a timerfd, a one-page anonymous mapping written once, and a
//! new empty file held open), the creates timed as one interval, then
//! the batch dropped — every object destroyed — timed as another. Each
//! batch gives one observation of each: `.create` (create interval / K),
//! `.destroy` (destroy interval / K) and the pair (their sum / K, the
//! result named after the benchmark). The halves are honest as halves:
//! a batch's creates are K creates with nothing else in between, its
//! destroys K destroys; what one object's create and destroy cost when
//! interleaved (the same descriptor number, the same slab object reused
//! hot) is a best case these batches do not show.
//!
//! What each create and destroy is (Linux): pipe2 / two closes;
//! socketpair / two closes; eventfd / close; epoll_create1 / close;
//! timerfd_create / close; mmap of one page at a fixed free address +
//! its first write (a page fault, a zeroed page) / munmap (the page
//! freed, its TLB entry flushed); open(O_CREAT|O_EXCL) in the scratch
//! directory / close + unlink. A mapping batch also reserves and releases
//! its address range once (two system calls over K objects).
//!
//! Evidence (gating): every batch's creates all succeeded; the census
//! (open descriptors in /proc/self/fd; our pages in /proc/self/maps; the
//! files in the directory) rose by exactly K objects' worth after each
//! create and came back to its start after each destroy.
//!
//! Hot only: a batch is timed as a whole, so evicting the caches before
//! it would make only its first object cold.

use super::adapter::{self, Batch, Kind};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;
use yamba_core::settings::Setting;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Unit};

/// `--set space.create_destroy.batch`: objects per timed batch.
pub const BATCH: Setting = Setting {
    key: "space.create_destroy.batch",
    kind: yamba_core::settings::Kind::Integer { min: 1, max: 4096 },
    default: "256",
    help: "objects created, then destroyed, per timed batch",
    aliases: &[],
};

const DEFAULT_BATCH: usize = 256;

/// The kinds timed, with the name their results carry (`space.*`'s for
/// the same kind).
pub const PRIMITIVES: [(Kind, &str); 7] = [
    (Kind::Pipe, "pipe"),
    (Kind::Socketpair, "socketpair"),
    (Kind::Eventfd, "eventfd"),
    (Kind::Epoll, "epoll"),
    (Kind::Timerfd, "timerfd"),
    (Kind::MmapAnon, "mapping"),
    (Kind::File, "file"),
];

/// The kind a `space.create_destroy.<name>` benchmark times.
fn kind_of(id: &str) -> Result<Kind, String> {
    let name = id.rsplit('.').next().unwrap_or(id);
    PRIMITIVES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|&(k, _)| k)
        .ok_or_else(|| format!("{id} names no primitive of space.create_destroy"))
}

macro_rules! create_destroy {
    ($name:ident, $id:literal, $desc:literal) => {
        pub static $name: Benchmark = Benchmark {
            id: $id,
            area: "space",
            unit: Unit::Nanoseconds,
            description: $desc,
            cold: Cold::NotMeaningful(
                "timed in batches of K objects, so an eviction before a batch would make only its first object cold",
            ),
            adapter: adapter::NAME,
            run: |ctx| run(ctx, kind_of($id)?),
            settings: &[BATCH],
            ..Benchmark::TEMPLATE
        };
    };
}

create_destroy!(
    PIPE,
    "space.create_destroy.pipe",
    "time to create and destroy a pipe (pipe2 / 2 closes); .create, .destroy each half"
);
create_destroy!(
    SOCKETPAIR,
    "space.create_destroy.socketpair",
    "time to create and destroy an AF_UNIX socketpair; .create, .destroy each half"
);
create_destroy!(
    EVENTFD,
    "space.create_destroy.eventfd",
    "time to create and destroy an eventfd; .create, .destroy each half"
);
create_destroy!(
    EPOLL,
    "space.create_destroy.epoll",
    "time to create and destroy an epoll instance; .create, .destroy each half"
);
create_destroy!(
    TIMERFD,
    "space.create_destroy.timerfd",
    "time to create and destroy a timerfd; .create, .destroy each half"
);
create_destroy!(
    MAPPING,
    "space.create_destroy.mapping",
    "time to map one anonymous page and write it, and to unmap it; .create, .destroy each half"
);
create_destroy!(
    FILE,
    "space.create_destroy.file",
    "time to create a new empty file held open, and to close and unlink it; .create, .destroy each half"
);

/// Per object, in ns, of each timed batch; what the census saw.
#[derive(Debug, Default)]
pub struct Timings {
    pub create: Vec<f64>,
    pub destroy: Vec<f64>,
    /// Batches whose census after the creates was not start + K objects.
    pub short_creates: usize,
    /// Batches whose census after the destroys was not back at its start.
    pub not_back: usize,
    /// The census at the start, after the first create and after the
    /// first destroy (for the evidence's text).
    pub first_census: Option<(u64, u64, u64)>,
    pub batches: usize,
}

impl Timings {
    pub fn pair(&self) -> Vec<f64> {
        self.create
            .iter()
            .zip(&self.destroy)
            .map(|(c, d)| c + d)
            .collect()
    }
}

/// How the census counts `kind`: descriptors, or our own pages (and, for
/// files, the directory's entries too).
fn count(kind: Kind, batch: Option<&Batch>, dir: &Path) -> Option<u64> {
    match kind {
        Kind::MmapAnon => batch.map_or(Some(0), |b| adapter::still_mapped(b.pages())),
        Kind::File => {
            let fds = adapter::census(kind)?;
            let files = std::fs::read_dir(dir).ok()?.count() as u64;
            Some(fds + files)
        }
        _ => adapter::census(kind),
    }
}

/// What K objects of `kind` add to [`count`].
fn per_object(kind: Kind) -> u64 {
    match kind {
        Kind::MmapAnon => 1,
        Kind::File => 2, // a descriptor and a directory entry
        k => k.fds(),
    }
}

/// Creates K of `kind`; a file's names are built here, before the clock
/// starts (`names`), and kept for the next batch.
fn create(kind: Kind, k: usize, page: usize, names: Vec<CString>) -> Result<Batch, String> {
    let batch = match kind {
        Kind::File => Batch::files(names),
        _ => Batch::create(kind, k, page),
    };
    Ok(batch?)
}

/// K names in `dir`, for a batch of files.
fn file_names(dir: &Path, k: usize) -> Result<Vec<CString>, String> {
    (0..k)
        .map(|i| {
            let p = dir.join(format!("cd{i:05}"));
            CString::new(p.as_os_str().as_bytes())
                .map_err(|_| format!("{} holds a NUL byte", p.display()))
        })
        .collect()
}

/// Times batches of `k` creates, then destroys, of `kind` (ten in a
/// quick pass, scaled by the block's effort; more while the budget
/// lasts, at most 10 000), counting after each.
fn measure(ctx: &Ctx, kind: Kind, k: usize, dir: &Path) -> Result<Timings, String> {
    let (clock, base_ns) = (ctx.clock(), ctx.base_ns());
    let page = ctx.machine().page_size as usize;
    let (batches, budget) = (ctx.scaled(10), ctx.plan().budget);
    let mut t = Timings::default();
    let all_names = match kind {
        Kind::File => file_names(dir, k)?,
        _ => Vec::new(),
    };
    // One untimed batch: the descriptor table and the slab caches have
    // grown to K objects once, as every timed batch then finds them.
    drop(create(kind, k, page, all_names.clone())?);
    let started = Instant::now();
    while t.batches < batches || (started.elapsed() < budget && t.batches < 10_000) {
        let before = count(kind, None, dir).ok_or("cannot count objects in /proc/self")?;
        let names = all_names.clone();
        let t0 = clock.start();
        let b = create(kind, k, page, names);
        let t1 = clock.stop();
        let b = b?;
        let alive = count(kind, Some(&b), dir).ok_or("cannot count objects in /proc/self")?;
        let pages = b.pages().to_vec();
        let t2 = clock.start();
        drop(b);
        let t3 = clock.stop();
        let after = match kind {
            Kind::MmapAnon => adapter::still_mapped(&pages),
            _ => count(kind, None, dir),
        }
        .ok_or("cannot count objects in /proc/self")?;
        let (want_alive, want_after) = match kind {
            Kind::MmapAnon => (k as u64, 0),
            _ => (before + k as u64 * per_object(kind), before),
        };
        t.short_creates += usize::from(alive != want_alive);
        t.not_back += usize::from(after != want_after);
        t.first_census.get_or_insert((before, alive, after));
        let per = |a: u64, b: u64| (clock.ticks_to_ns(b.wrapping_sub(a)) - base_ns) / k as f64;
        t.create.push(per(t0, t1));
        t.destroy.push(per(t2, t3));
        t.batches += 1;
    }
    Ok(t)
}

fn run(ctx: &mut Ctx, kind: Kind) -> Result<(), String> {
    let mut k = ctx
        .integer(BATCH.key)?
        .map_or(DEFAULT_BATCH, |n| n as usize);
    let mut warnings = Vec::new();
    if kind.fds() > 0 {
        let room = adapter::raise_nofile(k as u64 * kind.fds());
        let fit = (room.saturating_sub(8) / kind.fds()) as usize;
        if fit < k {
            warnings.push(format!(
                "RLIMIT_NOFILE could not be raised enough for {k} objects: batches of {fit}"
            ));
            k = fit;
        }
    }
    if k == 0 {
        return Err("no descriptors left for one object (RLIMIT_NOFILE)".into());
    }
    let dir: PathBuf = ctx.scratch_dir().join("create_destroy");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let started = Instant::now();
    let t = measure(ctx, kind, k, &dir)?;
    let (create_op, destroy_op) = operations(kind);
    for (suffix, obs, what) in [
        (None, t.pair(), format!("{create_op}, then {destroy_op}")),
        (Some("create"), t.create.clone(), create_op.to_string()),
        (Some("destroy"), t.destroy.clone(), destroy_op.to_string()),
    ] {
        let mut r = ctx.result(suffix);
        r.set_observations(obs);
        r.method = Some(ctx.direct_method(
            k as u64,
            started,
            "batches of K: each half timed as one interval, over K",
        ));
        r.param("operation", what).param("batch", k);
        if kind == Kind::File {
            r.param("directory", "the run's scratch directory");
        }
        add_evidence(&mut r, kind, k, &t);
        for w in &warnings {
            r.warn(w.clone());
        }
        ctx.push(r);
    }
    Ok(())
}

/// What one create and one destroy of `kind` are.
fn operations(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Pipe => ("pipe2", "close both ends"),
        Kind::Socketpair => ("socketpair(AF_UNIX, SOCK_STREAM)", "close both ends"),
        Kind::Eventfd => ("eventfd", "close"),
        Kind::Epoll => ("epoll_create1", "close"),
        Kind::Timerfd => ("timerfd_create(CLOCK_MONOTONIC)", "close"),
        Kind::MmapAnon => ("mmap one anonymous page + write it", "munmap"),
        Kind::File => ("open(O_CREAT|O_EXCL|O_WRONLY) a new name", "close + unlink"),
        _ => ("create", "destroy"),
    }
}

/// The census checks (gating) of a result made from `t`.
pub fn add_evidence(r: &mut BenchResult, kind: Kind, k: usize, t: &Timings) {
    let what = match kind {
        Kind::MmapAnon => "our pages in /proc/self/maps",
        Kind::File => "descriptors in /proc/self/fd + entries in the directory",
        _ => "descriptors in /proc/self/fd",
    };
    let first = t
        .first_census
        .map(|(b, a, c)| format!("first batch: {b} → {a} → {c}"))
        .unwrap_or_else(|| "no batch".into());
    r.add_evidence(
        format!(
            "every create succeeded: after each batch's creates, {what} rose by K objects' worth"
        ),
        format!(
            "{} batches, +{} each",
            t.batches,
            k as u64 * per_object(kind)
        ),
        format!("{} short ({first})", t.short_creates),
        t.batches > 0 && t.short_creates == 0,
    );
    r.add_evidence(
        format!(
            "every object was destroyed: after each batch's destroys, {what} was back at its start"
        ),
        format!("{} batches back", t.batches),
        format!("{} not back", t.not_back),
        t.batches > 0 && t.not_back == 0,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The results carry `space.*`'s name for the same kind, so the two
    /// lists cannot drift apart.
    #[test]
    fn names_are_the_space_areas() {
        for (kind, name) in PRIMITIVES {
            let space = super::super::BENCHMARKS
                .iter()
                .find(|b| b.id == format!("space.{name}"));
            if kind != Kind::File {
                assert!(space.is_some(), "no space.{name} for {kind:?}");
            }
            assert!(
                super::super::BENCHMARKS
                    .iter()
                    .any(|b| b.id == format!("space.create_destroy.{name}")),
                "no space.create_destroy.{name}"
            );
        }
    }
}
