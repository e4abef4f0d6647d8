//! `cpu.call.N` against ground truth no core breaks: a chain of calls,
//! each call's arguments the previous call's result and each callee's
//! result depending on every argument, cannot go faster than one core
//! cycle per call (the callee's add is on the chain), and above the
//! call's own floor one more argument on the chain never makes a call
//! cheaper. Measurement checks only (docs/testing.md): each decides on
//! the median of independent runs.

mod support;

use support::{assert_ok_with as assert_ok, find, run_logged as run};
use yamba_core::{BenchResult, Mode, Session};
use yamba_suite::cpu::call::CALL;
use yamba_testkit::{alone, check, Accept};

fn session() -> (&'static Session, std::sync::MutexGuard<'static, ()>) {
    support::quick_session(false)
}

/// The chained results cpu.call.0 … cpu.call.7, each checked ok.
fn chained(rs: &[BenchResult]) -> Vec<&BenchResult> {
    (0..=7)
        .map(|n| {
            let r = find(rs, &format!("cpu.call.{n}"));
            assert_ok(r, &["a chained call lasts at least one core cycle"]);
            r
        })
        .collect()
}

/// Each chained call lasts at least one core cycle, the clock measured in
/// the same run (the result's value in cycles). Rule: the median over runs
/// of the cheapest N's cycles per call at least 1.
#[test]
fn a_chained_call_lasts_at_least_one_cycle() {
    let _alone = alone();
    let (s, _g) = session();
    check!("cheapest chained call, core cycles", Accept::at_least(1.0))
        .attempts(5, 15)
        .run(|| {
            let rs = run(s, &CALL, Mode::Hot);
            let cycles: Vec<f64> = chained(&rs)
                .iter()
                .map(|r| r.headline_cycles().expect("no core clock recorded").0)
                .collect();
            eprintln!("cycles per chained call, N = 0..7: {cycles:.2?}");
            cycles.into_iter().fold(f64::INFINITY, f64::min)
        });
}

/// Beyond the call's own floor, one more argument never makes the
/// chained call cheaper. Up to about four cycles of callee work hide under
/// the floor the call and return set (docs/writing-benchmarks.md, "What
/// cpu.call measures"): N = 1 to 4 sit there on Zen 4, 1 to 5 on a
/// Golden Cove-class Xeon, and there the front end's placement of the unrolled
/// loop moves a result by up to 50% from one process to the next (the
/// Xeon guest: cpu.call.1 1.70-2.93 ns, cpu.call.2 1.75-2.11, in one
/// check's 15 runs), so a drop from N to N + 1 there says nothing about
/// the arguments. From 5 to 7 the adds (and the 7th's stack slot) are the
/// chain. Each run's value is the larger of cpu.call.5 / cpu.call.6 and
/// cpu.call.6 / cpu.call.7; rule: its median over runs at most 1.05 (5%
/// is what their medians move by between runs). A chain that overlapped
/// its calls, as the old shape did (1.31 ns for 1 argument, 0.52 for 7),
/// reads above 1.
#[test]
fn more_arguments_never_make_a_chained_call_cheaper() {
    let _alone = alone();
    let (s, _g) = session();
    check!(
        "larger of cpu.call.5 / cpu.call.6 and cpu.call.6 / cpu.call.7",
        Accept::at_most(1.05)
    )
    .attempts(5, 15)
    .run(|| {
        let rs = run(s, &CALL, Mode::Hot);
        let ns: Vec<f64> = chained(&rs).iter().map(|r| r.value().unwrap()).collect();
        eprintln!("ns per chained call, N = 0..7: {ns:.3?}");
        (ns[5] / ns[6]).max(ns[6] / ns[7])
    });
}
