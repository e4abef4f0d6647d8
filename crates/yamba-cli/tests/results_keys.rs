//! A results file keeps its fields where readers find them: every key path
//! that a quick run of one benchmark had before issue 28's restructuring
//! (tests/data/results-keys.txt) is still there, at the same place. A
//! field renamed, moved or dropped by a refactoring fails here, before a
//! reader (the report, ministat, the history, a user's script) finds out.

use std::collections::BTreeSet;
use std::process::Command;

/// Every key path of `v`: `.a.b` for objects, `[]` for an array's
/// elements; an empty array is its own path, and a null is a leaf.
fn paths(v: &serde_json::Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                paths(x, &format!("{at}.{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            let at = format!("{at}[]");
            if a.is_empty() {
                out.insert(at.clone());
            }
            for x in a {
                paths(x, &at, out);
            }
        }
        _ => {
            out.insert(at.to_string());
        }
    }
}

#[test]
fn a_quick_runs_file_has_every_key_it_had() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let o = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(["run", "--quick", "cpu.syscall.getppid", "--no-history"])
        .arg("--out")
        .arg(&file)
        .output()
        .expect("run yamba");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut have = BTreeSet::new();
    paths(&v, "", &mut have);
    let expected = include_str!("data/results-keys.txt");
    let missing: Vec<&str> = expected
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|k| !have.contains(*k))
        .collect();
    assert!(
        missing.is_empty(),
        "key paths no longer in the results file: {missing:#?}"
    );
}

#[test]
fn key_paths_name_objects_arrays_and_leaves() {
    let v = serde_json::json!({"a": {"b": 1, "c": null}, "d": [{"e": 2}, {"f": 3}], "g": []});
    let mut have = BTreeSet::new();
    paths(&v, "", &mut have);
    let want: BTreeSet<String> = [".a.b", ".a.c", ".d[].e", ".d[].f", ".g[]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(have, want);
}
