//! Instruction sets: assembling `asm { }` lines and listing machine code.
//! One adapter shape per ISA; the rest of the language does not look inside.

mod aarch64;
pub mod block;
mod error;
mod x86;

use x86::Bits;

pub use block::BlockError;
pub use error::{AsmError, MemoryError};
use std::collections::HashSet;

/// One decoded instruction of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Insn {
    pub offset: usize,
    pub len: usize,
    pub text: String,
}

/// The machine a class generates code for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    X86_64,
    /// 32-bit x86 (i686), the paper's own target: run natively by an i686
    /// build of yamba on an x86-64 (or x86-32) host.
    X86_32,
    Aarch64,
}

impl Isa {
    /// The ISA this process runs on, if the language supports it.
    pub fn host() -> Option<Isa> {
        if cfg!(target_arch = "x86_64") {
            Some(Isa::X86_64)
        } else if cfg!(target_arch = "x86") {
            Some(Isa::X86_32)
        } else if cfg!(target_arch = "aarch64") {
            Some(Isa::Aarch64)
        } else {
            None
        }
    }

    /// Every ISA the language generates code for.
    pub const ALL: [Isa; 3] = [Isa::X86_64, Isa::X86_32, Isa::Aarch64];

    /// The ISA named `name` (as [`Isa::name`] spells it).
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Isa::X86_64 => "x86_64",
            Isa::X86_32 => "x86_32",
            Isa::Aarch64 => "aarch64",
        }
    }

    /// Assembles one instruction (no comments, no separators).
    pub fn assemble_line(self, line: &str) -> Result<Vec<u8>, AsmError> {
        match self {
            Isa::X86_64 => x86::assemble_line(line, Bits::B64),
            Isa::X86_32 => x86::assemble_line(line, Bits::B32),
            Isa::Aarch64 => aarch64::assemble_line(line),
        }
    }

    /// Assembles an asm block's instruction lines (see [`asm_lines`]),
    /// labels and branches to them included; every error, each with its line.
    /// `elsewhere`: the labels of other blocks (a branch there is an error of
    /// its own, not an undefined label).
    pub fn assemble_block(
        self,
        lines: &[&str],
        elsewhere: &HashSet<String>,
    ) -> Result<Vec<u8>, Vec<BlockError>> {
        let items = block::resolve(self, lines, elsewhere)?;
        match self {
            Isa::X86_64 => x86::assemble_block(&items, Bits::B64),
            Isa::X86_32 => x86::assemble_block(&items, Bits::B32),
            Isa::Aarch64 => aarch64::assemble_block(&items),
        }
    }

    /// Whether `name` is a register (so not usable as a label).
    pub fn is_register(self, name: &str) -> bool {
        match self {
            Isa::X86_64 => x86::is_register(name, Bits::B64),
            Isa::X86_32 => x86::is_register(name, Bits::B32),
            Isa::Aarch64 => aarch64::is_register(name),
        }
    }

    /// The byte range of a branch's label operand in `instr`, when `instr`
    /// is a branch to a label (not to a register or an address).
    pub fn branch_target(self, instr: &str) -> Option<(usize, usize)> {
        match self {
            Isa::X86_64 => x86::branch_target(instr, Bits::B64),
            Isa::X86_32 => x86::branch_target(instr, Bits::B32),
            Isa::Aarch64 => aarch64::branch_target(instr),
        }
    }

    pub fn disassemble(self, bytes: &[u8]) -> Vec<Insn> {
        match self {
            Isa::X86_64 => x86::disassemble(bytes, Bits::B64),
            Isa::X86_32 => x86::disassemble(bytes, Bits::B32),
            Isa::Aarch64 => aarch64::disassemble(bytes),
        }
    }
}

/// The instructions of an asm block's text: lines split at newlines and
/// `;`, comments (`//`, `/* */` already gone from lines) removed, blank
/// ones dropped. Each comes with its byte offset in `text`.
pub fn asm_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let body = line.split("//").next().unwrap_or("");
        let mut off = 0;
        for piece in body.split(';') {
            let trimmed = piece.trim();
            if !trimmed.is_empty() {
                let lead = piece.len() - piece.trim_start().len();
                out.push((line_start + off + lead, trimmed));
            }
            off += piece.len() + 1;
        }
        line_start += line.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_at_newlines_and_semicolons_with_offsets() {
        let t = "\n  push rbx\n  mov rbx, rdi; pop rbx // done\n";
        let l = asm_lines(t);
        assert_eq!(
            l.iter().map(|x| x.1).collect::<Vec<_>>(),
            ["push rbx", "mov rbx, rdi", "pop rbx"]
        );
        for (off, s) in l {
            assert!(t[off..].starts_with(s));
        }
    }
}
