//! Ground truth for `yamba lang run --mode cold`: a call that walks 64
//! distinct cache lines in a dependent chain finds them in L1 or L2 hot
//! (64 lines 1 KiB apart share a few L1 sets), and after the caches are
//! evicted goes to memory for each — at least several times as much (on
//! an AMD EPYC guest: 273 ns hot, 11.4 µs cold per call). Hot and cold are
//! measured in one run. A measurement check (docs/testing.md): the rule is
//! on the median over independent runs of cold / hot, at least 5.

use yamba_core::{Mode, RunConfig, Status};
use yamba_lang::asm::{asm_benchmark, AsmSpec};
use yamba_testkit::{alone, check, skip, Accept};

#[test]
fn evicted_lines_cost_more_cold_than_hot() {
    let _alone = alone();
    if !matches!(yamba_lang::Isa::host(), Some(yamba_lang::Isa::X86_64)) {
        skip!("the chain is x86-64 code");
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
        budget_s: 0.2,
        modes: vec![Mode::Hot, Mode::Cold],
        ..RunConfig::quick()
    };
    check!("cold / hot per call", Accept::at_least(5.0)).run(|| {
        let file =
            yamba_lang::session::run(config.clone(), &[bench], vec!["test".into()], None).unwrap();
        let of = |mode: Mode| -> Result<f64, String> {
            let r = file
                .results
                .iter()
                .find(|r| r.mode == mode)
                .unwrap_or_else(|| panic!("no {mode:?} result: {:?}", file.results));
            match r.status {
                Status::Ok => Ok(r.median().unwrap()),
                _ => Err(format!("{mode:?}: {:?} {:?}", r.status, r.reason)),
            }
        };
        let (hot, cold) = (of(Mode::Hot)?, of(Mode::Cold)?);
        println!("64 dependent loads: hot {hot:.1} ns, cold {cold:.1} ns per call");
        if hot <= 0.0 {
            return Err(format!("hot {hot} ns"));
        }
        Ok::<f64, String>(cold / hot)
    });
}
