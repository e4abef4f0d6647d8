//! aarch64: assembly lines through asm-rs (a runtime text assembler),
//! listings through yaxpeax-arm (an independent disassembler).

use super::{AsmError, Insn};
use yaxpeax_arch::{Decoder, U8Reader};

/// Assembles one line of aarch64 assembly (already free of comments).
pub fn assemble_line(line: &str) -> Result<Vec<u8>, AsmError> {
    if line.trim_end().ends_with(':') {
        return Err(AsmError::Label(line.into()));
    }
    asm_rs::assemble(line, asm_rs::Arch::Aarch64).map_err(|e| AsmError::Aarch64 {
        line: line.trim().into(),
        message: e.to_string(),
    })
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
}
