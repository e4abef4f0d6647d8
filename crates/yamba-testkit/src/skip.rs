//! Skips that CI sees: each is printed, logged and, under `YAMBA_CI=1`,
//! allowed only when `.ci/skips` lists it with its reason.

use crate::id::TestId;
use crate::record::append;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The allowlist: `YAMBA_SKIPS_FILE`, else the repository's `.ci/skips`
/// (found from this crate's own directory, so every test binary reads the
/// same file whatever its working directory).
fn skips_file() -> PathBuf {
    match std::env::var_os("YAMBA_SKIPS_FILE") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.ci/skips")),
    }
}

/// The tests the allowlist lets skip, with their reasons: one `id<TAB>reason`
/// per line, `#` comments and blank lines ignored. A line without a reason
/// is an error: a skip is listed for a reason.
pub fn allowed_skips() -> Result<BTreeMap<String, String>, String> {
    let path = skips_file();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read the skip allowlist {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn parse(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        match line.split_once('\t') {
            Some((id, reason)) if !id.trim().is_empty() && !reason.trim().is_empty() => {
                out.insert(id.trim().to_string(), reason.trim().to_string());
            }
            _ => return Err(format!("line {}: expected `id<TAB>reason`: {line}", i + 1)),
        }
    }
    Ok(out)
}

fn under_ci() -> bool {
    std::env::var("YAMBA_CI").is_ok_and(|v| v == "1")
}

/// What [`crate::skip!`] does before returning: prints
/// `SKIPPED <id>: <reason>` on standard error, appends `<id>\t<reason>` to
/// `YAMBA_SKIP_LOG`, and under `YAMBA_CI=1` panics unless the allowlist
/// names the test.
pub fn skipped(id: &TestId, reason: &str) {
    eprintln!("SKIPPED {id}: {reason}");
    append("YAMBA_SKIP_LOG", &format!("{id}\t{reason}"));
    if under_ci() {
        let allowed = allowed_skips().unwrap_or_else(|e| panic!("{e}"));
        if !allowed.contains_key(id.as_str()) {
            panic!(
                "skip not allowed under YAMBA_CI: {id}: {reason} (list it in .ci/skips with its reason, or make the test runnable: .ci/install)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_is_ids_and_reasons() {
        let l = parse("# why\n\na/b::c\tno PMU in a VM\n  \n").unwrap();
        assert_eq!(l.get("a/b::c").map(String::as_str), Some("no PMU in a VM"));
        assert_eq!(l.len(), 1);
        assert!(parse("a/b::c\n").unwrap_err().contains("line 1"));
        assert!(parse("a/b::c\t \n").is_err());
    }

    #[test]
    fn the_repositorys_allowlist_reads() {
        allowed_skips().unwrap();
    }
}
