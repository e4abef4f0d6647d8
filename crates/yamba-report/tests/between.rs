//! `yamba run`'s "between runs" lines: a result is shown when the earlier
//! runs of its configuration spread wider than its own interval, or when it
//! lies outside all of them — and not otherwise, nor with too few runs.

mod support;

use yamba_report::between::{spreads, text, EarlierValues};
use yamba_results::units::Unit;
use yamba_results::Mode;

#[test]
fn a_spread_wider_than_the_interval_or_a_value_outside_is_shown_and_no_other() {
    // 6 processes around 200, 1% apart: an interval of well under 1%.
    let run = |id: &str| {
        support::blocked(
            id,
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(7, 6, 30, 200.0, 0.005, 0.01),
        )
    };
    let f = support::file(vec![
        run("cpu.wide"),
        run("cpu.narrow"),
        run("cpu.outside"),
        run("cpu.few"),
    ]);
    let this = f.results[0].value().unwrap();
    let mut e = EarlierValues {
        runs: 5,
        ..Default::default()
    };
    // Earlier runs 190–222: ±7.9%, wider than the interval, value inside.
    e.values
        .insert("cpu.wide@hot".into(), vec![190.0, 201.0, 222.0, 205.0]);
    // Earlier runs within ±0.2% of this run: narrower than its interval.
    e.values.insert(
        "cpu.narrow@hot".into(),
        vec![this * 0.999, this, this * 1.001],
    );
    // Earlier runs at 150–151: this run is above all of them.
    e.values
        .insert("cpu.outside@hot".into(), vec![150.0, 151.0, 150.5]);
    // Two earlier values: too few to say anything, however far apart.
    e.values.insert("cpu.few@hot".into(), vec![100.0, 300.0]);
    let s = spreads(&f, &e);
    let keys: Vec<&str> = s.iter().map(|x| x.key.as_str()).collect();
    assert_eq!(keys, ["cpu.wide@hot", "cpu.outside@hot"], "{s:?}");
    let interval = s[0].interval.unwrap();
    assert!(interval > 0.002 && interval < s[0].spread, "{s:?}");
    assert!((s[0].spread - 16.0 / 203.0).abs() < 1e-9, "{}", s[0].spread);
    assert_eq!((s[0].side(), s[1].side()), (0, 1));
    let t = text(&f, &s, &e);
    assert!(t.contains("5 earlier run(s)"), "{t}");
    assert!(t.contains("cpu.wide@hot"), "{t}");
    assert!(t.contains("190.0–222.0 ns (±7.9%)"), "{t}");
    assert!(t.contains("above all 3"), "{t}");
    assert!(!t.contains("cpu.narrow"), "{t}");
    assert!(text(&f, &[], &e).is_empty());
}
