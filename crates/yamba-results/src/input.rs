//! Reading what a user names on a command line: a results file by path
//! (`-` for standard input), or a file of numbers, always within the
//! size limit ([`crate::Limits::from_env`]) and with one clear error line.
//! The one place every reader (the CLI's commands, the report, the
//! history's `Resolver`) reads a results file from a path.

use crate::{LimitExceeded, ReadError, ResultsFile};
use std::path::{Path, PathBuf};

/// Why a named input could not be read; each says it in one line, its
/// cause included (so none has a `source`: a chain printed whole would
/// say it twice).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A size limit's environment variable is not a size.
    #[error("{0}")]
    BadLimit(String),
    /// Reading failed part way.
    #[error("cannot read: {0}")]
    Read(std::io::Error),
    /// The input is larger than the results-file size limit.
    #[error("{0}")]
    TooLarge(LimitExceeded),
    /// Standard input could not be read, or holds no results file.
    #[error("standard input: {0}")]
    Stdin(Box<InputError>),
    /// A results file that could not be opened (the message names it).
    #[error("{0}")]
    Open(std::io::Error),
    /// Text that is not a results file this yamba reads.
    #[error(transparent)]
    Results(#[from] ReadError),
    /// A path that is not a readable regular file, or a file that failed.
    #[error("{}: {error}", .path.display())]
    At {
        path: PathBuf,
        error: Box<InputError>,
    },
    /// A path refused before it is read (a device, a directory, a socket).
    #[error("cannot read {}: {error}", .path.display())]
    NotReadable {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl InputError {
    fn at(path: &Path, e: InputError) -> InputError {
        InputError::At {
            path: path.to_path_buf(),
            error: Box::new(e),
        }
    }
}

/// Reads a results file (plain or `.json.zst`), `-` meaning standard
/// input, with one clear error line on failure.
pub fn read_results(path: &str) -> Result<ResultsFile, InputError> {
    let stdin = |e| InputError::Stdin(Box::new(e));
    if path == "-" {
        let bytes = read_bounded(&mut std::io::stdin().lock()).map_err(stdin)?;
        return ResultsFile::from_bytes(&bytes).map_err(|e| stdin(e.into()));
    }
    ResultsFile::read(Path::new(path)).map_err(|e| match e {
        ReadError::Io(e) => InputError::Open(e),
        e => InputError::at(Path::new(path), e.into()),
    })
}

/// Everything `r` gives, up to the results-file size limit
/// ([`crate::Limits::from_env`]): a longer input is refused with
/// the limit's one line, never read to the end.
pub fn read_bounded(r: &mut dyn std::io::Read) -> Result<Vec<u8>, InputError> {
    let limits = crate::Limits::from_env().map_err(InputError::BadLimit)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(r, limits.max_bytes + 1),
        &mut bytes,
    )
    .map_err(InputError::Read)?;
    if bytes.len() as u64 > limits.max_bytes {
        return Err(InputError::TooLarge(LimitExceeded::Bytes(limits.max_bytes)));
    }
    Ok(bytes)
}

/// A file of numbers or results by name, up to the size limit; a device,
/// a directory or a socket is refused before it is read.
pub fn read_file_bounded(path: &Path) -> Result<Vec<u8>, InputError> {
    let refused = |error| InputError::NotReadable {
        path: path.to_path_buf(),
        error,
    };
    crate::readable_input(path).map_err(refused)?;
    let mut f = std::fs::File::open(path).map_err(refused)?;
    read_bounded(&mut f).map_err(|e| InputError::at(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-line messages users saw when these were strings.
    #[test]
    fn each_error_reads_as_one_line_naming_its_input() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_file_bounded(dir.path()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("cannot read {}: ", dir.path().display())),
            "{e}"
        );
        let missing = dir.path().join("none.json");
        let e = read_results(missing.to_str().unwrap()).unwrap_err();
        assert!(matches!(e, InputError::Open(_)), "{e:?}");
        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, "{").unwrap();
        let e = read_results(junk.to_str().unwrap()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("{}: not a valid results file", junk.display())),
            "{e}"
        );
        let e = InputError::Stdin(Box::new(InputError::TooLarge(LimitExceeded::Bytes(1024))));
        assert_eq!(
            e.to_string(),
            format!("standard input: {}", LimitExceeded::Bytes(1024))
        );
        assert!(!e.to_string().contains('\n'));
    }
}
