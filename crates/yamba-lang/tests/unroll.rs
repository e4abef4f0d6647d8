//! The unroll degree of an interpreted C loop is chosen at run time as the
//! largest power of two the class's work holds (docs/language.md, "The
//! unroll degree at run time"), and halved while the work holds no group.
//! Ground truth: a class with a known count of operations per benchmark()
//! and a known rule for how many groups a degree leaves.

use std::collections::BTreeMap;
use yamba_core::{RunConfig, Status};
use yamba_lang::runner::{benchmark, Job};
use yamba_lang::{Isa, Program};

/// `work` additions per benchmark(), in groups of `unroll_degree`; the
/// class keeps back `spare` groups, so a degree with fewer than `spare + 1`
/// groups in `work` leaves none (operations() = 0).
fn class(work: i64, spare: i64) -> String {
    format!(
        r#"
yamba Adds
{{
    import(x86_64);
    import(compiler_x86_64);

    int unroll_degree;
    int num_groups;
    int group_i;
    byte_t * scratch;

    bitstring<void c_function(byte_t * p)> adds(unsigned int m)
    {{
        compiler_x86_64.prologue_standard
        unroll(unsigned int i = 0; i < m; i++)
        {{
            asm {{ add rax, 1 }}
        }}
        compiler_x86_64.epilogue_standard
    }}

    bitstring<void c_function(byte_t * p)> none(unsigned int m)
    {{
        compiler_x86_64.prologue_standard
        compiler_x86_64.epilogue_standard
    }}

    void setup()
    {{
        num_groups = {work} / unroll_degree - {spare};
        if (num_groups < 0)
        {{
            num_groups = 0;
        }}
    }}

    void benchmark()
    {{
        for (group_i = 0; group_i < num_groups; group_i++)
        {{
            adds(unroll_degree)(scratch);
        }}
    }}

    void benchmark_dummy()
    {{
        for (group_i = 0; group_i < num_groups; group_i++)
        {{
            none(unroll_degree)(scratch);
        }}
    }}

    long operations()
    {{
        return num_groups * unroll_degree;
    }}
}}
"#
    )
}

fn chosen(work: i64, spare: i64) -> (i64, String) {
    let (prog, _) = Program::from_text("adds.yamba", &class(work, spare)).unwrap();
    let job = Job::new(prog, "Adds", BTreeMap::new());
    let bench = benchmark(job).unwrap();
    let config = RunConfig {
        budget_s: 0.05,
        ..RunConfig::quick()
    };
    let file = yamba_lang::session::run(config, &[bench], vec!["test".into()], None).unwrap();
    let r = &file.results[0];
    assert_eq!(r.status, Status::Ok, "{:?}", r.reason);
    let d = r.params["unroll_degree"].as_i64().unwrap();
    let note = r.extra["unroll_choice"].as_str().unwrap().to_string();
    (d, note)
}

#[test]
fn the_degree_is_the_largest_the_work_holds_and_halves_when_it_holds_no_group() {
    if Isa::host() != Some(Isa::X86_64) {
        yamba_testkit::skip!(
            "the class is x86-64 code; this host is {}",
            std::env::consts::ARCH
        );
    }
    // 3000 operations at degree 1: 2048 is the largest power of two within.
    let (d, note) = chosen(3000, 0);
    assert_eq!(d, 2048, "{note}");
    assert!(note.contains("within the 3000 operations"), "{note}");
    // 1000 groups of 1, less 2 kept back = 998 operations: 512 is the
    // largest power of two within, but 1000/512 − 2 leaves no group; 256
    // leaves 1000/256 − 2 = 1.
    let (d, note) = chosen(1000, 2);
    assert_eq!(d, 256, "{note}");
    assert!(note.contains("halved to 256"), "{note}");
}
