//! The reader of stone logs (`--compare`'s input) fuzzed, as yamba-report's
//! small parsers are (tests/fuzz_parsers.rs there): mutated logs, a fixed
//! number of cases from a fixed seed (yamba_testkit::fuzz_plan, printed;
//! YAMBA_FUZZ_CASES soaks longer, YAMBA_FUZZ_SEED replays). It may refuse
//! a log, never panic; what it accepts is finite and written back whole.

use rand::{Rng, SeedableRng};
use yamba_stone::{log_text, parse_log};

const TOKENS: &[&str] = &[
    "\n", "#", " ", ".", "-", "e", "1e308", "-1e308", "1e-320", "inf", "NaN", "0", "\r", "é",
];

#[test]
fn logs_fuzzed() {
    let (cases, seed) = yamba_testkit::fuzz_plan(20_000, 16);
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let seed_text = log_text(&[0.2, 0.25, 1.5]) + "# comment\n\n3 extra words\n";
    for _ in 0..cases {
        let mut t = seed_text.clone().into_bytes();
        for _ in 0..r.gen_range(1..6) {
            let at = r.gen_range(0..=t.len());
            match r.gen_range(0..3) {
                0 if at < t.len() => {
                    let end = (at + r.gen_range(1..16)).min(t.len());
                    t.drain(at..end);
                }
                1 if at < t.len() => t[at] = r.gen(),
                _ => {
                    let tok = TOKENS[r.gen_range(0..TOKENS.len())];
                    t.splice(at..at, tok.bytes());
                }
            }
        }
        let s = String::from_utf8_lossy(&t);
        if let Ok(v) = parse_log(&s) {
            assert!(v.iter().all(|x| x.is_finite()), "{s:?}: {v:?}");
            let back = parse_log(&log_text(&v)).unwrap();
            assert_eq!(back.len(), v.len(), "{s:?}");
        }
    }
}
