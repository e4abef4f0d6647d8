//! `yamba select FILE BENCH... [--out FILE]`: a smaller results file with
//! just the named benchmarks (the seed's `bgrep`), machine and clock kept.

use std::path::PathBuf;
use yamba_report::select;

#[derive(clap::Args)]
pub struct Args {
    /// Results file (`-` for standard input).
    file: String,
    /// Names: id, id@mode, benchmark, area or dotted id prefix; each must match.
    #[arg(required = true)]
    bench: Vec<String>,
    /// Write here (atomically) instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let file = select::read_results(&args.file).map_err(anyhow::Error::msg)?;
    let smaller = select::select_file(&file, &args.bench)?;
    match args.out {
        Some(path) => smaller
            .write_atomic(&path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
        None => super::obs::write_stdout(&(serde_json::to_string_pretty(&smaller)? + "\n"))?,
    }
    Ok(0)
}
