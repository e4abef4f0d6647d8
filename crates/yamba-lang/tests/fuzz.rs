//! The parser and checker, fuzzed for a fixed number of cases from a fixed
//! seed (yamba_testkit::fuzz_plan; printed): random mutations of
//! the shipped examples (bytes deleted, duplicated, swapped, tokens
//! inserted) never panic, and every error they produce has a location
//! inside its file that renders as file:line:col with the line and a caret.

use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::time::Instant;
use yamba_lang::Program;

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    ";",
    "asm {",
    "unroll(",
    "0x8B",
    "0x123",
    "bitstring",
    "yamba",
    "extends",
    "abstract",
    "import(",
    "int",
    "byte_t *",
    "<",
    ">",
    "=",
    "++",
    "*",
    ".",
    ",",
    "\"",
    "/*",
    "//",
    "\n",
    "touch(i)",
    "prologue",
    "x86_64.cast_imm_32(",
    "mov eax, [rbx + {i}]",
    "é",
    "\0",
];

fn mutate(text: &str, rng: &mut impl Rng) -> String {
    let mut b: Vec<u8> = text.as_bytes().to_vec();
    for _ in 0..rng.gen_range(1..6) {
        if b.is_empty() {
            break;
        }
        let i = rng.gen_range(0..b.len());
        match rng.gen_range(0..5) {
            0 => {
                let n = rng.gen_range(1..20).min(b.len() - i);
                b.drain(i..i + n);
            }
            1 => {
                let n = rng.gen_range(1..40).min(b.len() - i);
                let piece: Vec<u8> = b[i..i + n].to_vec();
                let j = rng.gen_range(0..b.len());
                b.splice(j..j, piece);
            }
            2 => {
                let j = rng.gen_range(0..b.len());
                b.swap(i, j);
            }
            3 => {
                let t = TOKENS[rng.gen_range(0..TOKENS.len())];
                b.splice(i..i, t.bytes());
            }
            _ => b[i] = rng.gen(),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[test]
fn mutated_examples_never_panic_and_every_error_has_a_location() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let files: Vec<PathBuf> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yamba"))
        .collect();
    assert!(files.len() >= 4);
    let dir = tempfile::tempdir().unwrap();
    // A fixed count (under emulation ~13 cases a second, natively
    // hundreds), never a time budget's.
    let (n, seed) = yamba_testkit::fuzz_plan(300, 24);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let start = Instant::now();
    let (mut cases, mut with_errors) = (0, 0);
    while cases < n {
        // Every example beside the mutated one, so includes resolve.
        for f in &files {
            std::fs::copy(f, dir.path().join(f.file_name().unwrap())).unwrap();
        }
        let victim = &files[rng.gen_range(0..files.len())];
        let text = mutate(&std::fs::read_to_string(victim).unwrap(), &mut rng);
        let path = dir.path().join(victim.file_name().unwrap());
        std::fs::write(&path, &text).unwrap();
        let main = dir.path().join("pagefault_linux.yamba");
        let result = std::panic::catch_unwind(|| Program::load(std::slice::from_ref(&main)));
        let Ok(result) = result else {
            panic!(
                "panic on a mutation of {} (seed {seed}):\n{text}",
                victim.display()
            );
        };
        cases += 1;
        if let Err(e) = result {
            with_errors += 1;
            if e.diags.is_empty() {
                assert!(
                    e.rendered.contains("cannot read"),
                    "an error without a diagnostic: {e}"
                );
                continue;
            }
            // Each diagnostic rendered with its file:line:col, line and
            // caret (a span outside its file would not render so).
            let located = e.rendered.matches("┌─ ").count();
            assert_eq!(
                located,
                e.diags.len(),
                "(seed {seed}) unlocated errors in:\n{}",
                e.rendered
            );
            assert!(
                e.rendered.matches('^').count() >= e.diags.len(),
                "{}",
                e.rendered
            );
            for d in &e.diags {
                assert!(!d.message.is_empty() && d.span.lo <= d.span.hi);
            }
        }
    }
    println!(
        "{cases} mutations, {with_errors} with errors, in {:?}",
        start.elapsed()
    );
    // Most mutations break the program: the errors' checks above ran.
    assert!(
        with_errors * 5 > cases,
        "{cases} cases, only {with_errors} with errors"
    );
}
