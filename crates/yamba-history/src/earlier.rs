//! Earlier runs of a run's configuration, read from the history: what
//! `yamba compare` and `yamba run --baseline` weigh a difference against
//! (a change that lies in a state of the machine those runs showed is not
//! called one; docs/certainty.md, "Machine states"), and the spread
//! between runs that `yamba run` prints.

use yamba_analysis::compare;

/// Stored runs read for earlier runs of the baseline's configuration: with
/// 39 of them and A, a new identical run's mean falls outside their range
/// with probability 5%.
pub const HISTORY_RUNS: usize = 40;

/// The headline values of the newest `n` stored runs of `this` run's
/// configuration (same host, and no difference a run's header shows but
/// the core clock) that started before it (or in the same second), per
/// result key. Reads only the runs' headers and headline columns: no
/// observations. A history that cannot be read gives none.
pub fn earlier_values(
    resolver: &mut crate::Resolver,
    this: &yamba_results::ResultsFile,
    n: usize,
) -> yamba_analysis::between::EarlierValues {
    let mut out = yamba_analysis::between::EarlierValues::default();
    if n == 0 {
        return out;
    }
    let Ok(history) = resolver.history() else {
        return out;
    };
    out.source = Some(format!("the history {}", history.location()));
    let Ok(list) = history.earlier_of(this, n) else {
        return out;
    };
    for s in &list {
        let Ok(header) = history.load_header(s.id) else {
            continue;
        };
        // Start times have whole seconds: a quick run can start in the
        // second the one before it did. This run itself is not stored yet.
        if header.command == this.command && header.started == this.started {
            continue;
        }
        if !compare::header_differences(this, &header).is_empty() {
            continue;
        }
        let Ok(values) = history.headlines(s.id) else {
            continue;
        };
        out.runs += 1;
        for (k, v) in values {
            out.values.entry(k).or_default().push(v);
        }
    }
    out
}

/// The newest `n` stored runs that are A's configuration on A's machine,
/// started before it. A history that cannot be read gives none, and the
/// comparison's footer says so.
pub fn earlier_runs(
    resolver: &mut crate::Resolver,
    a: &yamba_results::ResultsFile,
    b: &yamba_results::ResultsFile,
    n: usize,
) -> compare::EarlierRuns {
    if n == 0 {
        return compare::EarlierRuns::default();
    }
    let Ok(history) = resolver.history() else {
        return compare::EarlierRuns::default();
    };
    let source = Some(format!("the history {}", history.location()));
    // Only runs that can match are read whole: A's host, kernel, yamba
    // version and quick flag.
    let Ok(list) = history.earlier_of(a, n) else {
        return compare::EarlierRuns {
            source,
            ..Default::default()
        };
    };
    let files: Vec<yamba_results::ResultsFile> = list
        .iter()
        .filter_map(|s| history.load(s.id).ok())
        .collect();
    compare::EarlierRuns::of_baseline(a, b, &files, source)
}
