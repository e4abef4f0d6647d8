//! What people read: the table on a narrow terminal, completions, manual
//! pages, and help where a subcommand parses its own options.

use std::process::{Command, Output};

fn yamba(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
    c.env("YAMBA_TEST_BENCHMARKS", "1").env_remove("COLUMNS");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.args(args).output().expect("run yamba")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The table on a 60-column terminal: no line of it (rows, wrapped notes,
/// legend) is wider than the terminal, a failed row says so with its
/// reason, and the results file keeps the reason whole.
#[test]
fn table_fits_a_narrow_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("r.json");
    let o = yamba(
        &[
            "run",
            "--quick",
            "testing.crash",
            "cpu.syscall.getppid",
            "--out",
            out_file.to_str().unwrap(),
        ],
        &[("COLUMNS", "60")],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("benchmark"))
        .collect();
    assert!(table.len() >= 4, "{stdout}");
    for l in &table {
        assert!(l.chars().count() <= 60, "wider than 60: {l:?}\n{stdout}");
    }
    let row = table
        .iter()
        .position(|l| l.starts_with("testing.crash"))
        .expect(&stdout);
    assert!(table[row].contains("FAILED"), "{stdout}");
    // The reason follows the row (wrapped, possibly cut).
    assert!(
        table[row..].iter().any(|l| l.contains("crashed")),
        "{stdout}"
    );
    let ok = table
        .iter()
        .find(|l| l.starts_with("cpu.syscall.getppid"))
        .expect(&stdout);
    assert!(ok.contains(" ns "), "a time in ns: {ok}");
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    let reason = file["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "testing.crash")
        .unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("crashed"), "{reason}");

    // Piped without COLUMNS, nothing is cut.
    let wide = yamba(
        &[
            "run",
            "--quick",
            "testing.crash",
            "--out",
            out_file.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        text(&wide.stdout).contains(&reason),
        "{}",
        text(&wide.stdout)
    );
}

#[test]
fn completions_for_every_shell_name_the_subcommands() {
    for (shell, marker) in [
        ("bash", "complete -F _yamba"),
        ("zsh", "#compdef yamba"),
        ("fish", "complete -c yamba"),
    ] {
        let o = yamba(&["completions", shell], &[]);
        assert!(o.status.success(), "{shell}: {}", text(&o.stderr));
        let s = text(&o.stdout);
        assert!(s.contains(marker), "{shell}: {s}");
        for sub in ["run", "stone", "ministat", "plot", "completions"] {
            assert!(s.contains(sub), "{shell} lacks {sub}");
        }
        assert!(
            !s.contains("__bench"),
            "{shell}: the internal subcommand is hidden"
        );
    }
    let o = yamba(&["completions", "tcsh"], &[]);
    assert!(!o.status.success());
}

#[test]
fn man_pages_from_the_definitions() {
    let o = yamba(&["man"], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.contains(".TH yamba 1"), "{s}");
    assert!(s.contains("stone"), "{s}");
    let dir = tempfile::tempdir().unwrap();
    let o = yamba(&["man", "--out-dir", dir.path().to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for page in [
        "yamba.1",
        "yamba-run.1",
        "yamba-stone.1",
        "yamba-ministat.1",
    ] {
        let p = dir.path().join(page);
        let body = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(body.starts_with(".ie") || body.contains(".TH"), "{page}");
    }
    // man(1) renders the page (.ci/install installs man-db).
    let o = match Command::new("man")
        .arg("-l")
        .arg(dir.path().join("yamba-stone.1"))
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .output()
    {
        Ok(o) => o,
        Err(e) => yamba_testkit::skip!("man(1) cannot run ({e}): the page is not rendered"),
    };
    assert!(o.status.success(), "man -l failed: {}", text(&o.stderr));
    assert!(text(&o.stdout).contains("--shell"), "{}", text(&o.stdout));
}

/// `--help` prints help; ministat's own options (and its usage for a bad
/// one, `-h` included) are untouched.
#[test]
fn ministat_help_and_ministat_usage() {
    let o = yamba(&["ministat", "--help"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.contains("Usage: yamba ministat"), "{s}");
    assert!(s.contains("-c confidence"), "{s}");
    let o = yamba(&["ministat", "-h"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!o.stderr.is_empty() && o.stdout.is_empty());
}

/// Help speaks to users: no references to the project's source documents.
#[test]
fn help_speaks_to_users() {
    let o = yamba(&["--help"], &[]);
    let mut all = text(&o.stdout);
    for sub in [
        "run", "obs", "select", "stone", "blocks", "top", "lang", "plot",
    ] {
        all.push_str(&text(&yamba(&[sub, "--help"], &[]).stdout));
    }
    for word in ["the seed's", "seed pipeline", "worldstone", "bcut", "bgrep"] {
        assert!(!all.to_lowercase().contains(word), "help mentions {word:?}");
    }
}
