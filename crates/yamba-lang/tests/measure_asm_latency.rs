//! Ground truth from the core's published latencies, through `yamba asm`'s
//! library path: a dependent chain of 64-bit imul costs 3× a chain of add
//! (imul r64 latency 3 cycles, add 1, on Intel Golden Cove and AMD Zen 4),
//! and a body unrolled 2m costs 2× one unrolled m. Both sides of each
//! ratio are measured in one run, interleaved (each repetition of each in
//! a fresh process). Measurement checks only (docs/testing.md): each
//! decides on the median ratio of independent runs.

use yamba_core::RunConfig;
use yamba_lang::asm::{asm_benchmark, AsmSpec};
use yamba_lang::Isa;
use yamba_testkit::{alone, check, skip, Accept};

fn config() -> RunConfig {
    RunConfig {
        budget_s: 0.2,
        repetitions: 2,
        ..RunConfig::quick()
    }
}

/// Medians per copy and copies per call of each spec, measured
/// interleaved; Err (an attempt without a value) when a result was not ok.
fn measure(specs: &[AsmSpec]) -> Result<Vec<(f64, f64)>, String> {
    let benches: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| asm_benchmark(s, i + 1).unwrap())
        .collect();
    let file = yamba_lang::session::run(config(), &benches, vec!["test".into()], None).unwrap();
    file.results
        .iter()
        .map(|r| {
            if r.status != yamba_core::Status::Ok || !r.evidence.iter().all(|e| e.ok) {
                return Err(format!(
                    "{}: {:?} {:?} {:?}",
                    r.id, r.status, r.reason, r.evidence
                ));
            }
            let unroll = r.params["unroll_degree"].as_f64().unwrap();
            Ok((r.median().unwrap(), unroll))
        })
        .collect()
}

/// Rule: the median imul/add ratio is 3 within 5%.
#[test]
fn imul_chain_costs_three_add_chains() {
    let _alone = alone();
    if Isa::host() != Some(Isa::X86_64) {
        skip!(
            "the imul/add chains are x86-64 code; this host is {}",
            std::env::consts::ARCH
        );
    }
    check!("imul/add latency ratio", Accept::within(3.0, 0.05)).run(|| {
        let m = measure(&[AsmSpec::new("imul rax, rax"), AsmSpec::new("add rax, rax")])?;
        Ok::<f64, String>(m[0].0 / m[1].0)
    });
}

/// Rule: the median per-call cost at unroll 4096 over that at 2048 is 2
/// within 3% (the degrees themselves are asserted in every attempt).
#[test]
fn a_body_unrolled_2m_costs_twice_one_unrolled_m() {
    let _alone = alone();
    if Isa::host() != Some(Isa::X86_64) {
        skip!(
            "the chains are x86-64 code; this host is {}",
            std::env::consts::ARCH
        );
    }
    let spec = |m: u32| AsmSpec {
        unroll: Some(m),
        ..AsmSpec::new("add rax, rax")
    };
    check!("per-call cost, 2m / m", Accept::within(2.0, 0.03)).run(|| {
        let r = measure(&[spec(2048), spec(4096)])?;
        assert_eq!((r[0].1, r[1].1), (2048.0, 4096.0));
        Ok::<f64, String>((r[1].0 * r[1].1) / (r[0].0 * r[0].1))
    });
}
