//! What can stop `yamba stress` before or as it starts: one line each,
//! naming the option, plant, file or system call at fault.

use std::path::PathBuf;
use yamba_os::OsError;

/// The OS error is in each message, not a `source`: the CLI prints the
/// chain (`{:#}`), which would repeat it.
#[derive(Debug, thiserror::Error)]
pub enum StressError {
    #[error("nothing to run: no stressor and no error tests")]
    NothingToRun,
    /// More workers than the shared control block has slots for.
    #[error("--workers {workers}: at most {most}")]
    TooManyWorkers { workers: usize, most: usize },
    /// A `--cpu` outside this process's affinity mask.
    #[error("--cpu {cpu}: not a CPU this process may run on (allowed: {usable:?})")]
    UnusableCpu { cpu: usize, usable: Vec<usize> },
    /// A `--measure` name no benchmark has.
    #[error("--measure {0}: no such benchmark (an id from 'yamba list', e.g. proc.fork.light, or ipc.rtt.<transport>)")]
    NoSuchBenchmark(String),
    /// A `--stressors` item that is not a kind; `known` lists them.
    #[error("unknown stressor '{name}' (one of: all, none, {known})")]
    UnknownStressor { name: String, known: String },
    /// `leak=` without `KIND:N`.
    #[error("leak=KIND:N")]
    PlantLeakForm,
    #[error("plant: unknown kind {0}")]
    PlantKind(String),
    /// A plant's number that does not parse; `what` says which
    /// (`count`, `MiB`, `op`).
    #[error("plant: bad {what} {value}")]
    PlantNumber { what: &'static str, value: String },
    #[error("unknown plant '{0}'")]
    UnknownPlant(String),
    /// The folder the scratch folder goes in does not resolve.
    #[error("scratch folder {}: {error}", .path.display())]
    ScratchFolder {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A folder or file that could not be created.
    #[error("cannot create {}: {error}", .path.display())]
    Create {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A worker's backing file that could not be given its length.
    #[error("cannot size {}: {error}", .path.display())]
    Size {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Shared memory, a pipe, a fork, a mapping.
    #[error(transparent)]
    Os(#[from] OsError),
}

impl StressError {
    /// `map_err` for a file or folder at `path` that could not be created.
    pub(crate) fn create(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> StressError {
        let path = path.to_path_buf();
        move |error| StressError::Create { path, error }
    }
}
