//! Moving AArch64 machine code: the compiled words copied as they are,
//! with the PC-relative ones whose target lies outside the function
//! re-aimed at it. Pure arithmetic on instruction words, compiled on every
//! platform so that its tests run everywhere; `aarch64.rs` uses it.

/// The bytes of the function `code`, compiled to run at `from`, made to
/// run at `to`: B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ, ADR and LDR (literal)
/// whose target is outside the function keep it; those inside move with
/// the function. ADRP always keeps its page (its partner instruction
/// adds the low 12 bits of the original address). Refuses an indirect
/// jump (BR: a jump table's targets would lead back to the original) and
/// a target out of the instruction's reach from the copy.
pub fn relocate(code: &[u8], from: u64, to: u64) -> Result<Vec<u8>, String> {
    if !code.len().is_multiple_of(4) || !from.is_multiple_of(4) || !to.is_multiple_of(4) {
        return Err("AArch64 code is not made of aligned 4-byte words".into());
    }
    let end = from + code.len() as u64;
    let inside = |t: u64| (from..end).contains(&t);
    let mut out = Vec::with_capacity(code.len());
    for (i, word) in code.chunks_exact(4).enumerate() {
        let w = u32::from_le_bytes(word.try_into().expect("4 bytes"));
        let pc = from + 4 * i as u64;
        let new_pc = to + 4 * i as u64;
        let at = 4 * i;
        let moved = |field: Field| -> Result<u32, String> {
            let target = pc.wrapping_add(field.offset(w) as u64);
            if inside(target) {
                return Ok(w);
            }
            field
                .with(w, target.wrapping_sub(new_pc) as i64)
                .ok_or_else(|| {
                    format!("a branch or load at +{at:#x} would be out of reach from the copy")
                })
        };
        let w = if w & 0xFFFF_FC1F == 0xD61F_0000 {
            return Err(format!(
                "an indirect jump (BR) at +{at:#x} (a jump table's targets would lead back to the original code)"
            ));
        } else if w & 0x7C00_0000 == 0x1400_0000 {
            moved(Field::Imm26)?
        } else if w & 0xFF00_0010 == 0x5400_0000
            || w & 0x7E00_0000 == 0x3400_0000
            || w & 0x3B00_0000 == 0x1800_0000
        {
            moved(Field::Imm19)?
        } else if w & 0x7E00_0000 == 0x3600_0000 {
            moved(Field::Imm14)?
        } else if w & 0x9F00_0000 == 0x1000_0000 {
            moved(Field::Adr)?
        } else if w & 0x9F00_0000 == 0x9000_0000 {
            let page = (pc & !0xFFF).wrapping_add((Field::Adr.offset(w) << 12) as u64);
            let delta = (page as i64).wrapping_sub((new_pc & !0xFFF) as i64) >> 12;
            Field::Adr
                .with(w, delta)
                .ok_or_else(|| format!("an ADRP at +{at:#x} would be out of reach from the copy"))?
        } else {
            w
        };
        out.extend_from_slice(&w.to_le_bytes());
    }
    Ok(out)
}

/// A PC-relative immediate and where it sits in the word.
#[derive(Clone, Copy)]
enum Field {
    /// B, BL: bits 0–25, in words.
    Imm26,
    /// B.cond, CBZ/CBNZ, LDR literal: bits 5–23, in words.
    Imm19,
    /// TBZ/TBNZ: bits 5–18, in words.
    Imm14,
    /// ADR (bytes) and ADRP (pages): immlo bits 29–30, immhi bits 5–23.
    Adr,
}

impl Field {
    /// The signed offset the word holds (bytes; pages for ADRP's).
    fn offset(self, w: u32) -> i64 {
        let sext = |v: u32, bits: u32| ((v << (32 - bits)) as i32 >> (32 - bits)) as i64;
        match self {
            Field::Imm26 => sext(w & 0x03FF_FFFF, 26) * 4,
            Field::Imm19 => sext((w >> 5) & 0x7FFFF, 19) * 4,
            Field::Imm14 => sext((w >> 5) & 0x3FFF, 14) * 4,
            Field::Adr => sext(((w >> 5) & 0x7FFFF) << 2 | ((w >> 29) & 3), 21),
        }
    }

    /// The word with its offset set to `delta` (bytes; pages for ADRP),
    /// or None when it does not fit.
    fn with(self, w: u32, delta: i64) -> Option<u32> {
        let fits = |v: i64, bits: u32| (-(1i64 << (bits - 1))..(1i64 << (bits - 1))).contains(&v);
        match self {
            Field::Imm26 | Field::Imm19 | Field::Imm14 if delta % 4 != 0 => None,
            Field::Imm26 => fits(delta / 4, 26)
                .then_some((w & !0x03FF_FFFF) | ((delta / 4) as u32 & 0x03FF_FFFF)),
            Field::Imm19 => fits(delta / 4, 19)
                .then_some((w & !(0x7FFFF << 5)) | (((delta / 4) as u32 & 0x7FFFF) << 5)),
            Field::Imm14 => fits(delta / 4, 14)
                .then_some((w & !(0x3FFF << 5)) | (((delta / 4) as u32 & 0x3FFF) << 5)),
            Field::Adr => fits(delta, 21).then(|| {
                let v = delta as u32 & 0x1F_FFFF;
                (w & !((0x7FFFF << 5) | (3 << 29))) | ((v >> 2) << 5) | ((v & 3) << 29)
            }),
        }
    }
}

/// A stub at `at` that moves the stack down by `stack` bytes (a multiple
/// of 16 below 4096, so SP stays aligned) and calls `target` with the
/// caller's arguments: `stp x29, x30, [sp, #-16]!; mov x29, sp;
/// sub sp, sp, #stack; bl target; mov sp, x29; ldp x29, x30, [sp], #16; ret`.
pub fn stub(at: u64, target: u64, stack: u32) -> Result<Vec<u8>, String> {
    if !stack.is_multiple_of(16) || stack > 4095 {
        return Err(format!("a stack offset of {stack} bytes"));
    }
    let bl = Field::Imm26
        .with(0x9400_0000, target.wrapping_sub(at + 12) as i64)
        .ok_or("the copy is out of the stub's call reach")?;
    let words = [
        0xA9BF_7BFD,
        0x9100_03FD,
        0xD100_03FF | (stack << 10),
        bl,
        0x9100_03BF,
        0xA8C1_7BFD,
        0xD65F_03C0,
    ];
    Ok(words.iter().flat_map(|w: &u32| w.to_le_bytes()).collect())
}

/// Bytes [`stub`] writes.
pub const STUB_BYTES: usize = 28;

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn word(b: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
    }

    #[test]
    fn outside_targets_are_kept_and_inside_ones_move() {
        let from = 0x40_0000u64;
        let to = 0x50_0000u64;
        let code = words(&[
            0x9400_0400, // bl from + 0x1000 (outside)
            0x54FF_FFE1, // b.ne from (inside: back one word)
            0x9000_0010, // adrp x16, page of from
            0x5800_0080, // ldr x0, from+12+16 (outside: past the end)
            0xD65F_03C0, // ret
        ]);
        let copy = relocate(&code, from, to).unwrap();
        // bl: from + 0x1000 from the copy's pc.
        let bl = word(&copy, 0);
        assert_eq!(Field::Imm26.offset(bl), (from + 0x1000) as i64 - to as i64);
        assert_eq!(
            word(&copy, 1),
            word(&code, 1),
            "an inside branch is copied as it is"
        );
        let adrp = word(&copy, 2);
        assert_eq!(
            ((to + 8) & !0xFFF) as i64 + (Field::Adr.offset(adrp) << 12),
            (from & !0xFFF) as i64
        );
        let ldr = word(&copy, 3);
        assert_eq!(
            to as i64 + 12 + Field::Imm19.offset(ldr),
            (from + 12 + 16) as i64
        );
        assert_eq!(word(&copy, 4), 0xD65F_03C0);
    }

    #[test]
    fn what_cannot_move_faithfully_is_refused() {
        // br x16: a jump table's dispatch.
        let e = relocate(&words(&[0xD61F_0200]), 0x1000, 0x9000).unwrap_err();
        assert!(e.contains("indirect jump"), "{e}");
        // cbz out of the function, 2 MiB away from the copy: beyond ±1 MiB.
        let e = relocate(&words(&[0xB400_0040]), 0x1000, 0x20_0000).unwrap_err();
        assert!(e.contains("reach"), "{e}");
        // bl 256 MiB away: beyond ±128 MiB.
        let e = relocate(&words(&[0x9400_0001]), 0x1000, 0x1000_0000).unwrap_err();
        assert!(e.contains("reach"), "{e}");
    }

    #[test]
    fn the_stub_saves_the_frame_moves_the_stack_and_calls() {
        let s = stub(0x1000, 0x2000, 64).unwrap();
        assert_eq!(s.len(), STUB_BYTES);
        assert_eq!(word(&s, 2), 0xD101_03FF, "sub sp, sp, #64");
        assert_eq!(Field::Imm26.offset(word(&s, 3)), 0x2000 - 0x100C);
        assert!(stub(0x1000, 0x2000, 8).is_err());
    }
}
