//! obs and select: matching rules, near names, ranges, full precision,
//! and a results-file reader that never panics on bad input.

mod support;

use proptest::prelude::*;
use yamba_plot::numbers::parse_numbers;
use yamba_report::select::{
    near_names, observations_text, parse_range, select_file, select_one, select_results,
    SelectError,
};
use yamba_results::ResultsFile;

fn keys(names: &[&str]) -> Vec<String> {
    let f = support::sample_file();
    select_results(&f, &names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .unwrap()
        .iter()
        .map(|r| r.key())
        .collect()
}

#[test]
fn matching_rules() {
    // Exact id: both modes.
    assert_eq!(
        keys(&["cpu.syscall.getppid"]),
        ["cpu.syscall.getppid@hot", "cpu.syscall.getppid@cold"]
    );
    // id@mode: one.
    assert_eq!(
        keys(&["cpu.syscall.getppid@cold"]),
        ["cpu.syscall.getppid@cold"]
    );
    // Dotted prefix, at a dot only.
    assert_eq!(keys(&["cpu.call"]), ["cpu.call.args3@hot"]);
    assert!(select_results(&support::sample_file(), &["cpu.sys".to_string()]).is_err());
    // Area.
    assert_eq!(keys(&["mem"]).len(), 3);
    // Several names: file order, each result once.
    assert_eq!(
        keys(&["cpu.call.args3", "cpu", "cpu.call.args3@hot"]),
        [
            "cpu.syscall.getppid@hot",
            "cpu.syscall.getppid@cold",
            "cpu.call.args3@hot"
        ]
    );
}

#[test]
fn unknown_name_lists_near_names() {
    let f = support::sample_file();
    let e = select_results(&f, &["cpu.syscall.getpid".to_string()]).unwrap_err();
    let SelectError::Unknown { near, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(
        near.iter().any(|n| n.starts_with("cpu.syscall.getppid")),
        "{near:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("did you mean") && msg.contains("cpu.syscall.getppid"),
        "{msg}"
    );
    assert!(near_names(&f, "zzzzzzzzzzzzzzzzzz").is_empty());
    // A substring of a name is near too.
    assert!(near_names(&f, "getppid")
        .iter()
        .any(|n| n.contains("getppid")));
    // select_one refuses an ambiguous name and says which results it matched.
    let e = select_one(&f, "cpu.syscall.getppid").unwrap_err();
    assert!(e.contains("@hot") && e.contains("@cold"), "{e}");
}

#[test]
fn ranges() {
    assert_eq!(parse_range("0-200").unwrap(), 0..200);
    assert_eq!(parse_range("5..7").unwrap(), 5..7);
    assert_eq!(parse_range("3").unwrap(), 3..4);
    assert_eq!(parse_range("3-").unwrap(), 3..usize::MAX);
    for bad in ["", "a-b", "7-3", "-3", "1-2-3", "18446744073709551615"] {
        assert!(parse_range(bad).is_err(), "{bad}");
    }
    let f = support::sample_file();
    let r = select_one(&f, "cpu.syscall.getppid@hot").unwrap();
    let lines: Vec<f64> = observations_text(r, Some(5..8))
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(lines, r.observations[5..8]);
    // Past the end: clamped, not a panic.
    assert_eq!(observations_text(r, Some(1000..2000)), "");
    assert_eq!(
        observations_text(r, Some(38..usize::MAX)).lines().count(),
        2
    );
}

#[test]
fn obs_prints_full_precision() {
    let f = support::sample_file();
    let r = select_one(&f, "cpu.call.args3@hot").unwrap();
    let back = parse_numbers(&observations_text(r, None)).unwrap();
    assert_eq!(
        back, r.observations,
        "every bit must survive the round trip"
    );
}

#[test]
fn select_keeps_machine_and_reads_back() {
    let f = support::sample_file();
    let small = select_file(&f, &["mem".to_string()]).unwrap();
    assert_eq!(small.results.len(), 3);
    assert!(small.results.iter().all(|r| r.area == "mem"));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("small.json");
    small.write_atomic(&p).unwrap();
    let back = ResultsFile::read(&p).unwrap();
    assert_eq!(back.machine, f.machine);
    assert_eq!(back.results, small.results);
}

fn valid_json() -> String {
    serde_json::to_string(&support::sample_file()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn reader_never_panics_on_strings(s in ".{0,400}") {
        let _ = ResultsFile::from_json(&s);
        let _ = parse_numbers(&s);
        let _ = parse_range(&s);
    }

    #[test]
    fn reader_never_panics_on_bytes(b in proptest::collection::vec(any::<u8>(), 0..400)) {
        let s = String::from_utf8_lossy(&b);
        let _ = ResultsFile::from_json(&s);
        let _ = parse_numbers(&s);
    }

    /// Valid files with bytes changed, cut short or spliced: the reader
    /// returns an error or a file, and whatever file it returns every
    /// reading tool handles without panicking.
    #[test]
    fn mutated_valid_json(edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
                          cut in any::<prop::sample::Index>(), truncate in any::<bool>()) {
        let mut bytes = valid_json().into_bytes();
        for (i, b) in &edits {
            let i = i.index(bytes.len());
            bytes[i] = *b;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        let s = String::from_utf8_lossy(&bytes);
        if let Ok(f) = ResultsFile::from_json(&s) {
            exercise(&f);
        }
    }

    /// Numeric fields replaced by extreme values still read and handle.
    #[test]
    fn extreme_values(v in prop::sample::select(vec!["0", "-1", "1e308", "-1e308", "5e-324", "0.0", "1e-300"]),
                      which in 0usize..3) {
        let text = valid_json();
        let key = ["\"observations\":[", "\"median\":", "\"points\":[["][which];
        let s = text.replacen(key, &format!("{key}{v},"), 1);
        if let Ok(f) = ResultsFile::from_json(&s) {
            exercise(&f);
        }
    }

    #[test]
    fn numbers_round_trip(v in proptest::collection::vec(-1e300f64..1e300, 0..50)) {
        let text: String = v.iter().map(|x| format!("{x:?}\n")).collect();
        prop_assert_eq!(parse_numbers(&text).unwrap(), v);
    }
}

fn exercise(f: &ResultsFile) {
    let _ = yamba_report::export::results_csv(f);
    let _ = yamba_report::export::gobench(f);
    let _ = yamba_report::compare::table(&yamba_report::compare::compare(f, f, 0.95));
    let opts = yamba_plot::PlotOptions {
        outlier_layers: 2,
        ..Default::default()
    };
    for r in &f.results {
        let src = yamba_report::plotting::source(r);
        let fig = yamba_plot::figure(&src, &opts);
        let _ = yamba_plot::text::render(&fig, 60, 16);
        let _ = yamba_plot::svg::render(std::slice::from_ref(&fig), 200, 150);
        let _ = observations_text(r, Some(0..3));
    }
}

#[test]
fn bad_numbers_name_the_line() {
    let e = parse_numbers("1 2\n3 x4\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("x4"));
    // A label word first on a line is skipped, as in `bench -o` output.
    assert_eq!(
        parse_numbers("BASE 1 2 3\n# note\n4, 5\n").unwrap(),
        [1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert!(parse_numbers("1 1e999").is_err());
    assert!(parse_numbers("1 nan").is_err());
}
