//! The files of a series that are not results files: the log's default
//! name, and an earlier log read for the ministat comparison.

use crate::{parse_log, Error};
use std::path::{Path, PathBuf};

/// What stands for the default log name ([`log_path`]), as the user sees it.
pub const DEFAULT_LOG: &str = "stone.<command>.log";

/// The log's path: `asked`, or [`default_log`] of the series' name when
/// `asked` is [`DEFAULT_LOG`].
pub fn log_path(asked: &Path, name: &str) -> PathBuf {
    if asked.as_os_str() == DEFAULT_LOG {
        default_log(name)
    } else {
        asked.to_path_buf()
    }
}

/// The results file written beside a log when no other place is asked:
/// the log's path with `.json` appended.
pub fn beside_log(log: &Path) -> PathBuf {
    let mut s = log.as_os_str().to_os_string();
    s.push(".json");
    PathBuf::from(s)
}

/// `stone.<name>.log`, or with `.next` appended while the name is taken
/// (in the working directory).
pub fn default_log(name: &str) -> PathBuf {
    let mut p = format!("stone.{name}.log");
    while Path::new(&p).exists() {
        p.push_str(".next");
    }
    PathBuf::from(p)
}

/// The seconds in an earlier log (`path`), for the ministat comparison
/// with a series of `runs` runs (`None`: an automatic count); ministat
/// needs 3 values on each side. Read it before anything is run: a bad
/// file should not cost a whole series.
pub fn read_comparison(path: &Path, runs: Option<usize>) -> Result<Vec<f64>, Error> {
    if runs.is_some_and(|n| n < 3) {
        return Err(Error::CompareRuns);
    }
    let bytes = yamba_results::read_file_bounded(path).map_err(Error::Read)?;
    let text = String::from_utf8(bytes).map_err(|reason| Error::NotText {
        path: path.to_path_buf(),
        reason,
    })?;
    let v = parse_log(&text).map_err(|reason| Error::BadLog {
        path: path.to_path_buf(),
        reason,
    })?;
    if v.len() < 3 {
        return Err(Error::TooFewValues {
            path: path.to_path_buf(),
            count: v.len(),
        });
    }
    Ok(v)
}
