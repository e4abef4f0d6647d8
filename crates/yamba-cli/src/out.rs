//! Everything the command prints goes through here (the crate's
//! `print!`, `println!`, `eprint!` and `eprintln!` are the macros of
//! main.rs, which call [`print`]):
//!
//! - text from a results file, a history store or a peer may hold control
//!   characters (an escape sequence retitles or clears a terminal, a
//!   carriage return hides what came before it); every control character
//!   but newline and tab, and the bidirectional overrides, are printed
//!   escaped (`\u{1b}`), so no file can drive the terminal;
//! - a reader that has gone away (`yamba … | head -1`) is not an error:
//!   standard output is then dropped quietly and the command finishes its
//!   work (a run still saves and records its results) and exits with its
//!   own status — never a panic.

use std::borrow::Cow;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Whether standard output's reader has gone away (a loop that only
/// prints can stop).
pub fn stdout_gone() -> bool {
    STDOUT_GONE.load(Ordering::Relaxed)
}

/// Characters never printed as they are.
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every control character but newline and tab (and the
/// bidirectional overrides) escaped.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if unsafe_char(c) {
            match c {
                '\r' => out.push_str("\\r"),
                c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Prints `args` on standard output (or error), made terminal-safe; a
/// broken pipe marks standard output gone and drops the rest.
pub fn print(to_stderr: bool, args: std::fmt::Arguments<'_>) {
    let owned;
    let text: &str = match args.as_str() {
        Some(s) => s,
        None => {
            owned = args.to_string();
            &owned
        }
    };
    write(to_stderr, text);
}

/// Writes `text`, made terminal-safe.
pub fn write(to_stderr: bool, text: &str) {
    let safe = terminal_safe(text);
    write_raw(to_stderr, safe.as_bytes());
}

/// Writes bytes as they are (completion scripts, manual pages).
pub fn write_raw(to_stderr: bool, bytes: &[u8]) {
    if to_stderr {
        let _ = std::io::stderr().lock().write_all(bytes);
        return;
    }
    if stdout_gone() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_GONE.store(true, Ordering::Relaxed);
        }
    }
}

/// Flushes standard output (a broken pipe marks it gone).
pub fn flush() {
    if stdout_gone() {
        return;
    }
    if let Err(e) = std::io::stdout().lock().flush() {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_GONE.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_text_kept() {
        assert_eq!(terminal_safe("a\tb\nc"), "a\tb\nc");
        assert_eq!(
            terminal_safe("x\u{1b}[2J\r\u{9b}\u{7}\u{202e}"),
            "x\\u{1b}[2J\\r\\u{9b}\\u{7}\\u{202e}"
        );
        assert_eq!(terminal_safe("µs ± 95%"), "µs ± 95%");
    }
}
