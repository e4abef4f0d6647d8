//! Picking results out of a results file: the seed's `bgrep` (select) and
//! `bcut` (obs).
//!
//! A name matches a result by exact id, by `id@mode`, by the registered
//! benchmark, by area, or as a dotted prefix of the id (see
//! [`ResultsFile::find`]). A name that matches nothing is an error that
//! lists the names it was probably meant to be, because a silent empty
//! selection would make a pipeline report on nothing.

use std::fmt;
use std::ops::Range;
use yamba_results::{BenchResult, ResultsFile};

/// A selection that could not be made.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectError {
    /// No result matches `name`; `near` holds the closest known names.
    Unknown { name: String, near: Vec<String> },
    /// A `--range` that is not `A-B`, `A..B`, `A-` or `A`.
    BadRange(String),
}

impl fmt::Display for SelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SelectError::Unknown { name, near } if near.is_empty() => {
                write!(f, "no benchmark matches {name:?}")
            }
            SelectError::Unknown { name, near } => write!(
                f,
                "no benchmark matches {name:?}; did you mean {}?",
                near.join(", ")
            ),
            SelectError::BadRange(s) => write!(
                f,
                "bad range {s:?}: expected A-B (observations A to B−1, counted from 0), A.., or A"
            ),
        }
    }
}

impl std::error::Error for SelectError {}

/// The results matching any of `names`, in file order, each once. Every
/// name must match at least one result.
pub fn select_results<'a>(
    file: &'a ResultsFile,
    names: &[String],
) -> Result<Vec<&'a BenchResult>, SelectError> {
    let mut chosen = vec![false; file.results.len()];
    for name in names {
        let mut any = false;
        for (i, r) in file.results.iter().enumerate() {
            if matches(r, name) {
                chosen[i] = true;
                any = true;
            }
        }
        if !any {
            return Err(SelectError::Unknown {
                name: name.clone(),
                near: near_names(file, name),
            });
        }
    }
    Ok(file
        .results
        .iter()
        .zip(chosen)
        .filter(|(_, c)| *c)
        .map(|(r, _)| r)
        .collect())
}

/// Whether `name` selects `r` (the rules of [`ResultsFile::find`]).
pub fn matches(r: &BenchResult, name: &str) -> bool {
    r.id == name
        || r.key() == name
        || r.benchmark == name
        || r.area == name
        || (r.id.len() > name.len()
            && r.id.starts_with(name)
            && r.id[name.len()..].starts_with('.'))
}

/// A copy of `file` holding only the results `names` select: the seed's
/// `bgrep`, with the machine, clock and configuration kept so that the
/// smaller file can still be compared and plotted on its own.
pub fn select_file(file: &ResultsFile, names: &[String]) -> Result<ResultsFile, SelectError> {
    let results = select_results(file, names)?.into_iter().cloned().collect();
    let mut out = file.clone();
    out.results = results;
    Ok(out)
}

/// Up to five names from the file closest to `name`: those containing it or
/// contained in it first, then those within a small edit distance.
pub fn near_names(file: &ResultsFile, name: &str) -> Vec<String> {
    let mut names: Vec<String> = file
        .results
        .iter()
        .flat_map(|r| [r.key(), r.id.clone()])
        .collect();
    names.sort();
    names.dedup();
    let lower = name.to_lowercase();
    let mut scored: Vec<(usize, String)> = names
        .into_iter()
        .filter_map(|n| {
            let l = n.to_lowercase();
            let d = if !lower.is_empty() && (l.contains(&lower) || lower.contains(&l)) {
                0
            } else {
                edit_distance(&l, &lower)
            };
            (d <= (lower.chars().count() / 3).max(2)).then_some((d, n))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Parses an observation range: `A-B` or `A..B` (indices A to B−1, from 0),
/// `A-` or `A..` (A to the end), or `A` (just observation A).
pub fn parse_range(s: &str) -> Result<Range<usize>, SelectError> {
    let bad = || SelectError::BadRange(s.to_string());
    let t = s.trim();
    let (a, b) = match t.split_once("..").or_else(|| t.split_once('-')) {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (t, None),
    };
    let a: usize = a.parse().map_err(|_| bad())?;
    let end = match b {
        None => a.checked_add(1).ok_or_else(bad)?,
        Some("") => usize::MAX,
        Some(b) => b.parse().map_err(|_| bad())?,
    };
    if end < a {
        return Err(bad());
    }
    Ok(a..end)
}

/// The observations in `range` (clamped to those there are), one per line,
/// at full precision: Rust's shortest representation that reads back to
/// the same f64, so piping into ministat loses nothing.
pub fn observations_text(r: &BenchResult, range: Option<Range<usize>>) -> String {
    let obs = &r.observations;
    let range = range.unwrap_or(0..obs.len());
    let start = range.start.min(obs.len());
    let end = range.end.min(obs.len());
    let mut out = String::new();
    for v in &obs[start..end] {
        out.push_str(&format!("{v:?}\n"));
    }
    out
}

/// The one result `name` selects; more than one is an error that lists
/// them, so that `obs` never prints two distributions run together.
pub fn select_one<'a>(file: &'a ResultsFile, name: &str) -> Result<&'a BenchResult, String> {
    let found = select_results(file, &[name.to_string()]).map_err(|e| e.to_string())?;
    match found.as_slice() {
        [one] => Ok(one),
        many => Err(format!(
            "{name:?} matches {} results ({}); name one as id@mode",
            many.len(),
            many.iter().map(|r| r.key()).collect::<Vec<_>>().join(", ")
        )),
    }
}
