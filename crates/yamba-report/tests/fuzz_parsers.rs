//! The readers of outside input, fuzzed (issue 13), each for a fixed
//! number of cases from a fixed seed (yamba_testkit::fuzz_plan, printed;
//! YAMBA_FUZZ_CASES soaks longer, YAMBA_FUZZ_SEED replays):
//! results files (mutated real ones, through reading, the consistency
//! check, compare, the table and every export), ministat's input and
//! options, and the small parsers of sizes, ranges and time_block lines
//! (stone logs: yamba-stone's tests/fuzz_log.rs). None may panic or hang;
//! what they accept must render.

use rand::{Rng, SeedableRng};
use std::ffi::OsString;
use yamba_ministat::{run_command, Environment};
use yamba_results::ResultsFile;

fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// A random mutation of `text`: bytes deleted, duplicated, replaced, or a
/// token of the format inserted.
fn mutate(r: &mut impl Rng, text: &[u8], tokens: &[&str]) -> Vec<u8> {
    let mut t = text.to_vec();
    for _ in 0..r.gen_range(1..6) {
        if t.is_empty() {
            t.extend_from_slice(tokens[0].as_bytes());
        }
        let at = r.gen_range(0..t.len());
        match r.gen_range(0..5) {
            0 => {
                let end = (at + r.gen_range(1..64)).min(t.len());
                t.drain(at..end);
            }
            1 => {
                let end = (at + r.gen_range(1..64)).min(t.len());
                let dup = t[at..end].to_vec();
                t.splice(at..at, dup);
            }
            2 => t[at] = r.gen(),
            _ => {
                let tok = tokens[r.gen_range(0..tokens.len())];
                t.splice(at..at, tok.bytes());
            }
        }
    }
    t
}

/// Values a hostile file would put where numbers go.
const JSON_TOKENS: &[&str] = &[
    "1e308",
    "-1e308",
    "0",
    "-0",
    "1e-320",
    "18446744073709551615",
    "-1",
    "null",
    "[]",
    "{}",
    "\"\"",
    "[1e308,-1e308,0]",
    "\"ok\"",
    "\"failed\"",
    ",",
    ":",
    "\"x\":",
];

/// Every real results file the tests hold, and one yamba writes.
fn seeds() -> Vec<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../yamba-results/tests/files");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read(e.path()).unwrap())
        .collect();
    assert!(out.len() >= 2, "seed files in {dir}");
    out.sort();
    out
}

/// Everything a reader does with a file it accepted.
fn use_file(f: &ResultsFile) {
    let _ = f.inconsistencies();
    let c = yamba_report::compare::compare(f, f, 0.95);
    let _ = yamba_report::compare::table(&c);
    let _ = yamba_report::table::render(&f.results);
    let _ = yamba_report::export::results_csv(f);
    let _ = yamba_report::export::gobench(f);
    for r in &f.results {
        let _ = yamba_report::export::ministat_column(r);
        let _ = r.headline();
    }
    let _ = f.to_json().unwrap();
}

#[test]
fn results_files_fuzzed() {
    let seeds = seeds();
    let (cases, seed) = yamba_testkit::fuzz_plan(300, 13);
    let mut r = rng(seed);
    let (mut tried, mut accepted) = (0u64, 0u64);
    while tried < cases {
        let seed = &seeds[r.gen_range(0..seeds.len())];
        let bytes = mutate(&mut r, seed, JSON_TOKENS);
        tried += 1;
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if let Ok(f) = ResultsFile::from_json(text) {
            accepted += 1;
            use_file(&f);
        }
    }
    println!("{tried} mutated results files, {accepted} accepted");
    assert!(accepted > 0, "{tried} tried, {accepted} accepted");
}

/// Structured mutations: a number of the file replaced by an extreme one
/// (what byte mutations rarely reach in a 50 KB file).
#[test]
fn results_files_with_extreme_numbers() {
    let seeds = seeds();
    let (cases, seed) = yamba_testkit::fuzz_plan(100, 14);
    let mut r = rng(seed);
    let mut tried = 0;
    let extremes = [1e308, -1e308, 0.0, -0.0, 5e-324, 1e19, -1.0, 4.0e9];
    while tried < cases {
        let seed = &seeds[r.gen_range(0..seeds.len())];
        let mut v: serde_json::Value = serde_json::from_slice(seed).unwrap();
        let mut numbers = Vec::new();
        collect_numbers(&v, String::new(), &mut numbers);
        for _ in 0..r.gen_range(1..4) {
            let p = &numbers[r.gen_range(0..numbers.len())];
            *v.pointer_mut(p).unwrap() = extremes[r.gen_range(0..extremes.len())].into();
        }
        tried += 1;
        if let Ok(f) = ResultsFile::from_json(&v.to_string()) {
            use_file(&f);
        }
    }
}

fn collect_numbers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Number(_) => out.push(at),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                collect_numbers(x, format!("{at}/{i}"), out);
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                let k = k.replace('~', "~0").replace('/', "~1");
                collect_numbers(x, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn ministat_input_and_options_fuzzed() {
    let lines = b"1\n2.5\n3e2\n-4\n0x10\n5 6 7\n\t8\n1e308\nnan\ninf\n# c\n\n9,10\n";
    let tokens = &["\n", " ", "\t", "1e308", "-", ".", "e", "nan", "0", "9"];
    let opts: &[&[&str]] = &[
        &[],
        &["-n"],
        &["-q"],
        &["-s"],
        &["-A"],
        &["-C", "2"],
        &["-C", "0"],
        &["-C", "999999999999"],
        &["-d", ","],
        &["-c", "99.5"],
        &["-c", "7"],
        &["-w", "10"],
        &["-w", "-5"],
        &["-w", "100000"],
        &["-x"],
    ];
    let env = Environment::default();
    let (cases, seed) = yamba_testkit::fuzz_plan(2000, 15);
    let mut r = rng(seed);
    let mut tried = 0;
    while tried < cases {
        let input = mutate(&mut r, lines, tokens);
        let mut args: Vec<OsString> = Vec::new();
        for _ in 0..r.gen_range(0..3) {
            args.extend(opts[r.gen_range(0..opts.len())].iter().map(OsString::from));
        }
        args.push("-".into());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run_command(&args, &env, &mut &input[..], &mut out, &mut err);
        assert!((0..=2).contains(&code), "{args:?} exit {code}");
        // A plot 100000 columns wide is what was asked for (as the
        // original does); bounded all the same.
        assert!(
            out.len() < 16 << 20,
            "{args:?}: {} bytes of output",
            out.len()
        );
        tried += 1;
    }
}

#[test]
fn small_parsers_fuzzed() {
    let tokens = &[
        "K",
        "M",
        "G",
        "18446744073709551615",
        "-",
        "..",
        ",",
        ":",
        "@",
        " ",
        "\u{1b}",
        "é",
        "1e9",
        "0",
    ];
    let (cases, seed) = yamba_testkit::fuzz_plan(20_000, 16);
    let mut r = rng(seed);
    let mut tried = 0;
    while tried < cases {
        let bytes = mutate(&mut r, b"12M 3..7 file.c:10,5,100,200,12.5", tokens);
        let s = String::from_utf8_lossy(&bytes);
        let _ = yamba_core::machine::parse_size(&s);
        let _ = yamba_report::select::parse_range(&s);
        let _ = yamba_report::blocks::parse_line(&s);
        tried += 1;
    }
}
