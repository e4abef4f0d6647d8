//! The C parts compiled to native code (src/jit) against the interpreter,
//! the reference: every function of a class of C programs — arithmetic of
//! each width and signedness, wrapping, shifts, division, comparisons,
//! pointer arithmetic and loads/stores of each size through a buffer,
//! loops with break/continue, nested calls, recursion, data members, calls
//! of generated code — gives the same value (or the same error, at the
//! same place) both ways, over a grid of arguments.
//!
//! Each test runs for the host's code generator (Cranelift on x86-64 and
//! aarch64, the system C compiler on x86-32) and, on x86-64, for the C
//! compiler's too (`--backend cc`), the grid the same.

use std::collections::BTreeMap;
use yamba_lang::eval::Instance;
use yamba_lang::exec::permissions_of;
use yamba_lang::runner::call_c;
use yamba_lang::{Backend, Isa, Program};

const CASES: &str = r#"
yamba Cases
{
    import(posix);

    byte_t * buf;
    byte_t * nothing;
    long counter = 5;
    int narrow;

    void setup()
    {
        buf = posix.malloc(4096);
    }

    long w_c(long a, long b) { char x = a + b; return x; }
    long w_uc(long a, long b) { unsigned char x = a + b; return x; }
    long w_s(long a, long b) { short x = a * b; return x; }
    long w_us(long a, long b) { unsigned short x = a * b; return x; }
    long w_i(long a, long b) { int x = a - b; return x; }
    long w_ui(long a, long b) { unsigned int x = a - b; return x; }
    long w_l(long a, long b) { long x = a * b + a; return x; }
    long w_ul(long a, long b) { unsigned long x = a * b - b; return x; }
    int ret_int(long a, long b) { return a + b; }
    unsigned char ret_uc(long a, long b) { return a ^ b; }
    long mix(long a, long b) { return a * b + (a - b) ^ (a | b) & ~b; }
    long div(long a, long b) { return a / b; }
    long rem(long a, long b) { return a % b; }
    long shl(long a, long b) { return (a << (b & 63)) + (a << b); }
    long shr(long a, long b) { return (a >> (b & 63)) ^ (a >> b); }
    long ushr(long a, long b) { unsigned int x = a; x = x >> (b & 31); unsigned short y = a; y <<= 3; return x + y; }
    long neg(long a, long b) { return -a + ~b + !a * 3 + !b; }
    long cmp(long a, long b)
    {
        return (a < b) + 2 * (a <= b) + 4 * (a > b) + 8 * (a >= b) + 16 * (a == b)
            + 32 * (a != b) + 64 * (a && b) + 128 * (a || b) + 256 * !a;
    }
    long cond(long a, long b) { return a > b ? a - b : b - a; }
    long incdec(long a, long b)
    {
        int i = a;
        i++;
        ++i;
        i--;
        long r = i++ + --i;
        unsigned char c = b;
        c += 250;
        c++;
        signed char d = b;
        d--;
        return r * 1000 + c * 7 + d;
    }
    long compound(long a, long b)
    {
        long x = a;
        x += b; x *= 3; x -= a; x <<= 2; x >>= 1; x &= b | 255; x |= 4096; x ^= a;
        if (b != 0)
        {
            x /= b;
            x %= 1000003;
        }
        return x;
    }
    long loops(long a, long b)
    {
        long s = 0;
        for (int i = 0; i < 100; i++)
        {
            if (i % 7 == 3) continue;
            if (i * (a & 15) > 500) break;
            s += i * b;
        }
        int j = 0;
        while (j < (a & 31))
        {
            j++;
            if (j == 20) break;
            if (j & 1) continue;
            s ^= j;
        }
        for (;;) { s++; if (s & 4) break; }
        return s + j;
    }
    long sq(long x) { return x * x; }
    long add3(long x, long y, long z) { return x + y + z; }
    long nested(long a, long b) { return add3(a, sq(b), 7) - sq(add3(b, 1, a)); }
    long fib(long n) { if (n < 2) return n; return fib(n - 1) + fib(n - 2); }
    long fibs(long a, long b) { return fib(a & 15) * 100 + fib(b & 7); }
    long deep(long n) { if (n <= 0) return 0; return 1 + deep(n - 1); }
    long buffer(long a, long b)
    {
        unsigned short * h = buf;
        int * w = buf;
        long * q = buf;
        char * c = buf;
        q[0] = a;
        q[1] = b;
        w[5] = a;
        h[13] = b;
        buf[30] = a;
        *(buf + 31) = b;
        long s = 0;
        for (int i = 0; i < 32; i++)
        {
            s = s * 31 + buf[i];
        }
        s += h[3] + w[3] + q[1] + c[30] + *(w + 5);
        byte_t * e = buf + 40;
        long * qe = q + 3;
        s += (e - buf) * 1000 + (qe - q);
        qe -= 2;
        s += *qe;
        byte_t * p = buf;
        for (p = buf; p < buf + 64; p += 8) { *p += 1; }
        s += buf[8] + buf[56];
        return s + (buf[100] = a) + (q[20] += b);
    }
    long data(long a, long b)
    {
        counter += a;
        narrow = counter * b;
        return counter + narrow;
    }
    long nul(long a, long b)
    {
        byte_t * p = nothing;
        if (a > 5) return *p;
        return 1;
    }
    long sum4k(long a, long b)
    {
        long s = 0;
        for (int i = 0; i < 4096; i++)
        {
            s = s + (buf[i] ^ (i & 255));
        }
        return s;
    }
    long andor(long a, long b)
    {
        long n = 0;
        if (a > 0 && (n = b) > 3) n += 100;
        if (a < 0 || (n = n + b) > 3) n += 1000;
        return n;
    }
}
"#;

/// Arguments that cross every width's boundary, both signs.
const VALUES: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    7,
    -7,
    63,
    64,
    127,
    128,
    255,
    256,
    -128,
    -129,
    32767,
    32768,
    65535,
    65536,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    -0x8000_0000,
    0x1234_5678_9abc_def0,
    i64::MAX,
    i64::MIN,
];

/// The program twice: one for the interpreter, one compiled.
fn programs(text: &str) -> (Program, Program) {
    let a = Program::from_text("cases.yamba", text).unwrap().0;
    let b = Program::from_text("cases.yamba", text).unwrap().0;
    (a, b)
}

fn build<'p>(prog: &'p Program, class: &str, compiled: Option<Backend>) -> Instance<'p> {
    let mut i = Instance::new(prog, class, &BTreeMap::new(), std::env::temp_dir()).unwrap();
    if let Some(b) = compiled {
        i.compile_c_with(b).unwrap();
        assert!(i.is_compiled());
        assert_eq!(i.jit().unwrap().backend(), b);
    }
    if i.member_kind("setup").is_some() {
        i.call_function("setup", &[]).unwrap();
    }
    i
}

/// Both ways, function by function over the grid: the same value or the same error.
fn compare(backend: Backend, text: &str, class: &str, funcs: &[&str], values: &[i64]) -> usize {
    let (pa, pb) = programs(text);
    let mut interp = build(&pa, class, None);
    let mut comp = build(&pb, class, Some(backend));
    let mut n = 0;
    for f in funcs {
        for &a in values {
            for &b in values {
                let be = backend;
                let x = call_c(&mut interp, f, &[a, b]);
                let y = call_c(&mut comp, f, &[a, b]);
                assert_eq!(x, y, "{f}({a}, {b}): interpreted vs compiled ({be:?})");
                n += 1;
            }
        }
    }
    n
}

fn compiled_c_gives_the_interpreters_values_for_every_width_and_operator(b: Backend) {
    let funcs = [
        "w_c", "w_uc", "w_s", "w_us", "w_i", "w_ui", "w_l", "w_ul", "ret_int", "ret_uc", "mix",
        "div", "rem", "shl", "shr", "ushr", "neg", "cmp", "cond", "incdec", "compound", "loops",
        "nested", "fibs", "andor", "nul",
    ];
    let n = compare(b, CASES, "Cases", &funcs, VALUES);
    assert_eq!(n, funcs.len() * VALUES.len() * VALUES.len());
    // Known values, so both cannot be wrong the same way.
    let (p, _) = programs(CASES);
    let mut c = build(&p, "Cases", Some(b));
    assert_eq!(call_c(&mut c, "w_c", &[100, 100]), Ok(-56));
    assert_eq!(call_c(&mut c, "w_uc", &[-1, 0]), Ok(255));
    assert_eq!(call_c(&mut c, "w_ui", &[0, 1]), Ok(0xffff_ffff));
    assert_eq!(call_c(&mut c, "w_i", &[0x8000_0000, 0]), Ok(-0x8000_0000));
    assert_eq!(call_c(&mut c, "div", &[i64::MIN, -1]), Ok(i64::MIN));
    assert_eq!(call_c(&mut c, "rem", &[-7, 2]), Ok(-1));
    assert_eq!(call_c(&mut c, "fibs", &[10, 7]), Ok(55 * 100 + 13));
    assert_eq!(call_c(&mut c, "cond", &[3, 10]), Ok(7));
    let e = call_c(&mut c, "div", &[1, 0]).unwrap_err();
    assert!(
        e.contains("division by zero") && e.contains("cases.yamba:"),
        "{e}"
    );
    let e = call_c(&mut c, "nul", &[6, 0]).unwrap_err();
    assert!(e.contains("null pointer"), "{e}");
}

fn loads_and_stores_of_each_size_through_a_buffer_and_data_members_agree(b: Backend) {
    let n = compare(b, CASES, "Cases", &["buffer", "data"], VALUES);
    assert!(n > 0);
    // The data members after the same calls are the same both ways.
    let (pa, pb) = programs(CASES);
    let mut i = build(&pa, "Cases", None);
    let mut c = build(&pb, "Cases", Some(b));
    for (a, b) in [(3, 4), (100_000, 70_000), (-9, 1 << 40)] {
        assert_eq!(
            call_c(&mut i, "data", &[a, b]),
            call_c(&mut c, "data", &[a, b])
        );
    }
    assert_eq!(i.data("counter"), c.data("counter"));
    assert_eq!(i.data("narrow"), c.data("narrow"));
    assert_eq!(c.data("counter"), Some(5 + 3 + 100_000 - 9));
}

fn recursion_nests_to_the_interpreters_limit_and_fails_past_it_the_same_way(b: Backend) {
    let (pa, pb) = programs(CASES);
    let mut i = build(&pa, "Cases", None);
    let mut c = build(&pb, "Cases", Some(b));
    assert_eq!(call_c(&mut c, "deep", &[255]), Ok(255));
    assert_eq!(call_c(&mut i, "deep", &[255]), Ok(255));
    let ei = call_c(&mut i, "deep", &[300]).unwrap_err();
    let ec = call_c(&mut c, "deep", &[300]).unwrap_err();
    assert_eq!(ei, ec);
    assert!(ec.contains("calls nest deeper than 256"), "{ec}");
    // The depth is restored after an error: a later call nests as deep.
    assert_eq!(call_c(&mut c, "deep", &[255]), Ok(255));
}

fn the_compiled_code_is_mapped_read_execute_and_listed(b: Backend) {
    let (p, _) = programs(CASES);
    let c = build(&p, "Cases", Some(b));
    let j = c.jit().unwrap();
    let perms = permissions_of(j.addr()).unwrap();
    assert!(perms.starts_with("r-x"), "{perms}");
    let listing = j.listing(Some("sq"), false);
    assert!(
        listing.starts_with(&format!(
            "/* Cases.sq(long) -> long: C compiled by {}",
            b.label()
        )),
        "{listing}"
    );
    let mul = if Isa::host() == Some(Isa::X86_64) {
        "imul"
    } else {
        "mul"
    };
    assert!(listing.contains(mul), "{listing}");
}

fn what_the_compiler_does_not_take_is_an_error_at_its_place(b: Backend) {
    let text = "yamba Bad\n{\n    void f()\n    {\n        break;\n    }\n}\n";
    let p = Program::from_text("bad.yamba", text).unwrap().0;
    let mut i = Instance::new(&p, "Bad", &BTreeMap::new(), std::env::temp_dir()).unwrap();
    let e = i.compile_c_with(b).unwrap_err();
    assert!(e.contains("bad.yamba:5:9"), "{e}");
    assert!(e.contains("break or continue outside a loop"), "{e}");
    assert!(e.contains("--interpret"), "{e}");
}

#[cfg(target_arch = "x86_64")]
const CODE: &str = r#"
yamba Code
{
    import(x86_64);

    bitstring<long f(long x)> addk(unsigned int k)
    {
        asm { lea rax, [rdi + {k}] }
        asm { ret }
    }

    bitstring<int f(long x, long y)> sub2(unsigned int k)
    {
        asm { mov rax, rdi; sub rax, rsi; add rax, {k}; ret }
    }

    long code(long a, long b)
    {
        long s = 0;
        for (int i = 0; i < 4; i++)
        {
            s += addk(b & 7)(a) + addk(i)(s) + sub2(3)(a, b);
        }
        return s;
    }
}
"#;

/// The same calls on x86-32 (cdecl: arguments on the stack, words of 32
/// bits, the value in eax, zero-extended as `ExecMem::call` does).
#[cfg(target_arch = "x86")]
const CODE: &str = r#"
yamba Code
{
    import(x86_32);

    bitstring<long f(long x)> addk(unsigned int k)
    {
        asm { mov eax, [esp + 4]; add eax, {k}; ret }
    }

    bitstring<int f(long x, long y)> sub2(unsigned int k)
    {
        asm { mov eax, [esp + 4]; sub eax, [esp + 8]; add eax, {k}; ret }
    }

    long code(long a, long b)
    {
        long s = 0;
        for (int i = 0; i < 4; i++)
        {
            s += addk(b & 7)(a) + addk(i)(s) + sub2(3)(a, b);
        }
        return s;
    }
}
"#;

/// x86 code: built for x86-64 and x86-32 hosts only (as asm_labels' runs),
/// so the aarch64 guest runs the rest of this file.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn calls_of_generated_code_agree_and_generate_once_per_argument_list(b: Backend) {
    let n = compare(b, CODE, "Code", &["code"], VALUES);
    assert!(n > 0);
    let (p, _) = programs(CODE);
    let mut c = build(&p, "Code", Some(b));
    // s: i=0: 1+2 + 0 + (1-2+3); sub2 returns int.
    assert_eq!(call_c(&mut c, "code", &[1, 2]), {
        let mut s: i64 = 0;
        for i in 0..4 {
            s += (1 + 2) + (s + i) + (1 - 2 + 3);
        }
        Ok(s)
    });
    let g = c.generations;
    let (calls, _) = c.jit().unwrap().counts();
    assert_eq!(calls, 12);
    call_c(&mut c, "code", &[1, 2]).unwrap();
    assert_eq!(
        c.generations, g,
        "no code generated again for the same arguments"
    );
    assert_eq!(c.jit().unwrap().counts().0, 24);
}

fn every_example_classs_c_parts_compile_and_list_each_function(b: Backend) {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (prog, _) = Program::load(&[examples.join("pagefault_linux.yamba")]).unwrap();
    for class in ["Y_pagefault_x86_64_Linux", "Y_pagefault_aarch64_Linux"] {
        let mut i = Instance::new(&prog, class, &BTreeMap::new(), std::env::temp_dir()).unwrap();
        i.compile_c_with(b).unwrap();
        let j = i.jit().unwrap();
        let names: Vec<&str> = j.funcs.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "benchmark",
                "benchmark_dummy",
                "cause_page_outs_func",
                "operations",
                "setup"
            ],
            "{class}"
        );
        let listing = j.listing(None, true);
        assert_eq!(
            listing
                .matches(&format!("C compiled by {}", b.label()))
                .count(),
            5
        );
        // operations() = num_passes · num_groups · unroll_degree, compiled.
        i.set_data("num_groups", 3).unwrap();
        i.set_data("unroll_degree", 8).unwrap();
        assert_eq!(call_c(&mut i, "operations", &[]), Ok(24));
    }
}

/// Every concrete class of every example file compiles with `b` (clang's
/// code for the base classes once had unreferenced constants outside
/// `.text`, and was refused, while the `_Linux` classes above compiled).
fn every_class_of_every_example_compiles(b: Backend) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yamba"))
        .collect();
    files.sort();
    let (prog, _) = Program::load(&files).unwrap();
    let mut compiled = 0;
    for class in prog.classes.iter().filter(|c| !c.is_abstract) {
        let name = &class.name.name;
        let mut i = Instance::new(&prog, name, &BTreeMap::new(), std::env::temp_dir()).unwrap();
        i.compile_c_with(b)
            .unwrap_or_else(|e| panic!("{name} with {b:?}: {e}"));
        compiled += 1;
    }
    // The six concrete classes of the three ISAs, and the _Linux ones.
    assert!(compiled >= 6, "{compiled} classes in {files:?}");
}

/// A loop over the 4 KiB buffer: compiled it runs at least 10× faster
/// than interpreted (both timed in this run, the best of a few calls
/// each; the ratio, not a time, is asserted), with the same sum.
fn a_loop_over_a_4_kib_buffer_runs_at_least_10x_faster_compiled(b: Backend) {
    let (pa, pb) = programs(CASES);
    let mut i = build(&pa, "Cases", None);
    let mut c = build(&pb, "Cases", Some(b));
    let best = |inst: &mut Instance, calls: usize| {
        (0..calls)
            .map(|_| {
                let t = std::time::Instant::now();
                let v = call_c(inst, "sum4k", &[0, 0]).unwrap();
                (t.elapsed().as_secs_f64(), v)
            })
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .unwrap()
    };
    let (ti, vi) = best(&mut i, 3);
    let (tc, vc) = best(&mut c, 20);
    assert_eq!(vi, vc);
    let ratio = ti / tc;
    eprintln!("sum4k, {b:?}: interpreted {ti:.6} s, compiled {tc:.7} s, ratio {ratio:.0}");
    assert!(ratio >= 10.0, "interpreted {ti} s, compiled {tc} s");
}

/// Every test above for one code generator.
macro_rules! for_backend {
    ($m:ident, $b:expr) => {
        mod $m {
            use super::*;

            #[test]
            fn compiled_c_gives_the_interpreters_values_for_every_width_and_operator() {
                super::compiled_c_gives_the_interpreters_values_for_every_width_and_operator($b)
            }

            #[test]
            fn loads_and_stores_of_each_size_through_a_buffer_and_data_members_agree() {
                super::loads_and_stores_of_each_size_through_a_buffer_and_data_members_agree($b)
            }

            #[test]
            fn recursion_nests_to_the_interpreters_limit_and_fails_past_it_the_same_way() {
                super::recursion_nests_to_the_interpreters_limit_and_fails_past_it_the_same_way($b)
            }

            #[test]
            fn the_compiled_code_is_mapped_read_execute_and_listed() {
                super::the_compiled_code_is_mapped_read_execute_and_listed($b)
            }

            #[test]
            fn what_the_compiler_does_not_take_is_an_error_at_its_place() {
                super::what_the_compiler_does_not_take_is_an_error_at_its_place($b)
            }

            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            #[test]
            fn calls_of_generated_code_agree_and_generate_once_per_argument_list() {
                super::calls_of_generated_code_agree_and_generate_once_per_argument_list($b)
            }

            #[test]
            fn a_loop_over_a_4_kib_buffer_runs_at_least_10x_faster_compiled() {
                super::a_loop_over_a_4_kib_buffer_runs_at_least_10x_faster_compiled($b)
            }

            #[test]
            fn every_example_classs_c_parts_compile_and_list_each_function() {
                super::every_example_classs_c_parts_compile_and_list_each_function($b)
            }

            #[test]
            fn every_class_of_every_example_compiles() {
                super::every_class_of_every_example_compiles($b)
            }
        }
    };
}

// The host's code generator: Cranelift, or the C compiler on x86-32.
for_backend!(host_backend, Backend::host());
// The C compiler's on x86-64 too, so it is tested on the usual host.
#[cfg(target_arch = "x86_64")]
for_backend!(cc_backend, Backend::Cc);

/// The compiler the C back end runs, as results name it: the family `$CC`
/// names when it is set (.ci/gcc-pass runs these tests again with
/// CC=gcc; unset, clang where it is installed, else cc).
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
mod c_compiler {
    #[test]
    fn is_named_and_is_the_family_cc_names() {
        let name = yamba_lang::jit::c_compiler().expect("a C compiler that runs");
        let want = match std::env::var("CC").as_deref() {
            Ok("gcc") => vec!["gcc "],
            Ok("clang") => vec!["clang "],
            _ => vec!["gcc ", "clang "],
        };
        assert!(
            want.iter().any(|w| name.starts_with(w)),
            "{name}, want {want:?}"
        );
        // A version follows the family.
        assert!(name.chars().any(|c| c.is_ascii_digit()), "{name}");
    }
}
