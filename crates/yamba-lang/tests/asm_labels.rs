//! Labels and branches inside `asm { }` (docs/language.md, "asm blocks").
//! Ground truth: loops whose count is visible in the result, forward
//! branches that skip an addition (the sum says whether it ran), label
//! offsets summed from the lengths of the instructions before them, each
//! assembled alone, and error places found in the source text.

use std::collections::BTreeMap;
use std::rc::Rc;
use yamba_lang::{Compiled, Instance, Isa, Program};

/// A class of `isa` with one bitstring function `code(a, b)` per entry of
/// `bodies` (name, pieces).
fn class(isa: &str, bodies: &[(&str, &str)]) -> String {
    let mut s = format!("yamba L\n{{\n    import({isa});\n");
    for (name, pieces) in bodies {
        s.push_str(&format!(
            "    bitstring<long f(long a, long b)> {name}\n    {{\n{pieces}\n    }}\n"
        ));
    }
    s.push_str("}\n");
    s
}

fn generate(text: &str, func: &str) -> Rc<Compiled> {
    let (prog, _) = Program::from_text("l.yamba", text).unwrap_or_else(|e| panic!("{e}"));
    let prog = Box::leak(Box::new(prog));
    let mut inst =
        Instance::new(prog, "L", &BTreeMap::new(), std::env::temp_dir()).expect("instance");
    inst.generate(func, &[]).expect("generate")
}

/// Sum of the lengths of `lines`, each assembled alone.
fn len_of(isa: Isa, lines: &[&str]) -> usize {
    lines
        .iter()
        .map(|l| isa.assemble_line(l).unwrap().len())
        .sum()
}

/// A branch target as the x86-64 listing shows it (iced: small numbers
/// in decimal).
fn shown(n: usize) -> String {
    if n < 10 {
        n.to_string()
    } else {
        format!("0x{n:x}")
    }
}

/// `file:line:col` of the `nth` occurrence of `needle` in `text`.
fn place(text: &str, needle: &str, nth: usize) -> String {
    let at = text.match_indices(needle).nth(nth).expect("needle").0;
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    format!("l.yamba:{line}:{col}")
}

/// a + 100 + b: the `add rax, 100` before the label runs once, the loop b
/// times. A branch to the block's start instead would add 101 per pass.
const X86_LOOP: &str = "
        asm { mov rax, rdi
              mov rcx, rsi }
        asm {
              add rax, 100
        top:
              add rax, 1
              dec rcx
              jnz top
        }
        asm { ret }";

/// a + 1 + (1000 unless b == 0) + (20000 unless b == 2): `skip` stands
/// before an instruction (on its line), `done` ends the block.
const X86_FORWARD: &str = "
        asm { mov rax, rdi
              test rsi, rsi }
        asm {
              jz skip
              add rax, 1000
        skip: add rax, 1
              cmp rsi, 2
              je done
              add rax, 20000
        done:
        }
        asm { ret }";

/// Runs x86-64 code: built for x86-64 hosts only, as the aarch64 loop's
/// run is for aarch64 (its assembly and listing are checked everywhere).
#[cfg(target_arch = "x86_64")]
#[test]
fn x86_64_backward_loop_runs_its_count() {
    let code = generate(&class("x86_64", &[("count", X86_LOOP)]), "count");
    assert_eq!(code.call(&[5, 10]).unwrap(), 5 + 100 + 10);
    assert_eq!(code.call(&[0, 1]).unwrap(), 101);
    assert_eq!(code.call(&[7, 300]).unwrap(), 7 + 100 + 300);
}

/// Runs x86-64 code: built for x86-64 hosts only, as the aarch64 loop's
/// run is for aarch64 (its assembly and listing are checked everywhere).
#[cfg(target_arch = "x86_64")]
#[test]
fn x86_64_forward_branches_skip_what_they_jump_over() {
    let code = generate(&class("x86_64", &[("fwd", X86_FORWARD)]), "fwd");
    assert_eq!(code.call(&[5, 0]).unwrap(), 5 + 1 + 20000);
    assert_eq!(code.call(&[5, 1]).unwrap(), 5 + 1000 + 1 + 20000);
    assert_eq!(code.call(&[5, 2]).unwrap(), 5 + 1000 + 1);
}

#[test]
fn x86_64_loop_disassembles_as_a_short_branch_to_the_label() {
    let code = generate(&class("x86_64", &[("count", X86_LOOP)]), "count");
    let isa = Isa::X86_64;
    let top = len_of(isa, &["mov rax, rdi", "mov rcx, rsi", "add rax, 100"]);
    let insns = isa.disassemble(&code.bytes);
    let jnz = insns.iter().find(|i| i.text.starts_with("jne")).unwrap();
    assert_eq!(jnz.text, format!("jne short {}", shown(top)), "{insns:?}");
    assert_eq!(jnz.len, 2, "the encoder chose the short form");
    let after = len_of(isa, &["add rax, 1", "dec rcx"]);
    assert_eq!(jnz.offset, top + after, "{insns:?}");
    assert!(code
        .listing(false)
        .contains(&format!("jne short {}", shown(top))));
}

#[test]
fn x86_64_forward_branches_land_after_what_they_skip() {
    let code = generate(&class("x86_64", &[("fwd", X86_FORWARD)]), "fwd");
    let isa = Isa::X86_64;
    let start = len_of(isa, &["mov rax, rdi", "test rsi, rsi"]);
    let skip = start + 2 + len_of(isa, &["add rax, 1000"]);
    let done =
        skip + len_of(isa, &["add rax, 1", "cmp rsi, 2"]) + 2 + len_of(isa, &["add rax, 20000"]);
    let texts: Vec<String> = isa
        .disassemble(&code.bytes)
        .into_iter()
        .map(|i| i.text)
        .collect();
    assert!(
        texts.contains(&format!("je short {}", shown(skip))),
        "{texts:?}"
    );
    assert!(
        texts.contains(&format!("je short {}", shown(done))),
        "{texts:?}"
    );
    // `done` ends its block: the next block's ret is what it reaches.
    assert_eq!(code.bytes[done], 0xc3);
    assert_eq!(code.bytes.len(), done + 1);
}

#[test]
fn x86_64_condition_synonyms_loop_and_far_branches() {
    let body = "
        asm { mov rax, rdi
              mov rcx, rsi
        top:  add rax, 3
              loop top
              jmp over
              {pad}
        over: ret }";
    let pad = "nop\n".repeat(200);
    let text = class("x86_64", &[("f", &body.replace("{pad}", &pad))]);
    let code = generate(&text, "f");
    let texts: Vec<String> = Isa::X86_64
        .disassemble(&code.bytes)
        .into_iter()
        .map(|i| i.text)
        .collect();
    let top = len_of(Isa::X86_64, &["mov rax, rdi", "mov rcx, rsi"]);
    assert!(texts.contains(&format!("loop {}", shown(top))), "{texts:?}");
    let over = code.bytes.len() - 1;
    assert!(texts.contains(&format!("jmp {}", shown(over))), "{texts:?}");
    // Beyond a short jump's reach: the encoder chose the near form.
    let jmp = Isa::X86_64
        .disassemble(&code.bytes)
        .into_iter()
        .find(|i| i.text.starts_with("jmp"));
    assert_eq!(jmp.unwrap().len, 5);
    if Isa::host() == Some(Isa::X86_64) {
        assert_eq!(code.call(&[1, 4]).unwrap(), 13);
    }
}

#[test]
fn a_label_on_a_line_with_an_interpolation_counts() {
    let text = "yamba L\n{\n    import(x86_64);\n    int step = 7;\n    \
        bitstring<long f(long a, long b)> f\n    {\n        \
        asm { mov rax, rdi\n              mov rcx, rsi\n        \
        top: add rax, {step}\n              dec rcx\n              jnz top\n              ret }\n    }\n}\n";
    let code = generate(text, "f");
    let top = len_of(Isa::X86_64, &["mov rax, rdi", "mov rcx, rsi"]);
    let texts: Vec<String> = Isa::X86_64
        .disassemble(&code.bytes)
        .into_iter()
        .map(|i| i.text)
        .collect();
    assert!(
        texts.contains(&format!("jne short {}", shown(top))),
        "{texts:?}"
    );
    assert!(texts.contains(&"add rax, 7".to_string()), "{texts:?}");
    if Isa::host() == Some(Isa::X86_64) {
        assert_eq!(code.call(&[1, 3]).unwrap(), 22);
    }
}

/// The same loop for aarch64, with every branch kind: b.ne back to `top`,
/// cbnz/tbnz/cbz/b forward, the last to the end of the block.
const A64_LOOP: &str = "
        asm { add x0, x0, #100
        top:  add x0, x0, #1
              subs x1, x1, #1
              b.ne top
              cbnz x1, done
              tbnz x1, #0, done
              cbz x1, done
              b top
        done:
        }
        asm { ret }";

#[test]
fn aarch64_loop_assembles_with_branches_to_the_labels() {
    let code = generate(&class("aarch64", &[("count", A64_LOOP)]), "count");
    let texts: Vec<String> = Isa::Aarch64
        .disassemble(&code.bytes)
        .into_iter()
        .map(|i| i.text)
        .collect();
    // Fixed 4-byte words: top at 4, the b.ne at 12, done at 32.
    assert_eq!(texts.len(), 9, "{texts:?}");
    assert_eq!(code.bytes.len(), 36);
    let target = |i: usize| {
        let t = &texts[i];
        let rel = t.rsplit(' ').next().unwrap();
        (t.clone(), rel.to_string())
    };
    // yaxpeax prints the displacement from the branch: $-0x8 / $+0x14.
    for (i, to) in [(3, 4i64), (4, 32), (5, 32), (6, 32), (7, 4)] {
        let (t, rel) = target(i);
        let want = to - 4 * i as i64;
        let shown = if want < 0 {
            format!("$-0x{:x}", -want)
        } else {
            format!("$+0x{want:x}")
        };
        assert_eq!(rel, shown, "instruction {i}: {t} in {texts:?}");
    }
    assert!(texts[3].starts_with("b.ne"), "{texts:?}");
    #[cfg(target_arch = "aarch64")]
    {
        // b = 10: the loop runs to 0; cbz then jumps to done.
        assert_eq!(code.call(&[5, 10]).unwrap(), 5 + 100 + 10);
    }
}

#[test]
fn aarch64_cbz_reaches_past_tbzs_reach() {
    let pad = "nop\n".repeat(10_000);
    let body = format!("        asm {{ cbz x0, far\n{pad} far: ret }}");
    let code = generate(&class("aarch64", &[("f", &body)]), "f");
    let first = &Isa::Aarch64.disassemble(&code.bytes[..4])[0].text;
    assert_eq!(first, &format!("cbz x0, $+0x{:x}", 4 + 4 * 10_000));
    assert_eq!(code.bytes.len(), 4 * 10_002);
}

/// The one error of `body` (an x86-64 or aarch64 class), rendered.
fn error_of(isa: &str, body: &str) -> String {
    let text = class(isa, &[("f", body)]);
    let err = Program::from_text("l.yamba", &text).unwrap_err();
    let errors: Vec<_> = err.diags.iter().filter(|d| !d.warning).collect();
    assert_eq!(errors.len(), 1, "{}", err.rendered);
    err.rendered
}

fn assert_error(isa: &str, body: &str, message: &str, needle: &str, nth: usize) {
    let text = class(isa, &[("f", body)]);
    let got = error_of(isa, body);
    assert!(got.contains(message), "want {message:?} in:\n{got}");
    let at = place(&text, needle, nth);
    assert!(got.contains(&at), "want {at} in:\n{got}");
}

#[test]
fn an_undefined_label_is_a_located_error() {
    let body = "        asm { dec ecx\n              jnz nowhere }";
    let msg = "x86_64 asm: label 'nowhere' is not defined in this asm block";
    assert_error("x86_64", body, msg, "nowhere", 0);
    let body = "        asm { subs x1, x1, #1\n              cbz x1, nowhere }";
    let msg = "aarch64 asm: label 'nowhere' is not defined in this asm block";
    assert_error("aarch64", body, msg, "nowhere", 0);
}

#[test]
fn a_label_defined_twice_is_a_located_error_naming_the_first() {
    let body = "        asm { top: nop\n              top: nop\n              jmp top }";
    let msg = "x86_64 asm: label 'top' is defined twice in this asm block";
    assert_error("x86_64", body, msg, "top:", 1);
    let text = class("x86_64", &[("f", body)]);
    let first = place(&text, "top:", 0);
    assert!(error_of("x86_64", body).contains(&format!("first defined at {first}")));
}

#[test]
fn a_label_in_an_instruction_that_is_not_a_branch_is_a_located_error() {
    let body = "        asm { top: nop\n              mov rax, top }";
    let msg = "x86_64 asm: label 'top' used by mov, which is not a branch";
    assert_error("x86_64", body, msg, "top", 1);
    let body = "        asm { top: nop\n              adr x0, top }";
    let msg = "aarch64 asm: label 'top' used by adr, which is not a branch";
    assert_error("aarch64", body, msg, "top", 1);
}

#[test]
fn a_branch_to_another_blocks_label_is_a_located_error() {
    let body = "        asm { top: nop }\n        asm { jmp top }";
    let msg = "x86_64 asm: label 'top' is in another asm block";
    assert_error("x86_64", body, msg, "top", 1);
    // Also across bitstrings, and for aarch64.
    let text = class(
        "aarch64",
        &[
            ("g", "        asm { far: nop }"),
            ("f", "        asm { b far }"),
        ],
    );
    let err = Program::from_text("l.yamba", &text).unwrap_err().rendered;
    assert!(
        err.contains("aarch64 asm: label 'far' is in another asm block"),
        "{err}"
    );
    assert!(err.contains(&place(&text, "far", 1)), "{err}");
}

#[test]
fn other_branch_errors_are_located() {
    let body = "        asm { nop\n              jmp 5 }";
    assert_error(
        "x86_64",
        body,
        "a branch's target must be a label",
        "jmp 5",
        0,
    );
    // An instruction's own error points at it, past its label.
    let body = "        asm { top: frob rax\n              jmp top }";
    let msg = "x86_64 asm: unknown x86-64 instruction 'frob'";
    assert_error("x86_64", body, msg, "frob rax", 0);
    let body = "        asm { rax: nop }";
    assert_error(
        "x86_64",
        body,
        "'rax' is a register, not a label name",
        "rax:",
        0,
    );
    let pad = "nop\n".repeat(200);
    let body = format!("        asm {{ top: nop\n{pad}              loop top }}");
    assert_error("x86_64", &body, "out of this branch's reach", "loop top", 0);
    // tbz reaches 32 KiB; cbz, 1 MiB: 40 000 bytes of nops are between.
    let pad = "nop\n".repeat(10_000);
    let body = format!("        asm {{ cbz x0, far\n tbz x0, #1, far\n{pad} far: ret }}");
    assert_error(
        "aarch64",
        &body,
        "out of this branch's reach",
        "tbz x0, #1, far",
        0,
    );
}
