//! The clock's quantum is never mistaken for precision: a single operation
//! lasting a few quanta (two reads of the clock) gets an interval at least
//! a quantum wide and never "precision reached"; nothing at all, which the
//! clock cannot resolve, is withheld. A measurement check (docs/testing.md):
//! whether two reads last under the quanta it takes to resolve them
//! depends on this CPU and its load.

use yamba_core::runner::run_one;
use yamba_core::{Benchmark, Mode, RunConfig, Session, Status, Unit};
use yamba_testkit::{alone, check, Accept};

fn single(ctx: &mut yamba_core::Ctx, reads: bool) -> Result<(), String> {
    let clock = ctx.clock().clone();
    let m = ctx.measure_single(
        || {},
        || {
            if reads {
                std::hint::black_box(clock.stop());
                std::hint::black_box(clock.stop());
            }
        },
    );
    let r = ctx.measured_result(None, m);
    ctx.push(r);
    Ok(())
}

static FEW_QUANTA: Benchmark = Benchmark {
    id: "testing.few_quanta",
    area: "testing",
    unit: Unit::Nanoseconds,
    hidden: true,
    run: |ctx| single(ctx, true),
    ..Benchmark::TEMPLATE
};

static NOTHING: Benchmark = Benchmark {
    id: "testing.nothing",
    area: "testing",
    unit: Unit::Nanoseconds,
    hidden: true,
    run: |ctx| single(ctx, false),
    ..Benchmark::TEMPLATE
};

/// Each attempt runs both benchmarks; its value is the interval's
/// half-width in half quanta, and it gives no value when the interval
/// claimed "precision reached", when the few-quanta result is neither
/// withheld nor labelled resolution-limited, or when nothing at all is not
/// withheld for its clock quanta. Rule: the median value at least 1.
#[test]
fn a_few_quanta_never_reach_precision_and_nothing_is_withheld() {
    let _alone = alone();
    let session = Session::prepare(RunConfig {
        isolate: false,
        ..RunConfig::quick()
    });
    let q = session.clock.info().resolution_ns;
    assert!(q > 0.0);
    let dir = tempfile::tempdir().unwrap();
    check!(
        "half-width of two reads' interval / half a quantum",
        Accept::at_least(1.0)
    )
    .run(|| {
        let r = &run_one(&session, &FEW_QUANTA, Mode::Hot, dir.path())[0];
        let c = r.certainty.as_ref().unwrap();
        let ci = c.estimate.ci.unwrap();
        let stopped = &r.method.as_ref().unwrap().stopped;
        eprintln!(
            "two clock reads, quantum {q:.1} ns: {} {ci:?} {stopped} {:?}",
            c.estimate.estimate, r.warnings
        );
        if stopped.starts_with("precision reached") {
            return Err(format!("stopped on {stopped}"));
        }
        // Labelled, or withheld when the reads took under 2 quanta here.
        if r.status != Status::Withheld
            && !r
                .warnings
                .iter()
                .any(|w| w.starts_with("resolution-limited"))
        {
            return Err(format!("{:?} {:?}", r.status, r.warnings));
        }
        let nothing = &run_one(&session, &NOTHING, Mode::Hot, dir.path())[0];
        eprintln!("nothing: {:?} {:?}", nothing.median(), nothing.reason);
        if nothing.status != Status::Withheld
            || !nothing
                .reason
                .as_deref()
                .unwrap_or("")
                .contains("clock quanta")
        {
            return Err(format!(
                "nothing: {:?} {:?}",
                nothing.status, nothing.reason
            ));
        }
        // The interval is at least ±q/2 by construction; its half-width and
        // q/2 may differ in the last bits of a double.
        Ok((ci.half_width() + 1e-9) / (q / 2.0))
    });
}
