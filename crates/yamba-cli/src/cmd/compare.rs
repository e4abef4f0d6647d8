//! `yamba compare A.json B.json`: change, confidence interval, p-value and
//! verdict per result, with warnings when the runs' machines differ. A run
//! in the history is named `@ID`; `--last 2` compares the two newest.
//! `--threshold T` gates: exit 1 on a regression, 3 when undecided
//! ([`EXIT_CODES`]).

use yamba_report::compare;

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

/// The exit statuses of a gate, for `--help` of `compare` and `run`.
pub const EXIT_CODES: &str = "Exit status: 0 passed (or no --threshold); 1 a regression: some result is worse \
than the baseline by more than the threshold (for `run`, also a failure under --strict or a results file \
not written); 2 a usage error (or, for `run`, a history store that could not be written); 3 undecided: \
nothing was found worse, but some result could not be tested — fewer than 2 processes a side, as in a \
--quick run, or in one state of the core: one run's processes shared their core with another hardware \
thread, the other's had it alone, and a shared core moves the result. Curves and sweeps a precise run \
measures in one process by design are listed as not gated and do not make it undecided. A regression \
found makes the status 1 even when other results were undecided. See docs/certainty.md.";

#[derive(clap::Args)]
#[command(after_help = EXIT_CODES)]
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
    /// Gate: exit with status 1 when a result is worse than A by more than
    /// P percent (per result, the one-sided Welch test of "worse by at most
    /// P%" on the processes' logarithms, in core cycles where measured;
    /// Holm–Bonferroni over all results at 1 − confidence, so identical
    /// runs fail with probability ≤ 1 − confidence), and with status 3
    /// ("undecided") when none is but some result had too few processes
    /// to test (a --quick run has 1; a result whose one run shared its
    /// core with another hardware thread and the other did not has too
    /// few in one state). The footer also says the gate's power: the
    /// slowdown it would catch in at least 9 of 10 pairs as spread (per
    /// line in the JSON's gate.catches); a pass says nothing of less.
    #[arg(long, value_name = "P")]
    threshold: Option<f64>,
    /// Confidence level of the intervals; 1 − confidence is the table's
    /// false-discovery rate and the gate's family-wise level.
    #[arg(long, default_value_t = 0.95)]
    confidence: f64,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Earlier runs of A's configuration to read from the history (the
    /// newest N stored): a difference in a state of the machine they
    /// showed is not called a change. 0: do not read the history.
    #[arg(long, value_name = "N", default_value_t = yamba_history::earlier::HISTORY_RUNS)]
    history_runs: usize,
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
            let mut runs = resolver.last(n)?;
            let (ib, b) = runs.pop().expect("n ≥ 2 runs");
            let (ia, a) = runs.swap_remove(0);
            eprintln!("yamba: comparing @{ia} (A) with @{ib} (B)");
            (a, b)
        }
        (None, Some(a), Some(b)) => (resolver.read(a)?, resolver.read(b)?),
        _ => anyhow::bail!("compare needs two runs (files or @ID), or --last 2"),
    };
    let earlier = yamba_history::earlier::earlier_runs(&mut resolver, &a, &b, args.history_runs);
    let mut c = compare::compare_with(&a, &b, args.confidence, &earlier);
    if let Some(t) = args.threshold {
        c = c.gated(t);
    }
    match args.format {
        Format::Table => super::obs::write_stdout(&compare::table(&c))?,
        Format::Json => super::obs::write_stdout(&(serde_json::to_string_pretty(&c)? + "\n"))?,
    }
    Ok(gate_status(&c, ""))
}

/// Says on stderr what the gate found — each regression, and the one line
/// of an undecided gate — and returns its exit status (0 without a gate).
/// `against`: words after "slower" (e.g. " than the baseline").
pub fn gate_status(c: &compare::Comparison, against: &str) -> i32 {
    let Some(g) = &c.gate else {
        return 0;
    };
    for r in c.rows.iter().filter(|r| g.regressions.contains(&r.key)) {
        let cycles = if r.change_cycles_pct.is_some() {
            " in core cycles"
        } else {
            ""
        };
        eprintln!(
            "yamba: {} is {:.1}% slower{against}{cycles} (more than the {}% threshold; Holm-adjusted p {:.2e})",
            r.key,
            r.worse_pct.unwrap_or(f64::NAN),
            g.threshold_pct,
            r.p_gate_holm.unwrap_or(f64::NAN)
        );
    }
    if let Some(line) = compare::unknown_states_line(c) {
        eprintln!("yamba: {line}");
    }
    if let Some(line) = compare::undecided_line(g) {
        eprintln!("yamba: {line}");
    }
    g.outcome.exit_code()
}
