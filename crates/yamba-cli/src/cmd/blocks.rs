//! `yamba blocks [FILE...]`: totals of TIME_BLOCK lines per site, their
//! shares and cumulative shares (the seed's awk pipeline, see
//! `yamba_report::blocks`).

use anyhow::Context;
use std::io::Read;
use std::path::PathBuf;
use yamba_report::blocks::{aggregate, render_awk, render_table};

#[derive(clap::Args)]
pub struct Args {
    /// Files with TIME_BLOCK lines (other lines are skipped); standard input when none.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Only the N biggest sites.
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// A table with a header, executions and mean cycles, instead of
    /// `site total % cum%` lines.
    #[arg(long)]
    table: bool,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let mut texts = Vec::new();
    if args.files.is_empty() {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read standard input")?;
        texts.push(s);
    }
    for f in &args.files {
        let bytes = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
        texts.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    let agg = aggregate(texts.iter().map(String::as_str));
    if agg.lines == 0 {
        anyhow::bail!(
            "no TIME_BLOCK lines (file:line,executions,mean,total,percent%) in {}",
            if args.files.is_empty() {
                "standard input".to_string()
            } else {
                args.files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
    }
    if args.table {
        print!("{}", render_table(&agg, args.top));
        if agg.ignored > 0 {
            eprintln!("yamba blocks: {} other lines skipped", agg.ignored);
        }
    } else {
        print!("{}", render_awk(&agg, args.top));
    }
    Ok(0)
}
