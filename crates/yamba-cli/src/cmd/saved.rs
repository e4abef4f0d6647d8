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

    /// [`Ending::exit_code`] for a command with a gate (`run --baseline
    /// --threshold`): its 1 fails the command, its undecided 3 stands
    /// unless the command failed otherwise.
    pub fn exit_code_gated(&self, failed: bool, gate: i32) -> i32 {
        let undecided = yamba_report::compare::EXIT_UNDECIDED;
        match self.exit_code(failed || gate == 1) {
            0 | 2 if gate == undecided => undecided,
            code => code,
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

#[cfg(test)]
mod tests {
    use super::Ending;
    use yamba_report::compare::EXIT_UNDECIDED;

    #[test]
    fn a_gate_fails_the_command_and_its_undecided_outranks_only_the_history() {
        let ending = |not_saved, unrecorded| Ending {
            not_saved,
            unrecorded,
        };
        let fine = ending(false, false);
        assert_eq!(fine.exit_code_gated(false, 0), 0);
        assert_eq!(fine.exit_code_gated(false, 1), 1);
        assert_eq!(fine.exit_code_gated(true, 0), 1);
        assert_eq!(fine.exit_code_gated(false, EXIT_UNDECIDED), EXIT_UNDECIDED);
        assert_eq!(fine.exit_code_gated(true, EXIT_UNDECIDED), 1);
        let unrecorded = ending(false, true);
        assert_eq!(unrecorded.exit_code_gated(false, 0), 2);
        assert_eq!(
            unrecorded.exit_code_gated(false, EXIT_UNDECIDED),
            EXIT_UNDECIDED
        );
        assert_eq!(ending(true, true).exit_code_gated(false, EXIT_UNDECIDED), 1);
    }
}
