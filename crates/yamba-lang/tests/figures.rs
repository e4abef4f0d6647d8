//! Figures 2 and 3 (x86-64 form, and x86-32 as printed): the generated
//! code of pagefault_func(5) is the seed's listing, instruction for
//! instruction, as disassemblers read it; the listing names where each instruction came from; an
//! abstract class cannot be run; a verbatim figure gets every error at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yamba_lang::{Instance, Isa, Program};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn load(file: &str) -> Program {
    match Program::load(&[examples().join(file)]) {
        Ok((p, _)) => p,
        Err(e) => panic!("{e}"),
    }
}

fn pagefault_func_5(prog: &Program, class: &str) -> std::rc::Rc<yamba_lang::Compiled> {
    let mut inst = Instance::new(prog, class, &BTreeMap::new(), std::env::temp_dir()).unwrap();
    inst.generate("pagefault_func", &[5]).unwrap()
}

/// The seed's listing in its 64-bit form.
fn expected_x86_64() -> Vec<String> {
    let mut v: Vec<String> = ["push rbp", "mov rbp, rsp", "push rbx", "mov rbx, rdi"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for k in 0..5 {
        v.push(if k == 0 {
            "mov eax, [rbx]".to_string()
        } else {
            format!("mov eax, [rbx + 0x{:x}]", k * 0x1000)
        });
    }
    v.extend(["pop rbx", "pop rbp", "ret"].iter().map(|s| s.to_string()));
    v
}

#[test]
fn pagefault_func_5_is_the_seeds_listing_by_iced() {
    let prog = load("pagefault_x86_64.yamba");
    let code = pagefault_func_5(&prog, "Y_pagefault_x86_64");
    let got: Vec<String> = Isa::X86_64
        .disassemble(&code.bytes)
        .into_iter()
        .map(|i| i.text)
        .collect();
    assert_eq!(got, expected_x86_64());
    // The touches are loads of eax from rbx + k·page, whatever the text says.
    let mut dec = iced_x86::Decoder::new(64, &code.bytes, 0);
    let loads: Vec<iced_x86::Instruction> = dec
        .iter()
        .filter(|i| {
            i.mnemonic() == iced_x86::Mnemonic::Mov && i.op0_register() == iced_x86::Register::EAX
        })
        .collect();
    assert_eq!(loads.len(), 5);
    for (k, i) in loads.iter().enumerate() {
        assert_eq!(i.memory_base(), iced_x86::Register::RBX);
        assert_eq!(i.memory_displacement64(), k as u64 * 0x1000);
    }
}

/// objdump's reading of `bytes` as machine `arch` (`-m`), Intel syntax:
/// each instruction's text, spaces collapsed, and objdump's whole output;
/// Err (why) where objdump is missing, for the test to skip visibly.
fn objdump(bytes: &[u8], arch: &str) -> Result<(Vec<String>, String), String> {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("code.bin");
    std::fs::write(&bin, bytes).unwrap();
    let out = match std::process::Command::new("objdump")
        .args(["-D", "-b", "binary", &format!("-m{arch}"), "-M", "intel"])
        .arg(&bin)
        .output()
    {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => panic!("objdump failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            return Err(format!(
                "objdump not available ({e}); .ci/install installs binutils"
            ))
        }
    };
    // Lines like "   0:\t55                   \tpush   rbp"
    let insns = out
        .lines()
        .filter_map(|l| l.split('\t').nth(2))
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    Ok((insns, out))
}

#[test]
fn pagefault_func_5_is_the_seeds_listing_by_objdump() {
    let prog = load("pagefault_x86_64.yamba");
    let code = pagefault_func_5(&prog, "Y_pagefault_x86_64");
    let (insns, out) = match objdump(&code.bytes, "i386:x86-64") {
        Ok(r) => r,
        Err(why) => yamba_testkit::skip!("{why}"),
    };
    let mut want = vec![
        "push rbp".to_string(),
        "mov rbp,rsp".into(),
        "push rbx".into(),
        "mov rbx,rdi".into(),
    ];
    for k in 0..5 {
        want.push(format!("mov eax,DWORD PTR [rbx+0x{:x}]", k * 0x1000));
    }
    want.extend(["pop rbx".to_string(), "pop rbp".into(), "ret".into()]);
    assert_eq!(insns, want, "objdump said:\n{out}");
}

/// The seed's listing as printed (section 5.3), but for its line 7: the
/// first argument is at [ebp + 8] after `push ebp` (the printed 0x12 would
/// read the middle of the caller's frame).
const EXPECTED_X86_32: [&str; 12] = [
    "push ebp",
    "mov ebp, esp",
    "push ebx",
    "mov ebx, [ebp + 8]",
    "mov eax, [ebx]",
    "mov eax, [ebx + 0x1000]",
    "mov eax, [ebx + 0x2000]",
    "mov eax, [ebx + 0x3000]",
    "mov eax, [ebx + 0x4000]",
    "pop ebx",
    "pop ebp",
    "ret",
];

#[test]
fn the_x86_32_figure_3_is_the_seeds_listing_by_iced() {
    let prog = load("pagefault_x86_32.yamba");
    let code = pagefault_func_5(&prog, "Y_pagefault_x86_32");
    let got: Vec<String> = Isa::X86_32
        .disassemble(&code.bytes)
        .into_iter()
        .map(|i| i.text)
        .collect();
    assert_eq!(got, EXPECTED_X86_32);
    // Decoded in 32-bit mode by iced directly: loads of eax from ebx + k·page.
    let loads: Vec<iced_x86::Instruction> = iced_x86::Decoder::new(32, &code.bytes, 0)
        .iter()
        .filter(|i| {
            i.mnemonic() == iced_x86::Mnemonic::Mov && i.op0_register() == iced_x86::Register::EAX
        })
        .collect();
    assert_eq!(loads.len(), 5);
    for (k, i) in loads.iter().enumerate() {
        assert_eq!(i.memory_base(), iced_x86::Register::EBX);
        assert_eq!(i.memory_displacement32(), k as u32 * 0x1000);
    }
    // The same bytes read as 64-bit code are not the listing (push ebp has
    // no 64-bit form: 0x55 is push rbp there), so the mode really is 32.
    let as64: Vec<String> = Isa::X86_64
        .disassemble(&code.bytes)
        .into_iter()
        .map(|i| i.text)
        .collect();
    assert_ne!(as64, EXPECTED_X86_32);
}

#[test]
fn the_x86_32_figure_3_is_the_seeds_listing_by_objdump() {
    let prog = load("pagefault_x86_32.yamba");
    let code = pagefault_func_5(&prog, "Y_pagefault_x86_32");
    let (insns, out) = match objdump(&code.bytes, "i386") {
        Ok(r) => r,
        Err(why) => yamba_testkit::skip!("{why}"),
    };
    let mut want = vec![
        "push ebp".to_string(),
        "mov ebp,esp".into(),
        "push ebx".into(),
        "mov ebx,DWORD PTR [ebp+0x8]".into(),
    ];
    for k in 0..5 {
        want.push(format!("mov eax,DWORD PTR [ebx+0x{:x}]", k * 0x1000));
    }
    want.extend(["pop ebx".to_string(), "pop ebp".into(), "ret".into()]);
    assert_eq!(insns, want, "objdump said:\n{out}");
}

#[test]
fn the_listing_names_each_instructions_bitstring_and_unroll_iteration() {
    let prog = load("pagefault_x86_64.yamba");
    let text = yamba_lang::disasm(
        &prog,
        "Y_pagefault_x86_64",
        "pagefault_func",
        &[5],
        &BTreeMap::new(),
        false,
    )
    .unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    // Each instruction sits under the comment of the bitstring it came from.
    let under = |insn: &str| -> &str {
        let i = lines
            .iter()
            .position(|l| *l == insn)
            .unwrap_or_else(|| panic!("{insn} missing:\n{text}"));
        lines[..i]
            .iter()
            .rev()
            .find(|l| l.starts_with("/*"))
            .unwrap()
    };
    assert!(
        under("push rbp")
            .contains("Y_pagefault_x86_64.prologue > compiler_x86_64.prologue_standard"),
        "{text}"
    );
    assert!(
        under("mov rbx, rdi").ends_with("/* Y_pagefault_x86_64.prologue */"),
        "{text}"
    );
    for k in 0..5 {
        let insn = if k == 0 {
            "mov eax, [rbx]".to_string()
        } else {
            format!("mov eax, [rbx + 0x{:x}]", k * 0x1000)
        };
        let c = under(&insn);
        assert!(c.contains("unroll(unsigned int i = 0; i < m; i++)"), "{c}");
        assert!(
            c.contains(&format!("i = {k}"))
                && c.contains(&format!("Y_pagefault_x86_64.touch({k})")),
            "{c}"
        );
    }
    assert!(
        under("pop rbx").ends_with("/* Y_pagefault_x86_64.epilogue */"),
        "{text}"
    );
    assert!(
        under("ret").contains("compiler_x86_64.epilogue_standard"),
        "{text}"
    );
    assert!(
        lines[0].contains("Y_pagefault_x86_64.pagefault_func(5)"),
        "{text}"
    );
}

#[test]
fn the_aarch64_platform_class_builds_the_same_template() {
    let prog = load("pagefault_aarch64.yamba");
    let code = pagefault_func_5(&prog, "Y_pagefault_aarch64");
    let got: Vec<String> = Isa::Aarch64
        .disassemble(&code.bytes)
        .into_iter()
        .map(|i| i.text)
        .collect();
    let mut want: Vec<String> = [
        "stp x29, x30, [sp, #-0x10]!",
        "mov x29, sp",
        "str x19, [sp, #-0x10]!",
        "mov x19, x0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for k in 0..5 {
        want.push(format!("add x9, x19, #0x{k:x}, lsl #12"));
        want.push("ldr w9, [x9]".into());
    }
    want.extend(
        ["ldr x19, [sp], #0x10", "ldp x29, x30, [sp], #0x10", "ret"]
            .iter()
            .map(|s| s.to_string()),
    );
    // aarch64.page_size is the host's on aarch64 (4 KiB expected on the
    // test machines) and 4096 when generating on another host.
    assert_eq!(got, want);
    assert_eq!(code.isa, Isa::Aarch64);
    if Isa::host() != Some(Isa::Aarch64) {
        assert!(!code.executable());
        let err = code.call(&[0]).unwrap_err();
        assert!(err.contains("aarch64") && err.contains("disasm"), "{err}");
    }
}

#[test]
fn running_an_abstract_class_names_every_undefined_member() {
    let prog = load("pagefault_linux.yamba");
    let job = yamba_lang::runner::Job::new(prog, "Y_pagefault_generic", BTreeMap::new());
    let err = yamba_lang::runner::benchmark(job).unwrap_err().to_string();
    for m in [
        "abstract",
        "bitstring prologue",
        "bitstring epilogue",
        "bitstring touch(unsigned int page_index)",
        "pagefault_generic.yamba:",
    ] {
        assert!(err.contains(m), "missing {m:?} in:\n{err}");
    }
    assert!(
        err.contains("Y_pagefault_x86_64_Linux"),
        "should point to a concrete class:\n{err}"
    );
}

/// Figure 2 and the x86-32 Figure 3 exactly as printed.
const VERBATIM: &str = r#"yamba abstract Y_pagefault_generic
{
    int file_ref;
    byte_t * pages;
    int num_pages;
    byte_t * targets;
    int unroll_degree;
    int num_groups;
    int num_passes;
    bitstring prologue;
    bitstring epilogue;
    bitstring touch(unsigned int page_index);
    bitstring<void c_function(byte_t * first_page)> pagefault_func(unsigned int m)
    {
        prologue
        unroll(unsigned int i = 0; i < m; i++)
        {
            touch(i)
        }
        epilogue
    }
    void benchmark ()
    {
        for (pass_i = 0; pass_i < num_passes; pass_i++)
        {
            byte_t * this_targets = targets;
            for (group_i = 0; group_i < num_groups; group_i++)
            {
                pagefault_func(targets);
                this_targets += unroll_degree;
            }
            cause_page_outs_func(pages);
        }
    }
}
};
yamba Y-pagefault_x86_32 extends Y-pagefault_generic
{
    import(x86_32);
    import(compiler_x86_32);
    bitstring prologue
    {
        compiler_x86_32.prologue_standard
        asm
        {
            push ebx
            mov ebx, [ebp + 8]
        }
    }
};
"#;

#[test]
fn check_reports_every_error_of_the_verbatim_figures_in_one_pass() {
    let err = Program::from_text("figures.yamba", VERBATIM).unwrap_err();
    let text = err.rendered.clone();
    let errors = err.diags.iter().filter(|d| !d.warning).count();
    assert!(errors >= 6, "{errors} errors:\n{text}");
    for want in [
        "undeclared name 'pass_i'",
        "undeclared name 'group_i'",
        "argument 1 of bitstring function pagefault_func should be an integer, found a pointer",
        "pagefault_func(m)(first_page)",
        "undeclared function 'cause_page_outs_func'",
        "a class name cannot contain '-'",
        "figures.yamba:24:14",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    // Every error shows its line and a caret.
    assert!(text.matches("^").count() >= errors, "{text}");
    assert!(
        text.contains("for (pass_i = 0; pass_i < num_passes; pass_i++)"),
        "{text}"
    );
}
