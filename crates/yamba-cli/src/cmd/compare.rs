//! `yamba compare A.json B.json`: change, confidence interval, p-value and
//! verdict per result, with warnings when the runs' machines differ. A run
//! in the history is named `@ID`; `--last 2` compares the two newest.

use yamba_report::compare;

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// The baseline run: a results file, or @ID for a run in the history.
    #[arg(required_unless_present = "last")]
    a: Option<String>,
    /// The run compared against it (a file, or @ID).
    #[arg(required_unless_present = "last")]
    b: Option<String>,
    /// Compare the newest run in the history with the one N−1 runs before
    /// it (`--last 2`: the two newest), instead of naming them.
    #[arg(long, value_name = "N", conflicts_with_all = ["a", "b"])]
    last: Option<usize>,
    #[command(flatten)]
    store: super::history::StoreArg,
    /// Exit with status 1 when a result got significantly slower by more than P percent.
    #[arg(long, value_name = "P")]
    threshold: Option<f64>,
    /// Confidence level of the intervals and of the significance test.
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    if !(args.confidence > 0.0 && args.confidence < 1.0) {
        anyhow::bail!(
            "--confidence must be between 0 and 1 (e.g. 0.95), not {}",
            args.confidence
        );
    }
    if let Some(t) = args.threshold {
        if !(t.is_finite() && t >= 0.0) {
            anyhow::bail!("--threshold must be a percentage ≥ 0, not {t}");
        }
    }
    let mut resolver = yamba_history::Resolver::new(args.store.store.as_deref());
    let (a, b) = match (args.last, &args.a, &args.b) {
        (Some(n), _, _) => {
            if n < 2 {
                anyhow::bail!("--last {n}: needs at least 2 runs to compare");
            }
            let mut runs = resolver.last(n).map_err(anyhow::Error::msg)?;
            let (ib, b) = runs.pop().expect("n ≥ 2 runs");
            let (ia, a) = runs.swap_remove(0);
            eprintln!("yamba: comparing @{ia} (A) with @{ib} (B)");
            (a, b)
        }
        (None, Some(a), Some(b)) => (
            resolver.read(a).map_err(anyhow::Error::msg)?,
            resolver.read(b).map_err(anyhow::Error::msg)?,
        ),
        _ => anyhow::bail!("compare needs two runs (files or @ID), or --last 2"),
    };
    let c = compare::compare(&a, &b, args.confidence);
    match args.format {
        Format::Table => super::obs::write_stdout(&compare::table(&c))?,
        Format::Json => super::obs::write_stdout(&(serde_json::to_string_pretty(&c)? + "\n"))?,
    }
    let Some(t) = args.threshold else {
        return Ok(0);
    };
    let bad = c.regressions(t);
    if bad.is_empty() {
        return Ok(0);
    }
    for r in &bad {
        eprintln!(
            "yamba: {} is {:.1}% slower (more than the {t}% threshold)",
            r.key,
            r.worse_pct.unwrap_or(f64::NAN)
        );
    }
    Ok(1)
}
