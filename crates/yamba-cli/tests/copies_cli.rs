//! `yamba run --copies N` as a user sees it: N copies on distinct CPUs,
//! recorded in the results file; the table's scaling; a benchmark that
//! cannot run as copies skipped with its reason, once; one-line errors;
//! and no trace of copies in a run without them.

mod support;

use std::process::Command;

fn yamba(dir: &std::path::Path) -> Command {
    let mut c = support::run::yamba();
    c.current_dir(dir);
    c
}

fn usable() -> Vec<usize> {
    yamba_core::affinity::usable_cpus().to_vec()
}

/// Runs `yamba run --quick ARGS --no-history --out r.json`; the file and stdout.
fn run(dir: &std::path::Path, args: &[&str]) -> (serde_json::Value, String) {
    support::run::run_ok(dir, &[&["run", "--quick", "--no-history"], args].concat())
}

fn result<'a>(file: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    file["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no result {id}"))
}

#[test]
fn two_copies_run_on_distinct_cpus_and_the_file_says_where() {
    let cpus = usable();
    if cpus.len() < 2 {
        yamba_testkit::skip!("one CPU allowed: two copies would share it");
    }
    let dir = tempfile::tempdir().unwrap();
    let (file, stdout) = run(dir.path(), &["--copies", "2", "testing.work", "space.pipe"]);
    assert_eq!(file["config"]["copies"], 2);

    let one = result(&file, "testing.work");
    assert_eq!(one["status"], "ok");
    assert!(
        one.get("copies").is_none(),
        "the one-copy result is as before"
    );

    let r = result(&file, "testing.work.copies2");
    // Measured; withheld only when the machine kept the copies from
    // starting together (a check of timing, which tests beside this one
    // can disturb): the placement and the fields are this test's.
    let together = "the copies measured together";
    assert!(
        r["status"] == "ok"
            || (r["status"] == "withheld" && r["reason"].as_str().unwrap().starts_with(together)),
        "{r:#}"
    );
    assert_eq!(r["params"]["copies"], 2);
    let c = &r["copies"];
    assert_eq!(c["count"], 2);
    assert_eq!(c["one_copy_id"], "testing.work");
    let blocks = c["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "a quick run: one block");
    let placed: Vec<usize> = blocks[0]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(placed.len(), 2);
    assert_ne!(placed[0], placed[1], "two copies on one CPU: {placed:?}");
    assert!(
        placed.iter().all(|p| cpus.contains(p)),
        "{placed:?} not in {cpus:?}"
    );
    for key in ["values", "means"] {
        let v = blocks[0][key].as_array().unwrap();
        assert!(
            v.len() == 2 && v.iter().all(|x| x.as_f64().is_some_and(|x| x > 0.0)),
            "{key}: {v:?}"
        );
    }
    // The observations are the copies' values; the one-copy value and
    // the scaling come from the same run.
    assert_eq!(r["observations"], blocks[0]["values"]);
    assert_eq!(c["one_copy"], one["certainty"]["estimate"]);
    assert!(c["scaling"].as_f64().is_some_and(|s| s > 0.0), "{c:#}");
    // Where each copy ran was checked, not only asked for.
    let placement = r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["check"]
                .as_str()
                .unwrap()
                .starts_with("each copy ran on the CPU it was pinned to")
        })
        .expect("the placement check");
    assert_eq!(placement["ok"], true, "{placement:#}");
    assert!(placement["observed"]
        .as_str()
        .unwrap()
        .contains(&format!("copy 2 on CPU {} → {}", placed[1], placed[1])));

    // A benchmark that cannot run as copies: one skipped row, its reason.
    let skipped = result(&file, "space.pipe.copies2");
    assert_eq!(skipped["status"], "skipped");
    assert!(skipped["reason"]
        .as_str()
        .unwrap()
        .starts_with("cannot run as simultaneous copies: it reads the whole machine's accounting"));
    let alone: Vec<&serde_json::Value> = file["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["benchmark"] == "space.pipe" && r.get("copies").is_none())
        .filter(|r| r["status"] != "skipped")
        .collect();
    assert!(
        alone.len() >= 2,
        "its one-copy results ran (.kernel, .user)"
    );

    // The table: the copies' own section with the scaling.
    assert!(
        stdout.contains("simultaneous copies, each pinned to a CPU of its own"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("testing.work (hot)"))
        .unwrap_or_else(|| panic!("no copies row:\n{stdout}"));
    let shown = if r["status"] == "ok" {
        " of 2"
    } else {
        together
    };
    assert!(row.contains(shown), "{row}");
}

#[test]
fn without_copies_the_file_has_no_trace_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let (file, stdout) = run(dir.path(), &["testing.offset"]);
    assert!(
        file["config"].get("copies").is_none(),
        "{:#}",
        file["config"]
    );
    let results = file["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r.get("copies").is_none()));
    assert!(results
        .iter()
        .all(|r| !r["id"].as_str().unwrap().contains(".copies")));
    assert!(!stdout.contains("simultaneous copies"));
}

#[test]
fn copies_beyond_the_allowed_cpus_or_unpinned_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |args: &[&str]| {
        let o = yamba(dir.path())
            .args(["run", "--quick", "--no-history", "testing.offset"])
            .args(args)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{args:?} wrote a file"
        );
        err
    };
    let n = usable().len();
    let err = refused(&["--copies", &(n + 1).to_string()]);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("--copies {}: only {n} CPU(s) allowed", n + 1)),
        "{err}"
    );
    if n > 1 {
        let err = refused(&["--copies", "2", "--no-pin"]);
        assert!(
            err.contains("drop --no-pin") && err.trim().lines().count() == 1,
            "{err}"
        );
    }
    for bad in ["0", "-1", "two", "4097"] {
        let err = refused(&[&format!("--copies={bad}")]);
        assert!(
            err.contains("a number of copies from 1 to 4096, or 'all'"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn copies_all_means_every_allowed_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = run(dir.path(), &["--copies", "all", "testing.offset"]);
    let n = usable().len();
    if n == 1 {
        assert!(file["config"].get("copies").is_none());
        return;
    }
    assert_eq!(file["config"]["copies"], n);
    let c = &result(&file, &format!("testing.offset.copies{n}"))["copies"];
    let mut cpus: Vec<u64> = c["blocks"][0]["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    cpus.sort_unstable();
    assert_eq!(cpus, usable().iter().map(|&c| c as u64).collect::<Vec<_>>());
    // A ratio is neither a time nor a rate: no scaling, said by its absence.
    assert!(c.get("scaling").is_none(), "{c:#}");
}
