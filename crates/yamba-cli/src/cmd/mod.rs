//! One module per subcommand: `Args` (clap) and `run(Args) -> anyhow::Result<i32>` (the exit code).
pub mod asm;
pub mod bench_child;
pub mod blocks;
pub mod compare;
pub mod export;
pub mod history;
pub mod lang;
pub mod list;
pub mod ministat;
pub mod obs;
pub mod plot;
pub mod profile;
pub mod run;
pub mod select;
pub mod serve;
pub mod stone;
pub mod top;
