//! `yamba report RESULTS.json... [-o report.html]`: one self-contained
//! HTML page — machine, configuration, what was withheld and why,
//! predictions, tables and figures per area, and with several runs a
//! column each and a comparison.

use std::path::PathBuf;
use yamba_report::html;

#[derive(clap::Args)]
pub struct Args {
    /// Results files (`-` for standard input) or stored runs (`@ID`, see
    /// `yamba history`); the first is the baseline the others are compared with.
    #[arg(required = true, value_name = "RESULTS.json|@ID")]
    files: Vec<String>,
    #[command(flatten)]
    store: super::history::StoreArg,
    /// Where to write the page.
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    output: PathBuf,
    /// Add a histogram of the observations of these results (`all`, ids, id@mode, benchmarks or areas).
    #[arg(long = "hist", value_name = "RESULT", num_args = 1..)]
    hist: Vec<String>,
    /// Confidence of the comparison's verdicts.
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    /// Title at the top of the page.
    #[arg(long)]
    title: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    if !(args.confidence > 0.0 && args.confidence < 1.0) {
        anyhow::bail!(
            "--confidence must be between 0 and 1 (e.g. 0.95), not {}",
            args.confidence
        );
    }
    let mut resolver = yamba_history::Resolver::new(args.store.store.as_deref());
    let mut files = Vec::new();
    for p in &args.files {
        let file = if p.starts_with('@') {
            resolver.read(p)?
        } else {
            yamba_results::read_results(p)?
        };
        files.push((p.clone(), file));
    }
    let runs = html::label_runs(files);
    let opts = html::Options {
        histograms: args.hist,
        confidence: args.confidence,
        title: args.title,
    };
    let page = html::render(&runs, &opts);
    yamba_results::results::write_atomic(&args.output, page.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", args.output.display()))?;
    eprintln!(
        "yamba: report of {} run(s) written to {} ({} KiB)",
        runs.len(),
        args.output.display(),
        page.len().div_ceil(1024)
    );
    Ok(0)
}
