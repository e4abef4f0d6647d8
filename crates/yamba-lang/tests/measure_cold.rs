//! Ground truth for `yamba lang run --mode cold`: a call that walks 64
//! distinct cache lines in a dependent chain finds them in L1 or L2 hot
//! (64 lines 1 KiB apart share a few L1 sets), and after the caches are
//! evicted goes to memory for each — at least several times as much (on
//! an AMD EPYC guest: 273 ns hot, 11.4 µs cold per call). Hot and cold are
//! measured in one run; up to 3 attempts for noise, the bound unchanged.

use yamba_core::{Mode, RunConfig, Status};
use yamba_lang::asm::{asm_benchmark, AsmSpec};

#[test]
fn evicted_lines_cost_more_cold_than_hot() {
    if !matches!(yamba_lang::Isa::host(), Some(yamba_lang::Isa::X86_64)) {
        eprintln!("SKIPPED evicted_lines_cost_more_cold_than_hot: the chain is x86-64 code");
        return;
    }
    // rax stays 0 (the scratch memory is zeroed), so each load's address
    // waits for the previous load: a chain over 64 lines, 1 KiB apart.
    let seq: Vec<String> = (0..64)
        .map(|k| format!("add rax, [rdi + rax + {}]", k * 1024))
        .collect();
    let spec = AsmSpec {
        seq: seq.join("; "),
        init: Some("xor eax, eax".into()),
        unroll: Some(1),
        ..AsmSpec::new("nop")
    };
    let bench = asm_benchmark(&spec, 1).unwrap();
    let config = RunConfig {
        budget_s: 0.3,
        modes: vec![Mode::Hot, Mode::Cold],
        ..RunConfig::quick()
    };
    let mut seen = Vec::new();
    for _ in 0..3 {
        let file =
            yamba_lang::session::run(config.clone(), &[bench], vec!["test".into()], None).unwrap();
        let of = |mode: Mode| {
            let r = file
                .results
                .iter()
                .find(|r| r.mode == mode)
                .unwrap_or_else(|| panic!("no {mode:?} result: {:?}", file.results));
            assert_eq!(r.status, Status::Ok, "{r:?}");
            r.median().unwrap()
        };
        let (hot, cold) = (of(Mode::Hot), of(Mode::Cold));
        println!("64 dependent loads: hot {hot:.1} ns, cold {cold:.1} ns per call");
        seen.push((hot, cold));
        if hot > 0.0 && cold > 5.0 * hot {
            return;
        }
    }
    panic!("cold not ≥ 5× hot in 3 attempts: {seen:?}");
}
