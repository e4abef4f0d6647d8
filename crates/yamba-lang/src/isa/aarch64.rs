//! aarch64: assembly lines through asm-rs (a runtime text assembler),
//! listings through yaxpeax-arm (an independent disassembler).

use super::block::{ident_len, BlockError, Item};
use super::{AsmError, Insn};
use std::collections::HashSet;
use yaxpeax_arch::{Decoder, U8Reader};

/// Assembles one line of aarch64 assembly (already free of comments).
pub fn assemble_line(line: &str) -> Result<Vec<u8>, AsmError> {
    if line.trim_end().ends_with(':') {
        return Err(AsmError::Aarch64 {
            line: line.trim().into(),
            message: "a label alone: assemble it as part of a block".into(),
        });
    }
    asm_rs::assemble(line, asm_rs::Arch::Aarch64).map_err(|e| AsmError::Aarch64 {
        line: line.trim().into(),
        message: e.to_string(),
    })
}

pub fn is_register(name: &str) -> bool {
    let n = name.to_lowercase();
    if ["sp", "wsp", "xzr", "wzr", "lr", "fp"].contains(&n.as_str()) {
        return true;
    }
    let mut c = n.chars();
    matches!(
        c.next(),
        Some('x' | 'w' | 'v' | 'q' | 'd' | 's' | 'h' | 'b')
    ) && c.as_str().parse::<u8>().is_ok_and(|k| k <= 31)
}

/// The label operand of b, bl, b.cond, cbz/cbnz, tbz/tbnz: the last one.
pub fn branch_target(instr: &str) -> Option<(usize, usize)> {
    let end = instr.find(char::is_whitespace)?;
    let m = instr[..end].to_lowercase();
    let branch =
        matches!(m.as_str(), "b" | "bl" | "cbz" | "cbnz" | "tbz" | "tbnz") || m.starts_with("b.");
    if !branch {
        return None;
    }
    let last = instr.rfind(',').map_or(end, |c| c + 1);
    let op = instr[last..].trim();
    let lo = last + (instr[last..].len() - instr[last..].trim_start().len());
    (ident_len(op) == op.len() && !op.is_empty() && !is_register(op)).then_some((lo, lo + op.len()))
}

/// The label asm-rs sees for the instruction `k` of a block (or its end):
/// names of ours, so a user's label cannot collide with asm-rs's syntax.
fn label(k: usize) -> String {
    format!("yamba_label_{k}")
}

/// `it`'s text with its branch target renamed to asm-rs's label for it.
fn renamed(it: &Item) -> String {
    match it.target {
        Some(t) => format!("{}{}{}", &it.text[..t.lo], label(t.item), &it.text[t.hi..]),
        None => it.text.to_string(),
    }
}

/// Assembles a block through asm-rs, which resolves the labels. Each line
/// is first assembled alone (a branch with its label defined before it),
/// so an error names its line; then the block as one text.
pub fn assemble_block(items: &[Item]) -> Result<Vec<u8>, Vec<BlockError>> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let mut alone = Vec::with_capacity(items.len());
    let mut errors = Vec::new();
    for it in items {
        let text = match it.target {
            Some(t) => format!("{}:\n{}", label(t.item), renamed(it)),
            None => it.text.to_string(),
        };
        match asm_rs::assemble(&text, asm_rs::Arch::Aarch64) {
            Ok(b) => alone.push(b.len()),
            Err(e) => errors.push(aarch64_error(it, e)),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let targeted: HashSet<usize> = items
        .iter()
        .filter_map(|it| it.target)
        .map(|t| t.item)
        .collect();
    let mut text = String::new();
    for k in 0..=items.len() {
        if targeted.contains(&k) {
            text.push_str(&format!("{}:\n", label(k)));
        }
        if let Some(it) = items.get(k) {
            text.push_str(&renamed(it));
            text.push('\n');
        }
    }
    let bytes = asm_rs::assemble(&text, asm_rs::Arch::Aarch64)
        .map_err(|e| vec![aarch64_error(farthest(items, &alone), e)])?;
    // asm-rs relaxes a branch beyond its reach (tbz: 32 KiB, cbz and
    // b.cond: 1 MiB) into a longer sequence; as on x86-64, a benchmark
    // gets the instruction written or an error.
    if bytes.len() != alone.iter().sum::<usize>() {
        let it = farthest(items, &alone);
        return Err(vec![BlockError::item(
            it,
            AsmError::OutOfReach {
                line: it.text.into(),
                message: "asm-rs would replace it with a longer sequence".into(),
            },
        )]);
    }
    Ok(bytes)
}

/// The branch farthest from its label for its reach: the one beyond it,
/// when one is. `sizes`: each item's bytes, assembled alone.
fn farthest<'a>(items: &'a [Item<'a>], sizes: &[usize]) -> &'a Item<'a> {
    let mut at = vec![0usize];
    for s in sizes {
        at.push(at.last().unwrap() + s);
    }
    let reach = |text: &str| match text.split_whitespace().next().unwrap_or("") {
        "tbz" | "tbnz" => 32 << 10,
        "b" | "bl" => 128 << 20,
        _ => 1 << 20,
    };
    let ratio = |(k, it): &(usize, &Item)| {
        it.target.map_or(0.0, |t| {
            at[t.item].abs_diff(at[*k]) as f64 / reach(it.text) as f64
        })
    };
    items
        .iter()
        .enumerate()
        .max_by(|a, b| ratio(a).total_cmp(&ratio(b)))
        .map_or(&items[0], |(_, it)| it)
}

fn aarch64_error(it: &Item, e: asm_rs::AsmError) -> BlockError {
    BlockError::item(
        it,
        AsmError::Aarch64 {
            line: it.text.trim().into(),
            message: e.to_string(),
        },
    )
}

/// Decodes `bytes` into a listing, one 4-byte word per instruction.
pub fn disassemble(bytes: &[u8]) -> Vec<Insn> {
    let dec = yaxpeax_arm::armv8::a64::InstDecoder::default();
    bytes
        .chunks(4)
        .enumerate()
        .map(|(k, w)| {
            let mut r = U8Reader::new(w);
            let text = if w.len() < 4 {
                "(bad: partial word)".to_string()
            } else {
                dec.decode(&mut r)
                    .map(|i| i.to_string())
                    .unwrap_or_else(|_| {
                        format!(".word 0x{:08x}", u32::from_le_bytes(w.try_into().unwrap()))
                    })
            };
            Insn {
                offset: k * 4,
                len: w.len(),
                text,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembles_and_disassembles_the_standard_pieces() {
        for (src, want) in [
            ("stp x29, x30, [sp, #-16]!", "stp x29, x30, [sp, #-0x10]!"),
            ("mov x29, sp", "mov x29, sp"),
            ("ldr w0, [x19, #4096]", "ldr w0, [x19, #0x1000]"),
            ("mul x0, x0, x0", "mul x0, x0, x0"),
            ("ret", "ret"),
        ] {
            let b = assemble_line(src).unwrap();
            let d = disassemble(&b);
            assert_eq!(d.len(), 1);
            assert_eq!(d[0].text, want);
        }
        assert!(assemble_line("frob x0").is_err());
    }

    #[test]
    fn branch_targets_are_the_last_operand_of_a_branch() {
        assert_eq!(branch_target("b.ne top"), Some((5, 8)));
        assert_eq!(branch_target("cbz x1, top"), Some((8, 11)));
        assert_eq!(branch_target("tbnz w1, #3,  top"), Some((14, 17)));
        assert_eq!(branch_target("bl x0"), None);
        assert_eq!(branch_target("add x0, x0, top"), None);
        assert!(is_register("X30") && is_register("wzr") && !is_register("x32"));
        assert!(!is_register("top"));
    }
}
