//! `yamba run` says when earlier runs of its configuration in the history
//! moved a result more than the run's own interval says: known work whose
//! stored runs are made to spread by ±15% is named under "between runs",
//! with the earlier range, and gets its interval for the runs (in the
//! results file, and in the table where it is the wider), which reaches
//! where their median lies; without the history, or with earlier runs of
//! another configuration, nothing is said.

use std::path::Path;
use std::process::Command;

fn yamba(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
    c.env("YAMBA_TEST_BENCHMARKS", "1")
        .env("YAMBA_HISTORY", dir.join("history.sqlite"))
        .current_dir(dir);
    c
}

/// A quick run of testing.work; its table (stdout) and stderr.
fn run(dir: &Path, out: &str, extra: &[&str]) -> (String, String) {
    let o = yamba(dir)
        .args([
            "run",
            "--quick",
            "--repeat",
            "4",
            "testing.work",
            "--out",
            out,
        ])
        .args(extra)
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "{so}\n{se}");
    (so, se)
}

/// `file` as an earlier run (started in the year 2000, day `day`) whose
/// testing.work value is `scale` × its own.
fn earlier_variant(file: &Path, day: u32, scale: f64, out: &Path) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["started"] = format!("2000-01-{day:02}T00:00:00Z").into();
    let mut scaled = 0;
    for r in v["results"].as_array_mut().unwrap() {
        if r["id"] == "testing.work" {
            let e = &mut r["certainty"]["estimate"];
            *e = (e.as_f64().unwrap() * scale).into();
            scaled += 1;
        }
    }
    assert_eq!(scaled, 1, "no testing.work result with a block estimate");
    std::fs::write(out, serde_json::to_string(&v).unwrap()).unwrap();
}

#[test]
fn earlier_runs_wider_than_the_interval_are_named_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (first, _) = run(d, "a.json", &[]);
    assert!(!first.contains("between runs"), "{first}");
    // Five earlier runs of the same configuration at 0.85×, 1.15×, 1.0×,
    // 1.05×, 0.95× the first (a sixth).
    for (day, scale) in [(1, 0.85), (2, 1.15), (3, 1.0), (4, 1.05), (5, 0.95)] {
        let f = d.join(format!("v{day}.json"));
        earlier_variant(&d.join("a.json"), day, scale, &f);
        let o = yamba(d)
            .args(["history", "import"])
            .arg(&f)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (table, _) = run(d, "b.json", &[]);
    let at = table
        .find("between runs: 6 earlier run(s) of this configuration")
        .unwrap_or_else(|| panic!("no between-runs lines:\n{table}"));
    let lines = &table[at..];
    assert!(lines.contains("testing.work@hot"), "{lines}");
    assert!(lines.contains("6 earlier:"), "{lines}");
    assert!(lines.contains("(±15.0%)"), "{lines}");
    // The interval for the runs: the six earlier values are the first
    // run's v × (0.85, 0.95, 1.0, 1.0, 1.05, 1.15); with six, only their
    // smallest to largest brackets their median at 95%, so the typical
    // run lies in 0.85–1.15 v, and the interval shown reaches both ends.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("b.json")).unwrap()).unwrap();
    let first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("a.json")).unwrap()).unwrap();
    let certainty = |f: &serde_json::Value| {
        f["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == "testing.work")
            .unwrap()["certainty"]
            .clone()
    };
    let (c, v) = (
        certainty(&file),
        certainty(&first)["estimate"].as_f64().unwrap(),
    );
    let b = &c["between_runs"];
    assert_eq!(b["runs"], 6, "{c}");
    let share = |i: &serde_json::Value, end: &str| i[end].as_f64().unwrap() / v;
    assert!((share(&b["typical"], "lo") - 0.85).abs() < 1e-9, "{c}");
    assert!((share(&b["typical"], "hi") - 1.15).abs() < 1e-9, "{c}");
    assert!(share(&b["ci"], "lo") <= 0.85 + 1e-9, "{c}");
    assert!(share(&b["ci"], "hi") >= 1.15 - 1e-9, "{c}");
    assert!(share(&b["ci"], "lo") <= share(&c["ci"], "lo"), "{c}");
    assert!(share(&b["ci"], "hi") >= share(&c["ci"], "hi"), "{c}");
    let row = table
        .lines()
        .find(|l| l.starts_with("testing.work "))
        .unwrap_or_else(|| panic!("no testing.work row:\n{table}"));
    assert!(row.contains('†'), "{row}");
    assert!(
        table.contains("interval for the runs: the run's own, widened"),
        "{table}"
    );
    // The history read is booked apart from saving the file (--timings).
    let spent = |f: &str| {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join(f)).unwrap()).unwrap();
        v["timings"]["before_finish_s"].as_f64().unwrap()
    };
    assert!(spent("b.json") > 0.0, "no time booked for the history read");
    // Not asked to use the history: not read either.
    let (table, _) = run(d, "c.json", &["--no-history"]);
    assert!(!table.contains("between runs"), "{table}");
    assert_eq!(spent("c.json"), 0.0, "a run without the history read it");
    // Another configuration (a setting differs): its earlier runs are not these.
    let (table, _) = run(d, "e.json", &["--set", "testing.work.extra_pct=1"]);
    assert!(!table.contains("between runs"), "{table}");
}
