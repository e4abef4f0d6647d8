//! Says where a command's results file went: where asked, a fallback place
//! instead, or nowhere (the printed table then being all that is left).

use std::path::Path;
use yamba_core::run_session;

/// Prints where the file went; returns whether it could not be written
/// where asked (the command then exits non-zero).
pub fn report(asked: &Path, failed: Option<&str>, written: Option<&Path>) -> bool {
    match (failed, written) {
        (None, _) => {
            eprintln!("yamba: results written to {}", asked.display());
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
                run_session::fallback_dirs()
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            true
        }
    }
}
