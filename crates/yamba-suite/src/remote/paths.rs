//! Keeping the agent inside its root: which requested paths it may open.
//!
//! Four layers, each enough alone against the simple attacks: the request
//! must be a relative path of plain names (no `..`, no absolute path); its
//! canonical form (symlinks resolved) must lie under the canonical root;
//! the file is looked at before it is opened — through a handle that opens
//! nothing (no device driver's open, no FIFO rendezvous, no final symlink
//! followed) — and must be a regular file with one link, on a file system
//! that holds data (not procfs, sysfs and their kind, even bind-mounted
//! inside the root); and the path the kernel reports for the descriptor
//! finally opened must still be under the root (closing the race of a
//! symlink swapped in between).
//!
//! Hard links: a hard link inside the root to a file elsewhere is the same
//! inode as that file, which no path check can tell apart — so a file with
//! more than one link is refused.

use super::adapter;
use super::protocol::printable;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

/// Longest request path accepted (Linux's PATH_MAX).
pub const MAX_PATH: usize = 4096;

/// A request path as error messages show it: quoted, escaped, at most 80
/// characters (a refusal never echoes a megabyte back).
pub fn shown(request: &str) -> String {
    format!("\"{}\"", printable(request.as_bytes(), 80))
}

/// Resolves `request` inside `root` (already canonical) and opens it read-only.
pub fn open_confined(root: &Path, request: &str) -> Result<File, String> {
    let full = resolve(root, request)?;
    let file = adapter::open_regular(&full).map_err(|why| format!("{}: {why}", shown(request)))?;
    if let Some(actual) = adapter::fd_path(&file) {
        if !actual.starts_with(root) {
            return Err(format!(
                "{} resolves outside the served root",
                shown(request)
            ));
        }
    }
    Ok(file)
}

/// The canonical path `request` names under `root`, or why it is refused.
pub fn resolve(root: &Path, request: &str) -> Result<PathBuf, String> {
    if request.is_empty() {
        return Err("empty path".into());
    }
    if request.len() > MAX_PATH {
        return Err(format!(
            "path of {} bytes is longer than {MAX_PATH}",
            request.len()
        ));
    }
    if request.contains('\0') {
        return Err("path contains a NUL byte".into());
    }
    let p = Path::new(request);
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err(format!("{}: '..' is not allowed", shown(request))),
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{}: absolute paths are not allowed",
                    shown(request)
                ))
            }
        }
    }
    let full = root
        .join(p)
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", shown(request)))?;
    if !full.starts_with(root) {
        return Err(format!(
            "{} resolves outside the served root",
            shown(request)
        ));
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes_and_accepts_plain_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let root = root.canonicalize().unwrap();
        std::fs::write(root.join("ok.txt"), b"x").unwrap();
        std::fs::write(dir.path().join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("link")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();

        assert!(open_confined(&root, "ok.txt").is_ok());
        assert!(open_confined(&root, "./ok.txt").is_ok());
        for bad in [
            "../secret",
            "sub/../../secret",
            "/etc/passwd",
            "link",
            "sub",
            "",
            "nope",
        ] {
            assert!(open_confined(&root, bad).is_err(), "{bad} was accepted");
        }
        // A hard link is the same inode as a file that may lie outside.
        std::fs::hard_link(root.join("ok.txt"), root.join("twin.txt")).unwrap();
        let why = open_confined(&root, "twin.txt").unwrap_err();
        assert!(why.contains("hard links"), "{why}");
        // A long path is refused, and the refusal stays short.
        let long = "a/".repeat(400_000);
        let why = open_confined(&root, &long).unwrap_err();
        assert!(why.len() < 200, "{} bytes", why.len());
        let why = open_confined(&root, &format!("../{}", "b".repeat(3000))).unwrap_err();
        assert!(why.len() < 200 && why.contains('…'), "{why}");
    }
}
