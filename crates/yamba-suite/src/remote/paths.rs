//! Keeping the agent inside its root: which requested paths it may open.
//!
//! The request must be a relative path of plain names (no `..`, no
//! absolute path, no NUL); it is then resolved beneath a descriptor of
//! the root opened once at start, never as a string: by the kernel's
//! openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS where it has it,
//! which fails rather than leave the root whatever is renamed or swapped
//! meanwhile, and otherwise a component at a time with O_NOFOLLOW from the
//! root's descriptor, refusing every symbolic link, the directory reached
//! proven beneath the root by walking back up to it (see
//! `adapter/beneath.rs`). A file whose position cannot be proven is never
//! served. What is found is looked at before it is opened — through a
//! handle that opens nothing (no device driver's open, no FIFO
//! rendezvous) — and must be a regular file with one link, on a file
//! system that holds data (not procfs, sysfs and their kind, even
//! bind-mounted inside the root).
//!
//! Hard links: a hard link inside the root to a file elsewhere is the same
//! inode as that file, which no path check can tell apart — so a file with
//! more than one link is refused.

use super::adapter;
use super::protocol::printable;

/// How requests are resolved on this host ("openat2" or "component
/// walk"), and the switch that makes tests take the walk.
pub use super::adapter::{force_component_walk, resolver};
use std::fs::File;
use std::path::{Component, Path};

/// Longest request path accepted (Linux's PATH_MAX).
pub const MAX_PATH: usize = 4096;

/// A request path as error messages show it: quoted, escaped, at most 80
/// characters (a refusal never echoes a megabyte back).
pub fn shown(request: &str) -> String {
    format!("\"{}\"", printable(request.as_bytes(), 80))
}

/// Opens `request` read-only beneath the root directory `root` (a
/// descriptor opened by [`open_root`]).
pub fn open_confined(root: &File, request: &str) -> Result<File, String> {
    check_request(request)?;
    adapter::open_beneath(root, request).map_err(|why| format!("{}: {why}", shown(request)))
}

/// The root directory, opened once: every request is resolved beneath it.
pub fn open_root(root: &Path) -> Result<File, String> {
    adapter::open_root(root).map_err(|e| format!("root {}: {e}", root.display()))
}

/// Why `request` is refused before anything is resolved, if it is.
pub fn check_request(request: &str) -> Result<(), String> {
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
    for c in Path::new(request).components() {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes_and_accepts_plain_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let root_path = root.canonicalize().unwrap();
        let root = open_root(&root_path).unwrap();
        let root_p = root_path.clone();
        std::fs::write(root_p.join("ok.txt"), b"x").unwrap();
        std::fs::write(dir.path().join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root_p.join("link")).unwrap();
        std::fs::create_dir(root_p.join("sub")).unwrap();

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
        std::fs::hard_link(root_p.join("ok.txt"), root_p.join("twin.txt")).unwrap();
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
