//! What can go wrong with a history: one line each, naming the store (a
//! file path, or a URL without its password) and what was being done.

use crate::backend::DbError;
use crate::store::RunId;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The default store has no folder to live in.
    #[error("neither XDG_DATA_HOME nor HOME is set: no place for the history (--store FILE, or --no-history)")]
    NoPlace,
    #[error("cannot create the history's folder {}: {error}", .dir.display())]
    Folder { dir: PathBuf, error: std::io::Error },
    /// A reader asked for the default SQLite store before any run made it.
    #[error("no history at {} yet: runs are stored there as they end", .0.display())]
    NotYet(PathBuf),
    /// The database could not be opened or reached (the message names it).
    #[error("{0}")]
    Connect(DbError),
    /// A query or write failed: `what` says which (`cannot read`, …).
    #[error("history {location}: {what}: {error}")]
    Db {
        location: String,
        what: &'static str,
        error: DbError,
    },
    /// A results file that could not be made into rows.
    #[error("history {location}: {reason}")]
    Encode { location: String, reason: String },
    /// A stored run whose bytes do not read back as a results file.
    #[error("history {location}: run @{id} is damaged: {reason}")]
    Damaged {
        location: String,
        id: RunId,
        reason: String,
    },
    #[error("no run @{id} in the history {location} (`yamba history` lists them)")]
    NoSuchRun { id: RunId, location: String },
    #[error("--last {asked}: the history {location} holds {held} run(s)")]
    TooFewRuns {
        asked: usize,
        held: usize,
        location: String,
    },
    /// `@` followed by something that is not a run's id.
    #[error("{0:?}: a stored run is @ID, e.g. @12 (`yamba history` lists them)")]
    BadReference(String),
    /// A result name no stored run has, with stored names near it.
    #[error("no stored run has a result named {name:?}{}", near_names(.near))]
    UnknownResult { name: String, near: Vec<String> },
    /// An id measured in several modes, named without one.
    #[error("{name:?} names {} results ({}); name one as id@mode", .keys.len(), .keys.join(", "))]
    Ambiguous { name: String, keys: Vec<String> },
    /// A results file (not `@ID`) that could not be read.
    #[error(transparent)]
    Input(#[from] yamba_results::InputError),
    #[error(
        "prune: say what to remove: --keep N (each machine's newest N stay) and/or --before DATE"
    )]
    NoRule,
    #[error("prune --before {0:?}: a UTC date YYYY-MM-DD or time YYYY-MM-DDTHH:MM:SSZ")]
    BadDate(String),
    /// Runs were removed but the file could not be compacted.
    #[error("history {location}: removed {removed} run(s), but cannot VACUUM: {error}")]
    Vacuum {
        location: String,
        removed: usize,
        error: DbError,
    },
}

fn near_names(near: &[String]) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!("; stored ones near it: {}", near.join(", "))
    }
}

/// `map_err` for a failed query or write on the store at `location`.
pub(crate) fn db(what: &'static str, location: &str) -> impl Fn(DbError) -> HistoryError {
    let location = location.to_string();
    move |error| HistoryError::Db {
        location: location.clone(),
        what,
        error,
    }
}
