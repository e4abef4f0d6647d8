//! What can go wrong with an OS primitive: one line each, naming the
//! system call, file or object that failed. A benchmark's adapter turns it
//! into its withheld or failed reason (`From<OsError> for String`).

use crate::Kind;
use std::path::PathBuf;

/// The OS error is in each message, not a `source`: the CLI prints the
/// chain (`{:#}`), which would repeat it.
#[derive(Debug, thiserror::Error)]
pub enum OsError {
    /// This platform has no adapter (an `unsupported.rs`).
    #[error("{}", crate::no_adapter_reason())]
    NoAdapter,
    /// A system call, or a read or write of a /proc or /sys file; `what`
    /// names it (and how far a batch got).
    #[error("{what}: {error}")]
    Call { what: String, error: std::io::Error },
    /// A file that could not be created, written or synced.
    #[error("cannot {action} {}: {error}", .path.display())]
    File {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    /// A path with a NUL byte in it.
    #[error("bad path {}", .0.display())]
    BadPath(PathBuf),
    /// Dropping the page cache is for root only.
    #[error("needs root")]
    NeedsRoot,
    /// posix_fadvise returns its error number rather than setting errno.
    #[error("posix_fadvise(DONTNEED): error {0}")]
    Fadvise(i32),
    /// Forked children that never said they were blocked.
    #[error("only {ready} of {asked} children reported ready")]
    ChildrenNotReady { ready: usize, asked: usize },
    /// Threads not all asleep in read(2) after 10 s.
    #[error("only {blocked} of {threads} threads blocked after 10 s")]
    ThreadsNotBlocked { blocked: usize, threads: usize },
    /// `Batch::create` asked for files, which need a directory.
    #[error("a file needs a directory: Batch::files")]
    FileNeedsDirectory,
    /// A kind the space adapter has no batch of.
    #[error("the space adapter does not create {}", .0.name())]
    NotCreated(Kind),
    /// The mapping under a [`crate::SharedPage`].
    #[error("cannot map a shared page: {0}")]
    SharedPage(Box<OsError>),
}

impl OsError {
    /// `what` failed with the last OS error (errno).
    pub fn last(what: impl Into<String>) -> OsError {
        OsError::Call {
            what: what.into(),
            error: std::io::Error::last_os_error(),
        }
    }

    /// `map_err` for a call that failed with `error`.
    pub fn call(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> OsError {
        let what = what.into();
        move |error| OsError::Call { what, error }
    }
}

/// A benchmark's OS error becomes its withheld or failed reason.
impl From<OsError> for String {
    fn from(e: OsError) -> String {
        e.to_string()
    }
}
