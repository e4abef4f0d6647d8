//! Imports of user classes across files (docs/language.md, "Imported
//! classes"): class B in b.yamba imports class A of a.yamba and uses A's
//! data, C function and bitstrings — run for real, the value known; and
//! each error of an import, with its message and its place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yamba_lang::{Backend, Instance, Program};

/// The host's instruction set and the asm lines the programs below need:
/// (import, `v + k` with v in the first argument register, `v + v`,
/// `+ 1`, return).
fn host_asm() -> (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
) {
    if cfg!(target_arch = "aarch64") {
        (
            "aarch64",
            "add x0, x0, #{k}",
            "add x0, x0, x0",
            "add x0, x0, #1",
            "ret",
        )
    } else {
        (
            "x86_64",
            "lea rax, [rdi + {k}]",
            "lea rax, [rdi + rdi]",
            "add rax, 1",
            "ret",
        )
    }
}

/// a.yamba: class A, with data, a C function, a bitstring and a
/// sub-typed bitstring function; it also imports a class of its own file.
fn a_text() -> String {
    let (isa, add_k, _, plus_one, ret) = host_asm();
    format!(
        r#"// A helper class: B imports it.
yamba Scale {{
    int factor = 3;
}}

yamba A {{
    import({isa});
    import(Scale);
    int base = 40;
    long scaled(long x) {{ return x * Scale.factor + base; }}
    void set_base(int b) {{ base = b; }}
    bitstring plus_one {{ asm {{ {plus_one} }} }}
    bitstring<long f(long v)> add_k(long k) {{
        asm {{ {add_k} }}
        asm {{ {ret} }}
    }}
}}
"#
    )
}

/// b.yamba: class B imports A; `include` says where A is, or both files
/// are named on the command line.
fn b_text(include: bool) -> String {
    let (_, _, twice, _, ret) = host_asm();
    format!(
        r#"{inc}yamba B {{
    import(A);
    long from_a = A.base + 2;
    bitstring<long g(long v)> twice_plus_one(int m) {{
        asm {{ {twice} }}
        A.plus_one
        asm {{ {ret} }}
    }}
    long compute() {{
        return A.scaled(2) + A.add_k(5)(10) + twice_plus_one(0)(20);
    }}
    long rebased() {{
        A.set_base(100);
        return A.scaled(2);
    }}
    void benchmark() {{ compute(); }}
}}
"#,
        inc = if include {
            "include \"a.yamba\";\n\n"
        } else {
            ""
        }
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn load(paths: &[PathBuf]) -> Program {
    match Program::load(paths) {
        Ok((p, _)) => p,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn b_imports_a_from_another_file_and_runs_its_function_and_bitstrings() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yamba", &a_text());
    let b = write(dir.path(), "b.yamba", &b_text(true));
    let prog = load(&[b]);
    let mut inst = Instance::new(&prog, "B", &BTreeMap::new(), dir.path().into()).unwrap();
    // A's data initialised before B's: 40 + 2.
    assert_eq!(inst.data("from_a"), Some(42));
    // A.scaled(2) = 2·3 + 40 = 46 (A reads its own import, Scale);
    // A.add_k(5)(10) = 15, machine code A generated; twice_plus_one(0)(20)
    // = 20 + 20 + 1, with A.plus_one's bytes inside B's code.
    let v = yamba_lang::runner::call_c(&mut inst, "compute", &[]).unwrap();
    assert_eq!(v, 46 + 15 + 41);
    // A's data is A's: its own function changes it, B sees the change.
    let v = yamba_lang::runner::call_c(&mut inst, "rebased", &[]).unwrap();
    assert_eq!(v, 2 * 3 + 100);
    // Steps of A's C function count as B's (the runner compares them).
    let before = inst.steps;
    yamba_lang::runner::call_c(&mut inst, "rebased", &[]).unwrap();
    assert!(inst.steps - before >= 6, "{}", inst.steps - before);
    // The listing names where A's bytes came from.
    let code = inst.generate("twice_plus_one", &[0]).unwrap();
    let listing = code.listing(false);
    assert!(listing.contains("/* A.plus_one */\n"), "{listing}");
    // Both generated functions are the instance's (the W^X evidence reads them).
    let labels: Vec<String> = inst.generated().iter().map(|c| c.label.clone()).collect();
    assert_eq!(labels, ["A.add_k(5)", "B.twice_plus_one(0)"]);
}

/// B's C parts compiled (the runtime path), A's too: A's function called
/// directly and A's data read from A's words, A's code (generated through
/// the interpreter's instance of A) called from compiled code; the values
/// are the interpreter's.
fn compiled_code_reaches_an_imported_classs_members(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yamba", &a_text());
    let mut b = b_text(true);
    b = b.replace(
        "    void benchmark()",
        "    long base_now() { return A.base; }\n    void benchmark()",
    );
    let b = write(dir.path(), "b.yamba", &b);
    let prog = load(&[b]);
    let mut inst = Instance::new(&prog, "B", &BTreeMap::new(), dir.path().into()).unwrap();
    inst.compile_c_with(backend).unwrap();
    assert!(inst.is_compiled());
    let call = |inst: &mut Instance, f: &str| yamba_lang::runner::call_c(inst, f, &[]).unwrap();
    assert_eq!(call(&mut inst, "compute"), 46 + 15 + 41);
    assert_eq!(call(&mut inst, "base_now"), 40);
    assert_eq!(call(&mut inst, "rebased"), 2 * 3 + 100);
    assert_eq!(call(&mut inst, "base_now"), 100);
    // A's function ran compiled (called directly from B's code): no
    // interpreter step, where the interpreter takes at least 6.
    let before = inst.steps;
    call(&mut inst, "rebased");
    assert_eq!(inst.steps - before, 0);
}

/// lib.yamba for the tests below: `Leaf` (imported by A), `A` (imported
/// by B) with C functions of every width, data A's functions write, calls
/// nested inside A and into Leaf, A's own generated code, a host
/// function, and each runtime error; b2.yamba: `B`, which reaches them.
fn lib_texts() -> (String, String) {
    let (isa, add_k, _, _, ret) = host_asm();
    // A's own C function g, called while generating (the interpreter
    // runs it: A's compiled code is running).
    let add_g = add_k.replace("{k}", "{g(k)}");
    let lib = format!(
        r#"yamba Leaf {{
    int scale = 3;
    long mul(long x) {{ return x * scale; }}
    long div(long a, long b) {{ return a / b; }}
    void set_scale(int s) {{ scale = s; }}
}}

yamba A {{
    import({isa});
    import(posix);
    import(Leaf);
    long total;
    short last = -1;
    byte_t * buf;
    long * nothing;
    unsigned char uc(unsigned char x) {{ return x + 1; }}
    char sc(char x) {{ return x - 1; }}
    short ss(short x) {{ return x * 2; }}
    unsigned short us(unsigned short x) {{ return x * 3; }}
    int si(int a, int b) {{ return a * b; }}
    unsigned int ui(unsigned int a) {{ return a + 7; }}
    long sl(long a, long b, long c) {{ return a * b - c; }}
    unsigned long ul(unsigned long a) {{ return a / 2 + 1; }}
    long add(long x) {{ total += x; last = x; return total; }}
    long g(long x) {{ return x + 1; }}
    long f(long x) {{ return g(x) * 2 + Leaf.mul(x); }}
    long ratio(long a, long b) {{ return a / b; }}
    long deep(long n) {{ if (n == 0) {{ return 0; }} return deep(n - 1) + 1; }}
    long peek(long * p) {{ return *p; }}
    long leaf_div(long a, long b) {{ return Leaf.div(a, b); }}
    long rescale(int s) {{ Leaf.set_scale(s); return Leaf.scale; }}
    long gen(long v) {{ return add_k(5)(v) + add_k(v)(1); }}
    long gen2(long v) {{ long r = add_g(4)(v); return r + add_k(v)(0); }}
    long put(long n, long i, long v) {{ buf = posix.malloc(n); buf[i] = v; return buf[i] + 1; }}
    long spin(long n) {{
        long s = 0;
        for (long i = 0; i < n; i++) {{ s += i ^ (s >> 3); }}
        return s;
    }}
    bitstring<long f(long v)> add_k(long k) {{
        asm {{ {add_k} }}
        asm {{ {ret} }}
    }}
    bitstring<long f(long v)> add_g(long k) {{
        asm {{ {add_g} }}
        asm {{ {ret} }}
    }}
}}
"#
    );
    let b = r#"include "lib.yamba";

yamba B {
    import(A);
    long uc(long x) { return A.uc(x); }
    long sc(long x) { return A.sc(x); }
    long ss(long x) { return A.ss(x); }
    long us(long x) { return A.us(x); }
    long si(long x) { return A.si(x, x + 3); }
    long ui(long x) { return A.ui(x); }
    long sl(long x) { return A.sl(x, 3, x - 1); }
    long ul(long x) { return A.ul(x); }
    long add(long x) { long t = A.add(x); return t * 1000 + A.total - A.last; }
    long total() { return A.total; }
    long last() { return A.last; }
    long f(long x) { return A.f(x); }
    long ratio(long a, long b) { return A.ratio(a, b); }
    long deep(long n) { return A.deep(n); }
    long peek() { return A.peek(A.nothing); }
    long leaf_div(long a, long b) { return A.leaf_div(a, b); }
    long rescale(long s) { return A.rescale(s) + A.f(1); }
    long gen(long v) { return A.gen(v); }
    long gen2(long v) { return A.gen2(v); }
    long put(long n, long i, long v) { return A.put(n, i, v); }
    long spin(long n) { return A.spin(n); }
}
"#;
    (lib, b.to_string())
}

/// What `f(args)` gives (value or error), compiled and interpreted, for
/// each argument list in turn (the instances keep their data between
/// calls, as a run does).
fn compare(
    b: Backend,
    prog: &Program,
    dir: &Path,
    calls: &[(&str, Vec<i64>)],
) -> Vec<Result<i64, String>> {
    let mut interp = Instance::new(prog, "B", &BTreeMap::new(), dir.into()).unwrap();
    let mut comp = Instance::new(prog, "B", &BTreeMap::new(), dir.into()).unwrap();
    comp.compile_c_with(b).unwrap();
    let mut out = Vec::new();
    for (f, args) in calls {
        let i = yamba_lang::runner::call_c(&mut interp, f, args);
        let steps = comp.steps;
        let c = yamba_lang::runner::call_c(&mut comp, f, args);
        assert_eq!(c, i, "{f}{args:?}: compiled, interpreted");
        // A's functions ran compiled: no interpreter step inside B's call.
        assert_eq!(comp.steps, steps, "{f}{args:?}: interpreter steps");
        out.push(c);
    }
    out
}

fn an_imported_classs_c_functions_run_compiled_with_the_interpreters_values(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (lib, b) = lib_texts();
    write(dir.path(), "lib.yamba", &lib);
    let prog = load(&[write(dir.path(), "b2.yamba", &b)]);
    // Arguments across every width's boundary, converted at A's entry.
    let grid = [
        0,
        1,
        -1,
        127,
        128,
        255,
        256,
        -129,
        32767,
        32768,
        65535,
        65536,
        i32::MAX as i64,
        i32::MIN as i64,
        u32::MAX as i64,
        1 << 32,
        i64::MAX,
        i64::MIN,
    ];
    let mut calls = Vec::new();
    for f in ["uc", "sc", "ss", "us", "si", "ui", "sl", "ul", "f"] {
        for x in grid {
            calls.push((f, vec![x]));
        }
    }
    let got = compare(backend, &prog, dir.path(), &calls);
    // A few known values: 255 + 1 as unsigned char is 0; 128 as char is
    // -128, minus 1 wraps to 127; 32768 as short is -32768, doubled 0.
    let at = |f: &str, x: i64| {
        let k = calls
            .iter()
            .position(|(g, a)| *g == f && a[0] == x)
            .unwrap();
        got[k].clone().unwrap()
    };
    assert_eq!(at("uc", 255), 0);
    assert_eq!(at("sc", 128), 127);
    assert_eq!(at("ss", 32768), 0);
    assert_eq!(at("us", 65535), (65535 * 3) & 0xffff);
    assert_eq!(at("ui", u32::MAX as i64), 6);
    // A.f(x) = A.g(x)·2 + Leaf.mul(x) = (x + 1)·2 + 3x: nested in A, and
    // one level further into Leaf.
    assert_eq!(at("f", 256), 257 * 2 + 3 * 256);
}

fn data_an_imported_class_writes_compiled_is_what_its_importer_reads(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (lib, b) = lib_texts();
    write(dir.path(), "lib.yamba", &lib);
    let prog = load(&[write(dir.path(), "b2.yamba", &b)]);
    let calls: Vec<(&str, Vec<i64>)> = vec![
        ("total", vec![]),
        ("last", vec![]),
        ("add", vec![5]),
        ("add", vec![70000]),
        ("total", vec![]),
        ("last", vec![]),
        // Leaf's data set by Leaf's function called from A, read by A
        // (Leaf.scale) and by Leaf.mul inside A.f: 7 + (2·2 + 7).
        ("rescale", vec![7]),
        ("f", vec![1]),
        // A's generated code called from A's compiled code (once with
        // A's C function g called while generating: interpreted, as A's
        // code is running); a host function (posix.malloc) called from it.
        ("gen", vec![10]),
        ("gen", vec![10]),
        ("gen2", vec![10]),
        ("gen2", vec![20]),
        ("put", vec![64, 3, 41]),
    ];
    let got = compare(backend, &prog, dir.path(), &calls);
    let want = [
        0,
        -1,
        5 * 1000,
        // 70005·1000 + 70005 − (short)70000 (= 4464).
        70005 * 1000 + 70005 - 4464,
        70005,
        4464,
        7 + 11,
        11,
        15 + 11,
        15 + 11,
        10 + 5 + 10,
        20 + 5 + 20,
        42,
    ];
    let got: Vec<i64> = got.into_iter().map(Result::unwrap).collect();
    assert_eq!(got, want);
}

/// The `file:line:col` of a run-time error's message.
fn run_location(message: &str) -> String {
    let arrow = message.find("┌─ ").expect("a location");
    message[arrow + "┌─ ".len()..]
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_string()
}

fn errors_inside_an_imported_classs_compiled_code_are_the_interpreters(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (lib, b) = lib_texts();
    write(dir.path(), "lib.yamba", &lib);
    let prog = load(&[write(dir.path(), "b2.yamba", &b)]);
    // Each error after a good call, and a good call after each error (the
    // class runs on).
    let calls: Vec<(&str, Vec<i64>)> = vec![
        ("ratio", vec![7, 2]),
        ("ratio", vec![7, 0]),
        ("leaf_div", vec![9, 0]),
        ("deep", vec![255]),
        ("deep", vec![256]),
        ("peek", vec![]),
        ("put", vec![0, 0, 0]),
        ("ratio", vec![9, 3]),
    ];
    let got = compare(backend, &prog, dir.path(), &calls);
    let base = format!("{}/", dir.path().display());
    let err = |k: usize| {
        let e: String = got[k].clone().unwrap_err();
        (
            e.lines().next().unwrap().to_string(),
            run_location(&e).replace(&base, ""),
        )
    };
    let line_col = |needle: &str, nth: usize| {
        let at = lib.match_indices(needle).nth(nth).unwrap().0;
        let line = lib[..at].matches('\n').count() + 1;
        let col = at - lib[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
        format!("lib.yamba:{line}:{col}")
    };
    assert_eq!(got[0], Ok(3));
    assert_eq!(
        err(1),
        ("error: division by zero".into(), line_col("a / b", 1))
    );
    // Two levels down, in Leaf.
    assert_eq!(
        err(2),
        ("error: division by zero".into(), line_col("a / b", 0))
    );
    // 256 nested calls of A.deep are allowed, the 257th is not (A's count,
    // not B's: B's own call does not count).
    assert_eq!(got[3], Ok(255));
    assert_eq!(
        err(4),
        (
            "error: calls nest deeper than 256".into(),
            line_col("deep(long n)", 0)
        )
    );
    assert_eq!(err(5), ("error: null pointer".into(), line_col("*p", 0)));
    assert_eq!(
        err(6),
        (
            "error: posix.malloc: posix.malloc(0): want 1 byte to 1 GiB".into(),
            line_col("posix.malloc(n)", 0)
        )
    );
    assert_eq!(got[7], Ok(3));
}

/// A loop inside A's function, 10⁶ iterations: compiled it takes no
/// interpreter step and runs at least 10× faster than interpreted (both
/// timed in this run; the ratio, not a time, is asserted).
fn an_imported_classs_loop_runs_native_inside_compiled_code(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (lib, b) = lib_texts();
    write(dir.path(), "lib.yamba", &lib);
    let prog = load(&[write(dir.path(), "b2.yamba", &b)]);
    let mut interp = Instance::new(&prog, "B", &BTreeMap::new(), dir.path().into()).unwrap();
    let mut comp = Instance::new(&prog, "B", &BTreeMap::new(), dir.path().into()).unwrap();
    comp.compile_c_with(backend).unwrap();
    let n = 1_000_000;
    let time = |inst: &mut Instance| {
        let (t, s) = (std::time::Instant::now(), inst.steps);
        let v = yamba_lang::runner::call_c(inst, "spin", &[n]).unwrap();
        (v, t.elapsed().as_secs_f64(), inst.steps - s)
    };
    let (vi, ti, si) = time(&mut interp);
    // Best of three compiled runs (the first maps nothing new, but the
    // machine is shared).
    let (vc, tc, sc) = (0..3)
        .map(|_| time(&mut comp))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!(vc, vi);
    // The interpreter counts its steps: millions, compiled none.
    assert!(si > 3 * n as u64, "{si}");
    assert_eq!(sc, 0);
    let ratio = ti / tc;
    eprintln!(
        "A.spin(10^6), {backend:?}: interpreted {ti:.4} s, compiled {tc:.6} s, ratio {ratio:.0}"
    );
    assert!(ratio >= 10.0, "interpreted {ti} s, compiled {tc} s");
}

#[test]
fn the_files_named_on_the_command_line_are_one_program() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.yamba", &a_text());
    let b = write(dir.path(), "b.yamba", &b_text(false));
    // Without a.yamba, A is unknown: one error, at the import, not one
    // more at each use of A.
    let err = Program::load(std::slice::from_ref(&b)).unwrap_err();
    let d: Vec<_> = err.diags.iter().filter(|d| !d.warning).collect();
    assert_eq!(d.len(), 1, "{err}");
    assert_eq!(d[0].message, "import of unknown class 'A'");
    assert!(err.rendered.contains("b.yamba:2:12"), "{err}");
    let prog = load(&[b, a]);
    let mut inst = Instance::new(&prog, "B", &BTreeMap::new(), dir.path().into()).unwrap();
    let v = yamba_lang::runner::call_c(&mut inst, "compute", &[]).unwrap();
    assert_eq!(v, 102);
}

/// One file's errors: each (message, file:line:col), exactly, in order.
fn errors_of(files: &[(&str, &str)]) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = files.iter().map(|(n, t)| write(dir.path(), n, t)).collect();
    let err = Program::load(&paths[..1]).unwrap_err();
    let mut v: Vec<(String, String)> = err
        .diags
        .iter()
        .filter(|d| !d.warning)
        .map(|d| {
            let at = location(&err.rendered, &d.message);
            (d.message.clone(), at)
        })
        .collect();
    // In source order: by file, line and column as numbers.
    v.sort_by_key(|(_, at)| {
        let mut p = at.rsplitn(3, ':');
        let col: u32 = p.next().unwrap().parse().unwrap();
        let line: u32 = p.next().unwrap().parse().unwrap();
        (p.next().unwrap().to_string(), line, col)
    });
    // Paths shown relative to the folder.
    let base = format!("{}/", dir.path().display());
    v.into_iter()
        .map(|(m, at)| (m, at.replace(&base, "")))
        .collect()
}

/// The `file:line:col` rendered under the error with this message.
fn location(rendered: &str, message: &str) -> String {
    let at = rendered
        .find(&format!("error: {message}"))
        .unwrap_or_else(|| panic!("no {message:?} in:\n{rendered}"));
    let rest = &rendered[at..];
    let arrow = rest.find("┌─ ").expect("a location");
    rest[arrow + "┌─ ".len()..]
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_string()
}

fn one_error(files: &[(&str, &str)]) -> (String, String) {
    let v = errors_of(files);
    assert_eq!(v.len(), 1, "{v:#?}");
    v.into_iter().next().unwrap()
}

#[test]
fn an_unknown_class_is_an_error_at_the_import() {
    let (msg, at) = one_error(&[("b.yamba", "yamba B {\n    import(Nowhere);\n}\n")]);
    assert_eq!(msg, "import of unknown class 'Nowhere'");
    assert_eq!(at, "b.yamba:2:12");
}

#[test]
fn a_class_importing_itself_is_an_error() {
    let (msg, at) = one_error(&[("b.yamba", "yamba B {\n    int x;\n    import(B);\n}\n")]);
    assert_eq!(
        msg,
        "class B imports itself: a class uses its own members by their names"
    );
    assert_eq!(at, "b.yamba:3:12");
}

#[test]
fn an_import_cycle_across_files_is_named_once() {
    let a = "include \"c.yamba\";\nyamba A {\n    import(C);\n    int a = 1;\n}\n";
    let c = "yamba C {\n    int c = 2;\n    import(B);\n}\n";
    let b = "include \"a.yamba\";\nyamba B {\n    import(A);\n}\n";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yamba", a);
    write(dir.path(), "c.yamba", c);
    let f = write(dir.path(), "b.yamba", b);
    let err = Program::load(&[f]).unwrap_err();
    let d: Vec<_> = err.diags.iter().filter(|d| !d.warning).collect();
    assert_eq!(d.len(), 1, "{}", err.rendered);
    // Named from the first class of the program (the file named first),
    // round to it; the other imports located in notes.
    assert_eq!(d[0].message, "import cycle: B -> A -> C -> B");
    assert_eq!(
        location(&err.rendered, &d[0].message),
        format!("{}/b.yamba:3:12", dir.path().display())
    );
    let here = dir.path().display();
    assert_eq!(
        d[0].notes,
        [
            format!("A imports C at {here}/a.yamba:3:12"),
            format!("C imports B at {here}/c.yamba:3:12"),
        ]
    );
}

#[test]
fn a_two_class_cycle_in_one_file_has_its_exact_message() {
    let text = "yamba P {\n    import(Q);\n}\nyamba Q {\n    import(P);\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "pq.yamba", text);
    let err = Program::load(&[f]).unwrap_err();
    let d: Vec<_> = err.diags.iter().filter(|d| !d.warning).collect();
    assert_eq!(d.len(), 1, "{}", err.rendered);
    assert_eq!(d[0].message, "import cycle: P -> Q -> P");
    assert!(err.rendered.contains("pq.yamba:2:12"), "{}", err.rendered);
    assert!(
        d[0].notes[0].starts_with("Q imports P at ") && d[0].notes[0].ends_with("pq.yamba:5:12"),
        "{:?}",
        d[0].notes
    );
}

#[test]
fn a_base_importing_its_derived_class_is_a_cycle_through_the_base() {
    let text =
        "yamba Base {\n    import(D);\n    int x;\n}\nyamba D extends Base {\n    int y;\n}\n";
    let (msg, at) = one_error(&[("d.yamba", text)]);
    assert_eq!(
        msg,
        "D imports D through its base Base: an instance of D would hold one of itself"
    );
    assert_eq!(at, "d.yamba:2:12");
}

#[test]
fn importing_an_abstract_class_is_an_error_naming_what_it_leaves_undefined() {
    let a = "yamba abstract T {\n    bitstring body;\n    int n;\n}\nyamba T1 extends T {\n    bitstring body { 0x90 }\n}\n";
    let b = "include \"a.yamba\";\nyamba B {\n    int k;\n    import(T);\n}\n";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yamba", a);
    let f = write(dir.path(), "b.yamba", b);
    let err = Program::load(&[f]).unwrap_err();
    let d: Vec<_> = err.diags.iter().filter(|d| !d.warning).collect();
    assert_eq!(d.len(), 1, "{}", err.rendered);
    assert_eq!(
        d[0].message,
        "cannot import abstract class T: it leaves bitstring body undefined"
    );
    assert!(err.rendered.contains("b.yamba:4:12"), "{}", err.rendered);
    assert!(
        d[0].notes
            .iter()
            .any(|n| n == "concrete classes extending it: T1"),
        "{:?}",
        d[0].notes
    );
}

#[test]
fn an_import_named_like_an_inherited_member_is_ambiguous() {
    let text = "yamba H {\n    int v = 1;\n}\nyamba Base {\n    int H;\n}\nyamba D extends Base {\n    import(H);\n}\n";
    let (msg, at) = one_error(&[("h.yamba", text)]);
    assert_eq!(
        msg,
        "import(H) is ambiguous: D also has a member H, inherited from Base, so H.… could name either"
    );
    assert_eq!(at, "h.yamba:8:12");
}

#[test]
fn a_member_named_like_a_class_its_base_imports_is_ambiguous() {
    let text = "yamba H {\n    int v = 1;\n}\nyamba Base {\n    import(H);\n}\nyamba D extends Base {\n    long H() { return 1; }\n}\n";
    let (msg, at) = one_error(&[("h.yamba", text)]);
    assert_eq!(
        msg,
        "member H is ambiguous: Base imports class H, so H.… could name either"
    );
    assert_eq!(at, "h.yamba:8:10");
}

#[test]
fn members_of_two_imports_and_the_class_itself_do_not_clash() {
    // Each import's `f` is named through its class; the class's own `f`
    // by its name alone.
    let text = "yamba P {\n    long f() { return 1; }\n}\nyamba Q {\n    long f() { return 20; }\n}\nyamba U {\n    import(P);\n    import(Q);\n    long f() { return 300 + P.f() + Q.f(); }\n}\n";
    let (prog, _) = Program::from_text("u.yamba", text).unwrap();
    let mut inst = Instance::new(&prog, "U", &BTreeMap::new(), std::env::temp_dir()).unwrap();
    assert_eq!(
        yamba_lang::runner::call_c(&mut inst, "f", &[]).unwrap(),
        321
    );
}

#[test]
fn uses_of_an_imported_class_get_located_errors() {
    let text = "yamba P {\n    long f(long x) { return x; }\n    int d = 4;\n    bitstring b { 0x90 }\n}\nyamba U {\n    import(P);\n    long g() { return f(1); }\n    long h() { return P.g(1); }\n    void i() { P.d = 3; }\n    long j() { return P.f(1, 2); }\n    long k() { int P = 1; return P.d; }\n    bitstring c { P.d }\n    long l() { return P.b; }\n}\n";
    let v = errors_of(&[("u.yamba", text)]);
    let want: Vec<(String, String)> = [
        ("undeclared function 'f'", "u.yamba:8:23"),
        ("P has no member g", "u.yamba:9:25"),
        (
            "P.d is data of imported class P: only P's own functions assign it (call one, P.f(…))",
            "u.yamba:10:16",
        ),
        ("P.f takes 1 argument(s), given 2", "u.yamba:11:23"),
        (
            "P is a local variable or parameter here, not a class: only an imported class has members named with '.'",
            "u.yamba:12:34",
        ),
        (
            "P.d is not a bitstring (a bitstring body concatenates bitstrings)",
            "u.yamba:13:19",
        ),
        ("P.b is a function or bitstring: call it", "u.yamba:14:23"),
    ]
    .iter()
    .map(|(m, a)| (m.to_string(), a.to_string()))
    .collect();
    assert_eq!(v, want);
    // The unqualified `f` is named the way it can be reached.
    let err = Program::from_text("u.yamba", text).unwrap_err();
    let d = err
        .diags
        .iter()
        .find(|d| d.message == "undeclared function 'f'")
        .unwrap();
    assert_eq!(d.notes, ["f is a member of imported class P: name it P.f"]);
}

/// The tests of compiled imports above for one code generator: the
/// host's, and on x86-64 the C compiler's too (`--backend cc`).
macro_rules! for_backend {
    ($m:ident, $b:expr) => {
        mod $m {
            use super::*;

            #[test]
            fn compiled_code_reaches_an_imported_classs_members() {
                super::compiled_code_reaches_an_imported_classs_members($b)
            }

            #[test]
            fn an_imported_classs_c_functions_run_compiled_with_the_interpreters_values() {
                super::an_imported_classs_c_functions_run_compiled_with_the_interpreters_values($b)
            }

            #[test]
            fn data_an_imported_class_writes_compiled_is_what_its_importer_reads() {
                super::data_an_imported_class_writes_compiled_is_what_its_importer_reads($b)
            }

            #[test]
            fn errors_inside_an_imported_classs_compiled_code_are_the_interpreters() {
                super::errors_inside_an_imported_classs_compiled_code_are_the_interpreters($b)
            }

            #[test]
            fn an_imported_classs_loop_runs_native_inside_compiled_code() {
                super::an_imported_classs_loop_runs_native_inside_compiled_code($b)
            }
        }
    };
}

for_backend!(host_backend, Backend::host());
#[cfg(target_arch = "x86_64")]
for_backend!(cc_backend, Backend::Cc);
