//! An ext4 without a journal makes a create's cost depend on the recent
//! deletes of every process (it skips inodes deleted in the last minutes;
//! docs/lmbench.md, lat_fs): `fs.create_delete`'s create rates say so
//! there, and only there (so do `fs.meta.create`'s, hot and cold).
//! Ground truth: two ext4 filesystems made here on zram, one with a
//! journal and one without, and tmpfs.

mod support;

use std::path::Path;
use yamba_core::{Benchmark, Mode, RunConfig, Session};
use yamba_suite::fs::{adapter, create_delete, files, meta};
use yamba_testkit::{Journal, RamExt4};

/// The warnings of result `id` of `bench` run in `mode`, with `scratch`
/// as the scratch directory.
fn warnings(bench: &'static Benchmark, id: &str, mode: Mode, scratch: &Path) -> Vec<String> {
    let session = Session::prepare(RunConfig {
        budget_s: 0.02,
        ..RunConfig::quick()
    });
    let rs = yamba_core::runner::run_one(&session, bench, mode, scratch);
    let r = support::find(&rs, id);
    support::assert_ok_with(r, &[]);
    r.warnings.clone()
}

#[test]
fn creates_on_an_ext4_without_a_journal_say_what_moves_them() {
    let _g = support::serial();
    let (with, without) = match (
        RamExt4::new("64M", Journal::With),
        RamExt4::new("64M", Journal::Without),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => yamba_testkit::skip!("{e}"),
    };
    assert_eq!(adapter::ext4_has_journal(with.path()), Some(true));
    assert_eq!(adapter::ext4_has_journal(without.path()), Some(false));
    // Every result that times creates says it, only there: the create
    // rate, and a create hot and cold; an unlink does not allocate.
    let cases: [(&'static Benchmark, &str, Mode, bool); 4] = [
        (
            &create_delete::SIZE_0K,
            "fs.create_delete.0k.create",
            Mode::Hot,
            true,
        ),
        (&meta::CREATE, "fs.meta.create", Mode::Hot, true),
        (&meta::CREATE, "fs.meta.create", Mode::Cold, true),
        (&meta::UNLINK, "fs.meta.unlink", Mode::Hot, false),
    ];
    let said = |w: Vec<String>| w.iter().any(|w| w == files::NO_JOURNAL);
    for (bench, id, mode, creates) in cases {
        assert_eq!(
            said(warnings(bench, id, mode, without.path())),
            creates,
            "{id} {mode:?} without a journal"
        );
        assert!(
            !said(warnings(bench, id, mode, with.path())),
            "{id} {mode:?} with a journal"
        );
    }
    // Not ext4: nothing to say.
    let shm = Path::new("/dev/shm");
    if adapter::fs_kind(shm).is_ok_and(|k| k.name == "tmpfs") {
        assert_eq!(adapter::ext4_has_journal(shm), None);
    }
}
