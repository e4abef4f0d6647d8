//! Source files, spans and diagnostics.
//!
//! Every error the language reports carries a span; rendering (file:line:col,
//! the source line and a caret under the offending text) is codespan-reporting's.

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;
use std::path::{Path, PathBuf};

/// A byte range in one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub file: usize,
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(file: usize, lo: usize, hi: usize) -> Span {
        Span {
            file,
            lo: lo as u32,
            hi: hi.max(lo) as u32,
        }
    }

    /// From the start of `self` to the end of `other` (same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// One error (or warning) at a place in the source.
#[derive(Debug, Clone, PartialEq)]
pub struct Diag {
    pub span: Span,
    pub message: String,
    /// Extra lines shown under the caret (`= note: …`).
    pub notes: Vec<String>,
    pub warning: bool,
}

impl Diag {
    pub fn error(span: Span, message: impl Into<String>) -> Diag {
        Diag {
            span,
            message: message.into(),
            notes: Vec::new(),
            warning: false,
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diag {
        Diag {
            warning: true,
            ..Diag::error(span, message)
        }
    }

    pub fn note(mut self, n: impl Into<String>) -> Diag {
        self.notes.push(n.into());
        self
    }
}

/// The files of one program (the main file and what it includes).
#[derive(Debug, Default, Clone)]
pub struct Sources {
    files: Vec<(PathBuf, String)>,
}

impl Sources {
    pub fn new() -> Sources {
        Sources::default()
    }

    /// Adds a file's text; returns its id.
    pub fn add(&mut self, path: impl Into<PathBuf>, text: impl Into<String>) -> usize {
        self.files.push((path.into(), text.into()));
        self.files.len() - 1
    }

    pub fn text(&self, file: usize) -> &str {
        &self.files[file].1
    }

    pub fn path(&self, file: usize) -> &Path {
        &self.files[file].0
    }

    pub fn find(&self, path: &Path) -> Option<usize> {
        self.files.iter().position(|(p, _)| p == path)
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, file: usize, offset: u32) -> (usize, usize) {
        let text = self.text(file);
        let off = (offset as usize).min(text.len());
        let before = &text[..off];
        let line = before.matches('\n').count() + 1;
        let col = before
            .rfind('\n')
            .map_or(before.chars().count(), |i| before[i + 1..].chars().count())
            + 1;
        (line, col)
    }

    /// `file:line:col` of a span's start.
    pub fn location(&self, span: Span) -> String {
        let (l, c) = self.line_col(span.file, span.lo);
        format!("{}:{l}:{c}", self.path(span.file).display())
    }

    /// A diagnostic rendered like rustc's: header, `--> file:line:col`,
    /// the line, a caret under the span, notes. No colour.
    pub fn render(&self, d: &Diag) -> String {
        // Control characters render with no width, so no caret would show:
        // draw them as '?', keeping every byte offset.
        let shown: Vec<String> = self
            .files
            .iter()
            .map(|(_, t)| {
                t.chars()
                    .map(|c| {
                        if c.is_control() && !matches!(c, '\n' | '\t' | '\r') {
                            "?".repeat(c.len_utf8())
                        } else {
                            c.to_string()
                        }
                    })
                    .collect()
            })
            .collect();
        let mut files = SimpleFiles::new();
        for ((p, _), t) in self.files.iter().zip(&shown) {
            files.add(p.display().to_string(), t.as_str());
        }
        let text_len = self.text(d.span.file).len();
        let lo = (d.span.lo as usize).min(text_len);
        let hi = (d.span.hi as usize).clamp(lo, text_len);
        let diag = if d.warning {
            Diagnostic::warning()
        } else {
            Diagnostic::error()
        }
        .with_message(&d.message)
        .with_labels(vec![Label::primary(d.span.file, lo..hi)])
        .with_notes(d.notes.clone());
        let config = term::Config::default();
        term::emit_into_string(&config, &files, &diag)
            .unwrap_or_else(|_| format!("{}: {}\n", self.location(d.span), d.message))
    }

    /// All diagnostics, rendered, errors and warnings in source order.
    pub fn render_all(&self, diags: &[Diag]) -> String {
        let mut sorted: Vec<&Diag> = diags.iter().collect();
        sorted.sort_by_key(|d| (d.span.file, d.span.lo));
        sorted.iter().map(|d| self.render(d)).collect()
    }
}

/// Reading a file failed, or the program had errors: the rendered text.
#[derive(Debug, Clone)]
pub struct Errors {
    pub diags: Vec<Diag>,
    pub rendered: String,
}

impl std::fmt::Display for Errors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rendered.trim_end())
    }
}

impl std::error::Error for Errors {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_line_and_caret() {
        let mut s = Sources::new();
        let f = s.add("a.yamba", "yamba X {\n    int y = zz;\n}\n");
        let lo = s.text(f).find("zz").unwrap();
        let d = Diag::error(Span::new(f, lo, lo + 2), "undeclared name 'zz'");
        let out = s.render(&d);
        assert!(out.contains("a.yamba:2:13"), "{out}");
        assert!(out.contains("int y = zz;"), "{out}");
        assert!(out.contains("^^"), "{out}");
        assert_eq!(s.location(d.span), "a.yamba:2:13");
    }
}
