//! Secrets never stored in a results file: the remote agent's token, in
//! the command line recorded (`--token T`, `--token=T`) and in the
//! configuration (`remote_token`). Writers strip them before writing and
//! readers on reading, so a file written by an older yamba loses its token
//! the first time `select` or `export` copies it on.

use crate::results::ResultsFile;

/// Options whose value is a secret.
pub const SECRET_OPTIONS: &[&str] = &["--token"];
/// Configuration keys whose value is a secret.
pub const SECRET_CONFIG_KEYS: &[&str] = &["remote_token"];
/// What a secret is replaced with.
pub const REDACTED: &str = "<redacted>";

/// `argv` with the value of every secret option replaced by [`REDACTED`].
pub fn redact_command(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut next_is_secret = false;
    for a in argv {
        if next_is_secret {
            out.push(REDACTED.to_string());
            next_is_secret = false;
            continue;
        }
        if a == "--" {
            out.push(a.clone());
            continue;
        }
        match SECRET_OPTIONS
            .iter()
            .find(|o| a == *o || a.strip_prefix(*o).is_some_and(|rest| rest.starts_with('=')))
        {
            Some(o) if a == o => {
                out.push(a.clone());
                next_is_secret = true;
            }
            Some(o) => out.push(format!("{o}={REDACTED}")),
            None => out.push(a.clone()),
        }
    }
    out
}

/// Whether `argv` holds a secret option's value.
pub fn command_has_secret(argv: &[String]) -> bool {
    redact_command(argv) != argv
}

impl ResultsFile {
    /// Whether the file holds a secret (see the module documentation).
    pub fn has_secrets(&self) -> bool {
        command_has_secret(&self.command)
            || SECRET_CONFIG_KEYS
                .iter()
                .any(|k| self.config.get(*k).is_some_and(|v| !v.is_null()))
    }

    /// Removes every secret the file holds.
    pub fn redact_secrets(&mut self) {
        self.command = redact_command(&self.command);
        // Emptied, not removed: a file without a secret reads back byte
        // for byte.
        if let Some(c) = self.config.as_object_mut() {
            for k in SECRET_CONFIG_KEYS {
                if let Some(v) = c.get_mut(*k) {
                    *v = serde_json::Value::Null;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn every_form_of_the_option_is_redacted() {
        assert_eq!(
            redact_command(&argv("yamba run net --remote h:1 --token s3cret --quick")),
            argv("yamba run net --remote h:1 --token <redacted> --quick")
        );
        assert_eq!(
            redact_command(&argv("yamba run --token=s3cret")),
            argv("yamba run --token=<redacted>")
        );
        // Not a secret: other options starting alike, a trailing --token.
        assert_eq!(
            redact_command(&argv("yamba run --token-file f --tokens x --token")),
            argv("yamba run --token-file f --tokens x --token")
        );
        assert!(command_has_secret(&argv("x --token=y")));
        assert!(!command_has_secret(&argv("x --token-file y")));
    }
}
