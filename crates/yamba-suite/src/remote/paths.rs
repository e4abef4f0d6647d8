//! Keeping the agent inside its root: which requested paths it may open.
//!
//! Three layers, each enough alone against the simple attacks: the request
//! must be a relative path of plain names (no `..`, no absolute path); its
//! canonical form (symlinks resolved) must lie under the canonical root; and
//! the file actually opened — without following a final symlink, without
//! blocking on a FIFO — must be a regular file whose path, as the kernel
//! reports it for the open descriptor, is still under the root (closing the
//! race of a symlink swapped in between).

use super::adapter;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

/// Resolves `request` inside `root` (already canonical) and opens it read-only.
pub fn open_confined(root: &Path, request: &str) -> Result<File, String> {
    let full = resolve(root, request)?;
    let file =
        adapter::open_read_nofollow(&full).map_err(|e| format!("cannot open {request:?}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot stat {request:?}: {e}"))?;
    if !meta.file_type().is_file() {
        return Err(format!("{request:?} is not a regular file"));
    }
    if let Some(actual) = adapter::fd_path(&file) {
        if !actual.starts_with(root) {
            return Err(format!("{request:?} resolves outside the served root"));
        }
    }
    Ok(file)
}

/// The canonical path `request` names under `root`, or why it is refused.
pub fn resolve(root: &Path, request: &str) -> Result<PathBuf, String> {
    if request.is_empty() {
        return Err("empty path".into());
    }
    if request.contains('\0') {
        return Err("path contains a NUL byte".into());
    }
    let p = Path::new(request);
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err(format!("{request:?}: '..' is not allowed")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("{request:?}: absolute paths are not allowed"))
            }
        }
    }
    let full = root
        .join(p)
        .canonicalize()
        .map_err(|e| format!("cannot resolve {request:?}: {e}"))?;
    if !full.starts_with(root) {
        return Err(format!("{request:?} resolves outside the served root"));
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
    }
}
