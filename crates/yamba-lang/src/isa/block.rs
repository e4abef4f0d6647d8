//! An asm block as a unit: labels (`name:` alone or before an instruction)
//! and branches to them, resolved inside the block. Which label each branch
//! names is decided here, for both ISAs, so the label errors read the same;
//! the ISA adapters then encode with their own branch resolution (iced's
//! block encoder, asm-rs's labels) — no displacement is computed here.

use super::{AsmError, Isa};
use crate::source::{Diag, Sources, Span};
use std::collections::{HashMap, HashSet};

/// One instruction of a block, ready for an ISA adapter.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// Index of its line in the block's lines.
    pub line: usize,
    /// The instruction's text (labels before it removed).
    pub text: &'a str,
    /// Where `text` starts in its line.
    pub lo: usize,
    pub target: Option<Target>,
}

/// The label a branch goes to.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The item the label stands before; the item count when it ends the block.
    pub item: usize,
    /// The label operand's byte range in the item's text.
    pub lo: usize,
    pub hi: usize,
}

/// An error of one line of a block: the byte range in that line's text it
/// is about (the whole line when None), and for a label defined twice, the
/// first definition's line and range.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockError {
    pub line: usize,
    pub part: Option<(usize, usize)>,
    pub error: AsmError,
    pub first: Option<(usize, usize, usize)>,
}

impl BlockError {
    fn line(line: usize, error: AsmError) -> BlockError {
        BlockError {
            line,
            part: None,
            error,
            first: None,
        }
    }

    fn at(line: usize, lo: usize, hi: usize, error: AsmError) -> BlockError {
        BlockError {
            part: Some((lo, hi)),
            ..BlockError::line(line, error)
        }
    }

    /// An error of `it`'s instruction (not of the labels before it).
    pub fn item(it: &Item, error: AsmError) -> BlockError {
        BlockError::at(it.line, it.lo, it.lo + it.text.len(), error)
    }

    /// The located diagnostic: `block` is the asm block's text span and
    /// `lines` its lines with their offsets in it (see [`super::asm_lines`]).
    pub fn diag(&self, isa: Isa, sources: &Sources, block: Span, lines: &[(usize, &str)]) -> Diag {
        let place = |line: usize, part: Option<(usize, usize)>| {
            let (off, text) = lines[line];
            let (lo, hi) = part.unwrap_or((0, text.len()));
            let at = block.lo as usize + off;
            Span::new(block.file, at + lo, at + hi)
        };
        let d = Diag::error(
            place(self.line, self.part),
            format!("{} asm: {}", isa.name(), self.error),
        );
        match self.first {
            Some((line, lo, hi)) => d.note(format!(
                "first defined at {}",
                sources.location(place(line, Some((lo, hi))))
            )),
            None => d,
        }
    }
}

/// A piece of a line and its offset in the line.
pub type Located<'a> = (usize, &'a str);

/// A line split into the labels it defines and its instruction, if any.
pub fn split_labels(line: &str) -> (Vec<Located<'_>>, Option<Located<'_>>) {
    let mut labels = Vec::new();
    let mut pos = 0;
    loop {
        let rest = &line[pos..];
        let start = pos + (rest.len() - rest.trim_start().len());
        let n = ident_len(&line[start..]);
        let after = &line[start + n..];
        let colon = after.len() - after.trim_start().len();
        if n == 0 || !after[colon..].starts_with(':') {
            let text = line[start..].trim_end();
            return (labels, (!text.is_empty()).then_some((start, text)));
        }
        labels.push((start, &line[start..start + n]));
        pos = start + n + colon + 1;
    }
}

/// Length of the identifier `s` starts with (0 when none): a letter, `_`
/// or `.`, then letters, digits, `_`, `.` or `$`.
pub fn ident_len(s: &str) -> usize {
    let mut chars = s.char_indices();
    match chars.next() {
        Some((_, c)) if c.is_ascii_alphabetic() || c == '_' || c == '.' => {}
        _ => return 0,
    }
    chars
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')))
        .map_or(s.len(), |(i, _)| i)
}

/// The identifiers of `s` with their offsets.
fn idents(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let n = ident_len(&s[i..]);
        let prev_word = s[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        if n > 0 && !prev_word {
            out.push((i, &s[i..i + n]));
            i += n;
        } else {
            i += s[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

/// The labels `lines` define, for telling a branch out of the block from
/// one to a label defined nowhere.
pub fn labels_defined<'a>(lines: impl IntoIterator<Item = &'a str>) -> HashSet<String> {
    lines
        .into_iter()
        .flat_map(|l| split_labels(l).0)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// The block's instructions with their branches' labels resolved, or every
/// label error. `elsewhere`: labels of the program's other asm blocks.
pub fn resolve<'a>(
    isa: Isa,
    lines: &[&'a str],
    elsewhere: &HashSet<String>,
) -> Result<Vec<Item<'a>>, Vec<BlockError>> {
    let mut errors = Vec::new();
    let mut items = Vec::new();
    let mut defs: HashMap<&str, (usize, usize, usize)> = HashMap::new();
    let mut label_item: HashMap<&str, usize> = HashMap::new();
    for (li, line) in lines.iter().enumerate() {
        let (labels, instr) = split_labels(line);
        for (lo, name) in labels {
            let hi = lo + name.len();
            if isa.is_register(name) {
                errors.push(BlockError::at(
                    li,
                    lo,
                    hi,
                    AsmError::RegisterLabel(name.into()),
                ));
            } else if let Some(&first) = defs.get(name) {
                errors.push(BlockError {
                    first: Some(first),
                    ..BlockError::at(li, lo, hi, AsmError::DuplicateLabel(name.into()))
                });
            } else {
                defs.insert(name, (li, lo, hi));
                label_item.insert(name, items.len());
            }
        }
        if let Some((lo, text)) = instr {
            items.push(Item {
                line: li,
                text,
                lo,
                target: None,
            });
        }
    }
    for it in &mut items {
        let (line, at) = (it.line, it.lo);
        let err = |a: usize, b: usize, e| BlockError::at(line, at + a, at + b, e);
        if let Some((a, b)) = isa.branch_target(it.text) {
            let name = &it.text[a..b];
            match label_item.get(name) {
                Some(&k) => {
                    it.target = Some(Target {
                        item: k,
                        lo: a,
                        hi: b,
                    })
                }
                None if elsewhere.contains(name) => {
                    errors.push(err(a, b, AsmError::BranchOutOfBlock(name.into())))
                }
                None => errors.push(err(a, b, AsmError::UndefinedLabel(name.into()))),
            }
            continue;
        }
        let mnemonic_end = it.text.find(char::is_whitespace).unwrap_or(it.text.len());
        for (off, name) in idents(&it.text[mnemonic_end..]) {
            if defs.contains_key(name) || elsewhere.contains(name) {
                let (a, b) = (mnemonic_end + off, mnemonic_end + off + name.len());
                errors.push(err(
                    a,
                    b,
                    AsmError::LabelNotBranch {
                        label: name.into(),
                        mnemonic: it.text[..mnemonic_end].into(),
                    },
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(items)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_split_off_with_offsets() {
        assert_eq!(split_labels("top:"), (vec![(0, "top")], None));
        assert_eq!(
            split_labels("a: b : add rax, 1"),
            (vec![(0, "a"), (3, "b")], Some((7, "add rax, 1")))
        );
        assert_eq!(
            split_labels("mov rax, fs:[0]"),
            (vec![], Some((0, "mov rax, fs:[0]")))
        );
        assert_eq!(split_labels("b.ne top"), (vec![], Some((0, "b.ne top"))));
    }

    #[test]
    fn identifiers_are_whole_words() {
        assert_eq!(
            idents(" rax, [rbx+top*8] x1"),
            vec![(1, "rax"), (7, "rbx"), (11, "top"), (18, "x1")]
        );
    }
}
