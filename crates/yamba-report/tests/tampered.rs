//! A results file whose stored statistics are not its observations' (the
//! block medians of another run pasted in, an interval narrowed by hand)
//! is not compared: the row says so and a warning names what disagrees —
//! rather than a change computed from one and medians shown from the other.

mod support;

use yamba_report::compare::{compare, table, Verdict};
use yamba_results::units::Unit;
use yamba_results::Mode;

fn run(seed: u64, median: f64) -> yamba_results::ResultsFile {
    support::file(vec![support::blocked(
        "cpu.x",
        Mode::Hot,
        Unit::Nanoseconds,
        support::processes(seed, 6, 30, median, 0.02, 0.05),
    )])
}

#[test]
fn a_tampered_result_is_refused_with_a_clear_note() {
    let a = run(1, 100.0);
    let b = run(2, 110.0);
    // Untouched: a 10% slowdown, called.
    let honest = compare(&a, &b, 0.95);
    assert_eq!(honest.rows[0].verdict, Verdict::Slower);
    assert!(honest.warnings.is_empty(), "{:?}", honest.warnings);

    // B's process medians and estimate replaced by A's: they now say
    // "no change" while B's observations say +10%.
    let mut forged = b.clone();
    forged.results[0].certainty = a.results[0].certainty.clone();
    let c = compare(&a, &forged, 0.95);
    let r = &c.rows[0];
    assert_eq!(r.verdict, Verdict::NotCompared, "{r:?}");
    assert!(r.change_pct.is_none() && r.p_value.is_none(), "{r:?}");
    let note = r.note.as_deref().unwrap();
    assert!(
        note.contains("disagree with the observations in B"),
        "{note}"
    );
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("in B, cpu.x@hot") && w.contains("block 1 median")),
        "{:?}",
        c.warnings
    );
    assert!(c.regressions(0.0).is_empty());
    let t = table(&c);
    assert!(t.contains("warning: in B, cpu.x@hot"), "{t}");

    // The summary alone changed (the headline of a one-process result).
    let mut one_a = support::file(vec![support::result(
        "cpu.y",
        Mode::Hot,
        Unit::Nanoseconds,
        support::lognormal(3, 200, 100.0, 0.01),
    )]);
    let one_b = one_a.clone();
    one_a.results[0].summary.as_mut().unwrap().median = 50.0;
    let c = compare(&one_a, &one_b, 0.95);
    assert_eq!(c.rows[0].verdict, Verdict::NotCompared);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("in A, cpu.y@hot") && w.contains("summary median 50.00 stored")),
        "{:?}",
        c.warnings
    );
}
