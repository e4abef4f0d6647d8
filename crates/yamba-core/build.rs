//! Records the opt-level this crate is compiled at (cargo's `OPT_LEVEL`),
//! so that a run of an unoptimised build says so in its notes
//! (`run_session::build_note`), as Google Benchmark warns of a debug
//! library.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let level = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "unknown".into());
    println!("cargo::rustc-env=YAMBA_CORE_OPT_LEVEL={level}");
}
