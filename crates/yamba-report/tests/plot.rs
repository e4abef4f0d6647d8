//! plot: golden terminal plots, SVG that parses with the expected
//! elements, PNG that decodes at the expected size, and outlier layers.

mod support;

use proptest::prelude::*;
use std::path::Path;
use yamba_plot::axis::nice_ticks;
use yamba_plot::{figure, png, svg, text, Figure, Marks, PlotOptions, Source};
use yamba_report::plotting;
use yamba_results::units::Unit;
use yamba_results::Mode;

/// Compares with tests/golden/NAME, or writes it when UPDATE_GOLDEN is set.
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create)",
            path.display()
        )
    });
    assert_eq!(actual, expected, "{name} differs from the golden file");
}

/// A BASE-like sequence: mostly ~250, a periodic bump, two big spikes.
fn base_like() -> Vec<f64> {
    (0..60)
        .map(|i| match i {
            17 => 7000.0,
            43 => 6500.0,
            i if i % 10 == 5 => 1000.0,
            i => 220.0 + (i * 37 % 11) as f64 * 10.0,
        })
        .collect()
}

fn numbers_fig(opts: &PlotOptions) -> Figure {
    figure(&Source::from_numbers("BASE", base_like()), opts)
}

#[test]
fn golden_sequence() {
    let f = numbers_fig(&PlotOptions::default());
    golden("sequence.txt", &text::render(&f, 72, 20));
}

#[test]
fn golden_sequence_outliers_removed_zero() {
    let opts = PlotOptions {
        outlier_layers: 2,
        zero: true,
        ..Default::default()
    };
    let f = numbers_fig(&opts);
    assert_eq!(f.captions.len(), 2);
    assert!(
        f.captions[0].starts_with("-o layer 1: removed 2 of 60"),
        "{:?}",
        f.captions
    );
    assert!(
        f.captions[1].starts_with("-o layer 2: removed 6 of 58"),
        "{:?}",
        f.captions
    );
    assert!(f.y.lo <= 0.0);
    golden("sequence_o2_z.txt", &text::render(&f, 72, 20));
}

#[test]
fn golden_histogram() {
    let opts = PlotOptions {
        hist: true,
        bins: Some(8),
        outlier_layers: 1,
        ..Default::default()
    };
    golden("histogram.txt", &text::render(&numbers_fig(&opts), 72, 20));
}

#[test]
fn golden_curve() {
    let f = support::sample_file();
    let src = plotting::source(&f.results[4]);
    let fig = figure(&src, &PlotOptions::default());
    assert!(fig.x.log && fig.y.log);
    assert_eq!(fig.x.tick_label(4096.0), "4 KiB");
    golden("curve.txt", &text::render(&fig, 72, 20));
}

#[test]
fn units_scale_the_value_axis() {
    let f = support::sample_file();
    let cold = figure(&plotting::source(&f.results[1]), &PlotOptions::default());
    assert_eq!(cold.y.label, "value (µs)");
    let Marks::Sequence(v) = &cold.marks else {
        panic!()
    };
    assert!((v[0] - f.results[1].observations[0] / 1e3).abs() < 1e-12);
    let hot = figure(&plotting::source(&f.results[0]), &PlotOptions::default());
    assert_eq!(hot.y.label, "value (ns)");
}

fn all_figures() -> Vec<Figure> {
    let f = support::sample_file();
    let mut figs: Vec<Figure> = f.results[..5]
        .iter()
        .map(|r| figure(&plotting::source(r), &PlotOptions::default()))
        .collect();
    figs.push(numbers_fig(&PlotOptions {
        hist: true,
        ..Default::default()
    }));
    figs
}

#[test]
fn svg_is_well_formed_with_labels_and_series() {
    let figs = all_figures();
    let s = svg::render(&figs, 640, 400);
    let doc = roxmltree::Document::parse(&s).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(
        root.attribute("height"),
        Some((400 * figs.len()).to_string().as_str())
    );
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    for label in [
        "value (ns)",
        "value (µs)",
        "value (GB/s)",
        "working set (B)",
        "latency (ns)",
        "observation",
        "count",
    ] {
        assert!(texts.contains(&label), "axis label {label:?} missing");
    }
    assert!(texts
        .iter()
        .any(|t| t.starts_with("cpu.syscall.getppid@hot")));
    // One polyline per sequence or curve (five results), bins as rects.
    let polylines = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .count();
    assert_eq!(polylines, 5);
    let rects = doc.descendants().filter(|n| n.has_tag_name("rect")).count();
    assert!(rects > 2, "histogram bars missing");
}

#[test]
fn svg_escapes_titles() {
    let f = figure(
        &Source::from_numbers("a<b & \"c\"\u{1}", vec![1.0, 2.0]),
        &PlotOptions::default(),
    );
    let s = svg::render(&[f], 300, 200);
    let doc = roxmltree::Document::parse(&s).expect("well-formed XML");
    assert!(doc.descendants().any(|n| n.text() == Some("a<b & \"c\"?")));
}

#[test]
fn png_decodes_at_the_expected_size() {
    let figs = all_figures();
    let bytes = png::render(&figs, 640, 400).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let dec = ::png::Decoder::new(std::io::Cursor::new(&bytes));
    let mut reader = dec.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    assert_eq!((info.width, info.height), (640, 400 * figs.len() as u32));
    assert_eq!(info.color_type, ::png::ColorType::Rgb);
    let px = |c: [u8; 3]| buf.chunks(3).filter(|p| *p == c).count();
    assert!(px([31, 119, 180]) > 500, "the data was not drawn");
    assert!(px([0, 0, 0]) > 2000, "axes and labels were not drawn");
    assert!(png::render(&figs, 0, 10).is_err());
}

#[test]
fn nice_ticks_examples() {
    assert_eq!(nice_ticks(0.0, 10.0, 6), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    assert_eq!(nice_ticks(0.13, 0.61, 6), [0.2, 0.3, 0.4, 0.5, 0.6]);
    assert!(nice_ticks(1.0, 1.0, 5).is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// `-o` at the plot level: the plotted points are what the layers kept,
    /// each layer's caption counts what it removed, and every point lies
    /// inside the value axis; with `-z` the axis holds zero.
    #[test]
    fn outlier_layers_in_plots(v in proptest::collection::vec(-1e6f64..1e6, 1..300), k in 0usize..5, zero in any::<bool>()) {
        let opts = PlotOptions { outlier_layers: k, zero, ..Default::default() };
        let f = figure(&Source::from_numbers("p", v.clone()), &opts);
        let (kept, layers) = yamba_stats::remove_outlier_layers(&v, k);
        prop_assert_eq!(f.captions.len(), k);
        for (c, l) in f.captions.iter().zip(&layers) {
            let removed = format!("removed {} of", l.removed);
            prop_assert!(c.contains(&removed), "{} vs {}", c, removed);
        }
        let Marks::Sequence(pts) = &f.marks else { panic!() };
        prop_assert_eq!(pts, &kept);
        for p in pts {
            prop_assert!(f.y.lo <= *p && *p <= f.y.hi);
        }
        if zero {
            prop_assert!(f.y.lo <= 0.0 && 0.0 <= f.y.hi);
        }
        let h = figure(&Source::from_numbers("p", v), &PlotOptions { hist: true, ..opts });
        let Marks::Histogram(bins) = &h.marks else { panic!() };
        prop_assert_eq!(bins.iter().map(|b| b.2).sum::<usize>(), kept.len());
    }

    /// The terminal plot never panics and its plot lines fit the width.
    #[test]
    fn text_plot_fits(v in proptest::collection::vec(prop::num::f64::ANY, 0..100), w in 20usize..140, h in 8usize..60, hist in any::<bool>()) {
        let f = figure(&Source::from_numbers("t", v), &PlotOptions { hist, ..Default::default() });
        let out = text::render(&f, w, h);
        for line in out.lines().skip(1).filter(|l| l.contains('|') || l.contains('+')) {
            // A histogram's bar shrinks to fit; only its labels may not.
            let labels = line.find('|').map_or(0, |i| line[..i].chars().count() + 2);
            prop_assert!(line.chars().count() <= w.max(24).max(labels), "{} > {}: {:?}", line.chars().count(), w, line);
        }
        if !hist {
            prop_assert!(out.lines().count() <= h.max(8 + f.captions.len()));
        }
        let _ = svg::render(std::slice::from_ref(&f), 120, 100);
        let _ = png::render(&[f], 120, 100);
    }

    #[test]
    fn ticks_are_inside_and_ascending(lo in -1e9f64..1e9, span in 1e-6f64..1e9, max in 2usize..12) {
        let t = nice_ticks(lo, lo + span, max);
        prop_assert!(t.len() <= max);
        prop_assert!(!t.is_empty());
        for w in t.windows(2) { prop_assert!(w[0] < w[1]); }
        for x in &t { prop_assert!(*x >= lo - span * 1e-6 && *x <= lo + span * (1.0 + 1e-6)); }
    }
}

#[test]
fn unit_from_result_is_kept() {
    let r = support::result("cpu.z", Mode::Hot, Unit::Nanoseconds, vec![1500.0, 1600.0]);
    let f = figure(
        &plotting::source(&r),
        &PlotOptions {
            hist: true,
            ..Default::default()
        },
    );
    assert_eq!(f.x.label, "value (µs)");
    assert_eq!(f.y.label, "count");
}

fn curve_source(title: &str, scale: f64) -> Source {
    let points: Vec<[f64; 2]> = (10..=24)
        .map(|k| {
            let x = (1u64 << k) as f64;
            [x, scale * (1.0 + k as f64)]
        })
        .collect();
    Source {
        title: title.into(),
        unit: Some(Unit::Nanoseconds),
        values: vec![],
        curve: Some(yamba_plot::Curve {
            x_label: "working set".into(),
            x_unit: "B".into(),
            y_label: "latency".into(),
            y_unit: "ns".into(),
            log_x: true,
            log_y: true,
            points,
        }),
    }
}

/// Two curves in one figure: both drawn, on shared axes that cover both,
/// named in a legend (text: one mark each; SVG: one polyline each and
/// their names).
#[test]
fn overlay_draws_every_curve_with_a_legend() {
    let a = curve_source("mem.latency@hot", 1.0);
    let b = curve_source("mem.latency.huge@hot", 3.0);
    let f = yamba_plot::overlay(&[a, b], &PlotOptions::default()).unwrap();
    let Marks::Curves(lines) = &f.marks else {
        panic!()
    };
    assert_eq!(lines.len(), 2);
    assert!(f.y.lo <= 11.0 && f.y.hi >= 75.0, "{:?}", f.y);
    let t = text::render(&f, 80, 24);
    assert!(t.contains("* mem.latency@hot\n"), "{t}");
    assert!(t.contains("o mem.latency.huge@hot\n"), "{t}");
    assert!(t.contains('o') && t.contains('*'));
    let s = svg::render(std::slice::from_ref(&f), 800, 500);
    assert_eq!(s.matches("class=\"series\"").count(), 2, "{s}");
    assert!(s.contains(">mem.latency.huge@hot</text>"), "{s}");
}

/// A log axis of base 10 has minor ticks at 2…9 × 10^k, a linear one none.
#[test]
fn minor_ticks_on_log_axes() {
    use yamba_plot::axis::{Axis, TickFormat};
    let log = Axis::covering("t".into(), &[1.0, 1000.0], true, false, TickFormat::Plain);
    let m = log.minor_ticks();
    assert_eq!(m.len(), 8 * 2 + 8, "{m:?}"); // 2..9, 20..90, 200..900
    assert!(m.contains(&2.0) && m.contains(&900.0) && !m.contains(&10.0));
    let lin = Axis::covering("t".into(), &[1.0, 1000.0], false, false, TickFormat::Plain);
    assert!(lin.minor_ticks().is_empty());
}

/// The median is marked: a labelled line in the SVG, named in the text.
#[test]
fn median_marker() {
    let f = numbers_fig(&PlotOptions::default());
    assert_eq!(f.median, Some(280.0));
    let s = svg::render(std::slice::from_ref(&f), 800, 500);
    assert!(s.contains(">median 280.0</text>"), "{s}");
    let h = numbers_fig(&PlotOptions {
        hist: true,
        ..Default::default()
    });
    let t = text::render(&h, 80, 24);
    assert!(
        t.contains("(median 280.0)") && t.contains("<- median"),
        "{t}"
    );
}

/// Histogram bin labels are distinct and read alike (same decimals).
#[test]
fn histogram_bin_labels_are_distinct() {
    let v: Vec<f64> = (0..100).map(|i| 1.0 + i as f64 * 0.0001).collect();
    let f = figure(
        &Source::from_numbers("n", v),
        &PlotOptions {
            hist: true,
            bins: Some(5),
            ..Default::default()
        },
    );
    let t = text::render(&f, 80, 24);
    let labels: Vec<&str> = t
        .lines()
        .filter(|l| l.contains('|'))
        .map(|l| l.split("  ").find(|s| !s.trim().is_empty()).unwrap().trim())
        .collect();
    assert_eq!(labels.len(), 5, "{t}");
    let mut uniq = labels.clone();
    uniq.dedup();
    assert_eq!(uniq.len(), 5, "{t}");
    assert!(labels.iter().all(|l| l.starts_with("1.00")), "{t}");
}
