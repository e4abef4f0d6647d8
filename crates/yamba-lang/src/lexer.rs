//! Tokens. `asm { … }` bodies are taken raw (brace-balanced), so their
//! text reaches the assembler untouched.

use crate::source::{Diag, Span};

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// An integer literal and its text (the text gives a hex literal's bytes).
    Int(i64, String),
    Str(String),
    /// The raw text of an `asm { … }` block, without the braces.
    Asm(String),
    Punct(&'static str),
    Eof,
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

const PUNCTS: [&str; 42] = [
    "<<=", ">>=", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=",
    "&=", "|=", "^=", "<<", ">>", "->", "{", "}", "(", ")", "[", "]", "<", ">", ";", ",", ".", "=",
    "+", "-", "*", "/", "%", "&", "|", "^", "!",
];
const PUNCTS1: [&str; 3] = ["~", "?", ":"];

/// Splits `text` (file `file`) into tokens; errors are collected and the
/// offending character skipped, so one pass reports them all.
pub fn lex(file: usize, text: &str, diags: &mut Vec<Diag>) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if text[i..].starts_with("//") || c == b'#' {
            // `#` lines (a C preprocessor's) are comments too.
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if text[i..].starts_with("/*") {
            match text[i + 2..].find("*/") {
                Some(e) => i += e + 4,
                None => {
                    diags.push(Diag::error(
                        Span::new(file, i, i + 2),
                        "comment never closed (missing */)",
                    ));
                    i = b.len();
                }
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            if word == "asm" {
                if let Some((body, body_start, end)) = asm_body(text, i) {
                    out.push(Token {
                        tok: Tok::Asm(body.to_string()),
                        span: Span::new(file, body_start, body_start + body.len()),
                    });
                    i = end;
                    continue;
                } else if let Some(open) = text[i..].find('{').map(|o| o + i) {
                    if text[i..open].trim().is_empty() {
                        diags.push(Diag::error(
                            Span::new(file, start, open + 1),
                            "asm block never closed (missing })",
                        ));
                        i = b.len();
                        continue;
                    }
                }
            }
            out.push(Token {
                tok: Tok::Ident(word.to_string()),
                span: Span::new(file, start, i),
            });
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let t = &text[start..i];
            let digits = t.trim_end_matches(['u', 'U', 'l', 'L']).replace('_', "");
            let parsed = if let Some(h) = digits
                .strip_prefix("0x")
                .or_else(|| digits.strip_prefix("0X"))
            {
                u64::from_str_radix(h, 16).map(|v| v as i64)
            } else if let Some(bn) = digits.strip_prefix("0b") {
                u64::from_str_radix(bn, 2).map(|v| v as i64)
            } else {
                digits.parse::<u64>().map(|v| v as i64)
            };
            match parsed {
                Ok(v) => out.push(Token {
                    tok: Tok::Int(v, t.to_string()),
                    span: Span::new(file, start, i),
                }),
                Err(_) => diags.push(Diag::error(
                    Span::new(file, start, i),
                    format!("bad number '{t}' (decimal, 0x hex or 0b binary; at most 64 bits)"),
                )),
            }
            continue;
        }
        if c == b'"' {
            i += 1;
            let mut s = String::new();
            let mut closed = false;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        closed = true;
                        i += 1;
                        break;
                    }
                    b'\n' => break,
                    b'\\' if i + 1 < b.len() => {
                        s.push(match b[i + 1] {
                            b'n' => '\n',
                            b't' => '\t',
                            o => o as char,
                        });
                        i += 2;
                    }
                    _ => {
                        let ch = text[i..].chars().next().unwrap();
                        s.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            if !closed {
                diags.push(Diag::error(
                    Span::new(file, start, i),
                    "string never closed (missing \")",
                ));
            }
            out.push(Token {
                tok: Tok::Str(s),
                span: Span::new(file, start, i),
            });
            continue;
        }
        if let Some(p) = PUNCTS
            .iter()
            .chain(PUNCTS1.iter())
            .find(|p| text[i..].starts_with(**p))
        {
            i += p.len();
            out.push(Token {
                tok: Tok::Punct(p),
                span: Span::new(file, start, i),
            });
            continue;
        }
        let ch = text[i..].chars().next().unwrap();
        diags.push(Diag::error(
            Span::new(file, i, i + ch.len_utf8()),
            format!("unexpected character {ch:?}"),
        ));
        i += ch.len_utf8();
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(file, b.len(), b.len()),
    });
    out
}

/// After the word `asm` at `i`: whitespace, `{`, text with balanced braces,
/// `}`. Returns (text, its start, index after the closing brace).
fn asm_body(text: &str, mut i: usize) -> Option<(&str, usize, usize)> {
    let b = text.as_bytes();
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    if i >= b.len() || b[i] != b'{' {
        return None;
    }
    let start = i + 1;
    let mut depth = 1;
    let mut j = start;
    while j < b.len() {
        match b[j] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&text[start..j], start, j + 1));
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asm_bodies_are_raw_and_hex_keeps_its_text() {
        let mut d = Vec::new();
        let t = lex(0, "0x8B83 asm { mov eax, [eax] } x.y(1)", &mut d);
        assert!(d.is_empty());
        assert_eq!(t[0].tok, Tok::Int(0x8B83, "0x8B83".into()));
        assert_eq!(t[1].tok, Tok::Asm(" mov eax, [eax] ".into()));
        assert_eq!(t[2].tok, Tok::Ident("x".into()));
        assert_eq!(t[3].tok, Tok::Punct("."));
    }

    #[test]
    fn bad_characters_are_all_reported() {
        let mut d = Vec::new();
        lex(0, "a @ b $ c", &mut d);
        assert_eq!(d.len(), 2);
    }
}
