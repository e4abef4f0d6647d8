//! Earlier runs' spread in words, under a run's table. What the spread
//! is ([`Spread`], [`spreads`]) is analysis, in [`yamba_analysis::between`],
//! re-exported here.

pub use yamba_analysis::between::*;
use yamba_results::{format_sig, ResultsFile};

/// The spreads in words, one line each, under a heading that says where
/// the earlier runs came from; empty when there are none.
pub fn text(file: &ResultsFile, spreads: &[Spread], earlier: &EarlierValues) -> String {
    if spreads.is_empty() {
        return String::new();
    }
    let unit_of = |key: &str| file.results.iter().find(|r| r.key() == key).map(|r| r.unit);
    // The interval for the runs, where the result got one: half its width
    // over the value.
    let for_runs = |key: &str, this: f64| {
        let r = file.results.iter().find(|r| r.key() == key)?;
        let b = r.certainty.as_ref()?.between_runs.as_ref()?;
        (this != 0.0).then(|| b.ci.reach_from(this) / this.abs())
    };
    let width = spreads.iter().map(|s| s.key.len()).max().unwrap_or(0);
    let mut out = format!(
        "\nbetween runs: {} earlier run(s) of this configuration{} moved these more than this run's interval says:\n",
        earlier.runs,
        earlier
            .source
            .as_deref()
            .map(|s| format!(" in {s}"))
            .unwrap_or_default()
    );
    for s in spreads {
        let Some(unit) = unit_of(&s.key) else {
            continue;
        };
        let (div, sym) = unit.scale_for(s.this);
        let f = |v: f64| format_sig(v / div);
        let interval = s
            .interval
            .map(|i| format!("±{:.2}%", i * 100.0))
            .unwrap_or_else(|| "none".into());
        let interval = match for_runs(&s.key, s.this) {
            Some(h) => format!("{interval}; for the runs ±{:.2}%", h * 100.0),
            None => interval,
        };
        let place = match s.side() {
            -1 => format!(" — below all {}", s.runs),
            1 => format!(" — above all {}", s.runs),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  {:<width$}  this run {} {sym} (interval {interval}); {} earlier: {}–{} {sym} (±{:.1}%){place}\n",
            s.key,
            f(s.this),
            s.runs,
            f(s.lo),
            f(s.hi),
            s.spread * 100.0,
        ));
    }
    out.push_str(
        "  a run's own interval speaks for its processes, its interval for the runs (from 6 earlier runs on) for the machine's typical run; expect the next run within the earlier runs' range (docs/certainty.md, \"Machine states and earlier runs\")\n",
    );
    out
}
