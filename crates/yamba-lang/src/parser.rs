//! A hand-written recursive-descent parser. It recovers at member and
//! statement boundaries, so one pass reports every syntax error it can.

use crate::ast::*;
use crate::lexer::{lex, Tok, Token};
use crate::source::{Diag, Span};

/// Parses one file's text; syntax errors go to `diags`.
pub fn parse(file: usize, text: &str, diags: &mut Vec<Diag>) -> File {
    let toks = lex(file, text, diags);
    let mut p = Parser {
        toks,
        pos: 0,
        diags,
        text,
        depth: 0,
        too_deep: false,
    };
    p.file()
}

/// Parses the operand of an asm interpolation `{expr}` (a C expression).
pub fn parse_expr_text(file: usize, offset: usize, text: &str) -> Result<Expr, Vec<Diag>> {
    let mut diags = Vec::new();
    let mut toks = lex(file, text, &mut diags);
    for t in &mut toks {
        t.span.lo += offset as u32;
        t.span.hi += offset as u32;
    }
    let mut p = Parser {
        toks,
        pos: 0,
        diags: &mut diags,
        text,
        depth: 0,
        too_deep: false,
    };
    let e = p.expr();
    if !matches!(p.peek(), Tok::Eof) {
        let s = p.span();
        p.diags
            .push(Diag::error(s, "unexpected text after the expression"));
    }
    match e {
        Ok(e) if diags.is_empty() => Ok(e),
        _ => Err(diags),
    }
}

type PResult<T> = Result<T, ()>;

/// Deepest nesting of statements and expressions the parser builds (each
/// block, parenthesis, operand of an operator, call or index is a level):
/// beyond it, one located error, and the rest of the file is skipped, so
/// that neither the parser nor the checker (which walks what the parser
/// built) can run out of stack however a file is nested.
pub const MAX_DEPTH: u32 = 256;

struct Parser<'a> {
    toks: Vec<Token>,
    pos: usize,
    diags: &'a mut Vec<Diag>,
    text: &'a str,
    /// Nesting levels open now.
    depth: u32,
    /// The file nested too deeply: parsing has stopped.
    too_deep: bool,
}

const TYPE_WORDS: &[&str] = &[
    "void", "char", "short", "int", "long", "unsigned", "signed", "const", "byte_t", "size_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t", "int64_t",
];

impl<'a> Parser<'a> {
    /// Opens `levels` more nesting levels, or reports (once) that the
    /// file nests too deeply here and stops the parse.
    fn enter(&mut self, levels: u32) -> PResult<()> {
        if self.too_deep {
            return Err(());
        }
        self.depth += levels;
        if self.depth > MAX_DEPTH {
            self.depth -= levels;
            self.too_deep = true;
            let s = self.span();
            self.diags.push(
                Diag::error(
                    s,
                    format!("nested more deeply than {MAX_DEPTH} levels (blocks, parentheses, operators)"),
                )
                .note("the rest of this file is not read; split the expression or the block"),
            );
            // Nothing after this point is parsed.
            self.pos = self.toks.len() - 1;
            return Err(());
        }
        Ok(())
    }

    fn leave(&mut self, levels: u32) {
        self.depth -= levels;
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }

    fn span(&self) -> Span {
        self.toks[self.pos].span
    }

    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(q) if q == w)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn describe(t: &Tok) -> String {
        match t {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Int(_, s) => format!("number {s}"),
            Tok::Str(_) => "a string".into(),
            Tok::Asm(_) => "an asm block".into(),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Eof => "end of file".into(),
        }
    }

    fn error<T>(&mut self, msg: impl Into<String>) -> PResult<T> {
        if self.too_deep {
            // Stopped at the nesting limit: that error is the one to read.
            return Err(());
        }
        let s = self.span();
        self.diags.push(Diag::error(s, msg));
        Err(())
    }

    fn expect(&mut self, p: &'static str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().span)
        } else {
            let found = Self::describe(self.peek());
            self.error(format!("expected '{p}', found {found}"))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            t => {
                let found = Self::describe(&t);
                self.error(format!("expected {what}, found {found}"))
            }
        }
    }

    /// Skips to just after the next `;` at this nesting level, or to just
    /// before a `}` that closes it (or past a balanced `{…}`).
    fn recover(&mut self) {
        if self.too_deep {
            return;
        }
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Punct(";") if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::Punct("{") => depth += 1,
                Tok::Punct("}") => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        if self.is_punct(";") {
                            self.bump();
                        }
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn file(&mut self) -> File {
        let mut f = File::default();
        loop {
            match self.peek().clone() {
                Tok::Eof => break,
                Tok::Ident(w) if w == "include" => {
                    let start = self.bump().span;
                    match self.peek().clone() {
                        Tok::Str(s) => {
                            let sp = self.bump().span;
                            f.includes.push((s, start.to(sp)));
                            let _ = self.expect(";");
                        }
                        _ => {
                            let _ =
                                self.error::<()>("expected a file name in quotes after include");
                            self.recover();
                        }
                    }
                }
                Tok::Ident(w) if w == "yamba" => {
                    if let Ok(c) = self.class() {
                        f.classes.push(c);
                    }
                }
                Tok::Punct(";") => {
                    self.bump();
                }
                t => {
                    let found = Self::describe(&t);
                    let _ = self.error::<()>(format!(
                        "expected a class ('yamba NAME {{ … }}') or include, found {found}"
                    ));
                    // Skip to the next class.
                    while !matches!(self.peek(), Tok::Eof)
                        && !self.is_word("yamba")
                        && !self.is_word("include")
                    {
                        self.bump();
                    }
                }
            }
        }
        f
    }

    fn class(&mut self) -> PResult<Class> {
        let start = self.bump().span; // yamba
        let is_abstract = if self.is_word("abstract") {
            self.bump();
            true
        } else {
            false
        };
        let name = self.class_name()?;
        let extends = if self.is_word("extends") {
            self.bump();
            Some(self.class_name()?)
        } else {
            None
        };
        if self.expect("{").is_err() {
            self.recover();
            return Err(());
        }
        let mut members = Vec::new();
        loop {
            match self.peek() {
                Tok::Punct("}") => {
                    self.bump();
                    break;
                }
                Tok::Eof => {
                    let _ =
                        self.error::<()>(format!("class {} never closed (missing }})", name.name));
                    break;
                }
                _ => match self.member() {
                    Ok(m) => members.push(m),
                    Err(()) => self.recover(),
                },
            }
        }
        let end = self.prev_span();
        self.eat_punct(";");
        Ok(Class {
            name,
            is_abstract,
            extends,
            members,
            span: start.to(end),
        })
    }

    fn class_name(&mut self) -> PResult<Ident> {
        let id = self.ident("a class name")?;
        if self.is_punct("-") && matches!(self.peek_at(1), Tok::Ident(_)) {
            let s = id.span.to(self.toks[self.pos + 1].span);
            self.diags.push(
                Diag::error(s, "a class name cannot contain '-'")
                    .note("write '_' instead (the paper's Figure 3 mixes both)"),
            );
            self.bump();
            let rest = self.ident("a class name")?;
            return Ok(Ident {
                name: format!("{}_{}", id.name, rest.name),
                span: s,
            });
        }
        Ok(id)
    }

    fn is_type_start(&self) -> bool {
        matches!(self.peek(), Tok::Ident(w) if TYPE_WORDS.contains(&w.as_str()))
    }

    fn ctype(&mut self) -> PResult<CType> {
        let mut unsigned = None;
        let mut bytes: Option<u8> = None;
        let mut void = false;
        let mut longs = 0;
        let mut any = false;
        while let Tok::Ident(w) = self.peek().clone() {
            match w.as_str() {
                "const" => {}
                "unsigned" => unsigned = Some(true),
                "signed" => unsigned = Some(false),
                "void" => void = true,
                "char" => bytes = Some(1),
                "short" => bytes = Some(2),
                "int" => bytes = Some(bytes.unwrap_or(4)),
                "long" => {
                    longs += 1;
                    bytes = Some(8)
                }
                "byte_t" | "uint8_t" => {
                    bytes = Some(1);
                    unsigned = Some(true)
                }
                "int8_t" => bytes = Some(1),
                "uint16_t" => {
                    bytes = Some(2);
                    unsigned = Some(true)
                }
                "int16_t" => bytes = Some(2),
                "uint32_t" => {
                    bytes = Some(4);
                    unsigned = Some(true)
                }
                "int32_t" => bytes = Some(4),
                "uint64_t" | "size_t" => {
                    bytes = Some(8);
                    unsigned = Some(true)
                }
                "int64_t" => bytes = Some(8),
                _ => break,
            }
            any = true;
            self.bump();
        }
        let _ = longs;
        if !any {
            let found = Self::describe(self.peek());
            return self.error(format!("expected a type, found {found}"));
        }
        let base = if void {
            Base::Void
        } else {
            Base::Int {
                bytes: bytes.unwrap_or(4),
                unsigned: unsigned.unwrap_or(false),
            }
        };
        let mut ptr = 0;
        while self.eat_punct("*") {
            ptr += 1;
        }
        Ok(CType { base, ptr })
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect("(")?;
        let mut v = Vec::new();
        if self.is_word("void") && matches!(self.peek_at(1), Tok::Punct(")")) {
            self.bump();
        }
        if !self.is_punct(")") {
            loop {
                let ty = self.ctype()?;
                let name = self.ident("a parameter name")?;
                v.push(Param { ty, name });
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect(")")?;
        Ok(v)
    }

    fn member(&mut self) -> PResult<Member> {
        let start = self.span();
        if self.is_word("import") {
            self.bump();
            self.expect("(")?;
            let name = self.ident("a class name to import")?;
            self.expect(")")?;
            let end = self.expect(";")?;
            return Ok(Member {
                name,
                kind: MemberKind::Import,
                span: start.to(end),
            });
        }
        if self.is_word("bitstring") {
            self.bump();
            let sub = if self.is_punct("<") {
                let s0 = self.bump().span;
                let ret = self.ctype()?;
                let name = self.ident("the C function's name in the sub-type")?;
                let params = self.params()?;
                let s1 = self.expect(">")?;
                Some(CSig {
                    ret,
                    name,
                    params,
                    span: s0.to(s1),
                })
            } else {
                None
            };
            let name = self.ident("the bitstring's name")?;
            let params = if self.is_punct("(") {
                Some(self.params()?)
            } else {
                None
            };
            let body = if self.is_punct("{") {
                self.bump();
                let items = self.bs_items()?;
                self.eat_punct(";");
                Some(items)
            } else {
                self.expect(";")?;
                None
            };
            return Ok(Member {
                name,
                kind: MemberKind::Bitstring { sub, params, body },
                span: start.to(self.prev_span()),
            });
        }
        if self.is_type_start() {
            let ty = self.ctype()?;
            let name = self.ident("a member name")?;
            if self.is_punct("(") {
                let params = self.params()?;
                let body = if self.is_punct("{") {
                    Some(self.block()?)
                } else {
                    self.expect(";")?;
                    None
                };
                return Ok(Member {
                    name,
                    kind: MemberKind::Function {
                        ret: ty,
                        params,
                        body,
                    },
                    span: start.to(self.prev_span()),
                });
            }
            let init = if self.eat_punct("=") {
                Some(self.expr()?)
            } else {
                None
            };
            let end = self.expect(";")?;
            return Ok(Member {
                name,
                kind: MemberKind::Data { ty, init },
                span: start.to(end),
            });
        }
        let found = Self::describe(self.peek());
        self.error(format!(
            "expected a member (import, a data member, bitstring, or a C function), found {found}"
        ))
    }

    /// Items up to and including the closing `}`.
    fn bs_items(&mut self) -> PResult<Vec<BsItem>> {
        let mut items = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::Punct("}") => {
                    self.bump();
                    return Ok(items);
                }
                Tok::Eof => return self.error("bitstring body never closed (missing })"),
                Tok::Int(_, text) => {
                    let span = self.bump().span;
                    match hex_bytes(&text) {
                        Ok(bytes) => items.push(BsItem::Hex { bytes, span }),
                        Err(why) => self.diags.push(Diag::error(span, why.to_string())),
                    }
                }
                Tok::Asm(text) => {
                    let span = self.bump().span;
                    items.push(BsItem::Asm { text, span });
                }
                Tok::Ident(w) if w == "unroll" => match self.unroll() {
                    Ok(u) => items.push(u),
                    Err(()) => self.skip_bs_item(),
                },
                Tok::Ident(_) if self.instruction_line().is_some() => {
                    let end = self.instruction_line().unwrap_or(self.pos);
                    let span = self.span().to(self.toks[end].span);
                    let written = &self.text[span.lo as usize..span.hi as usize];
                    self.diags.push(Diag::error(
                        span,
                        format!("an instruction outside asm {{ }}: a bitstring body concatenates pieces; write asm {{ {written} }}"),
                    ));
                    while self.pos <= end {
                        self.bump();
                    }
                }
                Tok::Ident(_) => match self.postfix() {
                    Ok(e) => items.push(BsItem::Ref(e)),
                    Err(()) => self.skip_bs_item(),
                },
                Tok::Punct(";") => {
                    self.bump();
                }
                t => {
                    let found = Self::describe(&t);
                    let _ = self.error::<()>(format!(
                        "expected a bitstring piece (a 0x… literal, asm {{ }}, unroll, or a bitstring name), found {found}"
                    ));
                    self.bump();
                }
            }
        }
    }

    /// Whether the piece starting here is an instruction written without
    /// `asm { }` (`mov eax, 1`): its line has a ',' or '[' outside
    /// parentheses, which no piece has. Then the index of its last token
    /// on the line.
    fn instruction_line(&self) -> Option<usize> {
        let line_end = |at: u32| {
            self.text[at as usize..]
                .find('\n')
                .map_or(self.text.len(), |i| at as usize + i)
        };
        let end_of_line = line_end(self.toks[self.pos].span.lo);
        let (mut depth, mut last, mut found) = (0usize, self.pos, false);
        for k in self.pos..self.toks.len() {
            let t = &self.toks[k];
            if t.span.lo as usize >= end_of_line {
                break;
            }
            match &t.tok {
                Tok::Eof | Tok::Punct("}") | Tok::Punct(";") => break,
                Tok::Punct("(") => depth += 1,
                Tok::Punct(")") => depth = depth.saturating_sub(1),
                Tok::Punct(",") | Tok::Punct("[") if depth == 0 => found = true,
                _ => {}
            }
            last = k;
        }
        found.then_some(last)
    }

    fn skip_bs_item(&mut self) {
        // Skip to the end of the line's construct: a balanced group or one token.
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Punct("(") | Tok::Punct("{") => depth += 1,
                Tok::Punct(")") => depth = depth.saturating_sub(1),
                Tok::Punct("}") => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ if depth == 0 => {
                    self.bump();
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn unroll(&mut self) -> PResult<BsItem> {
        self.enter(1)?;
        let r = self.unroll_inner();
        self.leave(1);
        r
    }

    fn unroll_inner(&mut self) -> PResult<BsItem> {
        let start = self.bump().span; // unroll
        let open = self.expect("(")?;
        let init = if self.is_type_start() {
            self.decl_stmt()?
        } else {
            let e = self.expr()?;
            Stmt {
                span: e.span,
                kind: StmtKind::Expr(e),
            }
        };
        self.expect(";")?;
        let cond = self.expr()?;
        self.expect(";")?;
        let step = self.expr()?;
        let close = self.expect(")")?;
        let header = format!(
            "unroll{}",
            &self.source_text(open.to(close)).unwrap_or("(…)")
        );
        self.expect("{")?;
        let body = self.bs_items()?;
        Ok(BsItem::Unroll {
            init: Box::new(init),
            cond,
            step,
            body,
            header,
            span: start.to(close),
        })
    }

    fn source_text(&self, s: Span) -> Option<&str> {
        self.text.get(s.lo as usize..s.hi as usize)
    }

    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.enter(1)?;
        let r = self.block_inner();
        self.leave(1);
        r
    }

    fn block_inner(&mut self) -> PResult<Vec<Stmt>> {
        self.expect("{")?;
        let mut v = Vec::new();
        loop {
            match self.peek() {
                Tok::Punct("}") => {
                    self.bump();
                    return Ok(v);
                }
                Tok::Eof if self.too_deep => return Err(()),
                Tok::Eof => return self.error("block never closed (missing })"),
                _ => match self.stmt() {
                    Ok(s) => v.push(s),
                    Err(()) if self.too_deep => return Err(()),
                    Err(()) => self.recover(),
                },
            }
        }
    }

    fn decl_stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        let ty = self.ctype()?;
        let name = self.ident("a variable name")?;
        let init = if self.eat_punct("=") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok(Stmt {
            kind: StmtKind::Decl { ty, name, init },
            span: start.to(self.prev_span()),
        })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        self.enter(1)?;
        let r = self.stmt_inner();
        self.leave(1);
        r
    }

    fn stmt_inner(&mut self) -> PResult<Stmt> {
        let start = self.span();
        let kind = match self.peek().clone() {
            Tok::Punct("{") => StmtKind::Block(self.block()?),
            Tok::Punct(";") => {
                self.bump();
                StmtKind::Empty
            }
            Tok::Ident(w) if w == "for" => {
                self.bump();
                self.expect("(")?;
                let init = if self.is_punct(";") {
                    None
                } else if self.is_type_start() {
                    Some(Box::new(self.decl_stmt()?))
                } else {
                    let e = self.expr()?;
                    Some(Box::new(Stmt {
                        span: e.span,
                        kind: StmtKind::Expr(e),
                    }))
                };
                self.expect(";")?;
                let cond = if self.is_punct(";") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(";")?;
                let step = if self.is_punct(")") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(")")?;
                let body = Box::new(self.stmt()?);
                StmtKind::For {
                    init,
                    cond,
                    step,
                    body,
                }
            }
            Tok::Ident(w) if w == "while" => {
                self.bump();
                self.expect("(")?;
                let cond = self.expr()?;
                self.expect(")")?;
                StmtKind::While {
                    cond,
                    body: Box::new(self.stmt()?),
                }
            }
            Tok::Ident(w) if w == "if" => {
                self.bump();
                self.expect("(")?;
                let cond = self.expr()?;
                self.expect(")")?;
                let then = Box::new(self.stmt()?);
                let els = if self.is_word("else") {
                    self.bump();
                    Some(Box::new(self.stmt()?))
                } else {
                    None
                };
                StmtKind::If { cond, then, els }
            }
            Tok::Ident(w) if w == "return" => {
                self.bump();
                let e = if self.is_punct(";") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(";")?;
                StmtKind::Return(e)
            }
            Tok::Ident(w) if w == "break" || w == "continue" => {
                self.bump();
                self.expect(";")?;
                if w == "break" {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                }
            }
            _ if self.is_type_start() => {
                let s = self.decl_stmt()?;
                self.expect(";")?;
                return Ok(Stmt {
                    kind: s.kind,
                    span: start.to(self.prev_span()),
                });
            }
            _ => {
                let e = self.expr()?;
                self.expect(";")?;
                StmtKind::Expr(e)
            }
        };
        Ok(Stmt {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    pub fn expr(&mut self) -> PResult<Expr> {
        self.enter(1)?;
        let r = self.expr_inner();
        self.leave(1);
        r
    }

    fn expr_inner(&mut self) -> PResult<Expr> {
        let lhs = self.conditional()?;
        let op = match self.peek() {
            Tok::Punct("=") => Some(None),
            Tok::Punct("+=") => Some(Some(BinOp::Add)),
            Tok::Punct("-=") => Some(Some(BinOp::Sub)),
            Tok::Punct("*=") => Some(Some(BinOp::Mul)),
            Tok::Punct("/=") => Some(Some(BinOp::Div)),
            Tok::Punct("%=") => Some(Some(BinOp::Rem)),
            Tok::Punct("&=") => Some(Some(BinOp::BitAnd)),
            Tok::Punct("|=") => Some(Some(BinOp::BitOr)),
            Tok::Punct("^=") => Some(Some(BinOp::BitXor)),
            Tok::Punct("<<=") => Some(Some(BinOp::Shl)),
            Tok::Punct(">>=") => Some(Some(BinOp::Shr)),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let rhs = self.expr()?;
            let span = lhs.span.to(rhs.span);
            return Ok(Expr {
                kind: ExprKind::Assign(op, Box::new(lhs), Box::new(rhs)),
                span,
            });
        }
        Ok(lhs)
    }

    fn conditional(&mut self) -> PResult<Expr> {
        self.enter(1)?;
        let r = self.conditional_inner();
        self.leave(1);
        r
    }

    fn conditional_inner(&mut self) -> PResult<Expr> {
        let c = self.binary(0)?;
        if self.eat_punct("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.conditional()?;
            let span = c.span.to(b.span);
            return Ok(Expr {
                kind: ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)),
                span,
            });
        }
        Ok(c)
    }

    fn binop(&self) -> Option<(BinOp, u8)> {
        use BinOp::*;
        let Tok::Punct(p) = self.peek() else {
            return None;
        };
        Some(match *p {
            "||" => (Or, 1),
            "&&" => (And, 2),
            "|" => (BitOr, 3),
            "^" => (BitXor, 4),
            "&" => (BitAnd, 5),
            "==" => (Eq, 6),
            "!=" => (Ne, 6),
            "<" => (Lt, 7),
            "<=" => (Le, 7),
            ">" => (Gt, 7),
            ">=" => (Ge, 7),
            "<<" => (Shl, 8),
            ">>" => (Shr, 8),
            "+" => (Add, 9),
            "-" => (Sub, 9),
            "*" => (Mul, 10),
            "/" => (Div, 10),
            "%" => (Rem, 10),
            _ => return None,
        })
    }

    fn binary(&mut self, min: u8) -> PResult<Expr> {
        self.enter(1)?;
        let r = self.binary_inner(min);
        self.leave(1);
        r
    }

    fn binary_inner(&mut self, min: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        // Each operator of a chain (a + b + c …) nests the tree one level
        // deeper, though the parser loops: counted as levels.
        let mut chain = 0;
        while let Some((op, prec)) = self.binop() {
            if prec <= min {
                break;
            }
            if let Err(()) = self.enter(1) {
                self.leave(chain);
                return Err(());
            }
            chain += 1;
            self.bump();
            let rhs = match self.binary(prec) {
                Ok(r) => r,
                Err(()) => {
                    self.leave(chain);
                    return Err(());
                }
            };
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        self.leave(chain);
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.enter(1)?;
        let r = self.unary_inner();
        self.leave(1);
        r
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
        let start = self.span();
        let op = match self.peek() {
            Tok::Punct("-") => Some(UnOp::Neg),
            Tok::Punct("!") => Some(UnOp::Not),
            Tok::Punct("~") => Some(UnOp::BitNot),
            Tok::Punct("*") => Some(UnOp::Deref),
            Tok::Punct("+") => {
                self.bump();
                return self.unary();
            }
            Tok::Punct("++") | Tok::Punct("--") => {
                let delta = if self.is_punct("++") { 1 } else { -1 };
                self.bump();
                let t = self.unary()?;
                let span = start.to(t.span);
                return Ok(Expr {
                    kind: ExprKind::IncDec {
                        target: Box::new(t),
                        delta,
                        post: false,
                    },
                    span,
                });
            }
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let e = self.unary()?;
            let span = start.to(e.span);
            return Ok(Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                span,
            });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut chain = 0;
        let r = self.postfix_chain(&mut chain);
        self.leave(chain);
        r
    }

    /// A primary expression and its calls, fields, indexes and ++/--,
    /// each a level deeper (counted in `chain`).
    fn postfix_chain(&mut self, chain: &mut u32) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            if self.is_punct("(")
                || self.is_punct(".")
                || self.is_punct("[")
                || self.is_punct("++")
                || self.is_punct("--")
            {
                self.enter(1)?;
                *chain += 1;
            }
            if self.is_punct("(") {
                self.bump();
                let mut args = Vec::new();
                if !self.is_punct(")") {
                    loop {
                        args.push(self.expr()?);
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                }
                let end = self.expect(")")?;
                let span = e.span.to(end);
                e = Expr {
                    kind: ExprKind::Call(Box::new(e), args),
                    span,
                };
            } else if self.is_punct(".") {
                self.bump();
                let f = self.ident("a member name after '.'")?;
                let span = e.span.to(f.span);
                e = Expr {
                    kind: ExprKind::Field(Box::new(e), f),
                    span,
                };
            } else if self.is_punct("[") {
                self.bump();
                let i = self.expr()?;
                let end = self.expect("]")?;
                let span = e.span.to(end);
                e = Expr {
                    kind: ExprKind::Index(Box::new(e), Box::new(i)),
                    span,
                };
            } else if self.is_punct("++") || self.is_punct("--") {
                let delta = if self.is_punct("++") { 1 } else { -1 };
                let end = self.bump().span;
                let span = e.span.to(end);
                e = Expr {
                    kind: ExprKind::IncDec {
                        target: Box::new(e),
                        delta,
                        post: true,
                    },
                    span,
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        match self.peek().clone() {
            Tok::Int(v, _) => {
                let span = self.bump().span;
                Ok(Expr {
                    kind: ExprKind::Int(v),
                    span,
                })
            }
            Tok::Str(s) => {
                let span = self.bump().span;
                Ok(Expr {
                    kind: ExprKind::Str(s),
                    span,
                })
            }
            Tok::Ident(n) => {
                let span = self.bump().span;
                Ok(Expr {
                    kind: ExprKind::Name(n),
                    span,
                })
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            t => {
                let found = Self::describe(&t);
                self.error(format!("expected an expression, found {found}"))
            }
        }
    }
}

/// Why a bitstring literal has no bytes: the diagnostic at it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum HexError {
    #[error("'{0}': a bitstring literal is written in hex (0x…), a byte per two digits")]
    NotHex(String),
    /// `digits`: the literal's digits without `0x` and `_`.
    #[error("'{text}' has an odd number of hex digits: a bitstring literal is whole bytes (write 0x0{digits})")]
    OddDigits { text: String, digits: String },
    #[error("'{0}' is not hex")]
    BadDigit(String),
}

/// A hex literal's bytes, in the order written: `0x8B83` → 8B 83.
fn hex_bytes(text: &str) -> Result<Vec<u8>, HexError> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .ok_or_else(|| HexError::NotHex(text.into()))?
        .replace('_', "");
    if digits.len() % 2 != 0 {
        return Err(HexError::OddDigits {
            text: text.into(),
            digits,
        });
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| HexError::BadDigit(text.into()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_literals_keep_byte_order_and_leading_zeros() {
        assert_eq!(hex_bytes("0x8B83").unwrap(), vec![0x8B, 0x83]);
        assert_eq!(hex_bytes("0x0090").unwrap(), vec![0x00, 0x90]);
        assert!(hex_bytes("0x123").is_err());
        assert!(hex_bytes("123").is_err());
    }

    #[test]
    fn several_syntax_errors_in_one_pass() {
        let mut d = Vec::new();
        let f = parse(
            0,
            "yamba A {\n int x = ;\n bitstring b { 0x123 }\n void f() { y = ; }\n int ok;\n}\n",
            &mut d,
        );
        assert_eq!(f.classes.len(), 1);
        assert!(d.len() >= 3, "{d:?}");
        assert!(f.classes[0].members.iter().any(|m| m.name.name == "ok"));
    }
}
