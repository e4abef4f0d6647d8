//! x86-64 and x86-32: Intel-syntax lines → iced-x86 instructions → bytes,
//! and bytes → Intel-syntax listing, all through iced-x86. One module for
//! both modes: they differ only in which forms exist (iced's mode64 and
//! mode32 tables), the branch forms, and the bitness given to iced.
//!
//! Only the operand syntax is parsed here (registers, immediates,
//! `[base + index*scale + disp]` with an optional `byte|word|dword|qword
//! ptr`); which encoding forms exist for a mnemonic and operand kinds comes
//! from iced's op-code tables, and iced encodes. When several forms fit
//! (`add rax, 1`: imm8 or imm32), the shortest encoding wins, as an
//! assembler would choose.

use super::block::{ident_len, BlockError, Item};
use super::{AsmError, Insn, MemoryError};
use iced_x86::{
    BlockEncoder, BlockEncoderOptions, Code, Decoder, DecoderOptions, Encoder, Formatter,
    Instruction, InstructionBlock, IntelFormatter, MemoryOperand, Mnemonic, OpCodeOperandKind as K,
    Register,
};
use std::collections::HashMap;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy)]
enum Operand {
    Reg(Register),
    Mem { mem: MemOp, bytes: Option<usize> },
    Imm(i64),
}

#[derive(Debug, Clone, Copy)]
struct MemOp {
    base: Register,
    index: Register,
    scale: u32,
    disp: i64,
}

/// The processor mode code is generated for: 64 (x86-64) or 32 (x86-32,
/// the paper's own target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bits {
    B64,
    B32,
}

impl Bits {
    fn n(self) -> u32 {
        match self {
            Bits::B64 => 64,
            Bits::B32 => 32,
        }
    }

    fn isa(self) -> &'static str {
        match self {
            Bits::B64 => "x86-64",
            Bits::B32 => "x86-32",
        }
    }
}

struct Tables {
    registers: HashMap<String, Register>,
    /// Instruction forms valid in the mode, by mnemonic.
    forms: HashMap<String, Vec<Code>>,
}

fn tables(bits: Bits) -> &'static Tables {
    static T64: OnceLock<Tables> = OnceLock::new();
    static T32: OnceLock<Tables> = OnceLock::new();
    let cell = match bits {
        Bits::B64 => &T64,
        Bits::B32 => &T32,
    };
    cell.get_or_init(|| {
        let mut registers = HashMap::new();
        for r in Register::values() {
            if r == Register::None {
                continue;
            }
            let name = format!("{r:?}").to_lowercase();
            // iced calls the low bytes of r8..r15 "r8l"; Intel syntax says "r8b".
            if let Some(n) = name.strip_suffix('l').filter(|n| {
                n.starts_with('r') && n[1..].parse::<u8>().is_ok_and(|k| (8..16).contains(&k))
            }) {
                registers.insert(format!("{n}b"), r);
            }
            registers.insert(name, r);
        }
        let mut forms: HashMap<String, Vec<Code>> = HashMap::new();
        for code in Code::values() {
            let op = code.op_code();
            let valid = match bits {
                Bits::B64 => op.mode64(),
                Bits::B32 => op.mode32(),
            };
            if !op.is_instruction() || !valid || code.mnemonic() == Mnemonic::INVALID {
                continue;
            }
            forms
                .entry(format!("{:?}", code.mnemonic()).to_lowercase())
                .or_default()
                .push(code);
        }
        Tables { registers, forms }
    })
}

/// Assembles one line of Intel syntax (already free of comments).
pub fn assemble_line(line: &str, bits: Bits) -> Result<Vec<u8>, AsmError> {
    let line = line.trim();
    let (mnemonic, rest) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    let mnemonic = canonical(mnemonic);
    let t = tables(bits);
    let forms = t
        .forms
        .get(&mnemonic)
        .ok_or_else(|| AsmError::UnknownInstruction {
            isa: bits.isa(),
            name: mnemonic.clone(),
        })?;
    let operands: Vec<Operand> = if rest.is_empty() {
        Vec::new()
    } else {
        split_operands(rest)
            .iter()
            .map(|o| operand(o, t))
            .collect::<Result<_, _>>()?
    };
    let mut best: Option<Vec<u8>> = None;
    let mut mem_sizes = Vec::new();
    let mut near = Vec::new();
    for &code in forms {
        let op = code.op_code();
        if op.op_count() as usize != operands.len() {
            continue;
        }
        if !(0..operands.len()).all(|i| fits(op.op_kind(i as u32), &operands[i], op)) {
            if operands.is_empty() {
                continue;
            }
            near.push(code);
            continue;
        }
        let Some(instr) = build(code, &operands) else {
            continue;
        };
        let mut enc = Encoder::new(bits.n());
        if enc.encode(&instr, 0).is_err() {
            continue;
        }
        let bytes = enc.take_buffer();
        if operands
            .iter()
            .any(|o| matches!(o, Operand::Mem { bytes: None, .. }))
        {
            let sz = op.memory_size().size();
            if !mem_sizes.contains(&sz) {
                mem_sizes.push(sz);
            }
        }
        if best.as_ref().is_none_or(|b| bytes.len() < b.len()) {
            best = Some(bytes);
        }
    }
    if mem_sizes.len() > 1 {
        return Err(AsmError::AmbiguousSize(line.into()));
    }
    best.ok_or_else(|| {
        if operands.iter().any(|o| matches!(o, Operand::Imm(_)))
            && forms.iter().any(|c| {
                c.op_code()
                    .op_kinds()
                    .iter()
                    .any(|k| matches!(k, K::br16_1 | K::br32_1 | K::br64_1 | K::br32_4 | K::br64_4))
            })
        {
            AsmError::Branch(line.into())
        } else {
            AsmError::NoForm {
                isa: bits.isa(),
                line: line.into(),
                mnemonic: mnemonic.clone(),
            }
        }
    })
}

/// Condition-code synonyms iced's mnemonics lack (jnz for jne, setz for
/// sete, cmovc for cmovb, …): the name iced knows, lowercased.
fn canonical(mnemonic: &str) -> String {
    const SYNONYMS: [(&str, &str); 14] = [
        ("z", "e"),
        ("nz", "ne"),
        ("c", "b"),
        ("nc", "ae"),
        ("nae", "b"),
        ("nb", "ae"),
        ("na", "be"),
        ("nbe", "a"),
        ("nge", "l"),
        ("nl", "ge"),
        ("ng", "le"),
        ("nle", "g"),
        ("pe", "p"),
        ("po", "np"),
    ];
    let m = mnemonic.to_lowercase();
    for prefix in ["j", "set", "cmov"] {
        if let Some(cc) = m.strip_prefix(prefix) {
            if let Some((_, to)) = SYNONYMS.iter().find(|(from, _)| *from == cc) {
                return format!("{prefix}{to}");
            }
        }
    }
    m
}

pub fn is_register(name: &str, bits: Bits) -> bool {
    tables(bits).registers.contains_key(&name.to_lowercase())
}

/// The relative-branch form of `mnemonic` to build with a target: the near
/// (rel32) one when there is one, which the block encoder shortens to rel8
/// when the target is in reach; else the short-only one (loop, jrcxz,
/// jecxz), counting the mode's own register (rcx in 64-bit mode, ecx in
/// 32-bit mode).
fn branch_code(mnemonic: &str, bits: Bits) -> Option<Code> {
    let (short, near) = match bits {
        Bits::B64 => (K::br64_1, K::br64_4),
        Bits::B32 => (K::br32_1, K::br32_4),
    };
    let rank = |c: &Code| {
        let op = c.op_code();
        (op.op_kind(0) == near, op.address_size() == bits.n())
    };
    tables(bits)
        .forms
        .get(mnemonic)?
        .iter()
        .filter(|c| {
            let op = c.op_code();
            op.op_count() == 1 && (op.op_kind(0) == short || op.op_kind(0) == near)
        })
        .max_by_key(|c| rank(c))
        .copied()
}

/// The label operand of a relative branch (jmp, jcc, loop, jrcxz, call).
pub fn branch_target(instr: &str, bits: Bits) -> Option<(usize, usize)> {
    let end = instr.find(char::is_whitespace)?;
    branch_code(&canonical(&instr[..end]), bits)?;
    let rest = instr[end..].trim_start();
    // `short`/`near` are accepted and left to the encoder.
    let rest = ["short ", "near "]
        .iter()
        .find_map(|w| rest.strip_prefix(w))
        .unwrap_or(rest)
        .trim_start();
    let lo = instr.len() - rest.len();
    let rest = rest.trim_end();
    (!rest.is_empty() && ident_len(rest) == rest.len() && !is_register(rest, bits))
        .then_some((lo, lo + rest.len()))
}

/// Assembles a block through iced's block encoder: each instruction gets a
/// stand-in address, branches target their label's instruction's, and the
/// encoder lays the block out, choosing short or near forms. Instructions
/// other than branches are encoded as by [`assemble_line`] and passed as
/// data, so they keep the shortest form chosen there.
pub fn assemble_block(items: &[Item], bits: Bits) -> Result<Vec<u8>, Vec<BlockError>> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    const SLOT: u64 = 16;
    let ip = |k: usize| 0x1000 + k as u64 * SLOT;
    let mut instrs = Vec::with_capacity(items.len() + 1);
    let mut errors = Vec::new();
    for (k, it) in items.iter().enumerate() {
        let built = match it.target {
            Some(t) => Ok(branch(it.text, ip(t.item), bits)),
            // One instruction is at most 15 bytes: db takes up to 16.
            None => {
                assemble_line(it.text, bits).map(|b| Instruction::with_declare_byte(&b).unwrap())
            }
        };
        match built {
            Ok(mut i) => {
                i.set_ip(ip(k));
                instrs.push(i);
            }
            Err(e) => errors.push(BlockError::item(it, e)),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // A label after the last instruction: a one-byte stand-in to branch
    // to, cut off after encoding (nothing follows it to move).
    let to_end = items
        .iter()
        .any(|it| it.target.is_some_and(|t| t.item == items.len()));
    if to_end {
        let mut nop = Instruction::with_declare_byte(&[0x90]).unwrap();
        nop.set_ip(ip(items.len()));
        instrs.push(nop);
    }
    let block = InstructionBlock::new(&instrs, 0);
    let options = BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS;
    // Failure is not expected (every branch can be widened or detoured).
    let r = BlockEncoder::encode(bits.n(), block, options)
        .map_err(|e| vec![out_of_reach(first_branch(items), e.to_string())])?;
    let mut bytes = r.code_buffer;
    let offsets = r.new_instruction_offsets;
    // iced rewrites a short-only branch (loop, jrcxz) whose label is out
    // of reach into a detour through a near jmp, and gives it no offset;
    // an assembler refuses it, and a benchmark should get the instruction
    // its author wrote.
    if let Some(k) = (0..items.len()).find(|&k| offsets[k] == u32::MAX) {
        let why = "a signed 8-bit displacement reaches 128 bytes back, 127 ahead";
        return Err(vec![out_of_reach(&items[k], why.into())]);
    }
    bytes.truncate(bytes.len() - usize::from(to_end));
    Ok(bytes)
}

fn first_branch<'a>(items: &'a [Item<'a>]) -> &'a Item<'a> {
    items
        .iter()
        .find(|it| it.target.is_some())
        .unwrap_or(&items[0])
}

fn out_of_reach(it: &Item, message: String) -> BlockError {
    BlockError::item(
        it,
        AsmError::OutOfReach {
            line: it.text.into(),
            message,
        },
    )
}

/// The branch `instr` (a mnemonic with a label) to `target`.
fn branch(instr: &str, target: u64, bits: Bits) -> Instruction {
    let code = branch_code(&mnemonic_of(instr), bits).expect("resolve() found a branch");
    Instruction::with_branch(code, target).expect("a relative branch form")
}

fn mnemonic_of(instr: &str) -> String {
    canonical(instr.split_whitespace().next().unwrap_or(""))
}

/// Splits at commas outside brackets.
fn split_operands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur.trim().to_string());
    out
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r.trim()),
        None => (false, s.strip_prefix('+').unwrap_or(s).trim()),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(&h.replace('_', ""), 16).ok()? as i64
    } else if let Some(h) = s.strip_suffix('h').or_else(|| s.strip_suffix('H')) {
        u64::from_str_radix(h, 16).ok()? as i64
    } else {
        s.replace('_', "").parse::<u64>().ok()? as i64
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

fn operand(text: &str, t: &Tables) -> Result<Operand, AsmError> {
    let lower = text.to_lowercase();
    let mut s = lower.trim();
    let mut bytes = None;
    for (word, n) in [
        ("byte", 1),
        ("word", 2),
        ("dword", 4),
        ("qword", 8),
        ("xmmword", 16),
        ("ymmword", 32),
        ("zmmword", 64),
    ] {
        if let Some(r) = s.strip_prefix(word) {
            if r.trim_start().starts_with("ptr") || r.trim_start().starts_with('[') {
                bytes = Some(n);
                s = r.trim_start().strip_prefix("ptr").unwrap_or(r).trim_start();
                break;
            }
        }
    }
    if let Some(inner) = s.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| AsmError::Unclosed(text.into()))?;
        return Ok(Operand::Mem {
            mem: memory(inner, t).map_err(|why| AsmError::Memory {
                operand: text.into(),
                why,
            })?,
            bytes,
        });
    }
    if bytes.is_some() {
        return Err(AsmError::SizeWithoutMemory(text.into()));
    }
    if let Some(&r) = t.registers.get(s) {
        return Ok(Operand::Reg(r));
    }
    parse_int(s)
        .map(Operand::Imm)
        .ok_or_else(|| AsmError::NotAnOperand(text.into()))
}

fn memory(inner: &str, t: &Tables) -> Result<MemOp, MemoryError> {
    let mut m = MemOp {
        base: Register::None,
        index: Register::None,
        scale: 1,
        disp: 0,
    };
    // Terms joined by + or -; the sign belongs to the term after it.
    let mut terms: Vec<(bool, String)> = Vec::new();
    let mut cur = String::new();
    let mut neg = false;
    for ch in inner.chars() {
        if (ch == '+' || ch == '-') && !cur.trim().is_empty() {
            terms.push((neg, cur.trim().to_string()));
            cur.clear();
            neg = ch == '-';
        } else if (ch == '+' || ch == '-') && cur.trim().is_empty() {
            neg ^= ch == '-';
        } else {
            cur.push(ch);
        }
    }
    if !cur.trim().is_empty() {
        terms.push((neg, cur.trim().to_string()));
    }
    for (neg, term) in terms {
        if let Some((a, b)) = term.split_once('*') {
            let (reg, scale) = match (t.registers.get(a.trim()), t.registers.get(b.trim())) {
                (Some(&r), None) => (r, b),
                (None, Some(&r)) => (r, a),
                _ => return Err(MemoryError::NotScaled(term)),
            };
            let sc = parse_int(scale).filter(|s| [1, 2, 4, 8].contains(s));
            if neg || m.index != Register::None || sc.is_none() {
                return Err(MemoryError::BadIndex(term));
            }
            m.index = reg;
            m.scale = sc.unwrap() as u32;
        } else if let Some(&r) = t.registers.get(term.as_str()) {
            if neg {
                return Err(MemoryError::Subtracted(term));
            }
            if m.base == Register::None {
                m.base = r;
            } else if m.index == Register::None {
                m.index = r;
            } else {
                return Err(MemoryError::TooManyRegisters);
            }
        } else if let Some(v) = parse_int(&term) {
            m.disp = m.disp.wrapping_add(if neg { v.wrapping_neg() } else { v });
        } else {
            return Err(MemoryError::NotATerm(term));
        }
    }
    Ok(m)
}

fn gpr_bits(r: Register) -> Option<u32> {
    if r.is_gpr8() {
        Some(8)
    } else if r.is_gpr16() {
        Some(16)
    } else if r.is_gpr32() {
        Some(32)
    } else if r.is_gpr64() {
        Some(64)
    } else {
        None
    }
}

fn fits(kind: K, o: &Operand, op: &iced_x86::OpCodeInfo) -> bool {
    match *o {
        Operand::Reg(r) => match kind {
            K::r8_or_mem | K::r8_reg | K::r8_opcode => gpr_bits(r) == Some(8),
            K::r16_or_mem | K::r16_reg | K::r16_reg_mem | K::r16_rm | K::r16_opcode => {
                gpr_bits(r) == Some(16)
            }
            K::r32_or_mem
            | K::r32_reg
            | K::r32_reg_mem
            | K::r32_rm
            | K::r32_opcode
            | K::r32_vvvv => gpr_bits(r) == Some(32),
            K::r64_or_mem
            | K::r64_reg
            | K::r64_reg_mem
            | K::r64_rm
            | K::r64_opcode
            | K::r64_vvvv => gpr_bits(r) == Some(64),
            K::xmm_or_mem | K::xmm_reg | K::xmm_rm | K::xmm_vvvv | K::xmm_is4 | K::xmm_is5 => {
                r.is_xmm()
            }
            K::ymm_or_mem | K::ymm_reg | K::ymm_rm | K::ymm_vvvv | K::ymm_is4 | K::ymm_is5 => {
                r.is_ymm()
            }
            K::zmm_or_mem | K::zmm_reg | K::zmm_rm | K::zmm_vvvv => r.is_zmm(),
            K::mm_or_mem | K::mm_reg | K::mm_rm => r.is_mm(),
            K::k_or_mem | K::k_reg | K::k_rm | K::k_vvvv => r.is_k(),
            K::seg_reg => r.is_segment_register(),
            K::cr_reg => r.is_cr(),
            K::dr_reg => r.is_dr(),
            K::al => r == Register::AL,
            K::cl => r == Register::CL,
            K::ax => r == Register::AX,
            K::dx => r == Register::DX,
            K::eax => r == Register::EAX,
            K::rax => r == Register::RAX,
            K::st0 => r == Register::ST0,
            K::sti_opcode => r.is_st(),
            _ => false,
        },
        Operand::Mem { bytes, mem } => {
            let size_ok = |n: usize| bytes.is_none_or(|b| b == n);
            let vsib = mem.index != Register::None && !mem.index.is_gpr();
            if vsib {
                return false;
            }
            match kind {
                K::mem => bytes.is_none_or(|b| op.memory_size().size() == b),
                K::r8_or_mem => size_ok(1),
                K::r16_or_mem => size_ok(2),
                K::r32_or_mem => size_ok(4),
                K::r64_or_mem => size_ok(8),
                K::mm_or_mem | K::xmm_or_mem | K::ymm_or_mem | K::zmm_or_mem | K::k_or_mem => {
                    bytes.is_none_or(|b| op.memory_size().size() == b)
                }
                _ => false,
            }
        }
        Operand::Imm(v) => match kind {
            K::imm8 => (-128..=255).contains(&v),
            K::imm8_const_1 => v == 1,
            K::imm8sex16 | K::imm8sex32 | K::imm8sex64 => (-128..=127).contains(&v),
            K::imm16 => (-32768..=65535).contains(&v),
            K::imm32 => (i32::MIN as i64..=u32::MAX as i64).contains(&v),
            K::imm32sex64 => (i32::MIN as i64..=i32::MAX as i64).contains(&v),
            K::imm64 => true,
            _ => false,
        },
    }
}

fn mem_operand(m: MemOp) -> MemoryOperand {
    let displ_size = if m.disp == 0 { 0 } else { 1 };
    MemoryOperand::new(
        m.base,
        m.index,
        m.scale,
        m.disp,
        displ_size,
        false,
        Register::None,
    )
}

fn build(code: Code, ops: &[Operand]) -> Option<Instruction> {
    use Operand::*;
    let i32v = |v: i64| v as i32;
    let r = match ops {
        [] => Ok(Instruction::with(code)),
        [Reg(a)] => Instruction::with1(code, *a),
        [Imm(v)] => Instruction::with1(code, i32v(*v)),
        [Mem { mem, .. }] => Instruction::with1(code, mem_operand(*mem)),
        [Reg(a), Reg(b)] => Instruction::with2(code, *a, *b),
        [Reg(a), Imm(v)] => Instruction::with2(code, *a, *v),
        [Reg(a), Mem { mem, .. }] => Instruction::with2(code, *a, mem_operand(*mem)),
        [Mem { mem, .. }, Reg(b)] => Instruction::with2(code, mem_operand(*mem), *b),
        [Mem { mem, .. }, Imm(v)] => Instruction::with2(code, mem_operand(*mem), i32v(*v)),
        [Imm(a), Imm(b)] => Instruction::with2(code, i32v(*a), i32v(*b)),
        [Reg(a), Reg(b), Reg(c)] => Instruction::with3(code, *a, *b, *c),
        [Reg(a), Reg(b), Imm(v)] => Instruction::with3(code, *a, *b, i32v(*v)),
        [Reg(a), Reg(b), Mem { mem, .. }] => Instruction::with3(code, *a, *b, mem_operand(*mem)),
        [Reg(a), Mem { mem, .. }, Reg(c)] => Instruction::with3(code, *a, mem_operand(*mem), *c),
        [Reg(a), Mem { mem, .. }, Imm(v)] => {
            Instruction::with3(code, *a, mem_operand(*mem), i32v(*v))
        }
        [Mem { mem, .. }, Reg(b), Reg(c)] => Instruction::with3(code, mem_operand(*mem), *b, *c),
        [Mem { mem, .. }, Reg(b), Imm(v)] => {
            Instruction::with3(code, mem_operand(*mem), *b, i32v(*v))
        }
        _ => return None,
    };
    r.ok()
}

/// Decodes `bytes` (in the mode `bits`) into an Intel-syntax listing.
pub fn disassemble(bytes: &[u8], bits: Bits) -> Vec<Insn> {
    let mut dec = Decoder::with_ip(bits.n(), bytes, 0, DecoderOptions::NONE);
    let mut fmt = IntelFormatter::new();
    fmt.options_mut().set_space_after_operand_separator(true);
    fmt.options_mut().set_hex_prefix("0x");
    fmt.options_mut().set_hex_suffix("");
    fmt.options_mut().set_uppercase_hex(false);
    fmt.options_mut()
        .set_memory_size_options(iced_x86::MemorySizeOptions::Minimal);
    fmt.options_mut()
        .set_space_between_memory_add_operators(true);
    fmt.options_mut().set_branch_leading_zeros(false);
    let mut out = Vec::new();
    let mut instr = Instruction::default();
    while dec.can_decode() {
        let offset = dec.position();
        dec.decode_out(&mut instr);
        let mut text = String::new();
        if instr.is_invalid() {
            text.push_str("(bad)");
        } else {
            fmt.format(&instr, &mut text);
        }
        out.push(Insn {
            offset,
            len: instr.len(),
            text,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assemble_line_64(s: &str) -> Result<Vec<u8>, AsmError> {
        assemble_line(s, Bits::B64)
    }

    fn branch_target_64(s: &str) -> Option<(usize, usize)> {
        branch_target(s, Bits::B64)
    }

    fn branch_code_64(s: &str) -> Option<Code> {
        branch_code(s, Bits::B64)
    }

    fn asm(s: &str) -> Vec<u8> {
        assemble_line(s, Bits::B64).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn round_trip(s: &str) -> String {
        let b = asm(s);
        let d = disassemble(&b, Bits::B64);
        assert_eq!(d.len(), 1, "{s} → {b:02x?} → {d:?}");
        d[0].text.clone()
    }

    #[test]
    fn assembles_what_the_templates_use() {
        assert_eq!(asm("push rbp"), vec![0x55]);
        assert_eq!(asm("mov rbp, rsp"), vec![0x48, 0x89, 0xe5]);
        assert_eq!(asm("ret"), vec![0xc3]);
        assert_eq!(
            round_trip("mov eax, [rbx + 0x1000]"),
            "mov eax, [rbx + 0x1000]"
        );
        assert_eq!(round_trip("imul rax, rax"), "imul rax, rax");
        assert_eq!(
            round_trip("mov eax, [rbx + rcx*8 - 8]"),
            "mov eax, [rbx + rcx*8 - 8]"
        );
        assert_eq!(round_trip("lfence"), "lfence");
        assert_eq!(round_trip("add r8b, 1"), "add r8b, 1");
        // Shortest form: imm8 sign-extended.
        assert_eq!(asm("add rax, 1").len(), 4);
        assert_eq!(
            round_trip("mov qword ptr [rdi], 5"),
            "mov qword ptr [rdi], 5"
        );
    }

    #[test]
    fn condition_synonyms_name_ices_mnemonics() {
        assert_eq!(asm("setnz al"), asm("setne al"));
        assert_eq!(asm("cmovz rax, rbx"), asm("cmove rax, rbx"));
        assert_eq!(canonical("JNZ"), "jne");
        assert_eq!(canonical("jc"), "jb");
        assert_eq!(canonical("js"), "js");
    }

    #[test]
    fn branch_targets_are_labels_not_registers_or_numbers() {
        assert_eq!(branch_target_64("jnz top"), Some((4, 7)));
        assert_eq!(branch_target_64("jmp short  top"), Some((11, 14)));
        assert_eq!(branch_target_64("loop top"), Some((5, 8)));
        assert_eq!(branch_target_64("jmp rax"), None);
        assert_eq!(branch_target_64("jmp 5"), None);
        assert_eq!(branch_target_64("mov rax, top"), None);
        assert_eq!(branch_code_64("loop"), Some(Code::Loop_rel8_64_RCX));
        assert_eq!(branch_code_64("jne"), Some(Code::Jne_rel32_64));
        assert_eq!(branch_code_64("jmp"), Some(Code::Jmp_rel32_64));
    }

    #[test]
    fn every_branch_kind_reaches_its_label() {
        let kinds = [
            "jmp", "jz", "jnz", "je", "jne", "jb", "jae", "jc", "jnc", "jbe", "ja", "jl", "jge",
            "jle", "jg", "js", "jns", "jo", "jno", "jp", "jnp", "loop", "loope", "loopne", "jrcxz",
            "call",
        ];
        each_branch_reaches_top(super::super::Isa::X86_64, 64, &kinds);
    }

    /// A block `top: nop` then `K top` for each kind K, assembled for `isa`
    /// and decoded in `bits`-bit mode: each is a valid branch back to 0.
    fn each_branch_reaches_top(isa: super::super::Isa, bits: u32, kinds: &[&str]) {
        let mut lines = vec!["top: nop".to_string()];
        lines.extend(kinds.iter().map(|k| format!("{k} top")));
        let refs: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
        let bytes = isa.assemble_block(&refs, &Default::default()).unwrap();
        let mut dec = Decoder::with_ip(bits, &bytes, 0, DecoderOptions::NONE);
        assert_eq!(dec.decode().mnemonic(), Mnemonic::Nop);
        for k in kinds {
            let i = dec.decode();
            assert!(!i.is_invalid(), "{k}");
            assert_eq!(i.near_branch_target(), 0, "{k}: {i}");
        }
        assert!(!dec.can_decode());
    }

    #[test]
    fn bad_lines_say_why() {
        assert!(assemble_line_64("frobnicate rax")
            .unwrap_err()
            .to_string()
            .contains("unknown"));
        assert!(assemble_line_64("inc [rax]")
            .unwrap_err()
            .to_string()
            .contains("ambiguous"));
        assert!(assemble_line_64("mov eax, rbx")
            .unwrap_err()
            .to_string()
            .contains("no x86-64 form"));
        assert!(assemble_line_64("jnz 5")
            .unwrap_err()
            .to_string()
            .contains("must be a label"));
        assert!(assemble_line_64("mov eax, [rbx")
            .unwrap_err()
            .to_string()
            .contains("never closed"));
    }

    #[test]
    fn x86_32_mode_has_its_own_forms_registers_and_branches() {
        let a32 = |s: &str| assemble_line(s, Bits::B32).unwrap_or_else(|e| panic!("{s}: {e}"));
        // push/pop of 32-bit registers are one byte, as in the paper's listing.
        assert_eq!(a32("push ebp"), vec![0x55]);
        assert_eq!(a32("mov ebp, esp"), vec![0x89, 0xe5]);
        assert_eq!(a32("mov ebx, [ebp + 8]"), vec![0x8b, 0x5d, 0x08]);
        // inc eax is one byte in 32-bit mode (0x40 is a REX prefix in 64-bit mode).
        assert_eq!(a32("inc eax"), vec![0x40]);
        assert_eq!(asm("inc eax"), vec![0xff, 0xc0]);
        for bad in ["push rbx", "mov rax, 1", "mov r8d, eax"] {
            let e = assemble_line(bad, Bits::B32).unwrap_err().to_string();
            assert!(e.contains("no x86-32 form"), "{bad}: {e}");
        }
        // swapgs exists only in 64-bit mode.
        let e = assemble_line("swapgs", Bits::B32).unwrap_err().to_string();
        assert!(e.contains("unknown x86-32 instruction"), "{e}");
        assert_eq!(asm("swapgs"), vec![0x0f, 0x01, 0xf8]);
        assert_eq!(branch_code("loop", Bits::B32), Some(Code::Loop_rel8_32_ECX));
        assert_eq!(branch_code("jne", Bits::B32), Some(Code::Jne_rel32_32));
        assert_eq!(branch_code("jecxz", Bits::B32), Some(Code::Jecxz_rel8_32));
        assert_eq!(branch_code("jrcxz", Bits::B32), None);
        each_branch_reaches_top(
            super::super::Isa::X86_32,
            32,
            &["jmp", "jnz", "jl", "loop", "jecxz", "call"],
        );
        assert_eq!(
            disassemble(&[0x8b, 0x83, 0, 0x10, 0, 0], Bits::B32)[0].text,
            "mov eax, [ebx + 0x1000]"
        );
    }
}
