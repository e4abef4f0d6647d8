//! The history as a user meets it: every run stored (two at once, both
//! kept), `history` / `show` / `trend` / `import`, `compare @ID` and
//! `--last 2`, `--no-history`, `--store postgres://…` against a real
//! server, compressed results files read wherever files are read, and
//! `history fleet` over a simulated fleet.

#[path = "../../yamba-history/tests/common/files.rs"]
mod files;
#[path = "../../yamba-history/tests/common/fleet.rs"]
mod fleet;
#[path = "../../yamba-history/tests/common/pg.rs"]
mod pg;

use std::path::Path;
use std::process::{Command, Output};
use yamba_results::ResultsFile;

/// `yamba` with its history in `history` (a file or a URL).
fn yamba(history: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
    c.env("YAMBA_HISTORY", history).env_remove("XDG_DATA_HOME");
    c
}

fn ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: exit {:?}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The run id in "stored as @N".
fn stored_id(o: &Output) -> i64 {
    let e = stderr(o);
    let at = e
        .find("stored as @")
        .unwrap_or_else(|| panic!("not stored: {e}"));
    e[at + 11..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn show_json(history: &str, id: i64) -> String {
    let o = yamba(history)
        .args(["history", "show", &id.to_string(), "--format", "json"])
        .output()
        .unwrap();
    let f = ResultsFile::from_json(&ok(&o, "history show")).unwrap();
    serde_json::to_string(&f).unwrap()
}

fn file_json(p: &Path) -> String {
    serde_json::to_string(&ResultsFile::read(p).unwrap()).unwrap()
}

/// Two `yamba run`s at once into one SQLite history: both stored, each
/// exactly its results file; then six imports at once, all stored.
#[test]
fn runs_at_once_are_all_stored() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("h.sqlite");
    let hs = h.to_str().unwrap();
    let start = |out: &str| {
        yamba(hs)
            .current_dir(dir.path())
            .args(["run", "--quick", "cpu.loop", "--out", out])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start("a.json"), start("b.json.zst"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    ok(&a, "run a");
    ok(&b, "run b");
    let (ia, ib) = (stored_id(&a), stored_id(&b));
    assert_ne!(ia, ib);
    assert_eq!(show_json(hs, ia), file_json(&dir.path().join("a.json")));
    assert_eq!(show_json(hs, ib), file_json(&dir.path().join("b.json.zst")));
    // The first run to open the history said where it is; exactly one did.
    let notices = [&a, &b]
        .iter()
        .filter(|o| stderr(o).contains("keeping a history of runs in"))
        .count();
    assert_eq!(notices, 1, "{}\n{}", stderr(&a), stderr(&b));

    // Six imports at once.
    let names: Vec<String> = (0..6)
        .map(|i| {
            let p = dir.path().join(format!("v{i}.json"));
            files::variant(
                &format!("2026-11-2{i}T10:00:00Z"),
                "6.1.0",
                1.0 + i as f64 / 10.0,
            )
            .write_atomic(&p)
            .unwrap();
            p.to_str().unwrap().to_string()
        })
        .collect();
    let children: Vec<_> = names
        .iter()
        .map(|n| {
            yamba(hs)
                .args(["history", "import", n])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(ok(&o, "import").contains("stored as @"));
    }
    let o = yamba(hs)
        .args(["history", "--all", "--format", "json"])
        .output()
        .unwrap();
    let list: Vec<serde_json::Value> = serde_json::from_str(&ok(&o, "history")).unwrap();
    assert_eq!(list.len(), 8);
    // Importing a file already stored adds nothing.
    let o = yamba(hs)
        .args([
            "history",
            "import",
            dir.path().join("a.json").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(ok(&o, "import again").contains(&format!("already in the history as @{ia}")));
}

/// `compare @A @B` and `compare --last 2` say what comparing the files says.
#[test]
fn compare_takes_stored_runs() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("h.sqlite");
    let hs = h.to_str().unwrap();
    let mut ids = vec![];
    for (i, scale) in [1.0, 1.25].iter().enumerate() {
        let p = dir.path().join(format!("{i}.json.zst"));
        files::variant(&format!("2026-11-23T1{i}:00:00Z"), "6.1.0", *scale)
            .write_atomic(&p)
            .unwrap();
        let o = yamba(hs)
            .args(["history", "import", p.to_str().unwrap()])
            .output()
            .unwrap();
        let out = ok(&o, "import");
        ids.push(
            out.rsplit('@')
                .next()
                .unwrap()
                .trim()
                .parse::<i64>()
                .unwrap(),
        );
    }
    let compare = |args: &[&str]| {
        let o = yamba(hs)
            .arg("compare")
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        ok(&o, "compare")
    };
    let (a, b) = (dir.path().join("0.json.zst"), dir.path().join("1.json.zst"));
    let by_files = compare(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(by_files.contains("cpu.syscall.getppid@hot"));
    let (ra, rb) = (format!("@{}", ids[0]), format!("@{}", ids[1]));
    assert_eq!(compare(&[&ra, &rb]), by_files);
    assert_eq!(compare(&["--last", "2"]), by_files);
    assert_eq!(compare(&[&ra, b.to_str().unwrap()]), by_files);

    let o = yamba(hs).args(["compare", "@99", &rb]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("no run @99") && e.lines().count() == 1, "{e}");
    let o = yamba(hs).args(["compare", "@x", &rb]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a stored run is @ID"), "{}", stderr(&o));
    let o = yamba(hs).args(["compare", "--last", "3"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds 2 run(s)"), "{}", stderr(&o));
}

/// `history trend` over three stored runs: three points in the table and
/// in the SVG, the kernel change marked.
#[test]
fn trend_shows_three_points() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("h.sqlite");
    let hs = h.to_str().unwrap();
    for (i, (kernel, scale)) in [("6.1.0", 1.0), ("6.1.0", 1.1), ("6.12.0", 1.3)]
        .iter()
        .enumerate()
    {
        let p = dir.path().join(format!("{i}.json"));
        files::variant(&format!("2026-11-23T1{i}:00:00Z"), kernel, *scale)
            .write_atomic(&p)
            .unwrap();
        let o = yamba(hs)
            .args(["history", "import", p.to_str().unwrap()])
            .output()
            .unwrap();
        ok(&o, "import");
    }
    let svg = dir.path().join("trend.svg");
    let o = yamba(hs)
        .args(["history", "trend", "cpu.syscall.getppid@hot", "--output"])
        .arg(&svg)
        .output()
        .unwrap();
    let text = ok(&o, "trend");
    assert_eq!(
        text.lines().filter(|l| l.starts_with('@')).count(),
        3,
        "{text}"
    );
    assert!(text.contains("-- kernel: 6.1.0 → 6.12.0"), "{text}");
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(svg.matches("class=\"point\"").count(), 3, "{svg}");
    assert_eq!(svg.matches("class=\"change\"").count(), 1);
    // The list and one run, in words.
    let list = ok(&yamba(hs).arg("history").output().unwrap(), "history");
    assert_eq!(
        list.lines().filter(|l| l.starts_with('@')).count(),
        3,
        "{list}"
    );
    assert!(list.contains("run (imported)"), "{list}");
    let show = ok(
        &yamba(hs).args(["history", "show", "@2"]).output().unwrap(),
        "show",
    );
    assert!(
        show.contains("run @2") && show.contains("cpu.syscall.getppid"),
        "{show}"
    );
    let o = yamba(hs)
        .args(["history", "trend", "no.such.thing"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no stored run has a result named"));
}

/// The default history lives under XDG_DATA_HOME; --no-history keeps out of it.
#[test]
fn default_place_and_no_history() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_yamba"))
            .env_remove("YAMBA_HISTORY")
            .env("XDG_DATA_HOME", &data)
            .current_dir(dir.path())
            .args(["run", "--quick", "cpu.loop", "--out", "r.json"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--no-history"]);
    ok(&o, "run --no-history");
    assert!(!stderr(&o).contains("stored as"), "{}", stderr(&o));
    assert!(!data.exists());
    let o = run(&[]);
    ok(&o, "run");
    let db = data.join("yamba/history.sqlite");
    assert!(db.is_file());
    assert!(stderr(&o).contains(&format!("keeping a history of runs in {}", db.display())));
    let o = run(&[]);
    ok(&o, "run again");
    assert!(!stderr(&o).contains("keeping a history"), "said twice");
    assert!(stderr(&o).contains("stored as @2"), "{}", stderr(&o));
}

/// Compressed results files read wherever files are read: obs, select,
/// plot (a file or standard input), run --baseline.
#[test]
fn compressed_files_read_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let f = files::variant("2026-11-23T10:00:00Z", "6.1.0", 1.0);
    let (z, plain) = (dir.path().join("r.json.zst"), dir.path().join("r.json"));
    f.write_atomic(&z).unwrap();
    f.write_atomic(&plain).unwrap();
    assert!(std::fs::metadata(&z).unwrap().len() * 3 < std::fs::metadata(&plain).unwrap().len());
    let hs = dir.path().join("h.sqlite");
    let hs = hs.to_str().unwrap();
    let obs = |p: &Path| {
        ok(
            &yamba(hs)
                .args(["obs", p.to_str().unwrap(), "testing.awkward"])
                .output()
                .unwrap(),
            "obs",
        )
    };
    assert_eq!(obs(&z), obs(&plain));
    let small = dir.path().join("small.json.zst");
    ok(
        &yamba(hs)
            .args(["select", z.to_str().unwrap(), "cpu", "--out"])
            .arg(&small)
            .output()
            .unwrap(),
        "select",
    );
    let back = ResultsFile::read(&small).unwrap();
    assert!(!back.results.is_empty() && back.results.iter().all(|r| r.area == "cpu"));
    let o = yamba(hs)
        .args(["plot", "-", "testing.awkward"])
        .stdin(std::fs::File::open(&z).unwrap())
        .output()
        .unwrap();
    ok(&o, "plot from a compressed stdin");
    let svg = dir.path().join("p.svg");
    let o = yamba(hs)
        .args(["plot", z.to_str().unwrap(), "testing.awkward", "--output"])
        .arg(&svg)
        .output()
        .unwrap();
    ok(&o, "plot a compressed file");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(
        drawn.starts_with("<svg") || drawn.starts_with("<?xml"),
        "{drawn:.80}"
    );
}

/// `--store postgres://…` on run, history, compare and import, against a
/// real server; an unreachable store fails a run before it measures.
#[test]
fn postgres_store_through_the_command() {
    let server = match pg::PgServer::start() {
        Ok(s) => s,
        Err(why) => yamba_testkit::skip!("{why}"),
    };
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let cmd = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
        // The default history must not be touched: make it unusable.
        c.env("YAMBA_HISTORY", "/proc/no-such-place/h.sqlite")
            .current_dir(dir.path());
        c
    };
    let o = cmd()
        .args([
            "run",
            "--quick",
            "cpu.loop",
            "--out",
            "r.json.zst",
            "--store",
            &url,
        ])
        .output()
        .unwrap();
    ok(&o, "run --store");
    let id = stored_id(&o);
    let p = dir.path().join("v.json");
    files::variant("2026-11-23T10:00:00Z", "6.1.0", 1.0)
        .write_atomic(&p)
        .unwrap();
    let imported = ok(
        &cmd()
            .args(["history", "import", "v.json", "--store", &url])
            .output()
            .unwrap(),
        "import",
    );
    assert!(imported.contains("stored as @"), "{imported}");
    let list = ok(
        &cmd()
            .args(["history", "--store", &url, "--format", "json"])
            .output()
            .unwrap(),
        "history",
    );
    let list: Vec<serde_json::Value> = serde_json::from_str(&list).unwrap();
    assert_eq!(list.len(), 2);
    let shown = ok(
        &cmd()
            .args([
                "history",
                "show",
                &id.to_string(),
                "--format",
                "json",
                "--store",
                &url,
            ])
            .output()
            .unwrap(),
        "show",
    );
    assert_eq!(
        serde_json::to_string(&ResultsFile::from_json(&shown).unwrap()).unwrap(),
        file_json(&dir.path().join("r.json.zst"))
    );
    let c = ok(
        &cmd()
            .args(["compare", &format!("@{id}"), "r.json.zst", "--store", &url])
            .output()
            .unwrap(),
        "compare",
    );
    assert!(c.contains("cpu.loop"), "{c}");

    // A store that cannot be reached: one line, exit 2, nothing measured.
    let bad = format!(
        "postgres:///nodb?host={}&port=1&user=yamba",
        dir.path().display()
    );
    let o = cmd()
        .args([
            "run", "--quick", "cpu.loop", "--out", "x.json", "--store", &bad,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("yamba: cannot connect to postgres:///nodb"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(!dir.path().join("x.json").exists());
}

#[test]
fn fleet_flags_the_planted_machines_through_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("fleet.sqlite");
    let mut h =
        yamba_history::History::open(&yamba_history::StoreSpec::Sqlite(store.clone())).unwrap();
    fleet::store(&mut h, &fleet::files());
    drop(h);
    let store = store.to_str().unwrap();
    let o = yamba("/nonexistent/default.sqlite")
        .args(["history", "fleet", "--store", store])
        .output()
        .unwrap();
    let text = ok(&o, "history fleet");
    assert!(
        text.contains("fleet of 50 machine(s) in 3 hardware group(s)"),
        "{text}"
    );
    let flags: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "flags:")
        .skip(1)
        .collect();
    // Group by group (AMD, Intel, Neoverse), outliers before moves.
    assert_eq!(flags.len(), 5, "{text}");
    assert!(flags[0].contains(fleet::FORK_SLOW) && flags[0].contains("fork + exit + wait"));
    // Moved three runs ago: since then, the kernel changed at that step.
    assert!(flags[2].contains(fleet::STEPPED) && flags[2].contains("moved +"));
    assert!(
        flags[2].contains("the median of its 7 earlier run(s), since run @"),
        "{text}"
    );
    assert!(
        flags[2].contains(&format!(" of {} (from @", fleet::STARTS[fleet::STEP]))
            && flags[2].contains(&format!(
                "kernel: {} → {}",
                fleet::OLD_KERNEL,
                fleet::STEP_KERNEL
            )),
        "{text}"
    );
    assert!(flags[4].contains(fleet::KERNEL_MOVED) && flags[4].contains("moved +"));
    assert!(
        flags[4].contains(&format!(" of {} (from @", fleet::NEWEST))
            && flags[4].contains(&format!(
                "kernel: {} → {}",
                fleet::OLD_KERNEL,
                fleet::NEW_KERNEL
            )),
        "{text}"
    );
    assert!(!text.contains(&format!("{}:", fleet::NOISY)), "{text}");
    let o = yamba("/nonexistent/default.sqlite")
        .args(["history", "fleet", "--store", store, "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&ok(&o, "history fleet --format json")).unwrap();
    let hosts: Vec<&str> = v["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["host"].as_str().unwrap())
        .collect();
    assert_eq!(
        hosts,
        vec![
            fleet::FORK_SLOW,
            fleet::STEPPED,
            fleet::STEPPED,
            fleet::KERNEL_MOVED,
            fleet::KERNEL_MOVED
        ]
    );
    assert_eq!(v["flags"][2]["since"], fleet::STARTS[fleet::STEP]);
    assert_eq!(v["flags"][2]["runs_before"], 7);
    assert_eq!(v["groups"].as_array().unwrap().len(), 3);
}

/// `history prune` parses and prints; the rules themselves are tested on
/// `History::prune` (yamba-history/tests/prune.rs). No rule: refused, exit
/// 2; a dry run names the runs and removes none; a real one removes them.
#[test]
fn prune_through_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("prune.sqlite");
    let mut h =
        yamba_history::History::open(&yamba_history::StoreSpec::Sqlite(store.clone())).unwrap();
    // The simulated fleet: 50 machines, 8 runs each.
    fleet::store(&mut h, &fleet::files());
    drop(h);
    let store = store.to_str().unwrap();
    let prune = |args: &[&str]| {
        yamba("/nonexistent/default.sqlite")
            .args(["history", "prune", "--store", store])
            .args(args)
            .output()
            .unwrap()
    };
    let count = || {
        let o = yamba(store)
            .args(["history", "--format", "json", "--all"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&ok(&o, "history")).unwrap();
        v.as_array().unwrap().len()
    };
    let o = prune(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--keep N"), "{}", stderr(&o));

    let text = ok(&prune(&["--keep", "1", "--dry-run"]), "prune --dry-run");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("would remove @"))
            .count(),
        350
    );
    assert!(
        text.contains("would remove 350 run(s) of 50 machine(s)"),
        "{text}"
    );
    assert_eq!(count(), 400);

    let text = ok(&prune(&["--keep", "1"]), "prune");
    assert!(
        text.contains("removed 350 run(s) of 50 machine(s)"),
        "{text}"
    );
    assert!(text.contains("(vacuumed)"), "{text}");
    assert_eq!(count(), 50);
}
