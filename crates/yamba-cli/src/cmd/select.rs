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
    let file = yamba_results::read_results(&args.file).map_err(anyhow::Error::msg)?;
    let smaller = select::select_file(&file, &args.bench)?;
    // Copied on as they are, but never silently: a statistic that is not
    // its observations' is named.
    for bad in smaller.inconsistencies() {
        eprintln!("yamba: warning: {bad}");
    }
    match args.out {
        Some(path) => smaller
            .write_atomic(&path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
        None => super::obs::write_stdout(&(smaller.to_json()? + "\n"))?,
    }
    Ok(0)
}
