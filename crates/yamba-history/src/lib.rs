//! Every run remembered.
//!
//! `yamba run` and `yamba stone` store each results file they write — the
//! whole file, observations included, compressed — in a history: an
//! embedded SQLite file under the user's data folder by default
//! (`$XDG_DATA_HOME/yamba/history.sqlite`, or `~/.local/share/yamba/…`;
//! `$YAMBA_HISTORY` moves it), or a PostgreSQL database that many machines
//! report into (`--store postgres://…`). Both hold the same tables
//! ([`schema`]) and answer the same queries ([`store`]): only the
//! connection differs ([`backend::Backend`]).
//!
//! From the history, `yamba history` lists runs, `history show` prints one,
//! `history trend` follows one result across runs, `history import` brings
//! in a results file, `history fleet` reads a shared store as a fleet
//! ([`fleet`]), and `compare` takes `@ID` (or `--last 2`) wherever it
//! takes a file ([`Resolver`]). Results files stay the interchange format:
//! a stored run reads back as exactly the file that was stored.

pub mod backend;
pub mod codec;
pub mod earlier;
mod error;
pub mod fleet;
pub mod postgres;
pub mod prune;
pub mod schema;
pub mod sqlite;
pub mod store;
pub mod text;
pub mod trend;

pub use error::HistoryError;
pub use fleet::{FlagKind, Fleet};
pub use prune::{Prune, Pruned};
pub use store::{History, Origin, OriginKind, RunId, RunSummary, Saved, StoreSpec, ENV_VAR};
pub use trend::{Trend, TrendPoint};

use yamba_results::ResultsFile;

/// Whether `arg` names a stored run (`@ID`) rather than a file, and which.
pub fn parse_reference(arg: &str) -> Option<Result<RunId, HistoryError>> {
    let rest = arg.strip_prefix('@')?;
    Some(
        rest.parse::<RunId>()
            .ok()
            .filter(|id| *id > 0)
            .ok_or_else(|| HistoryError::BadReference(arg.to_string())),
    )
}

/// Reads results from files or from the history, opening the history only
/// when a reference needs it.
pub struct Resolver {
    store: Option<String>,
    history: Option<History>,
}

impl Resolver {
    /// `store`: the `--store` argument, if any (else the default history).
    pub fn new(store: Option<&str>) -> Resolver {
        Resolver {
            store: store.map(str::to_string),
            history: None,
        }
    }

    /// The history, opened on first use.
    pub fn history(&mut self) -> Result<&mut History, HistoryError> {
        if self.history.is_none() {
            let spec = StoreSpec::or_default(self.store.as_deref())?;
            if let StoreSpec::Sqlite(p) = &spec {
                if !p.exists() {
                    return Err(HistoryError::NotYet(p.clone()));
                }
            }
            self.history = Some(History::open(&spec)?);
        }
        Ok(self.history.as_mut().expect("opened above"))
    }

    /// `@ID`: that stored run; anything else: a results file (`-` is
    /// standard input), as every other reader reads it.
    pub fn read(&mut self, arg: &str) -> Result<ResultsFile, HistoryError> {
        match parse_reference(arg) {
            Some(id) => {
                let id = id?;
                self.history()?.load(id)
            }
            None => Ok(yamba_results::read_results(arg)?),
        }
    }

    /// The `n` newest stored runs, oldest first, each with its `@ID`.
    pub fn last(&mut self, n: usize) -> Result<Vec<(RunId, ResultsFile)>, HistoryError> {
        let h = self.history()?;
        let ids = h.last(n)?;
        ids.into_iter().map(|id| Ok((id, h.load(id)?))).collect()
    }
}

/// Stores a command's results file as it ends. The history is opened once
/// before anything is measured, so that a `--store` that cannot be reached
/// fails the command at once; and again at the end, so that a connection
/// left idle through a long run does not lose the write.
pub struct Recorder {
    spec: StoreSpec,
    /// Asked for by `--store` or `$YAMBA_HISTORY`: failing to store is an
    /// error. The default history's failure is only a warning.
    explicit: bool,
}

/// What recording said, for the command to print.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Stored (or found already stored) as this run.
    pub id: Option<RunId>,
    /// Lines to print on stderr.
    pub messages: Vec<String>,
    /// Storing failed where it was asked for explicitly.
    pub failed: bool,
}

impl Recorder {
    /// `None` when `--no-history`; else the history a run will be stored
    /// in, checked now. Errors only for an explicit store; messages (the
    /// default history's first creation, or why it cannot be used) are
    /// for the command to print.
    pub fn start(
        no_history: bool,
        store: Option<&str>,
    ) -> Result<(Option<Recorder>, Vec<String>), HistoryError> {
        if no_history {
            return Ok((None, vec![]));
        }
        let explicit = store.is_some() || std::env::var_os(ENV_VAR).is_some_and(|v| !v.is_empty());
        let spec = match StoreSpec::or_default(store) {
            Ok(s) => s,
            Err(e) if !explicit => {
                return Ok((
                    None,
                    vec![format!("warning: not keeping this run in a history: {e}")],
                ))
            }
            Err(e) => return Err(e),
        };
        match History::open(&spec) {
            Ok(h) => {
                let mut messages = vec![];
                if h.created {
                    messages.push(format!(
                        "keeping a history of runs in {} (`yamba history` lists them; --no-history skips, ${ENV_VAR} moves it)",
                        h.location()
                    ));
                }
                Ok((Some(Recorder { spec, explicit }), messages))
            }
            Err(e) if explicit => Err(e),
            Err(e) => Ok((
                None,
                vec![format!(
                    "warning: not keeping this run in a history: {e} (--no-history silences this)"
                )],
            )),
        }
    }

    /// Stores `file`; never fails the command for the default history.
    pub fn record(&self, file: &ResultsFile, origin: &Origin) -> Recorded {
        let saved = History::open(&self.spec).and_then(|mut h| {
            let saved = h.save(file, origin)?;
            Ok((saved, h.location()))
        });
        match saved {
            Ok((Saved::New(id), location)) => Recorded {
                id: Some(id),
                messages: vec![format!(
                    "stored as @{id} in the history {location} (`yamba history show {id}`)"
                )],
                failed: false,
            },
            Ok((Saved::Existing(id), _)) => Recorded {
                id: Some(id),
                messages: vec![format!("already in the history as @{id}")],
                failed: false,
            },
            Err(e) => Recorded {
                id: None,
                messages: vec![if self.explicit {
                    format!("error: {e} (the results file is kept)")
                } else {
                    format!("warning: {e} (the results file is kept)")
                }],
                failed: self.explicit,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_at_sign_and_a_positive_number() {
        assert!(matches!(parse_reference("@12"), Some(Ok(12))));
        assert!(parse_reference("results/a.json").is_none());
        assert!(matches!(parse_reference("@x"), Some(Err(_))));
        assert!(matches!(parse_reference("@0"), Some(Err(_))));
        assert!(matches!(parse_reference("@-1"), Some(Err(_))));
    }

    #[test]
    fn a_store_argument_is_a_url_or_a_path() {
        assert_eq!(
            StoreSpec::parse("postgres://u@h/db"),
            StoreSpec::Postgres("postgres://u@h/db".into())
        );
        assert_eq!(
            StoreSpec::parse("postgresql:///db?host=/tmp"),
            StoreSpec::Postgres("postgresql:///db?host=/tmp".into())
        );
        assert_eq!(
            StoreSpec::parse("runs.sqlite"),
            StoreSpec::Sqlite("runs.sqlite".into())
        );
    }
}
