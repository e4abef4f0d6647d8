//! One module per subcommand: `Args` (clap) and `run(Args) -> anyhow::Result<i32>` (the exit code).
pub mod asm;
pub mod bench_child;
pub mod blocks;
pub mod compare;
pub mod completions;
pub mod export;
pub mod history;
pub mod lang;
pub mod list;
pub mod machine;
pub mod ministat;
pub mod obs;
pub mod plot;
pub mod profile;
pub mod report;
pub mod run;
pub mod saved;
pub mod select;
pub mod serve;
pub mod stone;
// yamba-stress is Linux-only: elsewhere the subcommand says so.
#[cfg_attr(target_os = "linux", path = "stress.rs")]
#[cfg_attr(not(target_os = "linux"), path = "stress_unsupported.rs")]
pub mod stress;
pub mod summary;
pub mod top;
