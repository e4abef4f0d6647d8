//! The end of every command that writes a results file (`run`, `lang
//! run`, `asm`, `stone`, `stress`): where the file went — where asked, a
//! fallback place instead, or nowhere (the printed table then being all
//! that is left) — and the run stored in the history. The file itself is
//! written by the one writer, [`yamba_results::output::Output`].

use yamba_history::{OriginKind, Recorder};
use yamba_results::output::{fallback_dirs, Saved};
use yamba_results::ResultsFile;

/// What the end of a command found.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ending {
    /// The file is not where asked (a fallback place, or nowhere).
    pub not_saved: bool,
    /// A history asked for explicitly could not store the run.
    pub unrecorded: bool,
}

impl Ending {
    /// 1 when the command failed or its file is not where asked, 2 when
    /// only the history could not store it, else 0.
    pub fn exit_code(&self, failed: bool) -> i32 {
        if failed || self.not_saved {
            1
        } else if self.unrecorded {
            2
        } else {
            0
        }
    }
}

/// Says where `file` went and stores it in the history (`suite`: what the
/// history lists as the run's suite).
pub fn conclude(
    saved: &Saved,
    recorder: Option<&Recorder>,
    file: &ResultsFile,
    kind: OriginKind,
    suite: String,
) -> Ending {
    let not_saved = report(saved);
    let unrecorded = super::history::record(recorder, file, kind, suite, saved.written.clone());
    Ending {
        not_saved,
        unrecorded,
    }
}

/// Prints where the file went; returns whether it could not be written
/// where asked (the command then exits non-zero).
pub fn report(saved: &Saved) -> bool {
    match (&saved.failed, &saved.written) {
        (None, _) => {
            eprintln!("yamba: results written to {}", saved.asked.display());
            false
        }
        (Some(why), Some(at)) => {
            eprintln!("yamba: {why}");
            eprintln!("yamba: results written to {} instead", at.display());
            true
        }
        (Some(why), None) => {
            eprintln!("yamba: {why}");
            eprintln!(
                "yamba: and no fallback place could be written either (tried: {}); the table above is all that is left",
                fallback_dirs()
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            true
        }
    }
}
