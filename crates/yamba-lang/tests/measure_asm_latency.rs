//! Ground truth from the core's published latencies, through `yamba asm`'s
//! library path: a dependent chain of 64-bit imul costs 3× a chain of add
//! (imul r64 latency 3 cycles, add 1, on Intel Golden Cove and AMD Zen 4),
//! and a body unrolled 2m costs 2× one unrolled m. Both sides of each
//! ratio are measured in one run, interleaved (each repetition of each in
//! a fresh process); up to 3 attempts for genuine noise, bounds unchanged.

use yamba_core::RunConfig;
use yamba_lang::asm::{asm_benchmark, AsmSpec};
use yamba_lang::Isa;

fn config() -> RunConfig {
    RunConfig {
        budget_s: 0.3,
        repetitions: 3,
        ..RunConfig::quick()
    }
}

/// Medians per copy and copies per call of each spec, measured interleaved.
fn measure(specs: &[AsmSpec]) -> Vec<(f64, f64)> {
    let benches: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| asm_benchmark(s, i + 1).unwrap())
        .collect();
    let file = yamba_lang::session::run(config(), &benches, vec!["test".into()], None).unwrap();
    file.results
        .iter()
        .map(|r| {
            assert_eq!(r.status, yamba_core::Status::Ok, "{r:?}");
            assert!(r.evidence.iter().all(|e| e.ok), "{:?}", r.evidence);
            let unroll = r.params["unroll_degree"].as_f64().unwrap();
            (r.median().unwrap(), unroll)
        })
        .collect()
}

fn attempts(what: &str, lo: f64, hi: f64, mut f: impl FnMut() -> f64) {
    let mut seen = Vec::new();
    for _ in 0..3 {
        let r = f();
        seen.push(r);
        println!("{what}: {r:.4} (want {lo}..{hi})");
        if (lo..=hi).contains(&r) {
            return;
        }
    }
    panic!("{what}: {seen:?}, want within {lo}..{hi} (3 attempts)");
}

#[test]
fn imul_chain_costs_three_add_chains() {
    if Isa::host() != Some(Isa::X86_64) {
        println!(
            "SKIPPED: the imul/add chains are x86-64 code; this host is {}",
            std::env::consts::ARCH
        );
        return;
    }
    attempts("imul/add latency ratio", 2.85, 3.15, || {
        let m = measure(&[AsmSpec::new("imul rax, rax"), AsmSpec::new("add rax, rax")]);
        m[0].0 / m[1].0
    });
}

#[test]
fn a_body_unrolled_2m_costs_twice_one_unrolled_m() {
    if Isa::host() != Some(Isa::X86_64) {
        println!(
            "SKIPPED: the chains are x86-64 code; this host is {}",
            std::env::consts::ARCH
        );
        return;
    }
    let spec = |m: u32| AsmSpec {
        unroll: Some(m),
        ..AsmSpec::new("add rax, rax")
    };
    attempts("per-call cost, 2m / m", 2.0 * 0.97, 2.0 * 1.03, || {
        let r = measure(&[spec(2048), spec(4096)]);
        assert_eq!((r[0].1, r[1].1), (2048.0, 4096.0));
        (r[1].0 * r[1].1) / (r[0].0 * r[0].1)
    });
}
