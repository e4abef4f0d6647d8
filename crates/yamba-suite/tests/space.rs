//! Ground truth for the `space` area: a thread costs one kernel stack
//! (16 KiB on x86-64) in KernelStack; a mapped touched page costs one page
//! of RSS; 2N pipes cost twice N pipes (per-object cost independent of N);
//! every primitive's cost is positive and of plausible order; and a census
//! mismatch withholds the number.

mod support;

use yamba_core::runner::run_one;
use yamba_core::{BenchResult, Benchmark, Mode, Session, Status};
use yamba_suite::space::{adapter::Kind, measure, primitives};

fn session() -> (&'static Session, std::sync::MutexGuard<'static, ()>) {
    support::quick_session(false)
}

fn with(s: &Session, settings: &[(&str, &str)]) -> Session {
    let mut s = s.clone();
    for (k, v) in settings {
        s.config.settings.insert(k.to_string(), v.to_string());
    }
    s
}

/// Runs `b`, returning its (.kernel, .user) results.
fn run(s: &Session, b: &'static Benchmark) -> (BenchResult, BenchResult) {
    let dir = tempfile::tempdir().unwrap();
    let mut rs = run_one(s, b, Mode::Hot, dir.path());
    for r in &rs {
        eprintln!(
            "{}: {:?} median {:?} obs {:?} {:?}\n   extra {:?}",
            r.id,
            r.status,
            r.median(),
            r.observations,
            r.reason,
            r.extra
        );
    }
    assert_eq!(rs.len(), 2, "{rs:?}");
    let user = rs.pop().unwrap();
    let kernel = rs.pop().unwrap();
    assert!(kernel.id.ends_with(".kernel") && user.id.ends_with(".user"));
    (kernel, user)
}

fn assert_ok(r: &BenchResult) {
    assert_eq!(
        r.status,
        Status::Ok,
        "{}: {:?} {:?}",
        r.id,
        r.reason,
        r.evidence
    );
    for c in [
        "all objects existed while measured",
        "everything created was destroyed",
    ] {
        assert!(
            r.evidence
                .iter()
                .any(|e| e.check.contains(c) && e.ok && e.gating),
            "{}: no passing '{c}'",
            r.id
        );
    }
}

fn component(r: &BenchResult, key: &str) -> f64 {
    r.extra[key]["median"].as_f64().unwrap()
}

/// Retries a noisy ground-truth check up to 3 times (machine-wide counters).
fn within_3_attempts(what: &str, mut attempt: impl FnMut() -> Result<(), String>) {
    let mut last = String::new();
    for _ in 0..3 {
        match attempt() {
            Ok(()) => return,
            Err(e) => {
                eprintln!("{what}: {e}");
                last = e;
            }
        }
    }
    panic!("{what}: {last}");
}

#[test]
fn a_thread_costs_one_kernel_stack() {
    let (s, _g) = session();
    let stack = if cfg!(target_arch = "x86_64") {
        16384.0
    } else {
        return;
    };
    within_3_attempts("KernelStack per thread", || {
        let (k, u) = run(s, &primitives::THREAD);
        assert_ok(&k);
        assert_ok(&u);
        let ks = component(&k, "kernel_stack");
        // Its stack and guard are mapped but only a few pages touched.
        let rss = u.median().unwrap();
        assert!(rss > 0.0 && rss < 64.0 * 1024.0, "user {rss}");
        if (ks / stack - 1.0).abs() < 0.05 {
            Ok(())
        } else {
            Err(format!(
                "{ks:.0} B of KernelStack per thread, expected {stack}"
            ))
        }
    });
}

#[test]
fn a_mapped_touched_page_costs_one_page_of_rss() {
    let (s, _g) = session();
    within_3_attempts("RSS per mapping", || {
        let (k, u) = run(s, &primitives::MAPPING);
        assert_ok(&k);
        assert_ok(&u);
        // A VMA (~200 B of slab) plus a share of a page-table page.
        let kern = k.median().unwrap();
        assert!(kern > 50.0 && kern < 4096.0, "kernel {kern}");
        let rss = u.median().unwrap();
        if (rss / 4096.0 - 1.0).abs() < 0.05 {
            Ok(())
        } else {
            Err(format!("{rss:.0} B RSS per mapping, expected 4096"))
        }
    });
}

#[test]
fn twice_the_pipes_cost_twice_the_slab() {
    let (s, _g) = session();
    let n = with(s, &[("space.n", "1000")]);
    let n2 = with(s, &[("space.n", "2000")]);
    within_3_attempts("pipes 2N vs N", || {
        let (k1, _) = run(&n, &primitives::PIPE);
        let (k2, _) = run(&n2, &primitives::PIPE);
        assert_ok(&k1);
        assert_ok(&k2);
        // Per-object costs equal ⇔ totals in ratio 2.
        let total1 = k1.median().unwrap() * 1000.0;
        let total2 = k2.median().unwrap() * 2000.0;
        let ratio = total2 / total1;
        if (ratio - 2.0).abs() < 0.2 {
            Ok(())
        } else {
            Err(format!(
                "2N pipes cost {total2:.0} B, N pipes {total1:.0} B: ratio {ratio:.2}"
            ))
        }
    });
}

#[test]
fn every_primitive_has_a_positive_plausible_cost() {
    let (s, _g) = session();
    let mut kernel = std::collections::BTreeMap::new();
    for b in yamba_suite::space::BENCHMARKS {
        let (k, u) = run(s, b);
        assert_ok(&k);
        assert_ok(&u);
        let v = k.median().unwrap();
        assert!(v > 32.0 && v < 1e6, "{}: {v} B per object", k.id);
        kernel.insert(b.id, v);
    }
    // A process has a kernel stack, a task and an address space of its
    // own: more than a thread, which has a stack and a task.
    assert!(kernel["space.process"] > kernel["space.thread"]);
    assert!(kernel["space.thread"] > 16000.0);
    eprintln!("{kernel:#?}");
}

#[test]
fn a_census_mismatch_withholds_the_number() {
    let (s, _g) = session();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = s.context(&primitives::PIPE, Mode::Hot, dir.path());
    let mut short = ctx.result(Some("kernel"));
    short.set_observations(vec![1000.0]);
    measure::census_evidence(&mut short, Kind::Pipe, 600, &[600, 598], &[0, 0]);
    ctx.push(short);
    let mut leak = ctx.result(Some("user"));
    leak.set_observations(vec![1000.0]);
    measure::census_evidence(&mut leak, Kind::Pipe, 600, &[600, 600], &[0, 2]);
    ctx.push(leak);
    let mut fine = ctx.result(Some("fine"));
    fine.set_observations(vec![1000.0]);
    measure::census_evidence(&mut fine, Kind::Pipe, 600, &[600, 600], &[0, 0]);
    ctx.push(fine);
    let rs = ctx.into_results();
    assert_eq!(rs[0].status, Status::Withheld);
    assert!(rs[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("all objects existed"));
    assert_eq!(rs[1].status, Status::Withheld);
    assert!(rs[1].reason.as_deref().unwrap().contains("destroyed"));
    assert_eq!(rs[2].status, Status::Ok);
}
