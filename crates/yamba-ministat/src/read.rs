//! Reading data sets the way ministat's `ReadSet` does.
//!
//! ministat reads with `fgets` into a `BUFSIZ` (8192 byte) buffer, so a
//! line longer than 8191 bytes is seen as several lines (and counted as
//! several in error messages); stops at a NUL byte (`strlen`); strips
//! trailing white space; splits with `strtok` (runs of delimiters are one
//! separator, leading ones are skipped); skips the line at a token that
//! starts with `#`, and at lines with too few tokens; and demands that
//! `strtod` take the whole token of the chosen column. All of that is
//! reproduced here so that any input gives the original's numbers or its
//! error.

use std::io::{BufRead, ErrorKind};

use super::cparse::{is_c_space, strtod};

/// `fgets` reads at most `BUFSIZ - 1` bytes at a time.
const MAX_CHUNK: usize = 8192 - 1;

/// Where the number is on each line: `-C` and `-d`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFormat {
    /// The column to read, counting from 1 (`-C`, default 1).
    pub column: usize,
    /// Every byte here separates columns (`-d`, default space and tab).
    pub delimiters: Vec<u8>,
}

impl Default for InputFormat {
    fn default() -> Self {
        InputFormat {
            column: 1,
            delimiters: b" \t".to_vec(),
        }
    }
}

/// What one `fgets` chunk holds.
#[derive(Debug, PartialEq)]
enum Line {
    /// Blank, a comment, or too few columns.
    Skip,
    Value(f64),
    /// The chosen column is not entirely a number.
    Invalid,
}

/// Reads every value of one input, in input order. On bad data, returns
/// the (1-based, chunk-counted) line number.
pub fn read_values(reader: &mut dyn BufRead, format: &InputFormat) -> Result<Vec<f64>, usize> {
    let mut values = Vec::new();
    let mut chunk = Vec::new();
    let mut line = 0;
    while next_chunk(reader, &mut chunk) {
        line += 1;
        match parse_line(&chunk, format) {
            Line::Skip => {}
            Line::Value(v) => values.push(v),
            Line::Invalid => return Err(line),
        }
    }
    Ok(values)
}

/// `fgets`: up to and including the next newline, at most [`MAX_CHUNK`]
/// bytes. A read error ends the input, as `fgets` returning NULL does (and
/// like glibc, drops what it had read of that chunk).
fn next_chunk(reader: &mut dyn BufRead, chunk: &mut Vec<u8>) -> bool {
    chunk.clear();
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return false,
        };
        if available.is_empty() {
            return !chunk.is_empty();
        }
        let room = MAX_CHUNK - chunk.len();
        let window = &available[..available.len().min(room)];
        let (taken, ends_line) = match window.iter().position(|&b| b == b'\n') {
            Some(newline) => (newline + 1, true),
            None => (window.len(), false),
        };
        chunk.extend_from_slice(&window[..taken]);
        reader.consume(taken);
        if ends_line || chunk.len() == MAX_CHUNK {
            return true;
        }
    }
}

/// One chunk as ministat sees it: up to the first NUL, trailing white
/// space removed, then the chosen column.
fn parse_line(chunk: &[u8], format: &InputFormat) -> Line {
    let text = chunk.split(|&b| b == 0).next().unwrap_or_default();
    let kept = text.len() - text.iter().rev().take_while(|&&b| is_c_space(b)).count();
    let Some(token) = column(&text[..kept], format) else {
        return Line::Skip;
    };
    match strtod(token) {
        (value, used) if used == token.len() => Line::Value(value),
        _ => Line::Invalid,
    }
}

/// The `column`-th `strtok` token, or None when the line runs out first or
/// a token up to it starts a comment.
fn column<'a>(text: &'a [u8], format: &InputFormat) -> Option<&'a [u8]> {
    let tokens = text
        .split(|b| format.delimiters.contains(b))
        .filter(|t| !t.is_empty());
    for (index, token) in tokens.enumerate() {
        if token[0] == b'#' {
            return None;
        }
        if index + 1 == format.column {
            return Some(token);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &[u8], format: &InputFormat) -> Result<Vec<f64>, usize> {
        read_values(&mut &input[..], format)
    }

    fn csv(column: usize) -> InputFormat {
        InputFormat {
            column,
            delimiters: b",".to_vec(),
        }
    }

    #[test]
    fn one_value_per_line_with_comments_and_blanks() {
        let input = b"# head\n1\n\n  2  \n3 # tail\n\t# indented\n4\r\n";
        assert_eq!(
            read(input, &InputFormat::default()),
            Ok(vec![1.0, 2.0, 3.0, 4.0])
        );
    }

    #[test]
    fn chosen_column_with_delimiters() {
        let input = b"a,1\nb,2,x\nc\n,,3\nd,#4\n";
        assert_eq!(read(input, &csv(2)), Ok(vec![1.0, 2.0]));
        assert_eq!(read(b"1, 2\n", &csv(2)), Ok(vec![2.0]));
        assert_eq!(read(b"1,2 ,3\n", &csv(2)), Err(1));
    }

    #[test]
    fn bad_data_reports_its_line() {
        assert_eq!(read(b"1\n2\nthree\n", &InputFormat::default()), Err(3));
        assert_eq!(read(b"1\n2#c\n", &InputFormat::default()), Err(2));
    }

    #[test]
    fn nul_ends_the_line_and_final_newline_is_optional() {
        assert_eq!(
            read(b"1\0junk\n\0\n2", &InputFormat::default()),
            Ok(vec![1.0, 2.0])
        );
    }

    #[test]
    fn long_lines_split_like_fgets() {
        let mut input = vec![b' '; MAX_CHUNK - 1];
        input.extend_from_slice(b"12345x\n");
        // The first chunk ends in "1", the second holds "2345x": line 2.
        assert_eq!(read(&input, &InputFormat::default()), Err(2));
        let mut input = vec![b' '; MAX_CHUNK];
        input.extend_from_slice(b"7\n");
        assert_eq!(read(&input, &InputFormat::default()), Ok(vec![7.0]));
    }
}
