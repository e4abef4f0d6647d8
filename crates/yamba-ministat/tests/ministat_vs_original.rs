//! yamba's ministat against the original, byte for byte.
//!
//! Generates a seeded corpus of command lines and data files (sizes from 0
//! to hundreds of values, ties, negatives, huge and tiny magnitudes, 1 to 8
//! files, every option and confidence level, widths, columns and
//! delimiters, comments, blank lines, CRLF, bad data, missing files, bad
//! options, standard input) and runs each through Debian's
//! `/usr/bin/ministat` and through `run_command`. Standard output,
//! standard error and the exit status must be identical, with two
//! deliberate exceptions:
//! - where the original crashes (killed by a signal), ours must fail
//!   cleanly: a non-zero status and a "cannot draw the plot" message;
//! - `-q` (newer FreeBSD; Debian's build rejects it) must print the
//!   original's output less the set names and the table header.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use yamba_ministat::{run_command, Environment};

const ORIGINAL: &str = "/usr/bin/ministat";
/// Random cases per run; `MINISTAT_CORPUS_CASES` and `MINISTAT_CORPUS_SEED`
/// override the count and seed for longer explorations.
const RANDOM_CASES: usize = 1500;
const SEED: u64 = 0x5eed_0004;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One run: arguments (file names relative to the case's directory),
/// files to create there, and standard input.
#[derive(Clone, Debug, Default)]
struct Case {
    args: Vec<String>,
    files: Vec<(String, Vec<u8>)>,
    stdin: Vec<u8>,
    /// Run ours with `-q` added; compare with the original's output less
    /// the names and the header.
    quiet: bool,
}

/// What a run printed and how it ended.
#[derive(Debug, PartialEq)]
struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// The exit status, or None when killed by a signal.
    code: Option<i32>,
}

#[derive(Default)]
struct Tally {
    identical: usize,
    crashes_as_errors: usize,
    quiet: usize,
    failures: Vec<String>,
}

#[test]
fn ministat_matches_the_original() {
    assert!(
        Path::new(ORIGINAL).exists(),
        "{ORIGINAL} is missing: install the reference with \
         `apt-get update && apt-get install -y ministat` (Debian package `ministat`)"
    );
    let mut cases = fixed_cases();
    let mut rng = StdRng::seed_from_u64(env_number("MINISTAT_CORPUS_SEED", SEED));
    let count = env_number("MINISTAT_CORPUS_CASES", RANDOM_CASES as u64);
    cases.extend((0..count).map(|_| random_case(&mut rng)));
    let root = tempfile::tempdir().expect("temporary directory");
    let mut tally = Tally::default();
    for (i, case) in cases.iter().enumerate() {
        let dir = root.path().join(format!("case{i}"));
        std::fs::create_dir(&dir).expect("case directory");
        for (name, content) in &case.files {
            std::fs::write(dir.join(name), content).expect("data file");
        }
        check(i, case, &dir, &mut tally);
    }
    println!(
        "ministat corpus: {} cases: {} identical, {} with -q matching, {} crashes of the \
         original turned into errors, {} failed",
        cases.len(),
        tally.identical,
        tally.quiet,
        tally.crashes_as_errors,
        tally.failures.len()
    );
    assert!(
        tally.failures.is_empty(),
        "{} of {} cases differ from the original; the first ones:\n{}",
        tally.failures.len(),
        cases.len(),
        tally.failures[..tally.failures.len().min(5)].join("\n")
    );
}

fn check(index: usize, case: &Case, dir: &Path, tally: &mut Tally) {
    let theirs = original(case, dir);
    let ours = ours(case, dir);
    let expected = if case.quiet && theirs.code == Some(0) {
        Outcome {
            stdout: without_names_and_header(&theirs.stdout, count_files(case)),
            ..theirs
        }
    } else {
        theirs
    };
    let verdict = match expected.code {
        None if ours.code.is_some_and(|c| c != 0)
            && ours.stdout.is_empty()
            && ours.stderr.starts_with(b"ministat: cannot draw the plot") =>
        {
            tally.crashes_as_errors += 1;
            Ok(())
        }
        _ if ours == expected => {
            tally.identical += 1;
            tally.quiet += usize::from(case.quiet);
            Ok(())
        }
        _ => Err(describe(index, case, &expected, &ours)),
    };
    if let Err(report) = verdict {
        tally.failures.push(report);
    }
}

fn original(case: &Case, dir: &Path) -> Outcome {
    let mut child = Command::new(ORIGINAL)
        .arg0("ministat")
        .args(argv(case, dir))
        .current_dir(dir)
        .env_remove("POSIXLY_CORRECT")
        .env_remove("COLUMNS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the original ministat");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = case.stdin.clone();
    // The original may exit before reading everything: ignore EPIPE.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("original's output");
    writer.join().expect("stdin writer");
    let code = output.status.code();
    assert!(
        code.is_some() || output.status.signal().is_some(),
        "odd status {:?}",
        output.status
    );
    Outcome {
        stdout: output.stdout,
        stderr: output.stderr,
        code,
    }
}

fn ours(case: &Case, dir: &Path) -> Outcome {
    let mut args = argv(case, dir);
    if case.quiet {
        args.insert(0, "-q".into());
    }
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let code = run_command(
        &args,
        &Environment::default(),
        &mut &case.stdin[..],
        &mut stdout,
        &mut stderr,
    );
    Outcome {
        stdout,
        stderr,
        code: Some(code),
    }
}

/// The arguments with file names made absolute, so that both programs
/// read the same files (and print the same names) whatever their working
/// directory. Only file arguments start with `data` or `missing`.
fn argv(case: &Case, dir: &Path) -> Vec<OsString> {
    case.args
        .iter()
        .map(|a| {
            if a.starts_with("data") || a.starts_with("missing") {
                dir.join(a).into_os_string()
            } else {
                a.into()
            }
        })
        .collect()
}

fn count_files(case: &Case) -> usize {
    case.args
        .iter()
        .filter(|a| a.starts_with("data") || a.as_str() == "-")
        .count()
        .max(1)
}

/// The original's report without its first `names` lines and the header.
fn without_names_and_header(stdout: &[u8], names: usize) -> Vec<u8> {
    let text = String::from_utf8_lossy(stdout);
    text.split_inclusive('\n')
        .skip(names)
        .filter(|line| !line.starts_with("    N           Min"))
        .collect::<String>()
        .into_bytes()
}

fn describe(index: usize, case: &Case, expected: &Outcome, ours: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "--- case {index}: ministat {:?} (quiet: {})",
        case.args, case.quiet
    );
    for (name, content) in &case.files {
        let shown = String::from_utf8_lossy(&content[..content.len().min(300)]);
        let _ = writeln!(s, "  file {name}: {shown:?}");
    }
    let _ = writeln!(s, "  stdin: {:?}", String::from_utf8_lossy(&case.stdin));
    let _ = writeln!(
        s,
        "  original status {:?}, ours {:?}",
        expected.code, ours.code
    );
    let _ = writeln!(
        s,
        "  original stdout:\n{}\n  ours:\n{}",
        String::from_utf8_lossy(&expected.stdout),
        String::from_utf8_lossy(&ours.stdout)
    );
    let _ = writeln!(
        s,
        "  original stderr: {:?}\n  ours: {:?}",
        String::from_utf8_lossy(&expected.stderr),
        String::from_utf8_lossy(&ours.stderr)
    );
    s
}

/// Hand-picked cases: the manual page's example, known quirks and every
/// error message.
fn fixed_cases() -> Vec<Case> {
    let iguana = lines(&["50", "200", "150", "400", "750", "400", "150"]);
    let chameleon = lines(&["150", "400", "720", "500", "930"]);
    let three = lines(&["1", "2", "3"]);
    let four = lines(&["1", "2", "3", "4"]);
    let files = |named: &[(&str, &[u8])]| -> Vec<(String, Vec<u8>)> {
        named
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_vec()))
            .collect()
    };
    let two_sets = files(&[("data1", &iguana), ("data2", &chameleon)]);
    let mut cases = Vec::new();
    let mut add = |args: &[&str], files: &Vec<(String, Vec<u8>)>, stdin: &[u8]| {
        cases.push(Case {
            args: args.iter().map(|a| a.to_string()).collect(),
            files: files.clone(),
            stdin: stdin.to_vec(),
            quiet: false,
        });
    };
    for args in [
        &["-s", "-w", "60", "data1", "data2"][..],
        &["-c", "80", "-s", "-w", "60", "data1", "data2"],
        &["data1", "data2"],
        &["-A", "data1", "data2"],
        &["-n", "data1", "data2"],
        &["-ns", "-w80", "-c99.5", "data1", "data2"],
        &["data1", "-n", "data2"],
        &["--", "data1", "data2"],
        &["-c", "95", "-c", "97", "data1", "data2"],
        &["-c", "97", "-c", "95", "data1"],
        &["-c", "9.5e1", "data1", "data2"],
        &["-c", "0x5f", "data1", "data2"],
        &["-c", " 98", "data1", "data2"],
        &["-c", "98 ", "data1"],
        &["-c", "", "data1"],
        &["-c", "nan", "data1"],
        &["-w", "", "data1", "data2"],
        &["-w", "-1", "data1"],
        &["-w", "4294967370", "data1", "data2"],
        &["-w", "12abc", "data1"],
        &["-w"],
        &["-C", "", "data1"],
        &["-C", "0", "data1"],
        &["-C", "x", "data1"],
        &["-C", "4294967297", "data1"],
        &["-C", " +1", "data1"],
        &["-d", "", "data1"],
        &["-h"],
        &["--help"],
        &["-:", "data1"],
        &["-P", "data1"],
        &["data1", "missing1"],
        &["missing1", "data1"],
        &[
            "data1", "data1", "data1", "data1", "data1", "data1", "data1", "data1",
        ],
        &[
            "data1", "data1", "data1", "data1", "data1", "data1", "data1",
        ],
        &["-"],
        &["data1", "-"],
        &["-", "-"],
        &[],
        &["-w", "0", "data1", "data2"],
        &["-w", "1", "data1", "data2"],
        &["-w", "2", "data1", "data2"],
        &["-w", "3", "-s", "data1", "data2"],
    ] {
        add(args, &two_sets, &three);
    }
    let quirks = files(&[
        ("data3", &three),
        ("data4", &four),
        ("data5", &lines(&["5", "5", "5"])),
        ("data6", b"1\n2\ninf\n"),
        ("data7", b"1\n2\nnan\n"),
        ("data8", b"nan\n1\n2\n-nan\n"),
        ("data9", b"0\n-0\n0\n"),
        ("dataA", b"-0\n0\n1\n"),
        ("dataB", b"1e308\n1e308\n-1e308\n"),
        ("dataC", b"0x1p3\n0x.8\n0X1.8P+1\ninfinity\n"),
        ("dataD", b"1\n2\n3\n4x\n"),
        ("dataE", b"1\n2\n"),
        ("dataF", b""),
    ]);
    for args in [
        &["-w", "0", "data3", "data4"][..],
        &["-w", "0", "data4", "data3"],
        &["data5"],
        &["data5", "data3"],
        &["data6"],
        &["-A", "data6"],
        &["data7"],
        &["-n", "data8"],
        &["data9", "dataA"],
        &["dataA", "data9"],
        &["dataB"],
        &["-n", "dataC"],
        &["dataD"],
        &["dataE"],
        &["dataF"],
        &["."],
    ] {
        add(args, &quirks, b"");
    }
    // Lines longer than fgets' buffer are read in pieces.
    let mut long = b"1\n2\n".to_vec();
    long.resize(long.len() + 8190, b' ');
    long.extend_from_slice(b"12345x\n3\n");
    let mut long_ok = b"1\n2\n".to_vec();
    long_ok.resize(long_ok.len() + 8191, b' ');
    long_ok.extend_from_slice(b"7\n3\n");
    let longs = files(&[("dataL", &long), ("dataM", &long_ok)]);
    add(&["dataL"], &longs, b"");
    add(&["dataM"], &longs, b"");
    cases
}

fn lines(values: &[&str]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| format!("{v}\n").into_bytes())
        .collect()
}

/// A random case: 1 to 7 data sets (now and then 8, or a broken one),
/// random options, data written in random styles.
fn random_case(rng: &mut StdRng) -> Case {
    let mut case = Case::default();
    let column = if rng.gen_bool(0.25) {
        rng.gen_range(1..=4)
    } else {
        1
    };
    let delimiters = match rng.gen_range(0..6) {
        0 => Some(",".to_string()),
        1 => Some(";:".to_string()),
        2 if column > 1 => Some(" \t,".to_string()),
        _ => None,
    };
    let sets = match rng.gen_range(0..20) {
        0 => 8,
        1..=6 => 1,
        7..=13 => 2,
        _ => rng.gen_range(3..=7),
    };
    let layout = Layout {
        column,
        separator: delimiters.as_deref().map_or(" ", |d| &d[..1]).to_string(),
    };
    let family = rng.gen_range(0..Family::COUNT);
    let use_stdin = rng.gen_bool(0.08);
    for i in 0..sets {
        let family = if rng.gen_bool(0.7) {
            family
        } else {
            rng.gen_range(0..Family::COUNT)
        };
        let values = values(rng, family);
        let content = write_file(rng, &values, &layout);
        if use_stdin && i == 0 {
            case.stdin = content;
            case.args.push("-".into());
        } else {
            let name = format!("data{i}");
            case.files.push((name.clone(), content));
            case.args.push(name);
        }
    }
    if rng.gen_bool(0.02) {
        case.args.push("missing".into());
    }
    let mut options = random_options(rng, column, delimiters.as_deref());
    if use_stdin && rng.gen_bool(0.5) && sets == 1 {
        case.args.clear();
    }
    // Options before the files, or (GNU getopt permutes) among them.
    if rng.gen_bool(0.85) || case.args.is_empty() {
        options.append(&mut case.args);
        case.args = options;
    } else {
        let at = rng.gen_range(0..=case.args.len());
        for (k, o) in options.into_iter().enumerate() {
            case.args.insert(at + k, o);
        }
    }
    case.quiet = rng.gen_bool(0.1);
    case
}

/// Options in random spellings: separate or attached arguments, combined
/// flags.
fn random_options(rng: &mut StdRng, column: usize, delimiters: Option<&str>) -> Vec<String> {
    let mut flags = String::new();
    for (flag, p) in [('A', 0.15), ('n', 0.15), ('s', 0.3)] {
        if rng.gen_bool(p) {
            flags.push(flag);
        }
    }
    let mut args = Vec::new();
    if rng.gen_bool(0.6) {
        let levels = ["80", "90", "95", "98", "99", "99.5", "95.0", "97", "x"];
        let weights = [10, 10, 10, 10, 10, 10, 2, 1, 1];
        let pick = weighted(rng, &weights);
        valued(rng, &mut args, 'c', levels[pick].to_string());
    }
    if rng.gen_bool(0.5) {
        let widths = [0, 1, 2, 3, 4, 5, 10, 20, 40, 60, 74, 80, 100, 132, 200, 500];
        let width = widths[rng.gen_range(0..widths.len())];
        valued(rng, &mut args, 'w', width.to_string());
    }
    if column > 1 || rng.gen_bool(0.05) {
        valued(rng, &mut args, 'C', column.to_string());
    }
    if let Some(d) = delimiters {
        valued(rng, &mut args, 'd', d.to_string());
    }
    if !flags.is_empty() {
        if rng.gen_bool(0.5) {
            args.insert(0, format!("-{flags}"));
        } else {
            for f in flags.chars() {
                args.push(format!("-{f}"));
            }
        }
    }
    if rng.gen_bool(0.01) {
        args.push("-x".into());
    }
    args
}

/// `-xVALUE` or `-x VALUE`, at random.
fn valued(rng: &mut StdRng, args: &mut Vec<String>, letter: char, value: String) {
    if rng.gen_bool(0.5) {
        args.push(format!("-{letter}{value}"));
    } else {
        args.push(format!("-{letter}"));
        args.push(value);
    }
}

fn weighted(rng: &mut StdRng, weights: &[u32]) -> usize {
    let total: u32 = weights.iter().sum();
    let mut pick = rng.gen_range(0..total);
    for (i, &w) in weights.iter().enumerate() {
        if pick < w {
            return i;
        }
        pick -= w;
    }
    unreachable!()
}

/// Kinds of data, each stressing something: ties, scale, sign, precision.
struct Family;

impl Family {
    const COUNT: usize = 10;
}

fn values(rng: &mut StdRng, family: usize) -> Vec<f64> {
    let sizes = [
        0, 1, 2, 3, 3, 4, 5, 5, 6, 7, 8, 10, 12, 20, 30, 49, 50, 51, 52, 99, 100, 150, 400,
    ];
    let n = sizes[rng.gen_range(0..sizes.len())];
    let scale = 10f64.powi(rng.gen_range(-12..=12));
    let offset = if rng.gen_bool(0.3) {
        rng.gen_range(-1e6..1e6f64).round()
    } else {
        0.0
    };
    (0..n)
        .map(|_| match family {
            // Small integers: many ties and stacks in the plot.
            0 => f64::from(rng.gen_range(0..6)),
            // Benchmark-like: a level plus noise, at any scale.
            1 => (100.0 + rng.gen_range(-5.0..5.0f64)) * scale,
            // Two-sided, around zero.
            2 => rng.gen_range(-1.0..1.0f64) * scale,
            // Integers with an offset.
            3 => offset + f64::from(rng.gen_range(-50..50)),
            // Extreme magnitudes.
            4 => {
                let e = rng.gen_range(-300..=300);
                rng.gen_range(1.0..10.0f64) * 10f64.powi(e)
            }
            // Values a few ulps apart (rounding in the plot's scale).
            5 => {
                let base = 1e16 * scale.max(1.0);
                base + f64::from(rng.gen_range(0..8)) * 2.0
            }
            // Constant: zero span, zero deviation.
            6 => 42.0 * scale,
            // Heavy tail.
            7 => scale / rng.gen_range(0.001..1.0f64),
            // Raw random doubles of moderate exponent.
            8 => {
                let exponent = (1023 + rng.gen_range(-60..60i64)) as u64;
                f64::from_bits(rng.gen::<u64>() & !(0x7ff << 52) | exponent << 52)
            }
            // Signed zeros and their neighbours.
            _ => [0.0, -0.0, 1.0, -1.0][rng.gen_range(0..4)],
        })
        .collect()
}

/// How a data file lays out its columns.
struct Layout {
    column: usize,
    separator: String,
}

/// Writes values in random textual styles, with comments, blank lines,
/// white space, CRLF, filler columns and, rarely, a bad value.
fn write_file(rng: &mut StdRng, values: &[f64], layout: &Layout) -> Vec<u8> {
    let mut out = String::new();
    if rng.gen_bool(0.2) {
        out.push_str("# a comment first\n");
    }
    for v in values {
        match rng.gen_range(0..30) {
            0 => out.push('\n'),
            1 => out.push_str("   \t \n"),
            2 => out.push_str("# comment line\n"),
            _ => {}
        }
        let mut fields: Vec<String> = (1..layout.column).map(|k| format!("f{k}")).collect();
        fields.push(number_text(rng, *v));
        if rng.gen_bool(0.1) {
            fields.push("extra".into());
        }
        let mut line = fields.join(&layout.separator);
        match rng.gen_range(0..25) {
            0 => line.push_str(" # trailing comment"),
            1 => line.push_str("  \t"),
            2 => line.insert_str(0, &layout.separator.repeat(2)),
            _ => {}
        }
        out.push_str(&line);
        out.push_str(if rng.gen_bool(0.05) { "\r\n" } else { "\n" });
    }
    if rng.gen_bool(0.02) {
        out.push_str("12abc\n");
    }
    if rng.gen_bool(0.05) {
        // A line of number-like characters: valid or not, as strtod says.
        let alphabet = b"0123456789.eE+-xXpPinfatyINFAN()# \t,;:";
        let len = rng.gen_range(1..10);
        let line: String = (0..len)
            .map(|_| char::from(alphabet[rng.gen_range(0..alphabet.len())]))
            .collect();
        out.push_str(&line);
        out.push('\n');
    }
    if rng.gen_bool(0.1) {
        out.pop(); // No final newline.
    }
    out.into_bytes()
}

fn number_text(rng: &mut StdRng, v: f64) -> String {
    match rng.gen_range(0..12) {
        0 => format!("{v:e}"),
        1 => format!("{v:.3}"),
        2 if v.fract() == 0.0 && v.abs() < 1e15 => format!("{}", v as i64),
        3 if v >= 0.0 => format!("+{v}"),
        4 => format!("{v:.17e}"),
        _ => format!("{v}"),
    }
}
