//! Plain numbers, as `yamba plot -` reads them from a pipe: the seed's
//! `bench -o` lines (`BASE 12 13 12 …`, a label word then the values), a
//! column from `yamba obs`, or anything separated by blanks or commas.

use std::fmt;

/// Text that is not a list of numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberError {
    /// 1-based line number.
    pub line: usize,
    pub token: String,
    pub why: &'static str,
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {:?} {}", self.line, self.token, self.why)
    }
}

impl std::error::Error for NumberError {}

/// Parses every number in `text`, in order. Blank lines and `#` comments
/// are skipped; the first word of a line may be a label (not a number),
/// which is skipped too. Anything else that is not a finite number is an
/// error naming the line, so a typo never becomes a silently missing value.
pub fn parse_numbers(text: &str) -> Result<Vec<f64>, NumberError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        let tokens = line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty());
        for (j, tok) in tokens.enumerate() {
            match parse_one(tok) {
                Some(v) if v.is_finite() => out.push(v),
                Some(_) => {
                    return Err(NumberError {
                        line: i + 1,
                        token: tok.to_string(),
                        why: "is not a finite number",
                    })
                }
                None if j == 0 => {} // a label word, as in `bench -o` output
                None => {
                    return Err(NumberError {
                        line: i + 1,
                        token: tok.chars().take(40).collect(),
                        why: "is not a number",
                    })
                }
            }
        }
    }
    Ok(out)
}

/// A decimal number: digits, sign, point and exponent only, so that words
/// like `inf` or `nan` count as labels, not values.
fn parse_one(tok: &str) -> Option<f64> {
    let numeric = tok
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'));
    if !numeric || !tok.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    tok.parse().ok()
}
