//! The predictions can be wrong: on three machines of different kinds (an
//! Intel Golden Cove, an AMD EPYC Zen 4 and an AMD EPYC Zen 3, all KVM
//! guests, quick runs) the headline primitives' predicted ranges are
//! narrow, the measured values fall inside them on the machines the
//! ranges were not set from — the Zen 3 one checked blind, after the
//! models were last changed — and a planted 2× slowdown leaves its range
//! (far on two of them, near on the third).
//! Deterministic: results files as fixtures.

use std::path::Path;
use yamba_report::headline::HEADLINES;
use yamba_report::predict::{self, Agreement, Prediction};
use yamba_results::{Mode, ResultsFile};

/// Intel Xeon (Golden Cove), KVM, an older build: fewer building blocks.
const INTEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quick-both.json");
/// AMD EPYC, KVM, the current build on a loaded machine (observations of
/// results no model needs left out with their results).
const AMD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quick-amd.json");
/// AMD EPYC (family 25 model 1, Zen 3: 512 KiB L2, 3.2 GHz measured),
/// KVM, quiet, 2026-11-29: the blind check. Run after the models were
/// last changed (bf2fe77 and before) and not used to change them; trimmed
/// to the same results as [`AMD`], chosen by id before its predictions
/// were looked at.
const ZEN3: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quick-zen3.json");

/// The median hi/lo the headline predictions may have (issue 29).
const MAX_MEDIAN_WIDTH: f64 = 2.0;
/// The share of headline predictions that must hold their measured value
/// on a machine the ranges were not set from.
const MIN_HIT_RATE: f64 = 0.8;

fn read(path: &str) -> ResultsFile {
    ResultsFile::read(Path::new(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The headline primitives' predictions: for each of lmbench's summary
/// rows, the first of its results the file holds (hot) with both a
/// predicted range and a measured value.
fn headline_predictions(file: &ResultsFile) -> Vec<Prediction> {
    let all = predict::predict(file);
    HEADLINES
        .iter()
        .filter_map(|h| {
            h.ids.iter().find_map(|id| {
                all.iter()
                    .find(|p| &p.id == id && p.predicted.is_some() && p.measured.is_some())
                    .cloned()
            })
        })
        .collect()
}

fn width(p: &Prediction) -> f64 {
    let r = p.predicted.expect("predicted");
    r.hi / r.lo
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn hit_rate(preds: &[Prediction]) -> f64 {
    let hits = preds
        .iter()
        .filter(|p| p.agreement == Agreement::Within)
        .count();
    hits as f64 / preds.len() as f64
}

/// The table the closing note shows: every headline prediction, its
/// width and where the measured value fell.
fn describe(name: &str, preds: &[Prediction]) -> String {
    let mut s = format!("{name}:\n");
    for p in preds {
        let r = p.predicted.unwrap();
        s += &format!(
            "  {:32} {:>12.4} – {:<12.4} ({:.2}×)  measured {:<12.4} {}\n",
            p.id,
            r.lo,
            r.hi,
            width(p),
            p.measured.unwrap(),
            p.agreement.as_str()
        );
    }
    s
}

/// Asserts that the headline predictions of the file at `path` miss
/// exactly `want` (id and how far, in the headlines' order) and hold at
/// least [`MIN_HIT_RATE`]; prints the table and returns the predictions.
fn misses_are_exactly(path: &str, want: &[(&str, Agreement)]) -> Vec<Prediction> {
    let preds = headline_predictions(&read(path));
    let rate = hit_rate(&preds);
    eprintln!("{}hit rate {rate:.2}", describe(path, &preds));
    let misses: Vec<(&str, Agreement)> = preds
        .iter()
        .filter(|p| p.agreement != Agreement::Within)
        .map(|p| (p.id.as_str(), p.agreement))
        .collect();
    assert_eq!(misses, want, "\n{}", describe(path, &preds));
    assert!(rate >= MIN_HIT_RATE, "hit rate {rate:.2} in {path}");
    preds
}

#[test]
fn headline_ranges_are_at_most_twice_as_wide_as_they_are_low_on_every_machine() {
    for path in [INTEL, AMD, ZEN3] {
        let preds = headline_predictions(&read(path));
        assert!(
            preds.len() >= 12,
            "only {} headline predictions in {path}",
            preds.len()
        );
        let w = median(preds.iter().map(width).collect());
        assert!(
            w <= MAX_MEDIAN_WIDTH,
            "median width {w:.2}× > {MAX_MEDIAN_WIDTH}× in {path}\n{}",
            describe(path, &preds)
        );
    }
}

/// The ranges were set from the physics of each path and the Intel
/// file's ratios; the AMD file is the check, held to the floor.
#[test]
fn measured_values_fall_inside_their_ranges_on_the_other_machine() {
    let preds = headline_predictions(&read(AMD));
    let rate = hit_rate(&preds);
    eprintln!("{}hit rate {rate:.2}", describe(AMD, &preds));
    assert!(
        rate >= MIN_HIT_RATE,
        "hit rate {rate:.2} < {MIN_HIT_RATE} on the AMD run\n{}",
        describe(AMD, &preds)
    );
}

/// The blind check (docs/predictions.md, "Checked on three machines"):
/// on the Zen 3 run, which no model was fitted or reasoned on, 17 of 18
/// headline predictions hold their measured value. The one miss is near,
/// not far: `ipc.ctxsw.sweep.0k` at 1.05× its range's top, a result
/// whose own spread on that machine is wider than the miss (CV 19% in
/// that quick run; the medians of a precise run's blocks 2.6–3.6 µs).
/// Any other miss, or this one turning far, fails.
#[test]
fn a_third_machine_kind_checked_blind_misses_only_its_noisy_switch() {
    let preds = misses_are_exactly(ZEN3, &[("ipc.ctxsw.sweep.0k", Agreement::Near)]);
    assert!(preds.len() >= 18, "{} headline predictions", preds.len());
}

/// On the Intel file the misses are exactly the explained ones
/// (docs/predictions.md, "Checked on three machines"): its L3 plateau and
/// its cached sequential read are far (the measurements are what is
/// wrong there), and loopback TCP, lacking a cleanly measured cross-CPU
/// round trip as its block, is near. Any other miss is new and fails.
#[test]
fn the_intel_run_misses_only_where_its_measurements_are_suspect() {
    misses_are_exactly(
        INTEL,
        &[
            ("net.tcp.rtt", Agreement::Near),
            ("mem.latency.L3", Agreement::Far),
            ("fs.read.seq.cached", Agreement::Far),
        ],
    );
}

/// Composites name their basis: on the AMD run (which measured every
/// block) every headline but the raw system call itself and the cache
/// and memory figures built on the clock is predicted from a block of
/// the same run.
#[test]
fn composites_are_predicted_from_blocks_of_the_same_run() {
    let preds = headline_predictions(&read(AMD));
    let from_blocks: Vec<&str> = preds
        .iter()
        .filter(|p| {
            p.hardware
                .as_ref()
                .is_ok_and(|t| t.how.starts_with("building block"))
        })
        .map(|p| p.id.as_str())
        .collect();
    for id in [
        "cpu.syscall.getppid.libc",
        "cpu.syscall.read_devzero.libc",
        "signal.self",
        "proc.fork.light",
        "proc.fork_exec",
        "ipc.ctxsw.sweep.0k",
        "ipc.rtt.pipe.same_cpu",
        "mem.pagefault.cached",
        "mem.latency.memory",
        "fs.read.seq.cached",
    ] {
        assert!(
            from_blocks.contains(&id),
            "{id} not predicted from a building block: {from_blocks:?}"
        );
    }
}

/// A planted 2× slowdown of fork (its observations doubled, the
/// statistics recomputed from them) is flagged far on the Intel and Zen 4
/// runs, and outside its range on the Zen 3 one: there fork measured near
/// the range's bottom (228 µs against 202–364), so twice it is 1.24× the
/// top, short of the 1.25× that makes a result far. The blind check does
/// not move the threshold; a range 1.8× wide can only promise that a 2×
/// change leaves it.
#[test]
fn a_planted_twofold_fork_slowdown_leaves_its_range() {
    for (path, want) in [
        (AMD, &[Agreement::Far][..]),
        (INTEL, &[Agreement::Far]),
        (ZEN3, &[Agreement::Near, Agreement::Far]),
    ] {
        let mut file = read(path);
        let before = headline_predictions(&file)
            .into_iter()
            .find(|p| p.id == "proc.fork.light")
            .expect("fork predicted");
        assert_eq!(before.agreement, Agreement::Within, "{path}: fork as run");
        let fork = file
            .results
            .iter_mut()
            .find(|r| r.id == "proc.fork.light" && r.mode == Mode::Hot)
            .unwrap();
        let doubled: Vec<f64> = fork.observations.iter().map(|v| v * 2.0).collect();
        fork.certainty = None;
        fork.set_observations(doubled);
        let after = headline_predictions(&file)
            .into_iter()
            .find(|p| p.id == "proc.fork.light")
            .unwrap();
        assert!(
            want.contains(&after.agreement),
            "{path}: fork at {} against {:?}: {:?}",
            after.measured.unwrap(),
            after.predicted,
            after.agreement
        );
    }
}

/// The AMD fixtures keep only some of their runs' results, each whole:
/// the reader takes them, and every stored statistic still follows from
/// its observations (a results file yamba would accept as undamaged).
#[test]
fn the_trimmed_amd_fixtures_are_consistent_results_files() {
    for path in [AMD, ZEN3] {
        let file = read(path);
        assert!(file.results.len() >= 90, "{} results", file.results.len());
        for r in &file.results {
            if let Err(e) = yamba_results::check_result(r) {
                panic!("{path}: {e}");
            }
        }
    }
}
