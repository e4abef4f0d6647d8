//! An ext4 without a journal makes a create's cost depend on the recent
//! deletes of every process (it skips inodes deleted in the last minutes;
//! docs/lmbench.md, lat_fs): `fs.create_delete`'s create rates say so
//! there, and only there. Ground truth: two ext4 filesystems made here on
//! zram, one with a journal and one without, and tmpfs.

mod support;

use std::path::Path;
use std::process::Command;
use yamba_core::{Mode, RunConfig, Session};
use yamba_suite::fs::{adapter, create_delete};

fn sh(program: &str, args: &[&str]) -> Result<(), String> {
    let o = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// An ext4 on a fresh zram device, mounted on a temporary directory,
/// undone when dropped.
struct RamExt4 {
    dir: tempfile::TempDir,
    zram: String,
    mounted: bool,
}

impl RamExt4 {
    fn new(journal: bool) -> Result<RamExt4, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root (a zram device needs it)".into());
        }
        let _ = sh("modprobe", &["zram"]);
        let control = "/sys/class/zram-control/hot_add";
        let n = std::fs::read_to_string(control)
            .map_err(|e| format!("no zram here ({control}: {e})"))?;
        let mut ram = RamExt4 {
            dir: tempfile::tempdir().map_err(|e| e.to_string())?,
            zram: n.trim().to_string(),
            mounted: false,
        };
        let sys = format!("/sys/block/zram{}/disksize", ram.zram);
        std::fs::write(&sys, "64M").map_err(|e| format!("{sys}: {e}"))?;
        let dev = format!("/dev/zram{}", ram.zram);
        let features = if journal {
            "has_journal"
        } else {
            "^has_journal"
        };
        sh("mkfs.ext4", &["-q", "-F", "-O", features, &dev])?;
        sh(
            "mount",
            &["-t", "ext4", &dev, ram.dir.path().to_str().unwrap()],
        )?;
        ram.mounted = true;
        Ok(ram)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for RamExt4 {
    fn drop(&mut self) {
        if self.mounted {
            let _ = sh("umount", &[self.dir.path().to_str().unwrap()]);
        }
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.zram);
    }
}

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
    let (with, without) = match (RamExt4::new(true), RamExt4::new(false)) {
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
