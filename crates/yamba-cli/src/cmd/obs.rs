//! `yamba obs FILE BENCH [--range A-B]`: one benchmark's raw observations,
//! one per line at full precision (the seed's `bcut`), for ministat and
//! other tools.

use yamba_report::select;

#[derive(clap::Args)]
pub struct Args {
    /// Results file (`-` for standard input).
    file: String,
    /// The result: id, id@mode, benchmark, area or dotted id prefix; it must select one.
    bench: String,
    /// Observations A to B−1, counted from 0 (`A-B`, `A..B`, `A-` to the end, or `A`).
    #[arg(long)]
    range: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let range = args.range.as_deref().map(select::parse_range).transpose()?;
    let file = yamba_results::read_results(&args.file).map_err(anyhow::Error::msg)?;
    let r = select::select_one(&file, &args.bench).map_err(anyhow::Error::msg)?;
    write_stdout(&select::observations_text(r, range))?;
    Ok(0)
}

/// Writes to standard output; a reader that has gone away (`| head`) is
/// not an error for a pipe-friendly command.
/// Control characters from a results file are escaped (see `crate::out`).
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    crate::out::write(false, text);
    crate::out::flush();
    Ok(())
}
