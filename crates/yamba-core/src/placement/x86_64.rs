//! Moving x86-64 machine code: the compiled bytes copied as they are,
//! with the relative references that leave the function re-aimed.

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, OpKind};

/// This adapter moves code.
pub fn supported() -> Result<(), String> {
    Ok(())
}

/// How far the copies may sit from the executable's code: rel32 reaches
/// ±2 GiB.
pub const REACH: usize = 1 << 30;

/// x86 keeps instruction fetch coherent with stores: nothing to do.
pub fn sync(_addr: usize, _len: usize) {}

/// The bytes of the function `code`, compiled to run at `from`, made to
/// run at `to`: every relative reference whose target lies outside the
/// function (a call or jump to other code, RIP-relative data) keeps its
/// target; those inside it move with it. Refuses what cannot be moved
/// faithfully: an indirect jump through a register (a jump table's
/// entries would lead back into the original), a short jump out of the
/// function, a target out of reach; then checks the copy by decoding it
/// at `to` against the original.
pub fn relocate(code: &[u8], from: u64, to: u64) -> Result<Vec<u8>, String> {
    let end = from + code.len() as u64;
    let inside = |t: u64| (from..end).contains(&t);
    let mut out = code.to_vec();
    let mut d = Decoder::with_ip(64, code, from, DecoderOptions::NONE);
    let mut ins = Instruction::default();
    while d.can_decode() {
        d.decode_out(&mut ins);
        let at = (ins.ip() - from) as usize;
        if ins.is_invalid() {
            return Err(format!("undecodable code at +{at:#x}"));
        }
        if ins.flow_control() == FlowControl::IndirectBranch && !ins.is_ip_rel_memory_operand() {
            return Err(format!(
                "an indirect jump at +{at:#x} (a jump table's targets would lead back to the original code)"
            ));
        }
        let offsets = d.get_constant_offsets(&ins);
        let new_next = (ins.next_ip() - from + to) as i64;
        let near = (0..ins.op_count()).any(|i| ins.op_kind(i) == OpKind::NearBranch64);
        if near && !inside(ins.near_branch_target()) {
            if offsets.immediate_size() != 4 {
                return Err(format!("a short branch out of the function at +{at:#x}"));
            }
            put_rel32(
                &mut out,
                at + offsets.immediate_offset(),
                ins.near_branch_target(),
                new_next,
            )?;
        }
        if ins.is_ip_rel_memory_operand() && !inside(ins.ip_rel_memory_address()) {
            if offsets.displacement_size() == 0 {
                return Err(format!("no displacement field at +{at:#x}"));
            }
            put_rel32(
                &mut out,
                at + offsets.displacement_offset(),
                ins.ip_rel_memory_address(),
                new_next,
            )?;
        }
    }
    verify(code, from, &out, to)?;
    Ok(out)
}

/// Writes `target − next` as the rel32 field at `pos`.
fn put_rel32(out: &mut [u8], pos: usize, target: u64, next: i64) -> Result<(), String> {
    let rel = i32::try_from(target as i64 - next)
        .map_err(|_| format!("target {target:#x} is out of a rel32's reach from the copy"))?;
    out.get_mut(pos..pos + 4)
        .ok_or("a displacement past the end of the function")?
        .copy_from_slice(&rel.to_le_bytes());
    Ok(())
}

/// The copy at `to` decodes to the same instructions as the original at
/// `from`, each leaving-the-function target the same address, each
/// inside target moved by `to − from`.
fn verify(code: &[u8], from: u64, copy: &[u8], to: u64) -> Result<(), String> {
    let end = from + code.len() as u64;
    let moved = |t: u64| {
        if (from..end).contains(&t) {
            t - from + to
        } else {
            t
        }
    };
    let a = Decoder::with_ip(64, code, from, DecoderOptions::NONE);
    let b = Decoder::with_ip(64, copy, to, DecoderOptions::NONE);
    for (x, y) in a.into_iter().zip(b) {
        let same = x.code() == y.code()
            && x.len() == y.len()
            && (!x.is_ip_rel_memory_operand()
                || moved(x.ip_rel_memory_address()) == y.ip_rel_memory_address())
            && ((0..x.op_count()).all(|i| x.op_kind(i) != OpKind::NearBranch64)
                || moved(x.near_branch_target()) == y.near_branch_target());
        if !same {
            return Err(format!(
                "the copy differs from the original at +{:#x}",
                x.ip() - from
            ));
        }
    }
    Ok(())
}

/// A stub at `at` that moves the stack down by `stack` bytes (a multiple
/// of 16, so the callee sees the alignment the ABI promises) and calls
/// `target` with the caller's arguments:
/// `push rbp; mov rbp, rsp; sub rsp, stack; call target; leave; ret`.
pub fn stub(at: u64, target: u64, stack: u32) -> Result<Vec<u8>, String> {
    debug_assert_eq!(stack % 16, 0);
    let mut b = vec![0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec];
    b.extend_from_slice(&stack.to_le_bytes());
    b.push(0xe8);
    let next = at + b.len() as u64 + 4;
    let rel = i32::try_from(target as i64 - next as i64)
        .map_err(|_| "the copy is out of the stub's call reach".to_string())?;
    b.extend_from_slice(&rel.to_le_bytes());
    b.extend_from_slice(&[0xc9, 0xc3]);
    Ok(b)
}

/// Bytes [`stub`] writes.
pub const STUB_BYTES: usize = 18;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_targets_are_kept_and_inside_ones_move() {
        // call rel32 (outside), jne short (inside), lea rax,[rip+X] (outside), ret
        let from = 0x1000_0000u64;
        let code = [
            0xe8, 0x00, 0x10, 0x00, 0x00, // call from+5+0x1000
            0x75, 0xf9, // jne from (inside: back to the call)
            0x48, 0x8d, 0x05, 0x00, 0x20, 0x00, 0x00, // lea rax,[rip+0x2000]
            0xc3,
        ];
        let to = 0x1800_0000u64;
        let copy = relocate(&code, from, to).unwrap();
        let ins: Vec<Instruction> = Decoder::with_ip(64, &copy, to, DecoderOptions::NONE)
            .into_iter()
            .collect();
        assert_eq!(ins[0].near_branch_target(), from + 5 + 0x1000);
        assert_eq!(ins[1].near_branch_target(), to);
        assert_eq!(copy[5..7], code[5..7], "an inside jump is copied as it is");
        assert_eq!(ins[2].ip_rel_memory_address(), from + 14 + 0x2000);
    }

    #[test]
    fn what_cannot_move_faithfully_is_refused() {
        // jmp rax: a jump table's dispatch.
        let e = relocate(&[0xff, 0xe0], 0x1000, 0x9000).unwrap_err();
        assert!(e.contains("indirect jump"), "{e}");
        // jmp short out of the function.
        let e = relocate(&[0xeb, 0x10], 0x1000, 0x9000).unwrap_err();
        assert!(e.contains("short branch"), "{e}");
        // A call 3 GiB away.
        let e = relocate(&[0xe8, 0, 0, 0, 0], 0x1000, 0xc000_0000).unwrap_err();
        assert!(e.contains("reach"), "{e}");
    }

    #[test]
    fn the_stub_keeps_arguments_and_moves_the_stack() {
        let s = stub(0x1000, 0x1100, 64).unwrap();
        assert_eq!(s.len(), STUB_BYTES);
        use iced_x86::Mnemonic::*;
        let ins: Vec<Instruction> = Decoder::with_ip(64, &s, 0x1000, DecoderOptions::NONE)
            .into_iter()
            .collect();
        let mnemonics: Vec<_> = ins.iter().map(|i| i.mnemonic()).collect();
        assert_eq!(mnemonics, [Push, Mov, Sub, Call, Leave, Ret]);
        assert_eq!(ins[2].immediate32(), 64);
        assert_eq!(ins[3].near_branch_target(), 0x1100);
    }
}
