//! `yamba plot [FILE|-] [BENCH...]`: observations in order (or `--hist`),
//! or a benchmark's curve, in the terminal or to an SVG/PNG file.

use std::io::IsTerminal;
use std::path::PathBuf;
use yamba_plot::{self as plot, numbers, PlotOptions, Source};
use yamba_report::{plotting, select};
use yamba_results::results::ResultsFile;

#[derive(clap::Args)]
pub struct Args {
    /// Results file, or `-` (also the default when standard input is a
    /// pipe) for a results file or plain numbers on standard input.
    file: Option<String>,
    /// Results to plot (id, id@mode, benchmark, area or dotted id prefix); all when none.
    bench: Vec<String>,
    /// A histogram of the observations instead of the observations in order.
    #[arg(long)]
    hist: bool,
    /// Histogram bins (default: Sturges' rule).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    bins: Option<u32>,
    /// Remove a layer of outliers (beyond mean ± 2 sd); repeat for more (-ooo).
    #[arg(short = 'o', action = clap::ArgAction::Count)]
    outliers: u8,
    /// Include zero on the value axis.
    #[arg(short = 'z')]
    zero: bool,
    /// Draw the chosen results' curves in one figure, with a legend (e.g.
    /// `mem.latency mem.latency.huge`: base pages against huge pages).
    #[arg(long)]
    overlay: bool,
    /// Another results file (repeatable): its results of the same choice
    /// are drawn with this one's, curves overlaid (two runs side by side).
    #[arg(long, value_name = "FILE")]
    with: Vec<String>,
    /// Write an SVG or PNG file (by extension) instead of drawing in the terminal.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Width: terminal columns, or image pixels (default: the terminal's, or 800).
    #[arg(long)]
    width: Option<u32>,
    /// Height: terminal lines, or image pixels per plot (default: the terminal's, or 500).
    #[arg(long)]
    height: Option<u32>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let opts = PlotOptions {
        hist: args.hist,
        bins: args.bins.map(|b| b as usize),
        outlier_layers: args.outliers as usize,
        zero: args.zero,
    };
    let mut sources = read_sources(&args, args.file.as_deref())?;
    for other in &args.with {
        let more = read_sources(&args, Some(other))?;
        sources.extend(more.into_iter().map(|mut s| {
            s.title = format!("{} [{other}]", s.title);
            s
        }));
    }
    let overlay = args.overlay || !args.with.is_empty();
    let figs: Vec<plot::Figure> = match overlay {
        true => match plot::overlay(&sources, &opts) {
            Some(f) => vec![f],
            None => anyhow::bail!("--overlay: none of the chosen results has a curve"),
        },
        false => sources.iter().map(|s| plot::figure(s, &opts)).collect(),
    };
    if figs.len() > 3 {
        eprintln!(
            "yamba plot: {} results chosen, drawing {} panels (name fewer, or --overlay for one figure of curves)",
            sources.len(),
            figs.len()
        );
    }
    for f in &figs {
        for c in &f.captions {
            eprintln!("{}: {c}", f.title);
        }
    }
    let Some(path) = args.output else {
        let (cols, rows) = crate::term::size();
        let w = args.width.map_or(cols, |w| w as usize).clamp(20, 1000);
        let h = args.height.map_or(rows, |h| h as usize).clamp(8, 1000);
        let text: String = figs.iter().map(|f| plot::text::render(f, w, h)).collect();
        super::obs::write_stdout(&text)?;
        return Ok(0);
    };
    let w = args.width.unwrap_or(800).clamp(100, 10_000);
    let h = args.height.unwrap_or(500).clamp(100, 10_000);
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_lowercase);
    let bytes = match ext.as_deref() {
        Some("svg") => plot::svg::render(&figs, w, h).into_bytes(),
        Some("png") => plot::png::render(&figs, w, h).map_err(anyhow::Error::msg)?,
        _ => anyhow::bail!(
            "--output {}: the name must end in .svg or .png",
            path.display()
        ),
    };
    yamba_results::results::write_atomic(&path, &bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(0)
}

/// What to plot: the chosen results of a results file, or one list of
/// plain numbers from standard input.
fn read_sources(args: &Args, file: Option<&str>) -> anyhow::Result<Vec<Source>> {
    let stdin = match file {
        Some("-") => true,
        Some(_) => false,
        None if std::io::stdin().is_terminal() => {
            anyhow::bail!("nothing to plot: give a results file, or pipe numbers in (yamba plot -)")
        }
        None => true,
    };
    let (name, bytes) = if stdin {
        let bytes = yamba_results::read_bounded(&mut std::io::stdin().lock())
            .map_err(|e| anyhow::anyhow!("standard input: {e}"))?;
        ("standard input", bytes)
    } else {
        let path = file.unwrap_or("-");
        let bytes = yamba_results::read_file_bounded(std::path::Path::new(path))
            .map_err(anyhow::Error::msg)?;
        (path, bytes)
    };
    // A results file, plain or compressed (recognised by content).
    if bytes.starts_with(&yamba_results::results::ZSTD_MAGIC) {
        let file = ResultsFile::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        return sources_of(file, &args.bench);
    }
    let text = String::from_utf8(bytes).map_err(|e| anyhow::anyhow!("{name} is not text: {e}"))?;
    if !text.trim_start().starts_with('{') {
        // A log of numbers (yamba stone --log, yamba obs), file or pipe.
        if !args.bench.is_empty() {
            anyhow::bail!("{name} holds plain numbers: there are no benchmarks to choose");
        }
        let values = numbers::parse_numbers(&text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if values.is_empty() {
            anyhow::bail!("{name} holds no numbers");
        }
        return Ok(vec![Source::from_numbers(name, values)]);
    }
    let file = ResultsFile::from_json(&text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    sources_of(file, &args.bench)
}

/// The observations or curves of the chosen results (all when none are named).
fn sources_of(file: ResultsFile, bench: &[String]) -> anyhow::Result<Vec<Source>> {
    let chosen: Vec<_> = if bench.is_empty() {
        file.results.iter().collect()
    } else {
        select::select_results(&file, bench)?
    };
    let out: Vec<Source> = chosen
        .into_iter()
        .filter(|r| {
            !r.observations.is_empty() || r.series.as_ref().is_some_and(|s| !s.points.is_empty())
        })
        .map(plotting::source)
        .collect();
    if out.is_empty() {
        anyhow::bail!("the chosen results have no observations or curve to plot");
    }
    Ok(out)
}
