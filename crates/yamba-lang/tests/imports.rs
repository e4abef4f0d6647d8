//! Imports of user classes across files (docs/language.md, "Imported
//! classes"): class B in b.yamba imports class A of a.yamba and uses A's
//! data, C function and bitstrings — run for real, the value known; and
//! each error of an import, with its message and its place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yamba_lang::{Instance, Program};

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

/// B's C parts compiled (the runtime path): A's function and A's data
/// reached through the interpreter's instance of A, A's code called from
/// compiled code; the values are the interpreter's.
#[test]
fn compiled_code_reaches_an_imported_classs_members() {
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
    inst.compile_c().unwrap();
    assert!(inst.is_compiled());
    let call = |inst: &mut Instance, f: &str| yamba_lang::runner::call_c(inst, f, &[]).unwrap();
    assert_eq!(call(&mut inst, "compute"), 46 + 15 + 41);
    assert_eq!(call(&mut inst, "base_now"), 40);
    assert_eq!(call(&mut inst, "rebased"), 2 * 3 + 100);
    assert_eq!(call(&mut inst, "base_now"), 100);
    // A's function ran in the interpreter: its steps are counted.
    let before = inst.steps;
    call(&mut inst, "rebased");
    assert!(inst.steps - before >= 6, "{}", inst.steps - before);
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
