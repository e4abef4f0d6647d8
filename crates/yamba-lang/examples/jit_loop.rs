//! A C loop over a 4 KiB buffer, three ways: the class's benchmark()
//! compiled to native code (src/jit), the same loop written in Rust, and
//! the interpreter (the reference). Prints ns per iteration for each (the
//! median of 41 rounds, each the best of 20 calls) and the ratios.
//!
//!   cargo run --release -p yamba-lang --example jit_loop [cranelift|cc]
//!
//! The argument names the code generator (default: the host's, Cranelift
//! on x86-64 and aarch64, the system C compiler on x86-32: `$CC`, else
//! clang, else cc).
//!
//! The loop is a dependent chain, h = (h ^ buf[i]) · 0x100000001b3 (FNV-1's
//! step), with byte loads the interpreter makes volatile; the Rust loop
//! reads with read_volatile too, so neither is vectorised away.

use std::collections::BTreeMap;
use std::time::Instant;
use yamba_lang::eval::Instance;
use yamba_lang::{Backend, Program};

const CLASS: &str = r#"
yamba Loop4k
{
    import(posix);

    byte_t * buf;
    long result;

    void setup()
    {
        buf = posix.malloc(4096);
        for (int i = 0; i < 4096; i++)
        {
            buf[i] = i * 7 + 3;
        }
    }

    void benchmark()
    {
        long h = 0;
        for (int i = 0; i < 4096; i++)
        {
            h = (h ^ buf[i]) * 0x100000001b3;
        }
        result = h;
    }
}
"#;

const N: usize = 4096;

#[inline(never)]
fn rust_loop(buf: *const u8) -> i64 {
    let mut h: i64 = 0;
    for i in 0..N {
        // SAFETY: buf holds N bytes.
        let b = unsafe { buf.add(i).read_volatile() } as i64;
        h = (h ^ b).wrapping_mul(0x100000001b3);
    }
    h
}

/// ns per iteration: median over rounds of the best of `calls` calls.
fn per_iter(rounds: usize, calls: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..rounds)
        .map(|_| {
            (0..calls)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_nanos() as f64
                })
                .fold(f64::MAX, f64::min)
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2] / N as f64
}

fn main() {
    let backend = match std::env::args().nth(1) {
        None => Backend::host(),
        Some(a) => Backend::parse(&a).unwrap_or_else(|| {
            eprintln!("jit_loop: unknown code generator '{a}' (cranelift, cc)");
            std::process::exit(2)
        }),
    };
    match (backend, yamba_lang::jit::c_compiler()) {
        (Backend::Cc, Some(cc)) => println!("C parts compiled by {} ({cc})", backend.label()),
        _ => println!("C parts compiled by {}", backend.label()),
    }
    let (prog, _) = Program::from_text("loop4k.yamba", CLASS).expect("the class checks");
    let build = |compiled: bool| {
        let mut i =
            Instance::new(&prog, "Loop4k", &BTreeMap::new(), std::env::temp_dir()).expect("builds");
        if compiled {
            i.compile_c_with(backend).expect("compiles");
        }
        i.call_function("setup", &[]).expect("setup");
        i
    };
    let mut comp = build(true);
    let mut interp = build(false);
    let buf = comp.data("buf").unwrap() as usize as *const u8;

    comp.call_function("benchmark", &[]).unwrap();
    interp.call_function("benchmark", &[]).unwrap();
    let want = rust_loop(buf);
    assert_eq!(comp.data("result"), Some(want), "compiled result");
    assert_eq!(interp.data("result"), Some(want), "interpreted result");

    let mut rows = Vec::new();
    for round in 0..3 {
        let c = per_iter(41, 20, || {
            comp.call_function("benchmark", &[]).unwrap();
        });
        let r = per_iter(41, 20, || {
            std::hint::black_box(rust_loop(std::hint::black_box(buf)));
        });
        rows.push((round, c, r));
    }
    let i = per_iter(5, 3, || {
        interp.call_function("benchmark", &[]).unwrap();
    });
    for (round, c, r) in &rows {
        println!(
            "round {round}: compiled C {c:.3} ns/iter, Rust {r:.3} ns/iter: compiled/Rust = {:.3}",
            c / r
        );
    }
    let c = rows.iter().map(|r| r.1).fold(f64::MAX, f64::min);
    println!("interpreted C {i:.1} ns/iter: {:.0}x the compiled C", i / c);
}
