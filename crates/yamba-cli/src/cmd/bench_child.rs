//! `yamba __bench ID MODE SCRATCH` (hidden): runs one benchmark in this
//! fresh process for a parent `yamba run`. The protocol, both halves, is
//! `yamba_core::isolate` (`run_bench_in_exec`, `serve_bench`).

#[derive(clap::Args)]
pub struct Args {
    id: String,
    mode: String,
    scratch: std::path::PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    yamba_core::isolate::serve_bench(&args.id, &args.mode, &args.scratch, yamba_suite::find)
        .map_err(anyhow::Error::msg)
}
