//! The logs CI reads after the tests: one line per skip
//! (`YAMBA_SKIP_LOG`) and one per measurement check's outcome
//! (`YAMBA_CHECK_LOG`). Each line is written with one `write` call on a
//! file opened for appending, so concurrent tests and processes never
//! interleave within a line.

use crate::id::TestId;
use std::io::Write;

/// Appends `line` (tabs between fields, no newline) to the file the
/// environment variable `var` names, if it is set. A log that cannot be
/// written is a broken CI set-up: it panics naming the file.
pub(crate) fn append(var: &str, line: &str) {
    let Some(path) = std::env::var_os(var) else {
        return;
    };
    let text = format!("{}\n", line.replace('\n', " "));
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .unwrap_or_else(|e| panic!("cannot append to {var}={}: {e}", path.to_string_lossy()));
}

/// What [`crate::premise_unmet!`] does before returning: prints
/// `PREMISE UNMET <id>: <reason>` and records the outcome in the check log.
pub fn premise_unmet(id: &TestId, reason: &str) {
    eprintln!("PREMISE UNMET {id}: {reason}");
    append(
        "YAMBA_CHECK_LOG",
        &format!("premise-unmet\t{id}\t-\t0\t-\t-\t{reason}"),
    );
}
