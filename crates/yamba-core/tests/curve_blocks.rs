//! A precise run measures a benchmark's curve in its first block only; its
//! other blocks replicate the headline points, and the pooled result keeps
//! the first block's curve ([`yamba_core::Ctx::measures_curve`]).

use yamba_core::runner::{merge_repetitions, run_benchmarks, Quiet};
use yamba_core::{Benchmark, RunConfig, Series, Session, Unit};

/// Reports the block it ran as its observation, and a curve of 5 points
/// when it measured the curve, 1 (the headline's) when not.
static CURVE: Benchmark = Benchmark {
    id: "t.curve",
    area: "t",
    unit: Unit::Count,
    description: "says which blocks measured its curve",
    run: |ctx| {
        let points: Vec<[f64; 2]> = if ctx.measures_curve() {
            (1..=5).map(|x| [x as f64, 10.0 * x as f64]).collect()
        } else {
            vec![[1.0, 10.0]]
        };
        let mut r = ctx.result(None);
        r.set_observations(vec![points.len() as f64]);
        r.series = Some(Series {
            x_label: "x".into(),
            x_unit: "count".into(),
            y_label: "y".into(),
            y_unit: "count".into(),
            log_x: false,
            log_y: false,
            points,
        });
        ctx.push(r);
        Ok(())
    },
    ..Benchmark::TEMPLATE
};

fn blocks(config: RunConfig) -> Vec<yamba_core::BenchResult> {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config;
    config.scratch_dir = Some(dir.path().to_path_buf());
    config.max_blocks = config.repetitions;
    let session = Session::prepare(config);
    run_benchmarks(&session, &[&CURVE], &mut Quiet)
}

#[test]
fn a_precise_run_measures_the_curve_in_its_first_block_only() {
    let results = blocks(RunConfig {
        repetitions: 4,
        ..RunConfig::default()
    });
    let sizes: Vec<f64> = results.iter().map(|r| r.observations[0]).collect();
    // Blocks in the order run, each in a process of its own.
    assert_eq!(sizes, vec![5.0, 1.0, 1.0, 1.0], "{results:#?}");
    let pooled = merge_repetitions(&results);
    assert_eq!(pooled.len(), 1);
    assert_eq!(pooled[0].series.as_ref().unwrap().points.len(), 5);
}

#[test]
fn a_quick_run_measures_the_curve() {
    let results = blocks(RunConfig::quick());
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].observations, vec![5.0]);
}
