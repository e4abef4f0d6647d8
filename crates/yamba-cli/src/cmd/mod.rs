//! One module per subcommand: `Args` (clap) and `run(Args) -> anyhow::Result<i32>` (the exit code).
pub mod list;
pub mod ministat;
pub mod run;
