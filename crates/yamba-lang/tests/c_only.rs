//! A class of C alone (no bitstrings, no asm) runs on any host, compiled
//! or interpreted. Interpreted, no machine code is generated at all: the
//! W^X check then has nothing to check, and says so without withholding
//! the result (it withheld every such result before, i686's included).

use std::collections::BTreeMap;
use yamba_core::{RunConfig, Status};
use yamba_lang::runner::{benchmark, Job};
use yamba_lang::Program;

/// benchmark() sums a 64-byte buffer; the dummy sums another, the same
/// way (an interpreted dummy must run the same interpreter steps).
/// operations() = 64.
const CLASS: &str = r#"
yamba Sum64
{
    import(posix);

    byte_t * buf;
    byte_t * other;
    long total;

    void setup()
    {
        buf = posix.malloc(64);
        other = posix.malloc(64);
        for (int i = 0; i < 64; i++)
        {
            buf[i] = i;
            other[i] = 0;
        }
    }

    void benchmark()
    {
        long s = 0;
        for (int i = 0; i < 64; i++)
        {
            s = s + buf[i];
        }
        total = s;
    }

    void benchmark_dummy()
    {
        long s = 0;
        for (int i = 0; i < 64; i++)
        {
            s = s + other[i];
        }
        total = s;
    }

    long operations()
    {
        return 64;
    }
}
"#;

const WX: &str = "generated code was mapped read+execute and never writable (/proc/self/maps)";

fn run(interpret: bool, backend: yamba_lang::Backend) -> yamba_core::BenchResult {
    let (prog, _) = Program::from_text("sum64.yamba", CLASS).unwrap();
    let mut job = Job::new(prog, "Sum64", BTreeMap::new());
    job.interpret = interpret;
    job.backend = backend;
    let bench = benchmark(job).unwrap();
    let config = RunConfig {
        budget_s: 0.02,
        ..RunConfig::quick()
    };
    let file = yamba_lang::session::run(config, &[bench], vec!["test".into()], None).unwrap();
    file.results.into_iter().next().unwrap()
}

#[test]
fn an_interpreted_class_of_c_alone_is_not_withheld_for_code_it_never_made() {
    let r = run(true, yamba_lang::Backend::host());
    assert_eq!(r.status, Status::Ok, "{:?}", r.reason);
    let wx: Vec<_> = r.evidence.iter().filter(|e| e.check == WX).collect();
    assert_eq!(wx.len(), 1, "{:?}", r.evidence);
    assert!(wx[0].ok && !wx[0].gating, "{:?}", wx[0]);
    assert!(
        wx[0].observed.contains("no machine code was generated"),
        "{:?}",
        wx[0]
    );
}

fn a_compiled_class_of_c_alone_still_checks_its_code_pages(backend: yamba_lang::Backend) {
    if yamba_lang::jit::unavailable(backend).is_some() || yamba_lang::Isa::host().is_none() {
        yamba_testkit::skip!(
            "no compiler back end for this host ({}): its C parts are interpreted",
            std::env::consts::ARCH
        );
    }
    let r = run(false, backend);
    assert_eq!(r.status, Status::Ok, "{:?}", r.reason);
    let wx: Vec<_> = r.evidence.iter().filter(|e| e.check == WX).collect();
    assert_eq!(wx.len(), 1, "{:?}", r.evidence);
    // Gating, and held: the compiled C is mapped r-x.
    assert!(wx[0].ok && wx[0].gating, "{:?}", wx[0]);
    assert!(wx[0].observed.contains("r-x"), "{:?}", wx[0]);
    // The result names who compiled the C parts.
    assert_eq!(r.params["c_backend"], backend.name(), "{:?}", r.params);
    // The C compiler's code names the compiler (family and version).
    let compiler = r.params.get("c_compiler").and_then(|v| v.as_str());
    match backend {
        yamba_lang::Backend::Cc => assert!(
            compiler.is_some_and(|c| c.starts_with("gcc ") || c.starts_with("clang ")),
            "{:?}",
            r.params
        ),
        yamba_lang::Backend::Cranelift => assert_eq!(compiler, None, "{:?}", r.params),
    }
    let parts = r.params["c_parts"].as_str().unwrap_or_default().to_string();
    assert!(
        parts.starts_with(&format!("compiled ({})", backend.label())),
        "{parts}"
    );
}

#[test]
fn a_compiled_class_of_c_alone_still_checks_its_code_pages_host() {
    a_compiled_class_of_c_alone_still_checks_its_code_pages(yamba_lang::Backend::host());
}

/// The C compiler's code on x86-64 too (`--backend cc`).
#[cfg(target_arch = "x86_64")]
#[test]
fn a_compiled_class_of_c_alone_still_checks_its_code_pages_cc() {
    a_compiled_class_of_c_alone_still_checks_its_code_pages(yamba_lang::Backend::Cc);
}
