//! Tests of the whole: the report, the command line, and that no input
//! makes it panic. The comparison with the original binary, on a large
//! corpus, is in `tests/ministat_vs_original.rs`.

use std::ffi::OsString;

use proptest::prelude::*;

use super::*;

const IGUANA: [f64; 7] = [50.0, 200.0, 150.0, 400.0, 750.0, 400.0, 150.0];
const CHAMELEON: [f64; 5] = [150.0, 400.0, 720.0, 500.0, 930.0];

/// The example of ministat's manual page, at 80% confidence, as the
/// Debian binary prints it (the manual's plot is from an older version).
#[test]
fn manual_page_example() {
    let opts = MinistatOptions {
        confidence: Confidence::P80,
        width: 60,
        separate_bars: true,
        ..Default::default()
    };
    let text = compare(
        &[("iguana", &IGUANA[..]), ("chameleon", &CHAMELEON[..])],
        &opts,
    )
    .unwrap();
    let expected = "\
x iguana
+ chameleon
+------------------------------------------------------------+
|x      *  x            *      +              + x           +|
| |________M______A_______________|                          |
|             |________________M__A___________________|      |
+------------------------------------------------------------+
    N           Min           Max        Median           Avg        Stddev
x   7            50           750           200           300     238.04761
+   5           150           930           500           540     299.08193
Difference at 80.0% confidence
\t240 +/- 212.215
\t80% +/- 70.7384%
\t(Student's t, pooled s = 264.159)
";
    assert_eq!(text, expected);
}

#[test]
fn no_difference_and_options_that_trim_the_report() {
    let sets = [("a", vec![1.0, 2.0, 3.0]), ("b", vec![1.5, 2.5, 3.5])];
    let full = compare(&sets, &MinistatOptions::default()).unwrap();
    assert!(full.ends_with("No difference proven at 95.0% confidence\n"));
    let summary = MinistatOptions {
        summary_only: true,
        ..Default::default()
    };
    assert_eq!(
        compare(&sets, &summary).unwrap(),
        "x a\n+ b\n    N           Min           Max        Median           Avg        Stddev\n\
         x   3             1             3             2             2             1\n\
         +   3           1.5           3.5           2.5           2.5             1\n"
    );
    let quiet = MinistatOptions {
        quiet: true,
        suppress_plot: true,
        ..Default::default()
    };
    assert_eq!(
        compare(&sets, &quiet).unwrap(),
        "x   3             1             3             2             2             1\n\
         +   3           1.5           3.5           2.5           2.5             1\n\
         No difference proven at 95.0% confidence\n"
    );
}

#[test]
fn dataset_statistics() {
    let ds = Dataset::new("d", vec![4.0, 1.0, 3.0, 2.0]).unwrap();
    assert_eq!(ds.points(), &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        (ds.min(), ds.max(), ds.median(), ds.mean()),
        (1.0, 4.0, 3.0, 2.5)
    );
    assert!((ds.variance() - 5.0 / 3.0).abs() < 1e-12);
    assert_eq!(ds.name(), "d");
}

#[test]
fn errors_and_their_messages() {
    let too_few = compare(&[("few", vec![1.0, 2.0])], &MinistatOptions::default()).unwrap_err();
    assert_eq!(too_few.exit_code(), 2);
    assert_eq!(
        too_few.stderr_bytes(),
        b"Dataset few must contain at least 3 data points\n"
    );
    let sets: Vec<(String, Vec<f64>)> = (0..8)
        .map(|i| (i.to_string(), vec![1.0, 2.0, 3.0]))
        .collect();
    let too_many = compare(&sets, &MinistatOptions::default()).unwrap_err();
    assert!(too_many
        .stderr_bytes()
        .starts_with(b"Too many datasets.\nUsage: ministat"));
    let none = compare::<&str, Vec<f64>>(&[], &MinistatOptions::default()).unwrap_err();
    assert_eq!(none, MinistatError::NoDatasets);
    let crash = MinistatOptions {
        width: 1,
        ..Default::default()
    };
    let one_column = compare(&[("w", vec![1.0, 2.0, 3.0])], &crash);
    if cfg!(target_arch = "aarch64") {
        // There the original's NaN columns become 0 (`fcvtzs`), and it
        // draws one column (tests/ministat_vs_original.rs compares).
        let text = one_column.unwrap();
        assert!(
            text.starts_with("x w\n+-+\n|x|\n|x|\n|x|\n|A|\n+-+\n"),
            "{text}"
        );
    } else {
        let plot = one_column.unwrap_err();
        assert!(matches!(plot, MinistatError::Plot(_)));
        assert!(plot.to_string().contains("1 column wide"));
    }
}

#[test]
fn zero_span_has_no_plot() {
    let text = compare(&[("same", vec![5.0; 3])], &MinistatOptions::default()).unwrap();
    assert!(text.contains("[no plot, span is zero width]\n"));
}

fn args(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

fn parse(words: &[&str]) -> Result<Invocation, MinistatError> {
    parse_args(&args(words), &Environment::default())
}

#[test]
fn getopt_spellings() {
    let inv = parse(&[
        "-qs", "-w80", "-c", "99.5", "-C2", "-d", ",", "f1", "-A", "f2",
    ])
    .unwrap();
    let opts = &inv.options;
    assert!(opts.quiet && opts.separate_bars && opts.suppress_plot && !opts.summary_only);
    assert_eq!((opts.width, opts.confidence), (80, Confidence::P99_5));
    assert_eq!(
        inv.format,
        InputFormat {
            column: 2,
            delimiters: b",".to_vec()
        }
    );
    assert_eq!(inv.files, args(&["f1", "f2"]));
    assert_eq!(parse(&["--", "-n"]).unwrap().files, args(&["-n"]));
    assert_eq!(parse(&["-d", "-n"]).unwrap().format.delimiters, b"-n");
    let posix = Environment {
        posixly_correct: true,
        ..Default::default()
    };
    let inv = parse_args(&args(&["f1", "-n"]), &posix).unwrap();
    assert_eq!(
        (inv.files, inv.options.summary_only),
        (args(&["f1", "-n"]), false)
    );
}

#[test]
fn getopt_complaints() {
    let usage = |words: &[&str]| match parse(words) {
        Err(MinistatError::Usage { getopt, complaint }) => (getopt, complaint),
        other => panic!("{words:?} gave {other:?}"),
    };
    assert_eq!(
        usage(&["-x"]),
        (Some(GetoptComplaint::InvalidOption(b'x')), "Unknown option")
    );
    assert_eq!(
        usage(&["-w"]),
        (
            Some(GetoptComplaint::MissingArgument(b'w')),
            "Unknown option"
        )
    );
    assert_eq!(usage(&["-c", "97"]).1, "No support for confidence level");
    assert_eq!(usage(&["-c", "9x"]).1, "Not a floating point number");
    assert_eq!(usage(&["-C", "0"]).1, "Column number should be positive.");
    assert_eq!(usage(&["-C", "1.5"]).1, "Invalid column number.");
    assert_eq!(usage(&["-w", "-3"]).1, "Unable to move beyond left margin.");
    assert_eq!(usage(&["-w", "x"]).1, "Invalid width, not a number.");
    assert_eq!(usage(&["-d", ""]).1, "Can't use empty delimiter string");
    // A valid level sticks; a later unknown one is then not an error.
    assert_eq!(
        parse(&["-c", "90", "-c", "97"]).unwrap().options.confidence,
        Confidence::P90
    );
    assert_eq!(parse(&["-w", ""]).unwrap().options.width, 0);
    let message = MinistatError::Usage {
        getopt: Some(GetoptComplaint::InvalidOption(b'h')),
        complaint: "Unknown option",
    };
    let text = String::from_utf8(message.stderr_bytes()).unwrap();
    assert!(
        text.starts_with("ministat: invalid option -- 'h'\nUnknown option\nUsage: ministat [-C")
    );
}

#[test]
fn terminal_width_rules() {
    fn cols(s: &str) -> Option<&std::ffi::OsStr> {
        Some(std::ffi::OsStr::new(s))
    }
    assert_eq!(Environment::plot_width(false, cols("100"), Some(120)), 74);
    assert_eq!(Environment::plot_width(true, cols("100"), Some(120)), 100);
    assert_eq!(Environment::plot_width(true, cols(""), Some(120)), 118);
    assert_eq!(Environment::plot_width(true, None, Some(0)), 74);
    assert_eq!(Environment::plot_width(true, cols("x"), None), 0);
}

fn command(words: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_command(
        &args(words),
        &Environment::default(),
        &mut &stdin[..],
        &mut out,
        &mut err,
    );
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn command_reads_stdin_and_reports_file_errors() {
    let (code, out, err) = command(&["-n"], b"1\n2\n3\n");
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.starts_with("x <stdin>\n"));
    let (code, out, err) = command(&["-n", "-", "-"], b"1\n2\n3\n");
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(err, "Dataset <stdin> must contain at least 3 data points\n");
    let (code, _, err) = command(&["/nonexistent/ministat-data"], b"");
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "ministat: Cannot open /nonexistent/ministat-data: No such file or directory\n"
    );
    let (code, _, err) = command(&[], b"1\n2\nx\n");
    assert_eq!(
        (code, err.as_str()),
        (2, "ministat: Invalid data on line 3 in <stdin>\n")
    );
}

proptest! {
    #[test]
    fn reading_never_panics(
        input in proptest::collection::vec(any::<u8>(), 0..400),
        column in 1usize..5,
        delimiters in proptest::collection::vec(1u8.., 1..4),
    ) {
        let format = InputFormat { column, delimiters };
        let _ = Dataset::read("p", &mut &input[..], &format);
    }

    #[test]
    fn parsing_arguments_never_panics(words in proptest::collection::vec("[-a-zA-Z0-9 .,]{0,6}", 0..6)) {
        let words: Vec<OsString> = words.into_iter().map(OsString::from).collect();
        let _ = parse_args(&words, &Environment::default());
    }

    #[test]
    fn reporting_never_panics(
        sets in proptest::collection::vec(
            proptest::collection::vec(prop_oneof![
                any::<f64>(),
                -1e6..1e6f64,
                Just(0.0),
                Just(f64::NAN),
                Just(f64::INFINITY)
            ], 3..12),
            1..5),
        width in -3i32..90,
        separate_bars: bool,
    ) {
        let named: Vec<(String, Vec<f64>)> =
            sets.into_iter().enumerate().map(|(i, v)| (format!("s{i}"), v)).collect();
        let opts = MinistatOptions { width, separate_bars, ..Default::default() };
        let _ = compare(&named, &opts);
    }
}
