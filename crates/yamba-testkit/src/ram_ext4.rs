//! An ext4 filesystem on a fresh zram device, for tests that need a
//! filesystem of known make: reads done synchronously in the faulting
//! thread (no worker thread or interrupt on another CPU, as a loop
//! device's kworker would add), with or without a journal. Needs root and
//! zram; unmounted and the device removed on drop.

use std::path::Path;
use std::process::Command;

/// Whether the filesystem gets a journal (`mkfs.ext4 -O ^has_journal`
/// without).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Journal {
    With,
    Without,
}

pub struct RamExt4 {
    dir: std::path::PathBuf,
    zram: String,
    mounted: bool,
}

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

impl RamExt4 {
    /// A `size` (as zram's disksize takes it: "64M") ext4, its inode tables
    /// and journal written out at once (no lazy initialisation running
    /// beside a test), mounted on a fresh directory under the system's
    /// temporary directory. Err says why not (not root, no zram, a tool).
    pub fn new(size: &str, journal: Journal) -> Result<RamExt4, String> {
        let root = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Uid:"))
                    .map(|l| l.split_whitespace().nth(2) == Some("0"))
            })
            .unwrap_or(false);
        if !root {
            return Err("not root (a zram device needs it)".into());
        }
        let control = "/sys/class/zram-control/hot_add";
        if !Path::new(control).exists() {
            let _ = sh("modprobe", &["zram"]);
        }
        let n = std::fs::read_to_string(control)
            .map_err(|e| format!("no zram here ({control}: {e})"))?;
        let dir = std::env::temp_dir().join(format!(
            "yamba-ram-ext4-{}-{}",
            std::process::id(),
            n.trim()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut ram = RamExt4 {
            dir,
            zram: n.trim().to_string(),
            mounted: false,
        };
        let sys = format!("/sys/block/zram{}/disksize", ram.zram);
        std::fs::write(&sys, size).map_err(|e| format!("{sys}: {e}"))?;
        let dev = format!("/dev/zram{}", ram.zram);
        let features = match journal {
            Journal::With => "has_journal",
            Journal::Without => "^has_journal",
        };
        let init = "lazy_itable_init=0,lazy_journal_init=0";
        sh("mkfs.ext4", &["-q", "-F", "-O", features, "-E", init, &dev])?;
        let at = ram
            .dir
            .to_str()
            .ok_or("a temporary directory that is not UTF-8")?;
        sh("mount", &["-t", "ext4", &dev, at])?;
        ram.mounted = true;
        Ok(ram)
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for RamExt4 {
    fn drop(&mut self) {
        if self.mounted {
            let _ = sh("umount", &[&self.dir.to_string_lossy()]);
        }
        let _ = std::fs::remove_dir(&self.dir);
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.zram);
    }
}
