//! `yamba export FILE --format csv|gobench|ministat|lmbench [--out F]`.

use std::path::PathBuf;
use yamba_report::{export, select};

#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
enum Format {
    /// One row per result: the observations' summary statistics, then
    /// `value,value_lo,value_hi`: the figure the table reports and its 95%
    /// interval (for a precise run, over its processes).
    Csv,
    /// Go benchmark text for benchstat: one line per process of a precise
    /// run (its value; benchstat's samples are then the runs' replicates),
    /// one per observation of a quick run.
    Gobench,
    /// Raw observations, one per line (one file per result with several).
    Ministat,
    /// lmbench's results file, as its scripts (getsummary, make see) read it.
    Lmbench,
}

#[derive(clap::Args)]
pub struct Args {
    /// Results file (`-` for standard input).
    file: String,
    /// Only these results (id, id@mode, benchmark, area or dotted id prefix).
    bench: Vec<String>,
    #[arg(long, value_enum)]
    format: Format,
    /// Write here instead of standard output; for ministat with several
    /// results, a directory that gets one file per result.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let mut file = yamba_results::read_results(&args.file).map_err(anyhow::Error::msg)?;
    if !args.bench.is_empty() {
        file = select::select_file(&file, &args.bench)?;
    }
    // Copied on as they are, but never silently: a statistic that is not
    // its observations' is named.
    for bad in file.inconsistencies() {
        eprintln!("yamba: warning: {bad}");
    }
    let text = match args.format {
        Format::Csv => export::results_csv(&file),
        Format::Gobench => export::gobench(&file),
        Format::Lmbench => yamba_report::lmbench::export(&file),
        Format::Ministat => return ministat(&file, args.out),
    };
    write(args.out, &text)?;
    Ok(0)
}

fn write(out: Option<PathBuf>, text: &str) -> anyhow::Result<()> {
    match out {
        Some(p) => yamba_results::results::write_atomic(&p, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display())),
        None => super::obs::write_stdout(text),
    }
}

fn ministat(
    file: &yamba_results::results::ResultsFile,
    out: Option<PathBuf>,
) -> anyhow::Result<i32> {
    let with_obs: Vec<_> = file
        .results
        .iter()
        .filter(|r| !r.observations.is_empty())
        .collect();
    match (with_obs.as_slice(), out) {
        ([], _) => anyhow::bail!("no result with observations to export"),
        ([one], out) => write(out, &export::ministat_column(one))?,
        (many, Some(dir)) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
            for r in many {
                let p = dir.join(export::ministat_file_name(r));
                yamba_results::results::write_atomic(&p, export::ministat_column(r).as_bytes())
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?;
                println!("{}", p.display());
            }
        }
        (many, None) => anyhow::bail!(
            "{} results have observations; name one, or give --out DIR for one file each ({})",
            many.len(),
            many.iter()
                .take(6)
                .map(|r| r.key())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
    Ok(0)
}
