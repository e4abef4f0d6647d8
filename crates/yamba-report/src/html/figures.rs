//! The report's figures, each found in the results where the benchmark
//! left it: BASE's histogram; latency by working set with its detected
//! levels, on 4 KiB and 2 MiB pages; page-fault latency by pages per
//! fault with its fitted line; file re-read bandwidth by size with the
//! cache's knee; file read bandwidth by size; bandwidth under contention;
//! best vs worst case bars; every other curve, grouped by what it plots;
//! and histograms of observations on request.

use super::{Options, Run};
use serde_json::Value;
use std::collections::BTreeSet;
use yamba_plot::axis::{Axis, TickFormat};
use yamba_plot::chart::{self, BarSeries, Bin, Body, Chart, Marker, Point, Segment, Series, Style};
use yamba_plot::svg::escape;
use yamba_results::units::format_sig;
use yamba_results::{BenchResult, Mode, Status, Unit};

/// One figure of the page.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Unique on the page; the SVG's `data-figure`.
    pub id: String,
    /// The area whose section shows it; `run` for the run's own (BASE).
    pub area: String,
    pub title: String,
    pub chart: Chart,
    pub captions: Vec<String>,
    /// A histogram asked for with `--hist`.
    pub on_request: bool,
}

impl Figure {
    pub fn html(&self) -> String {
        let caps: String = self
            .captions
            .iter()
            .map(|c| format!("<p>{}</p>", escape(c)))
            .collect();
        format!(
            "<figure class=\"fig\" id=\"{}\"><h4>{}</h4>{}<figcaption>{caps}</figcaption></figure>",
            super::safe::id("fig-", &self.id),
            escape(&self.title),
            chart::render(&self.chart)
        )
    }
}

/// Every figure the runs allow.
pub fn all(runs: &[Run], opts: &Options) -> Vec<Figure> {
    let mut out = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        out.extend(base_histogram(runs, i, run));
    }
    out.extend(latency(runs));
    out.extend(pagefault(runs));
    out.extend(cache_size(runs));
    out.extend(file_read(runs));
    out.extend(contention(runs));
    out.extend(other_curves(runs));
    out.extend(best_vs_worst(runs));
    out.extend(requested_histograms(runs, opts));
    out
}

/// Results drawn by a figure of their own, not among "other curves".
fn has_own_figure(id: &str) -> bool {
    matches!(id, "mem.latency" | "mem.latency.huge" | "fs.cache_size")
        || file_read_ids().contains(&id)
        || id.starts_with("fs.contention.")
}

fn file_read_ids() -> [&'static str; 4] {
    [
        "fs.read.seq.cached",
        "fs.read.random.cached",
        "fs.read.seq.uncached",
        "fs.read.random.uncached",
    ]
}

/// The result with this id, hot if measured both ways.
fn find<'a>(run: &'a Run, id: &str) -> Option<&'a BenchResult> {
    let mut it = run.file.results.iter().filter(|r| r.id == id);
    let first = it.next()?;
    Some(if first.mode == Mode::Hot {
        first
    } else {
        it.find(|r| r.mode == Mode::Hot).unwrap_or(first)
    })
}

/// A series' name, prefixed with the run's label when there are several.
fn named(runs: &[Run], run: &Run, name: &str) -> String {
    if runs.len() > 1 {
        format!("{}: {name}", run.label)
    } else {
        name.to_string()
    }
}

fn unit_of(symbol: &str) -> Option<Unit> {
    serde_json::from_value(Value::String(symbol.to_string())).ok()
}

/// A value with the unit that suits it: "4.862 ns", "64 KiB", "12.3 GB/s".
fn show(v: f64, unit: Option<Unit>) -> String {
    match unit {
        Some(u) => {
            let (div, sym) = u.scale_for(v);
            match sym {
                "count" | "ratio" => format_sig(v / div),
                s => format!("{} {s}", format_sig(v / div)),
            }
        }
        None => format_sig(v),
    }
}

fn tick_format(unit: Option<Unit>) -> TickFormat {
    unit.map_or(TickFormat::Plain, TickFormat::Unit)
}

/// An axis label with its unit, unless ticks carry the unit themselves.
fn axis_label(label: &str, unit: &str, log: bool) -> String {
    if log || unit.is_empty() || unit == "count" {
        label.to_string()
    } else {
        format!("{label} ({unit})")
    }
}

fn f64_at(v: &Value, key: &str) -> Option<f64> {
    v.get(key)?.as_f64()
}

/// Points of a results series, with hover text.
fn series_points(r: &BenchResult) -> Vec<Point> {
    let Some(s) = &r.series else { return vec![] };
    let (xu, yu) = (unit_of(&s.x_unit), unit_of(&s.y_unit));
    s.points
        .iter()
        .map(|p| Point {
            x: p[0],
            y: p[1],
            tip: format!(
                "{}: {} → {}: {}",
                s.x_label,
                show(p[0], xu),
                s.y_label,
                show(p[1], yu)
            ),
        })
        .collect()
}

/// An axis covering every drawable point of `series` (and `extra` values).
fn axis_over(
    label: String,
    vals: impl Iterator<Item = f64>,
    log: bool,
    zero: bool,
    unit: Option<Unit>,
) -> Axis {
    let v: Vec<f64> = vals
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .collect();
    chart::padded_axis(
        label,
        &v,
        log,
        zero,
        if log {
            tick_format(unit)
        } else {
            TickFormat::Plain
        },
    )
}

/// A caption for a result that was not measured cleanly.
fn status_caption(run: &Run, runs: &[Run], r: &BenchResult) -> Option<String> {
    (r.status != Status::Ok).then(|| {
        let who = if runs.len() > 1 {
            format!("{}: ", run.label)
        } else {
            String::new()
        };
        format!("{who}{}", super::in_words(r))
    })
}

fn xy(series: Vec<Series>, markers: Vec<Marker>, segments: Vec<Segment>) -> Body {
    Body::Xy {
        series,
        markers,
        segments,
    }
}

fn base_histogram(runs: &[Run], i: usize, run: &Run) -> Option<Figure> {
    let b = &run.file.base;
    let mut markers = vec![(
        b.base_ns,
        format!("minimum {} ns", format_sig(b.base_ns)),
        false,
    )];
    if let Some(mean) = b.mean_ns {
        markers.push((mean, format!("subtracted {} ns", format_sig(mean)), true));
    }
    let title = if runs.len() > 1 {
        format!("BASE, the cost of measuring nothing ({})", run.label)
    } else {
        "BASE, the cost of measuring nothing".to_string()
    };
    let mut f = histogram(
        &format!("base-{i}"),
        "run",
        &title,
        &b.observations,
        Unit::Nanoseconds,
        &markers,
    )?;
    f.captions.insert(
        0,
        format!(
            "Two consecutive clock readings, {} times; {:.1}% within twice the minimum. Single timings subtract the mean of the central readings.",
            b.observations.len(),
            b.share_within_2x_min * 100.0
        ),
    );
    Some(f)
}

/// Most values one histogram draws (every k-th beyond).
const HISTOGRAM_MAX_VALUES: usize = 100_000;

/// A histogram of `values` (in `unit`'s base unit). The central 98% is
/// drawn when there are many (the tails named in the caption); few
/// distinct values (a quantised clock) get one bar each.
fn histogram(
    id: &str,
    area: &str,
    title: &str,
    values: &[f64],
    unit: Unit,
    markers: &[(f64, String, bool)],
) -> Option<Figure> {
    // A figure needs no more than this many values to show a distribution:
    // beyond, every k-th is drawn (said in the caption), so that the
    // page's memory does not grow with a file's observations.
    let stride = values.len().div_ceil(HISTOGRAM_MAX_VALUES).max(1);
    let mut v: Vec<f64> = values
        .iter()
        .step_by(stride)
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let (lo, hi) = if n > 50 {
        (
            yamba_stats::percentile_sorted(&v, 1.0),
            yamba_stats::percentile_sorted(&v, 99.0),
        )
    } else {
        (v[0], v[n - 1])
    };
    let shown: Vec<f64> = v.iter().copied().filter(|x| *x >= lo && *x <= hi).collect();
    let (div, sym) = unit.scale_for(yamba_stats::percentile_sorted(&v, 50.0));
    let scaled: Vec<f64> = shown.iter().map(|x| x / div).collect();
    let mut distinct: Vec<f64> = scaled.clone();
    distinct.dedup();
    let bins: Vec<Bin> = if distinct.len() <= 40 {
        let gap = distinct
            .windows(2)
            .map(|w| w[1] - w[0])
            .fold(f64::INFINITY, f64::min);
        let w = if gap.is_finite() {
            gap * 0.6
        } else {
            (distinct[0].abs() * 0.02).max(1e-9)
        };
        distinct
            .iter()
            .map(|d| {
                let count = scaled.iter().filter(|x| *x == d).count();
                Bin {
                    lo: d - w / 2.0,
                    hi: d + w / 2.0,
                    count,
                    tip: format!("{} {sym}: {count} observations", format_sig(*d)),
                }
            })
            .collect()
    } else {
        let q = |p| yamba_stats::percentile_sorted(&scaled, p);
        let iqr = q(75.0) - q(25.0);
        let span = scaled[scaled.len() - 1] - scaled[0];
        let k = if iqr > 0.0 {
            (span / (2.0 * iqr * (scaled.len() as f64).powf(-1.0 / 3.0))).ceil() as usize
        } else {
            yamba_plot::sturges_bins(scaled.len())
        }
        .clamp(5, 60);
        yamba_plot::histogram(&scaled, scaled[0], scaled[scaled.len() - 1], k)
            .into_iter()
            .map(|(lo, hi, count)| Bin {
                lo,
                hi,
                count,
                tip: format!(
                    "{}–{} {sym}: {count} observations",
                    format_sig(lo),
                    format_sig(hi)
                ),
            })
            .collect()
    };
    let edges: Vec<f64> = bins
        .iter()
        .flat_map(|b| [b.lo, b.hi])
        .chain(markers.iter().map(|m| m.0 / div))
        .collect();
    let top = bins.iter().map(|b| b.count).max().unwrap_or(1) as f64;
    let x = chart::padded_axis(
        format!("value ({sym})"),
        &edges,
        false,
        false,
        TickFormat::Plain,
    );
    let y = Axis::covering(
        "observations".into(),
        &[0.0, top * 1.08],
        false,
        true,
        TickFormat::Plain,
    );
    let beyond = n - shown.len();
    let mut captions = vec![];
    if stride > 1 {
        captions.push(format!(
            "Drawn from every {stride}th of the {} observations ({n} values).",
            values.len()
        ));
    }
    if beyond > 0 {
        captions.push(format!(
            "{n} observations; {beyond} outside the 1st–99th percentile not drawn (extremes {} and {}).",
            show(v[0], Some(unit)),
            show(v[n - 1], Some(unit))
        ));
    } else {
        captions.push(format!("{n} observations."));
    }
    Some(Figure {
        id: id.to_string(),
        area: area.to_string(),
        title: title.to_string(),
        chart: Chart {
            id: id.to_string(),
            x,
            y,
            body: Body::Histogram {
                bins,
                markers: markers
                    .iter()
                    .enumerate()
                    .map(|(i, (v, label, dotted))| Marker {
                        x: v / div,
                        label: label.clone(),
                        color: 1 + i,
                        dotted: *dotted,
                    })
                    .collect(),
            },
        },
        captions,
        on_request: false,
    })
}

/// Latency by working-set size, log-log: the 4 KiB and 2 MiB page curves,
/// the levels detected on the 4 KiB curve (marked where their capacity
/// is, their plateaus drawn), and the cache sizes the machine reports.
fn latency(runs: &[Run]) -> Option<Figure> {
    let mut series = Vec::new();
    let mut markers = Vec::new();
    let mut segments = Vec::new();
    let mut captions = Vec::new();
    let mut color = 0;
    for run in runs {
        for (id, pages) in [
            ("mem.latency", "4 KiB pages"),
            ("mem.latency.huge", "2 MiB pages"),
        ] {
            let Some(r) = find(run, id) else { continue };
            let points = series_points(r);
            if points.is_empty() {
                continue;
            }
            let c = color;
            color += 1;
            series.push(Series {
                name: named(runs, run, pages),
                color: c,
                dashed: id.ends_with("huge"),
                style: Style::LineAndPoints,
                points,
            });
            captions.extend(status_caption(run, runs, r));
            let levels = r.extra.get("levels").and_then(|l| l.as_array());
            let mut said = Vec::new();
            for l in levels.into_iter().flatten() {
                let name = l.get("level").and_then(|v| v.as_str()).unwrap_or("?");
                let lat = f64_at(l, "latency_ns");
                let cap = f64_at(l, "capacity_bytes");
                if let (Some(cap), false) = (cap, id.ends_with("huge")) {
                    markers.push(Marker {
                        x: cap,
                        label: format!("{name} ≈ {}", show(cap, Some(Unit::Bytes))),
                        color: c,
                        dotted: false,
                    });
                }
                let agrees = match l.get("agrees_with_sysfs").and_then(|v| v.as_bool()) {
                    Some(true) => ", agrees with sysfs",
                    Some(false) => ", differs from sysfs",
                    None => "",
                };
                said.push(format!(
                    "{name} {}{}",
                    lat.map(|v| show(v, Some(Unit::Nanoseconds)))
                        .unwrap_or_default(),
                    cap.map(|c| format!(" up to ≈ {}{agrees}", show(c, Some(Unit::Bytes))))
                        .unwrap_or_else(|| " (memory)".into())
                ));
            }
            if !said.is_empty() {
                captions.push(format!(
                    "Levels detected on {}: {}.",
                    named(runs, run, pages),
                    said.join("; ")
                ));
            }
            for p in r
                .extra
                .get("plateaus")
                .and_then(|p| p.as_array())
                .into_iter()
                .flatten()
            {
                if let (Some(x0), Some(x1), Some(y)) = (
                    f64_at(p, "first_bytes"),
                    f64_at(p, "last_bytes"),
                    f64_at(p, "latency_ns"),
                ) {
                    segments.push(Segment {
                        x0,
                        x1,
                        y,
                        color: c,
                        tip: format!(
                            "plateau {}: {} from {} to {}",
                            pages,
                            show(y, Some(Unit::Nanoseconds)),
                            show(x0, Some(Unit::Bytes)),
                            show(x1, Some(Unit::Bytes))
                        ),
                    });
                }
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    // The caches the first run's machine reports, as dotted references.
    for c in runs[0]
        .file
        .machine
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
    {
        markers.push(Marker {
            x: c.size_bytes as f64,
            label: format!(
                "L{} {} (sysfs)",
                c.level,
                show(c.size_bytes as f64, Some(Unit::Bytes))
            ),
            color: 6,
            dotted: true,
        });
    }
    captions.push(
        "Dashed vertical lines: a level's capacity as detected (where the curve crosses halfway to the next plateau); dotted: the sizes the kernel reports. Shaded bars: the plateaus.".into(),
    );
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.x));
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .collect();
    Some(Figure {
        id: "mem-latency".into(),
        area: "mem".into(),
        title: "Load latency by working-set size".into(),
        chart: Chart {
            id: "mem-latency".into(),
            x: axis_over("working set".into(), xs, true, false, Some(Unit::Bytes)),
            y: axis_over(
                "load-to-use latency".into(),
                ys.into_iter(),
                true,
                false,
                Some(Unit::Nanoseconds),
            ),
            body: xy(series, markers, segments),
        },
        captions,
        on_request: false,
    })
}

/// Page-fault latency by pages read in per fault, with the fitted line.
fn pagefault(runs: &[Run]) -> Option<Figure> {
    let mut series = Vec::new();
    let mut captions = Vec::new();
    let mut color = 0;
    for run in runs {
        let Some(r) = find(run, "mem.pagefault.major") else {
            continue;
        };
        let fit = r.extra.get("fit");
        let rows = fit
            .and_then(|f| f.get("points"))
            .or_else(|| r.extra.get("workloads"))
            .and_then(|p| p.as_array());
        let points: Vec<Point> = rows
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let x = f64_at(p, "pages_in_per_fault")?;
                let y = f64_at(p, "latency_per_fault_ns")?;
                let w = p.get("workload").and_then(|w| w.as_str()).unwrap_or("?");
                Some(Point {
                    x,
                    y,
                    tip: format!(
                        "{w}: {} pages per fault → {} per fault",
                        format_sig(x),
                        show(y, Some(Unit::Nanoseconds))
                    ),
                })
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let c = color;
        color += 1;
        captions.extend(status_caption(run, runs, r));
        let (slope, intercept) = (
            fit.and_then(|f| f64_at(f, "slope_ns_per_page")),
            fit.and_then(|f| f64_at(f, "intercept_ns")),
        );
        if let (Some(m), Some(b)) = (slope, intercept) {
            let (x0, x1) = points.iter().fold((f64::INFINITY, 0.0f64), |(a, z), p| {
                (a.min(p.x), z.max(p.x))
            });
            // The line y = m·x + b, sampled evenly on the log x axis.
            let line: Vec<Point> = (0..=48)
                .map(|i| {
                    let x = x0 * (x1 / x0).powf(i as f64 / 48.0);
                    Point {
                        x,
                        y: m * x + b,
                        tip: String::new(),
                    }
                })
                .collect();
            let r2 = fit.and_then(|f| f64_at(f, "r_squared"));
            captions.push(format!(
                "{}latency per fault = {} per page × pages + {}; R² = {}, over {}.",
                if runs.len() > 1 {
                    format!("{}: ", run.label)
                } else {
                    String::new()
                },
                show(m, Some(Unit::Nanoseconds)),
                show(b, Some(Unit::Nanoseconds)),
                r2.map(|v| format!("{v:.4}")).unwrap_or_else(|| "?".into()),
                fit.and_then(|f| f.get("over"))
                    .and_then(|o| o.as_str())
                    .unwrap_or("the verified workloads")
            ));
            series.push(Series {
                name: named(runs, run, "fitted line"),
                color: c,
                dashed: true,
                style: Style::Line,
                points: line,
            });
        } else if let Some(e) = fit.and_then(|f| f.get("error")).and_then(|e| e.as_str()) {
            captions.push(format!("No fit: {e}."));
        }
        series.push(Series {
            name: named(runs, run, "workloads"),
            color: c,
            dashed: false,
            style: Style::Points,
            points,
        });
    }
    if series.is_empty() {
        return None;
    }
    let data = || series.iter().flat_map(|s| s.points.iter());
    let x = axis_over(
        "pages read in per fault".into(),
        data().map(|p| p.x),
        true,
        false,
        Some(Unit::Count),
    );
    let y = axis_over(
        "latency per fault".into(),
        data().map(|p| p.y),
        true,
        false,
        Some(Unit::Nanoseconds),
    );
    Some(Figure {
        id: "mem-pagefault".into(),
        area: "mem".into(),
        title: "Major page-fault latency by pages read in per fault".into(),
        chart: Chart {
            id: "mem-pagefault".into(),
            x,
            y,
            body: xy(series, vec![], vec![]),
        },
        captions,
        on_request: false,
    })
}

/// File re-read bandwidth by file size, with the knee where files stop
/// fitting the page cache.
fn cache_size(runs: &[Run]) -> Option<Figure> {
    let mut series = Vec::new();
    let mut markers = Vec::new();
    let mut captions = Vec::new();
    let mut color = 0;
    for run in runs {
        let Some(r) = find(run, "fs.cache_size") else {
            continue;
        };
        let c = color;
        color += 2;
        let rows = r.extra.get("points").and_then(|p| p.as_array());
        let mut memory = Vec::new();
        let mut storage = Vec::new();
        match rows {
            Some(rows) => {
                for p in rows {
                    let (Some(x), Some(y)) = (f64_at(p, "file_bytes"), f64_at(p, "gbps")) else {
                        continue;
                    };
                    let from_memory = p
                        .get("from_memory")
                        .and_then(|v| v.as_bool())
                        .unwrap_or(true);
                    let share = f64_at(p, "storage_share").unwrap_or(0.0);
                    let pt = Point {
                        x,
                        y,
                        tip: format!(
                            "file {} → {} ({:.0}% of bytes from storage)",
                            show(x, Some(Unit::Bytes)),
                            show(y, Some(Unit::GigabytesPerSecond)),
                            share * 100.0
                        ),
                    };
                    if from_memory {
                        memory.push(pt);
                    } else {
                        storage.push(pt);
                    }
                }
            }
            None => memory = series_points(r),
        }
        if memory.is_empty() && storage.is_empty() {
            continue;
        }
        series.push(Series {
            name: named(runs, run, "re-read from memory"),
            color: c,
            dashed: false,
            style: Style::LineAndPoints,
            points: memory,
        });
        if !storage.is_empty() {
            series.push(Series {
                name: named(runs, run, "partly from storage"),
                color: c + 1,
                dashed: false,
                style: Style::LineAndPoints,
                points: storage,
            });
        }
        captions.extend(status_caption(run, runs, r));
        match r.extra.get("knee_bytes").and_then(|k| k.as_f64()) {
            Some(k) => {
                markers.push(Marker {
                    x: k,
                    label: format!("knee ≈ {}", show(k, Some(Unit::Bytes))),
                    color: c + 1,
                    dotted: false,
                });
                captions.push(format!(
                    "The page cache holds files up to about {}: past the knee, re-reads go to storage.",
                    show(k, Some(Unit::Bytes))
                ));
            }
            None => captions.push(format!(
                "No knee reached: every size up to {} was re-read from memory{}; the file cache is at least that large.",
                r.value().map(|v| show(v, Some(Unit::Bytes))).unwrap_or_else(|| "?".into()),
                r.extra
                    .get("bound")
                    .and_then(|b| b.as_str())
                    .map(|b| format!(" before the search stopped ({b})"))
                    .unwrap_or_default()
            )),
        }
        if let Some(d) = r.extra.get("detection").and_then(|d| d.as_str()) {
            captions.push(format!("Detection: {d}."));
        }
    }
    if series.is_empty() {
        return None;
    }
    let data = || series.iter().flat_map(|s| s.points.iter());
    Some(Figure {
        id: "fs-cache-size".into(),
        area: "fs".into(),
        title: "File re-read bandwidth by file size: the page cache's knee".into(),
        chart: Chart {
            id: "fs-cache-size".into(),
            x: axis_over(
                "file size".into(),
                data().map(|p| p.x),
                true,
                false,
                Some(Unit::Bytes),
            ),
            y: axis_over(
                "re-read bandwidth".into(),
                data().map(|p| p.y),
                true,
                false,
                Some(Unit::GigabytesPerSecond),
            ),
            body: xy(series, markers, vec![]),
        },
        captions,
        on_request: false,
    })
}

/// File read bandwidth by file size: sequential and random, cached and not.
fn file_read(runs: &[Run]) -> Option<Figure> {
    let mut series = Vec::new();
    let mut captions = Vec::new();
    let mut color = 0;
    for run in runs {
        for id in file_read_ids() {
            let Some(r) = find(run, id) else { continue };
            let points = series_points(r);
            if points.is_empty() {
                continue;
            }
            let name = id.trim_start_matches("fs.read.").replace('.', ", ");
            series.push(Series {
                name: named(runs, run, &name),
                color,
                dashed: id.ends_with("uncached"),
                style: Style::LineAndPoints,
                points,
            });
            color += 1;
            captions.extend(status_caption(run, runs, r));
        }
    }
    if series.is_empty() {
        return None;
    }
    let data = || series.iter().flat_map(|s| s.points.iter());
    let x = axis_over(
        "file size".into(),
        data().map(|p| p.x),
        true,
        false,
        Some(Unit::Bytes),
    );
    let y = axis_over(
        "read bandwidth".into(),
        data().map(|p| p.y),
        true,
        false,
        Some(Unit::GigabytesPerSecond),
    );
    captions.push(
        "Solid: files in the page cache; dashed: files dropped from it before each pass.".into(),
    );
    Some(Figure {
        id: "fs-read".into(),
        area: "fs".into(),
        title: "File read bandwidth by file size".into(),
        chart: Chart {
            id: "fs-read".into(),
            x,
            y,
            body: xy(series, vec![], vec![]),
        },
        captions,
        on_request: false,
    })
}

/// One process's read bandwidth as more processes read at once, and all
/// of them together.
fn contention(runs: &[Run]) -> Option<Figure> {
    let mut series = Vec::new();
    let mut captions = Vec::new();
    let mut color = 0;
    for run in runs {
        for (id, what) in [
            ("fs.contention.cached", "cached"),
            ("fs.contention.uncached", "uncached"),
        ] {
            let Some(r) = find(run, id) else { continue };
            let points = series_points(r);
            if points.is_empty() {
                continue;
            }
            let c = color;
            color += 1;
            series.push(Series {
                name: named(runs, run, &format!("one process, {what}")),
                color: c,
                dashed: false,
                style: Style::LineAndPoints,
                points,
            });
            let total: Vec<Point> = r
                .extra
                .get("table")
                .and_then(|t| t.as_array())
                .into_iter()
                .flatten()
                .filter_map(|row| {
                    let x = f64_at(row, "processes")?;
                    let y = f64_at(row, "aggregate_gbps")?;
                    Some(Point {
                        x,
                        y,
                        tip: format!(
                            "{} processes → {} together",
                            format_sig(x),
                            show(y, Some(Unit::GigabytesPerSecond))
                        ),
                    })
                })
                .collect();
            if !total.is_empty() {
                series.push(Series {
                    name: named(runs, run, &format!("all together, {what}")),
                    color: c,
                    dashed: true,
                    style: Style::LineAndPoints,
                    points: total,
                });
            }
            captions.extend(status_caption(run, runs, r));
        }
    }
    if series.is_empty() {
        return None;
    }
    let data = || series.iter().flat_map(|s| s.points.iter());
    let x = axis_over(
        "processes reading".into(),
        data().map(|p| p.x),
        true,
        false,
        Some(Unit::Count),
    );
    let y = axis_over(
        "read bandwidth".into(),
        data().map(|p| p.y),
        true,
        false,
        Some(Unit::GigabytesPerSecond),
    );
    Some(Figure {
        id: "fs-contention".into(),
        area: "fs".into(),
        title: "File read bandwidth by contending processes".into(),
        chart: Chart {
            id: "fs-contention".into(),
            x,
            y,
            body: xy(series, vec![], vec![]),
        },
        captions,
        on_request: false,
    })
}

/// Every other curve, grouped by area and by what it plots (same axes and
/// units), one series per result and run.
fn other_curves(runs: &[Run]) -> Vec<Figure> {
    type Key = (String, String, String, String, String, bool, bool);
    let mut groups: Vec<(Key, Vec<Series>, Vec<String>)> = Vec::new();
    let mut color = 0;
    for run in runs {
        for r in &run.file.results {
            let Some(s) = &r.series else { continue };
            if has_own_figure(&r.id) || s.points.is_empty() || r.mode != Mode::Hot {
                continue;
            }
            let key: Key = (
                r.area.clone(),
                s.x_label.clone(),
                s.x_unit.clone(),
                s.y_label.clone(),
                s.y_unit.clone(),
                s.log_x,
                s.log_y,
            );
            let pos = match groups.iter().position(|g| g.0 == key) {
                Some(p) => p,
                None => {
                    groups.push((key, vec![], vec![]));
                    groups.len() - 1
                }
            };
            groups[pos].1.push(Series {
                name: named(runs, run, &r.id),
                color,
                dashed: false,
                style: Style::LineAndPoints,
                points: series_points(r),
            });
            color += 1;
            groups[pos].2.extend(status_caption(run, runs, r));
        }
    }
    groups
        .into_iter()
        .enumerate()
        .map(|(i, ((area, xl, xu, yl, yu, lx, ly), series, captions))| {
            let (xunit, yunit) = (unit_of(&xu), unit_of(&yu));
            let data = || series.iter().flat_map(|s| s.points.iter());
            let x = axis_over(
                axis_label(&xl, &xu, lx),
                data().map(|p| p.x),
                lx,
                false,
                xunit,
            );
            let y = axis_over(
                axis_label(&yl, &yu, ly),
                data().map(|p| p.y),
                ly,
                !ly,
                yunit,
            );
            let id = format!("curve-{area}-{i}");
            Figure {
                id: id.clone(),
                area,
                title: format!("{} by {}", capitalise(&yl), xl),
                chart: Chart {
                    id,
                    x,
                    y,
                    body: xy(series, vec![], vec![]),
                },
                captions,
                on_request: false,
            }
        })
        .collect()
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Best (hot) against worst (cold) case, as bars on a log scale, for every
/// time measured both ways, per area.
fn best_vs_worst(runs: &[Run]) -> Vec<Figure> {
    let mut areas: Vec<String> = Vec::new();
    let mut ids: Vec<(String, String)> = Vec::new();
    for run in runs {
        for r in run.file.results.iter().filter(|r| r.mode == Mode::Cold) {
            let hot = run
                .file
                .results
                .iter()
                .any(|h| h.id == r.id && h.mode == Mode::Hot);
            if hot && r.unit == Unit::Nanoseconds && !ids.iter().any(|(_, id)| id == &r.id) {
                ids.push((r.area.clone(), r.id.clone()));
                if !areas.contains(&r.area) {
                    areas.push(r.area.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for area in areas {
        let cats: Vec<String> = ids
            .iter()
            .filter(|(a, _)| *a == area)
            .map(|(_, id)| id.clone())
            .collect();
        for (part, chunk) in cats.chunks(16).enumerate() {
            let mut series = Vec::new();
            let mut all = Vec::new();
            for (ri, run) in runs.iter().enumerate() {
                for (mi, mode) in [Mode::Hot, Mode::Cold].into_iter().enumerate() {
                    let values: Vec<Option<(f64, String)>> = chunk
                        .iter()
                        .map(|id| {
                            let r = run
                                .file
                                .results
                                .iter()
                                .find(|r| &r.id == id && r.mode == mode)?;
                            let v = r.value().filter(|v| v.is_finite() && *v > 0.0)?;
                            all.push(v);
                            Some((
                                v,
                                format!(
                                    "{id} ({}{}): {}",
                                    mode.as_str(),
                                    if r.status == Status::Ok {
                                        String::new()
                                    } else {
                                        format!(", {}", r.status.as_str())
                                    },
                                    show(v, Some(Unit::Nanoseconds))
                                ),
                            ))
                        })
                        .collect();
                    let name = match mode {
                        Mode::Hot => "best case (hot)",
                        Mode::Cold => "worst case (cold)",
                    };
                    series.push(BarSeries {
                        name: named(runs, run, name),
                        color: ri * 2 + mi,
                        values,
                    });
                }
            }
            if all.is_empty() {
                continue;
            }
            let y = axis_over(
                "time per operation".into(),
                all.into_iter(),
                true,
                false,
                Some(Unit::Nanoseconds),
            );
            let x = Axis::covering(String::new(), &[0.0, 1.0], false, false, TickFormat::Plain);
            let id = format!("bars-{area}-{part}");
            out.push(Figure {
                id: id.clone(),
                area: area.clone(),
                title: "Best case (hot caches) against worst case (caches and branch history disturbed)".into(),
                chart: Chart {
                    id,
                    x,
                    y,
                    body: Body::Bars {
                        categories: chunk.to_vec(),
                        series,
                    },
                },
                captions: vec!["Log scale: the ratio between the bars of a pair is what the disturbed caches cost.".into()],
                on_request: false,
            });
        }
    }
    out
}

/// Whether `--hist` asked for this result.
fn wanted(patterns: &[String], r: &BenchResult) -> bool {
    patterns.iter().any(|p| {
        p == "all"
            || *p == r.id
            || *p == r.key()
            || *p == r.benchmark
            || *p == r.area
            || r.id.starts_with(&format!("{p}."))
    })
}

fn requested_histograms(runs: &[Run], opts: &Options) -> Vec<Figure> {
    if opts.histograms.is_empty() {
        return vec![];
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (ri, run) in runs.iter().enumerate() {
        for r in &run.file.results {
            if !wanted(&opts.histograms, r) || r.observations.is_empty() {
                continue;
            }
            let id = format!("hist-{ri}-{}", r.key().replace('@', "-"));
            if !seen.insert(id.clone()) {
                continue;
            }
            let title = format!(
                "{} ({}){}",
                r.id,
                r.mode.as_str(),
                if runs.len() > 1 {
                    format!(" — {}", run.label)
                } else {
                    String::new()
                }
            );
            let mut markers = Vec::new();
            if let Some(v) = r.value() {
                markers.push((v, format!("headline {}", show(v, Some(r.unit))), false));
            }
            if let Some(mut f) = histogram(&id, &r.area, &title, &r.observations, r.unit, &markers)
            {
                f.on_request = true;
                out.push(f);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantised_values_get_a_bar_each() {
        let v: Vec<f64> = (0..100).map(|i| [16.0, 16.0, 32.0][i % 3]).collect();
        let f = histogram("h", "a", "t", &v, Unit::Nanoseconds, &[]).unwrap();
        let Body::Histogram { bins, .. } = &f.chart.body else {
            panic!()
        };
        assert_eq!(bins.len(), 2);
        assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), 100);
        assert!(bins[0].lo < 16.0 && bins[0].hi > 16.0);
    }

    #[test]
    fn many_values_drop_tails_and_say_so() {
        let mut v: Vec<f64> = (0..1000).map(|i| 100.0 + (i % 97) as f64 * 0.37).collect();
        v.push(1e6);
        let f = histogram("h", "a", "t", &v, Unit::Nanoseconds, &[]).unwrap();
        let Body::Histogram { bins, .. } = &f.chart.body else {
            panic!()
        };
        let drawn: usize = bins.iter().map(|b| b.count).sum();
        assert!(drawn < 1001 && drawn > 950, "{drawn}");
        assert!(f.captions[0].contains("not drawn"), "{:?}", f.captions);
    }
}
