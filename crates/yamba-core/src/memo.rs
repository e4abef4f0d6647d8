//! Facts one process of a run measures and the run's later processes reuse.
//!
//! Every block of a precise run is a fresh process, and a few benchmarks
//! size their work from a measurement of their own: the effective
//! last-level cache (`yamba_suite::mem::llc`) sets the latency curves'
//! reach and the bandwidth arrays. Measured again in every process it
//! costs 0.3–3 s each time, and worse, a size that moves between blocks
//! makes the blocks measure different quantities (copy arrays of 32 MiB
//! read 20–25 GB/s on an Intel Xeon guest, 256 MiB ones 10.7–10.9): the
//! between-block interval then spans working sets, not noise. So the
//! first process to measure such a fact leaves it in the run's scratch
//! folder and the later ones read it; the runner removes the folder with
//! the run. The first writer wins: a fact is written under a temporary
//! name and linked to its own, which fails when another process (a
//! simultaneous copy) got there first, and then that one's is taken.

use serde::{de::DeserializeOwned, Serialize};
use std::path::{Path, PathBuf};

/// The folder inside a run's scratch folder that holds its facts.
pub const FOLDER: &str = "memo";

/// Where a fact came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// This process measured it (and left it for the others when it could).
    Measured,
    /// An earlier process of the run measured it.
    Reused,
}

impl Source {
    /// For a result's params.
    pub fn describe(self) -> &'static str {
        match self {
            Source::Measured => "measured in this process",
            Source::Reused => "measured once in the run by an earlier process, reused",
        }
    }
}

/// A run's facts, or none (a benchmark run outside a runner's scratch
/// folder measures every fact itself).
#[derive(Debug, Clone)]
pub struct Memo {
    dir: Option<PathBuf>,
}

impl Memo {
    /// The facts of the run whose scratch folder is `run_scratch`.
    pub fn in_run(run_scratch: &Path) -> Memo {
        Memo {
            dir: Some(run_scratch.join(FOLDER)),
        }
    }

    /// No run to share with.
    pub fn none() -> Memo {
        Memo { dir: None }
    }

    /// The fact `name`: read when an earlier process left it, else
    /// measured here and left for the later ones. A fact that cannot be
    /// read back (another version's shape, a torn file) is measured again.
    pub fn get_or_measure<T: Serialize + DeserializeOwned>(
        &self,
        name: &str,
        measure: impl FnOnce() -> T,
    ) -> (T, Source) {
        let Some(dir) = &self.dir else {
            return (measure(), Source::Measured);
        };
        let path = dir.join(format!("{name}.json"));
        if let Some(v) = read(&path) {
            return (v, Source::Reused);
        }
        let v = measure();
        match publish(dir, &path, &v) {
            Published::Ours | Published::Not => (v, Source::Measured),
            Published::Theirs => match read(&path) {
                Some(theirs) => (theirs, Source::Reused),
                None => (v, Source::Measured),
            },
        }
    }
}

fn read<T: DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

enum Published {
    Ours,
    /// Another process's was there first.
    Theirs,
    /// Could not be written (the fact is still this process's to use).
    Not,
}

fn publish<T: Serialize>(dir: &Path, path: &Path, v: &T) -> Published {
    let Ok(bytes) = serde_json::to_vec(v) else {
        return Published::Not;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return Published::Not;
    }
    let tmp = dir.join(format!(
        ".{}.{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("fact"),
        std::process::id()
    ));
    if std::fs::write(&tmp, bytes).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return Published::Not;
    }
    // link(2) never replaces: whoever links first wins, readers never see
    // a file half written.
    let outcome = match std::fs::hard_link(&tmp, path) {
        Ok(()) => Published::Ours,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Published::Theirs,
        Err(_) => Published::Not,
    };
    let _ = std::fs::remove_file(&tmp);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_process_measures_and_later_ones_reuse() {
        let dir = tempfile::tempdir().unwrap();
        let memo = Memo::in_run(dir.path());
        let mut measured = 0;
        let (a, s) = memo.get_or_measure("llc", || {
            measured += 1;
            vec![1.0, 2.0]
        });
        assert_eq!((a, s), (vec![1.0, 2.0], Source::Measured));
        let (b, s) = memo.get_or_measure("llc", || {
            measured += 1;
            vec![9.0]
        });
        assert_eq!((b, s), (vec![1.0, 2.0], Source::Reused));
        assert_eq!(measured, 1);
        // Another fact is its own.
        let (c, s) = memo.get_or_measure("other", || 7u32);
        assert_eq!((c, s), (7, Source::Measured));
    }

    #[test]
    fn the_first_writer_wins_and_no_run_means_measuring_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let memo = Memo::in_run(dir.path());
        // A simultaneous copy published while this one measured.
        let (v, s) = memo.get_or_measure("llc", || {
            let theirs = Memo::in_run(dir.path());
            assert_eq!(theirs.get_or_measure("llc", || 1u64), (1, Source::Measured));
            2u64
        });
        assert_eq!((v, s), (1, Source::Reused));
        let none = Memo::none();
        assert_eq!(none.get_or_measure("llc", || 3u64), (3, Source::Measured));
        assert_eq!(none.get_or_measure("llc", || 4u64), (4, Source::Measured));
    }

    #[test]
    fn a_fact_that_does_not_read_back_is_measured_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(FOLDER)).unwrap();
        std::fs::write(dir.path().join(FOLDER).join("llc.json"), b"{torn").unwrap();
        let memo = Memo::in_run(dir.path());
        assert_eq!(memo.get_or_measure("llc", || 5u64), (5, Source::Measured));
    }
}
