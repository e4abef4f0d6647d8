//! Where the agent's token comes from, on both ends: the environment
//! variable [`TOKEN_ENV`] or a file only its owner can read — never the
//! command line if it can be helped (every local user can read a
//! process's arguments in /proc/PID/cmdline), and never a results file.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The environment variable holding the token.
pub const TOKEN_ENV: &str = "YAMBA_TOKEN";
/// Longest token accepted, in bytes.
pub const MAX_TOKEN: usize = 1024;

/// Where a token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--token` on the command line (visible to every local user).
    Flag,
    /// The environment variable [`TOKEN_ENV`].
    Env,
    /// A file only its owner can read.
    File(PathBuf),
}

/// The token from `--token-file`, `--token` or [`TOKEN_ENV`] (in that
/// order; giving both options is an error), or `None` when none is given.
pub fn from_options(
    flag: Option<&str>,
    file: Option<&Path>,
) -> Result<Option<(String, Source)>, String> {
    match (flag, file) {
        (Some(_), Some(_)) => Err("give the token once: --token or --token-file, not both".into()),
        (None, Some(f)) => Ok(Some((read_file(f)?, Source::File(f.to_path_buf())))),
        (Some(t), None) => Ok(Some((checked(t.to_string(), "--token")?, Source::Flag))),
        (None, None) => match std::env::var(TOKEN_ENV) {
            Ok(t) => Ok(Some((checked(t, TOKEN_ENV)?, Source::Env))),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(format!("{TOKEN_ENV}: not valid UTF-8")),
        },
    }
}

/// A warning for a token given on the command line, or None.
pub fn command_line_warning(source: &Source) -> Option<String> {
    (*source == Source::Flag).then(|| {
        format!(
            "a token given with --token is visible to every local user (ps, /proc/PID/cmdline); prefer {TOKEN_ENV}=… or --token-file FILE"
        )
    })
}

fn checked(token: String, from: &str) -> Result<String, String> {
    let t = token.trim();
    if t.is_empty() {
        return Err(format!("{from}: the token is empty"));
    }
    if t.len() > MAX_TOKEN {
        return Err(format!(
            "{from}: the token is longer than {MAX_TOKEN} bytes"
        ));
    }
    if t.chars().any(char::is_control) {
        return Err(format!("{from}: the token holds control characters"));
    }
    Ok(t.to_string())
}

/// Reads a token file, refusing one that others could read or change:
/// it must belong to this user (or root) and have no group or other
/// permissions (mode 0600 or 0400).
pub fn read_file(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let mut f = std::fs::File::open(path).map_err(|e| format!("--token-file {shown}: {e}"))?;
    let m = f
        .metadata()
        .map_err(|e| format!("--token-file {shown}: {e}"))?;
    if !m.is_file() {
        return Err(format!("--token-file {shown}: not a regular file"));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me && m.uid() != 0 {
        return Err(format!(
            "--token-file {shown}: belongs to user {}, not to you",
            m.uid()
        ));
    }
    if m.mode() & 0o077 != 0 {
        return Err(format!(
            "--token-file {shown}: others may read it (mode {:04o}): chmod 600 {shown}",
            m.mode() & 0o7777
        ));
    }
    let mut text = String::new();
    (&mut f)
        .take(MAX_TOKEN as u64 + 2)
        .read_to_string(&mut text)
        .map_err(|e| format!("--token-file {shown}: {e}"))?;
    checked(text, &format!("--token-file {shown}"))
}

/// Creates a token file holding `token` (mode 0600, never over an
/// existing file).
pub fn create_file(path: &Path, token: &str) -> Result<(), String> {
    let shown = path.display();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("--token-file {shown}: cannot create: {e}"))?;
    writeln!(f, "{token}").map_err(|e| format!("--token-file {shown}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn token_files_must_be_private() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tok");
        create_file(&p, "abc123").unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read_file(&p).unwrap(), "abc123");
        assert!(create_file(&p, "other").is_err(), "never overwrites");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_file(&p).unwrap_err();
        assert!(e.contains("mode 0644") && e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert_eq!(read_file(&p).unwrap(), "abc123");
        let empty = dir.path().join("empty");
        create_file(&empty, "").unwrap();
        assert!(read_file(&empty).unwrap_err().contains("empty"));
        assert!(read_file(dir.path()).is_err());
        assert!(from_options(Some("a"), Some(&p)).is_err());
        assert_eq!(
            from_options(Some(" x "), None).unwrap(),
            Some(("x".to_string(), Source::Flag))
        );
    }
}
