//! The one writer of results files. Every command that produces one
//! (`run`, `lang run`, `asm`, `stone`, `stress`) names it, checks it can be
//! written before measuring anything, saves it as it goes and at the end
//! through an [`Output`], so they all behave alike:
//!
//! - the default name is a fresh timestamped `.json.zst` in the results
//!   folder, after what made it ([`default_out`]: `yamba-…`, `lang-CLASS-…`,
//!   `asm-…`);
//! - a file that cannot be written is known before a minute is spent
//!   measuring ([`check_writable`]);
//! - nothing measured is lost to a full disk or a folder removed meanwhile:
//!   a save that fails where asked goes to the first fallback place that
//!   takes it ([`fallback_dirs`]), and the asked place is tried again at
//!   the next save;
//! - the end says where the file went ([`Saved`]), which the command prints
//!   and the history records.

use crate::results::{now_rfc3339, writable_output, ResultsFile};
use std::path::{Path, PathBuf};

/// Why a results file cannot be written where asked; each says it in one
/// line, its cause included.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The default name's folder could not be made.
    #[error("cannot create results folder {}: {error}", .dir.display())]
    Folder { dir: PathBuf, error: std::io::Error },
    /// `--out` names a directory.
    #[error("--out {}: is a directory", .path.display())]
    IsDirectory { path: PathBuf },
    /// `--out` names something a results file may not replace.
    #[error("--out {}: {error}", .path.display())]
    Refused {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The folder `--out` names does not exist.
    #[error("cannot write results to {}: folder {} does not exist", .path.display(), .dir.display())]
    NoFolder { path: PathBuf, dir: PathBuf },
    /// Writing there failed.
    #[error("cannot write results to {}: {error}", .path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Writing the first save there failed.
    #[error("cannot write {}: {error}", .path.display())]
    Save {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Where one command's results file goes.
#[derive(Debug, Clone)]
pub struct Output {
    asked: PathBuf,
}

/// Where a results file went at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The place asked for (`--out`, or the default name).
    pub asked: PathBuf,
    /// Why it could not be written there (None: it was).
    pub failed: Option<String>,
    /// Where it is: the place asked, the first fallback place that took
    /// it, or None when nowhere could be written.
    pub written: Option<PathBuf>,
}

impl Output {
    /// `out` when given, else a fresh default name under `results_dir`
    /// starting with `prefix`; fails, before anything is measured, when it
    /// cannot be written.
    pub fn new(
        out: Option<&Path>,
        results_dir: &Path,
        prefix: &str,
    ) -> Result<Output, OutputError> {
        let asked = match out {
            Some(p) => p.to_path_buf(),
            None => default_out(results_dir, prefix)?,
        };
        check_writable(&asked)?;
        Ok(Output { asked })
    }

    /// Exactly `path`, not checked first: for a command that knows its
    /// file only once it has measured (`stone` names it after its log).
    /// Saving still falls back when `path` cannot be written.
    pub fn at(path: &Path) -> Output {
        Output {
            asked: path.to_path_buf(),
        }
    }

    /// The place asked for.
    pub fn path(&self) -> &Path {
        &self.asked
    }

    /// Writes `file` where asked, atomically, or says why it could not
    /// (the start of a run: nothing is measured yet, so no fallback).
    pub fn save_here(&self, file: &ResultsFile) -> Result<(), OutputError> {
        file.write_atomic(&self.asked)
            .map_err(|error| OutputError::Save {
                path: self.asked.clone(),
                error,
            })
    }

    /// Writes `file` where asked, or, when that fails, to the first
    /// fallback place that takes it. Ok(path) when written where asked;
    /// otherwise the error and where it went instead (if anywhere).
    pub fn save(&self, file: &ResultsFile) -> Result<PathBuf, (String, Option<PathBuf>)> {
        save_or_fallback(file, &self.asked)
    }

    /// The last save of a command's file, saying where it went.
    pub fn finish(&self, file: &ResultsFile) -> Saved {
        let (written, failed) = match self.save(file) {
            Ok(at) => (Some(at), None),
            Err((why, at)) => (at, Some(why)),
        };
        Saved {
            asked: self.asked.clone(),
            failed,
            written,
        }
    }
}

impl Saved {
    /// Whether the file is not where asked (the command then exits
    /// non-zero even when it went to a fallback place).
    pub fn not_where_asked(&self) -> bool {
        self.failed.is_some()
    }
}

/// Writes `file` to `path`, or, when that fails, to the first fallback
/// place that takes it. Ok(path) when written where asked; otherwise the
/// error and where it went instead (if anywhere).
pub fn save_or_fallback(
    file: &ResultsFile,
    path: &Path,
) -> Result<PathBuf, (String, Option<PathBuf>)> {
    let why = match file.write_atomic(path) {
        Ok(()) => return Ok(path.to_path_buf()),
        Err(e) => format!("cannot write results to {}: {e}", path.display()),
    };
    let name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "yamba-results.json".into());
    for dir in fallback_dirs() {
        let at = dir.join(&name);
        if at != path && file.write_atomic(&at).is_ok() {
            return Err((why, Some(at)));
        }
    }
    Err((why, None))
}

/// Where results go when the place asked for cannot be written, in order:
/// `$XDG_STATE_HOME/yamba`, `$HOME/.local/state/yamba`, and a folder of
/// this user's own in the temporary directory (`yamba-UID`, mode 0700 —
/// never one another user made). Created as needed; those that cannot be
/// are left out.
pub fn fallback_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let env_dir = |k: &str| {
        std::env::var_os(k)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(d) = env_dir("XDG_STATE_HOME") {
        dirs.push(d.join("yamba"));
    }
    if let Some(h) = env_dir("HOME") {
        dirs.push(h.join(".local/state/yamba"));
    }
    let mut out: Vec<PathBuf> = dirs
        .into_iter()
        .filter(|d| std::fs::create_dir_all(d).is_ok())
        .collect();
    if let Some(d) = private_temp_dir() {
        out.push(d);
    }
    out
}

/// `$TMPDIR/yamba-UID`, made with mode 0700 if missing, and used only if
/// it is a real directory of this user's that nobody else may enter.
fn private_temp_dir() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let d = std::env::temp_dir().join(format!("yamba-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&d);
    let m = std::fs::symlink_metadata(&d).ok()?;
    (m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0).then_some(d)
}

/// A fresh timestamped file name under `dir` (created if missing),
/// `PREFIX-TIME.json.zst`: zstd-compressed JSON, which every reader opens
/// as it opens plain JSON (the default suite's observations take ≈ 7× less
/// room so).
pub fn default_out(dir: &Path, prefix: &str) -> Result<PathBuf, OutputError> {
    std::fs::create_dir_all(dir).map_err(|error| OutputError::Folder {
        dir: dir.to_path_buf(),
        error,
    })?;
    let stamp = now_rfc3339().replace([':', '-'], "");
    Ok(dir.join(format!("{prefix}-{stamp}.json.zst")))
}

/// Fails before anything is measured if the results file cannot be written.
pub fn check_writable(path: &Path) -> Result<(), OutputError> {
    let path_buf = || path.to_path_buf();
    if path.is_dir() {
        return Err(OutputError::IsDirectory { path: path_buf() });
    }
    writable_output(path).map_err(|error| OutputError::Refused {
        path: path_buf(),
        error,
    })?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(OutputError::NoFolder {
            path: path_buf(),
            dir: dir.to_path_buf(),
        });
    }
    let probe = dir.join(format!(".yamba-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|error| OutputError::Write {
        path: path_buf(),
        error,
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> ResultsFile {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/files/run-v0.1.0.json"),
        )
        .unwrap();
        ResultsFile::from_json(&text).unwrap()
    }

    #[test]
    fn an_unwritable_place_fails_before_measuring() {
        let dir = tempfile::tempdir().unwrap();
        let err = check_writable(&dir.path().join("no/such/r.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
        let err = check_writable(dir.path()).unwrap_err().to_string();
        assert!(err.contains("is a directory"), "{err}");
        check_writable(&dir.path().join("r.json")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_default_name_is_timestamped_compressed_and_after_its_maker() {
        let dir = tempfile::tempdir().unwrap();
        let p = default_out(&dir.path().join("new"), "lang-Fig2").unwrap();
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("lang-Fig2-2"), "{name}");
        assert!(name.ends_with(".json.zst"), "{name}");
        assert!(dir.path().join("new").is_dir());
    }

    #[test]
    fn a_save_that_fails_where_asked_goes_to_a_fallback_place() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        // The place asked is a folder removed after the check.
        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let out = Output::new(Some(&gone.join("r.json")), dir.path(), "yamba").unwrap();
        std::fs::remove_dir(&gone).unwrap();
        // The fallback order starts with $XDG_STATE_HOME/yamba; no other
        // test of this binary reads it.
        std::env::set_var("XDG_STATE_HOME", &state);
        let saved = out.finish(&file());
        assert_eq!(saved.asked, gone.join("r.json"));
        assert!(saved.not_where_asked());
        assert!(saved
            .failed
            .as_deref()
            .unwrap()
            .contains("cannot write results to"));
        assert_eq!(saved.written, Some(state.join("yamba/r.json")));
        assert!(ResultsFile::read(&state.join("yamba/r.json")).is_ok());
        // Where asked, when it can be.
        let ok = Output::at(&dir.path().join("r.json")).finish(&file());
        assert_eq!(ok.failed, None);
        assert_eq!(ok.written, Some(dir.path().join("r.json")));
    }
}
