//! How many cases a fuzzer or property test runs, and from which seed: a
//! fixed number from a fixed seed, never what a time budget allows, so a
//! count a test asserts does not depend on the machine's speed.

/// The number of cases and the seed: `default_cases` and `default_seed`
/// unless `YAMBA_FUZZ_CASES` (a longer soak) or `YAMBA_FUZZ_SEED` (to
/// reproduce a printed seed) say otherwise. Prints both, so a failure can
/// be replayed. A value that is not a number is a one-line panic.
pub fn fuzz_plan(default_cases: u64, default_seed: u64) -> (u64, u64) {
    let var = |name: &str, default: u64| match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number")),
        Err(_) => default,
    };
    let cases = var("YAMBA_FUZZ_CASES", default_cases);
    let seed = var("YAMBA_FUZZ_SEED", default_seed);
    eprintln!("fuzz: {cases} cases from seed {seed} (YAMBA_FUZZ_CASES, YAMBA_FUZZ_SEED)");
    (cases, seed)
}
