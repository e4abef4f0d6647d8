//! `yamba stress` where there is no stress adapter: its workers, error
//! tests and invariants (crates/yamba-stress) are written for Linux.

/// Options are accepted and ignored: the command only says why it cannot run.
#[derive(clap::Args)]
pub struct Args {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

pub fn run(_: Args) -> anyhow::Result<i32> {
    anyhow::bail!(
        "yamba stress: no adapter for this platform (its workers, error tests and invariants are Linux-only)"
    )
}
