//! `lang check`'s messages that say what was likely meant: the nearest
//! name for a typo, an instruction written outside `asm { }`, a function
//! that can end without returning its value (docs/language.md).

use yamba_lang::Program;

/// A misspelt name gets the name it is likely to be, in a note: a member,
/// a local, an imported class's member, a class to import or extend.
#[test]
fn a_typo_gets_the_name_it_likely_is() {
    let text = "yamba P {\n    long value(long x) { return x; }\n}\nyamba Base {\n    int n;\n}\nyamba U extends Bsae {\n    import(P);\n    import(x86_46);\n    int num_pages = 4;\n    long f() { long total = 1; return totl + num_page + P.valeu(1) + x86_64.page_sise; }\n    void benchmark() { benchmrk(); }\n}\n";
    let err = Program::from_text("u.yamba", text).unwrap_err();
    let note = |msg: &str| -> Vec<String> {
        err.diags
            .iter()
            .find(|d| d.message == msg)
            .unwrap_or_else(|| panic!("no {msg:?} in:\n{}", err.rendered))
            .notes
            .clone()
    };
    assert_eq!(
        note("class U extends unknown class Bsae"),
        ["did you mean Base?"]
    );
    assert_eq!(
        note("import of unknown class 'x86_46'").last().unwrap(),
        "did you mean x86_64?"
    );
    assert_eq!(note("undeclared name 'totl'"), ["did you mean 'total'?"]);
    assert_eq!(
        note("undeclared name 'num_page'"),
        ["did you mean 'num_pages'?"]
    );
    assert_eq!(note("P has no member valeu"), ["did you mean P.value?"]);
    assert_eq!(
        note("undeclared function 'benchmrk'"),
        ["did you mean 'benchmark'?"]
    );
    // x86_64 is not imported: that error comes first, no member guessed.
    assert!(err
        .rendered
        .contains("x86_64 is not imported here: add import(x86_64);"));
    // Nothing near, or a name too short to tell (`x` is one edit from
    // `i`): no note.
    for body in [
        "long f() { return zzz; }",
        "long f() { long i = 0; return x; }",
    ] {
        let text = format!("yamba V {{\n    {body}\n}}\n");
        let err = Program::from_text("v.yamba", &text).unwrap_err();
        assert!(err.diags[0].notes.is_empty(), "{:?}", err.diags[0].notes);
    }
}

/// A function with a value that can end without `return` is warned of,
/// at its name (it would return 0: `long operations()` so would count no
/// operation); one that returns on every path, or loops forever, is not.
#[test]
fn a_function_that_can_end_without_return_is_warned_of() {
    let text = "yamba W {\n    long none() { }\n    long half(long x) { if (x) return 1; }\n    long both(long x) { if (x) return 1; else { return 2; } }\n    long ever() { for (;;) { return 3; } }\n    long leaves() { while (1) { break; } }\n    void nothing() { }\n}\n";
    let (_, warnings) = Program::from_text("w.yamba", text).unwrap();
    let got: Vec<(&str, u32)> = warnings
        .iter()
        .map(|d| (d.message.as_str(), d.span.lo))
        .collect();
    let at = |name: &str| text.find(&format!("{name}(")).unwrap() as u32;
    assert_eq!(
        got,
        [
            (
                "none() returns long but can reach its end without a return (it then returns 0)",
                at("none")
            ),
            (
                "half() returns long but can reach its end without a return (it then returns 0)",
                at("half")
            ),
            (
                "leaves() returns long but can reach its end without a return (it then returns 0)",
                at("leaves")
            ),
        ]
    );
}

/// An instruction written straight into a bitstring body is one error
/// saying where it goes, not one per word and comma.
#[test]
fn an_instruction_outside_asm_is_one_error_saying_where_it_goes() {
    let text = "yamba A {\n    bitstring b {\n        0x90\n        mov eax, [rbx + 8]\n        touch(1, 2)\n    }\n    bitstring touch(int a, int b) { 0x90 }\n}\n";
    let err = Program::from_text("a.yamba", text).unwrap_err();
    let d: Vec<_> = err.diags.iter().filter(|d| !d.warning).collect();
    assert_eq!(d.len(), 1, "{}", err.rendered);
    assert_eq!(
        d[0].message,
        "an instruction outside asm { }: a bitstring body concatenates pieces; write asm { mov eax, [rbx + 8] }"
    );
    assert!(err.rendered.contains("a.yamba:4:9"), "{}", err.rendered);
    // The caret runs under the whole instruction.
    assert!(
        err.rendered
            .contains(&format!("{}^{}", " ".repeat(9), "^".repeat(17))),
        "{}",
        err.rendered
    );
}
