//! An ext4 without a journal makes a create's cost depend on the recent
//! deletes of every process (it skips inodes deleted in the last minutes;
//! docs/lmbench.md, lat_fs): `fs.create_delete`'s create rates say so
//! there, and only there. Ground truth: two ext4 filesystems made here on
//! zram, one with a journal and one without, and tmpfs.

mod support;

use std::path::Path;
use yamba_core::{Mode, RunConfig, Session};
use yamba_suite::fs::{adapter, create_delete};
use yamba_testkit::{Journal, RamExt4};

/// The create rate's warnings, run with `scratch` as the scratch directory.
fn create_warnings(scratch: &Path) -> Vec<String> {
    let session = Session::prepare(RunConfig {
        budget_s: 0.02,
        ..RunConfig::quick()
    });
    let rs = yamba_core::runner::run_one(&session, &create_delete::SIZE_0K, Mode::Hot, scratch);
    let r = support::find(&rs, "fs.create_delete.0k.create");
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
    let said = |w: &[String]| w.iter().any(|w| w == create_delete::NO_JOURNAL);
    assert!(said(&create_warnings(without.path())));
    assert!(!said(&create_warnings(with.path())));
    // Not ext4: nothing to say.
    let shm = Path::new("/dev/shm");
    if adapter::fs_kind(shm).is_ok_and(|k| k.name == "tmpfs") {
        assert_eq!(adapter::ext4_has_journal(shm), None);
    }
}
