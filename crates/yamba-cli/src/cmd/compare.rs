//! `yamba compare A.json B.json`: change, confidence interval, p-value and
//! verdict per result, with warnings when the runs' machines differ.

use yamba_report::{compare, select};

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// The baseline run.
    a: String,
    /// The run compared against it.
    b: String,
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
    let a = select::read_results(&args.a).map_err(anyhow::Error::msg)?;
    let b = select::read_results(&args.b).map_err(anyhow::Error::msg)?;
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
