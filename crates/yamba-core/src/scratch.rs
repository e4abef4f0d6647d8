//! A run's scratch folder, `.yamba-scratch-PID`: created at the start,
//! removed at the end — and, when the run was killed before it could
//! remove it, removed by a later run that finds its owner gone.
//!
//! The owner holds an exclusive lock (flock) on `.owner` inside the folder
//! for as long as it lives; the kernel drops it when the owner dies, however
//! it dies. A folder whose lock can be taken, or an old one without a lock
//! file whose process no longer exists, is stale. Nothing else is touched:
//! only directories named exactly `.yamba-scratch-` and digits.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Scratch folders are named this, then the owner's process id (and
/// `-N` for the N-th further one a process makes: a library caller may run
/// several sessions, at once or one after another).
pub const PREFIX: &str = ".yamba-scratch-";

/// How many scratch folders this process has made.
static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
/// The lock file inside a scratch folder.
const OWNER: &str = ".owner";

/// Why the run's scratch folder could not be made: one line, naming it.
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    #[error("cannot create scratch directory {}: {error}", .path.display())]
    Folder {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot create {}: {error}", .path.display())]
    Owner {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot lock {}: {error}", .path.display())]
    Lock {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// The run's scratch folder: removed when dropped.
pub struct ScratchRoot {
    pub path: PathBuf,
    /// Held while the run lives: what tells a later run it is not stale.
    _owner: File,
}

impl ScratchRoot {
    /// Creates `.yamba-scratch-PID` under `parent` (default: the working
    /// directory), removing stale ones first.
    pub fn create(parent: Option<&Path>) -> Result<ScratchRoot, ScratchError> {
        let parent = parent
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        remove_stale(&parent);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = match n {
            0 => parent.join(format!("{PREFIX}{}", std::process::id())),
            n => parent.join(format!("{PREFIX}{}-{n}", std::process::id())),
        };
        std::fs::create_dir_all(&path).map_err(|error| ScratchError::Folder {
            path: path.clone(),
            error,
        })?;
        let owner_path = path.join(OWNER);
        let owner = File::create(&owner_path).map_err(|error| ScratchError::Owner {
            path: owner_path.clone(),
            error,
        })?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(owner.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(ScratchError::Lock {
                path: owner_path,
                error: std::io::Error::last_os_error(),
            });
        }
        Ok(ScratchRoot {
            path,
            _owner: owner,
        })
    }
}

impl Drop for ScratchRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes the scratch folders under `parent` whose owner is gone; returns
/// those removed.
pub fn remove_stale(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .map(|rest| rest.split_once('-').unwrap_or((rest, "0")))
            .filter(|&(pid, n)| digits(pid) && digits(n))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let path = e.path();
        // Never through a symlink; never our own.
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if !is_dir || pid == me || !owner_gone(&path, pid) {
            continue;
        }
        if std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Whether the run that made the scratch folder `dir` (process `pid`) is gone.
fn owner_gone(dir: &Path, pid: u32) -> bool {
    match File::open(dir.join(OWNER)) {
        // SAFETY: flock on a descriptor we own; dropped (and unlocked) after.
        Ok(f) => unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 },
        // A folder from before the lock, or one whose owner died before
        // making it: judge by the process.
        Err(_) => {
            // SAFETY: signal 0 only checks that the process exists.
            let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
            r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_folders_go_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        // A live run's folder (made first: making one removes stale ones).
        let live = ScratchRoot::create(Some(p)).unwrap();
        // A folder a killed run left: its lock file, nobody holding it.
        std::fs::create_dir_all(p.join(".yamba-scratch-4194401/b")).unwrap();
        std::fs::write(p.join(".yamba-scratch-4194401/.owner"), b"").unwrap();
        std::fs::write(p.join(".yamba-scratch-4194401/b/f"), vec![0u8; 4096]).unwrap();
        // An old one without a lock file, of a pid that cannot exist
        // (above the largest pid_max).
        std::fs::create_dir_all(p.join(".yamba-scratch-4194402")).unwrap();
        // Not ours to touch: a live run's (locked), a pid without lock
        // that exists (this test's parent), other names, a symlink.
        // SAFETY: getppid has no preconditions.
        let parent_pid = unsafe { libc::getppid() };
        std::fs::create_dir_all(p.join(format!(".yamba-scratch-{parent_pid}"))).unwrap();
        std::fs::create_dir_all(p.join(".yamba-scratch-12x")).unwrap();
        std::fs::create_dir_all(p.join("keep")).unwrap();
        std::os::unix::fs::symlink(p.join("keep"), p.join(".yamba-scratch-4194403")).unwrap();
        // A live lock held through another open file description.
        std::fs::create_dir_all(p.join(".yamba-scratch-4194404")).unwrap();
        let held = File::create(p.join(".yamba-scratch-4194404/.owner")).unwrap();
        assert_eq!(
            // SAFETY: flock on a descriptor this test holds open.
            unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );

        let mut gone = remove_stale(p);
        gone.sort();
        assert_eq!(
            gone,
            vec![
                p.join(".yamba-scratch-4194401"),
                p.join(".yamba-scratch-4194402")
            ]
        );
        for kept in [
            live.path.clone(),
            p.join(format!(".yamba-scratch-{parent_pid}")),
            p.join(".yamba-scratch-12x"),
            p.join("keep"),
            p.join(".yamba-scratch-4194403"),
            p.join(".yamba-scratch-4194404"),
        ] {
            assert!(
                kept.symlink_metadata().is_ok(),
                "{} removed",
                kept.display()
            );
        }
        drop(held);
        assert_eq!(remove_stale(p), vec![p.join(".yamba-scratch-4194404")]);
        let own = live.path.clone();
        drop(live);
        assert!(!own.exists());
    }
}
