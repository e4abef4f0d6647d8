//! The clock's quantum is never mistaken for precision: a single operation
//! lasting a few quanta (two reads of the clock) gets an interval at least
//! a quantum wide and never "precision reached"; nothing at all, which the
//! clock cannot resolve, is withheld.

use yamba_core::runner::run_one;
use yamba_core::{Benchmark, Mode, RunConfig, Session, Status, Unit};

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

#[test]
fn a_few_quanta_never_reach_precision_and_nothing_is_withheld() {
    let session = Session::prepare(RunConfig {
        isolate: false,
        ..RunConfig::quick()
    });
    let q = session.clock.info().resolution_ns;
    assert!(q > 0.0);
    let dir = tempfile::tempdir().unwrap();
    let r = &run_one(&session, &FEW_QUANTA, Mode::Hot, dir.path())[0];
    let c = r.certainty.as_ref().unwrap();
    let ci = c.estimate.ci.unwrap();
    let stopped = &r.method.as_ref().unwrap().stopped;
    eprintln!(
        "two clock reads, quantum {q:.1} ns: {} {ci:?} {stopped} {:?}",
        c.estimate.estimate, r.warnings
    );
    assert!(
        ci.half_width() >= q / 2.0 - 1e-9,
        "{ci:?} narrower than ±{}",
        q / 2.0
    );
    assert!(!stopped.starts_with("precision reached"), "{stopped}");
    // Labelled, or withheld when the reads took under 2 quanta here.
    assert!(
        r.status == Status::Withheld
            || r.warnings
                .iter()
                .any(|w| w.starts_with("resolution-limited")),
        "{:?} {:?}",
        r.status,
        r.warnings
    );
    let r = &run_one(&session, &NOTHING, Mode::Hot, dir.path())[0];
    eprintln!("nothing: {:?} {:?}", r.median(), r.reason);
    assert_eq!(r.status, Status::Withheld, "{:?}", r.evidence);
    assert!(
        r.reason.as_deref().unwrap().contains("clock quanta"),
        "{:?}",
        r.reason
    );
}
