//! Checking: classes and inheritance, imports, names, types of the C
//! subset, the pieces of bitstring bodies, and asm lines that can be
//! assembled already. Everything found is reported, not just the first.

use crate::ast::*;
use crate::isa::block::{labels_defined, split_labels};
use crate::isa::{asm_lines, Isa};
use crate::model::{MemberRef, Program};
use crate::source::{Diag, Span};
use crate::stdlib::{self, StdClass, StdKind};
use std::collections::{HashMap, HashSet};

/// The type of a C expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Void,
    Int,
    /// A pointer; the size of what it points to.
    Ptr(i64),
    /// Generated code callable as a C function with these parameters.
    Code(Vec<CType>, CType),
    /// After an error: accepted anywhere, so one mistake reports once.
    Unknown,
}

impl Ty {
    pub fn of(c: CType) -> Ty {
        if c.is_pointer() {
            Ty::Ptr(c.pointee_size())
        } else if c.is_void() {
            Ty::Void
        } else {
            Ty::Int
        }
    }

    fn show(&self) -> String {
        match self {
            Ty::Void => "void".into(),
            Ty::Int => "an integer".into(),
            Ty::Ptr(_) => "a pointer".into(),
            Ty::Code(..) => "generated code".into(),
            Ty::Unknown => "?".into(),
        }
    }

    /// Whether a value of type `self` can be passed where `want` is expected.
    fn fits(&self, want: &Ty) -> bool {
        matches!(
            (self, want),
            (Ty::Unknown, _)
                | (_, Ty::Unknown)
                | (Ty::Int, Ty::Int)
                | (Ty::Ptr(_), Ty::Ptr(_))
                | (Ty::Code(..), Ty::Ptr(_))
                | (Ty::Void, Ty::Void)
        )
    }
}

pub fn check(prog: &Program) -> Vec<Diag> {
    let mut diags = Vec::new();
    let labels = program_labels(prog);
    for ci in 0..prog.classes.len() {
        check_class(prog, ci, &labels, &mut diags);
    }
    diags
}

/// The labels every asm block of the program defines: a branch to one of
/// them from another block leaves its block (an error of its own).
fn program_labels(prog: &Program) -> HashSet<String> {
    fn walk(items: &[BsItem], out: &mut HashSet<String>) {
        for it in items {
            match it {
                BsItem::Asm { text, .. } => {
                    let lines = asm_lines(text);
                    out.extend(labels_defined(lines.iter().map(|l| l.1)));
                }
                BsItem::Unroll { body, .. } => walk(body, out),
                _ => {}
            }
        }
    }
    let mut out = HashSet::new();
    for m in prog.classes.iter().flat_map(|c| &c.members) {
        if let MemberKind::Bitstring {
            body: Some(items), ..
        } = &m.kind
        {
            walk(items, &mut out);
        }
    }
    out
}

fn check_class(prog: &Program, ci: usize, labels: &HashSet<String>, diags: &mut Vec<Diag>) {
    let c = &prog.classes[ci];
    if let Some(e) = &c.extends {
        if prog.class(&e.name).is_none() {
            diags.push(Diag::error(
                e.span,
                format!("class {} extends unknown class {}", c.name.name, e.name),
            ));
        }
        if prog.chain(ci).len() > 1 && cycle(prog, ci) {
            diags.push(Diag::error(e.span, "classes extend each other in a cycle"));
        }
    }
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for m in &c.members {
        if let Some(prev) = seen.insert(m.name.name.as_str(), m.name.span) {
            diags.push(
                Diag::error(
                    m.name.span,
                    format!("{} is declared twice in {}", m.name.name, c.name.name),
                )
                .note(format!("first at {}", prog.sources.location(prev))),
            );
        }
        if let MemberKind::Import = m.kind {
            if stdlib::class(&m.name.name).is_none() {
                let mut d = Diag::error(
                    m.name.span,
                    format!("unknown standard class '{}'", m.name.name),
                )
                .note(format!("standard classes: {}", stdlib::names().join(", ")));
                if m.name.name.contains("x86_32") {
                    d = d.note("32-bit x86 is not supported: write the class for x86_64");
                }
                diags.push(d);
            }
        }
    }
    let isa = match prog.isa(ci) {
        Ok(i) => Some(i),
        Err(e) => {
            diags.push(Diag::error(c.name.span, e));
            None
        }
    };
    // Overrides keep the kind and parameters of what they replace.
    if let Some(base) = c.extends.as_ref().and_then(|e| prog.class(&e.name)) {
        if !cycle(prog, ci) {
            let base_view = prog.members(base);
            for m in &c.members {
                if let Some(&(bc, bm)) = base_view.get(&m.name.name) {
                    let b = &prog.classes[bc].members[bm];
                    if let Some(why) = override_mismatch(&b.kind, &m.kind) {
                        diags.push(
                            Diag::error(
                                m.name.span,
                                format!(
                                    "{} overrides {}.{} but {why}",
                                    m.name.name, prog.classes[bc].name.name, m.name.name
                                ),
                            )
                            .note(format!(
                                "declared at {}",
                                prog.sources.location(b.name.span)
                            )),
                        );
                    }
                }
            }
        }
    }
    if !c.is_abstract && !cycle(prog, ci) {
        let undefined = prog.undefined(ci);
        if !undefined.is_empty() {
            diags.push(
                Diag::error(
                    c.name.span,
                    format!(
                        "class {} leaves members undefined: declare it 'yamba abstract' or define them",
                        c.name.name
                    ),
                )
                .note(
                    undefined
                        .iter()
                        .map(|(m, _)| m.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
            );
        }
    }
    let mut ck = Checker {
        prog,
        view: prog.members(ci),
        imports: prog.imports(ci),
        isa,
        labels,
        diags,
        scopes: Vec::new(),
        depth: 0,
    };
    for m in &c.members {
        match &m.kind {
            MemberKind::Data { init: Some(e), ty } => {
                let t = ck.expr(e);
                ck.want(e.span, &t, &Ty::of(*ty), "the initial value");
            }
            MemberKind::Bitstring {
                params,
                body: Some(items),
                ..
            } => {
                ck.scopes.push(HashMap::new());
                for p in params.iter().flatten() {
                    ck.declare(&p.name.name, Ty::of(p.ty));
                }
                ck.bs_items(items);
                ck.scopes.pop();
            }
            MemberKind::Function {
                params,
                body: Some(body),
                ret,
            } => {
                ck.scopes.push(HashMap::new());
                for p in params {
                    ck.declare(&p.name.name, Ty::of(p.ty));
                }
                for s in body {
                    ck.stmt(s, *ret);
                }
                ck.scopes.pop();
            }
            _ => {}
        }
    }
}

fn cycle(prog: &Program, ci: usize) -> bool {
    let chain = prog.chain(ci);
    let first = chain[0];
    prog.classes[first]
        .extends
        .as_ref()
        .and_then(|e| prog.class(&e.name))
        .is_some()
}

fn override_mismatch(base: &MemberKind, derived: &MemberKind) -> Option<String> {
    use MemberKind::*;
    match (base, derived) {
        (Data { .. }, Data { .. }) => None,
        (Bitstring { params: a, .. }, Bitstring { params: b, .. }) => {
            let (na, nb) = (a.as_ref().map(Vec::len), b.as_ref().map(Vec::len));
            (na != nb).then(|| {
                format!(
                    "takes {} where the original takes {}",
                    nb.map_or("no parameter list".into(), |n| format!("{n} parameter(s)")),
                    na.map_or("no parameter list".into(), |n| format!("{n}"))
                )
            })
        }
        (Function { params: a, .. }, Function { params: b, .. }) => {
            (a.len() != b.len()).then(|| {
                format!(
                    "takes {} parameter(s) where the original takes {}",
                    b.len(),
                    a.len()
                )
            })
        }
        _ => Some("is a different kind of member (data, bitstring or C function)".into()),
    }
}

struct Checker<'a> {
    prog: &'a Program,
    view: HashMap<String, MemberRef>,
    imports: Vec<&'static StdClass>,
    isa: Option<Isa>,
    /// Labels of all asm blocks of the program.
    labels: &'a HashSet<String>,
    diags: &'a mut Vec<Diag>,
    scopes: Vec<HashMap<String, Ty>>,
    /// Statements and expressions being checked, one inside the other.
    depth: u32,
}

/// Deepest nesting the checker walks: the parser's limit, with room for
/// the levels a statement adds around its expressions. Beyond it (a tree
/// built by other code than the parser), one located error, not a stack
/// overflow.
const MAX_CHECK_DEPTH: u32 = 2 * crate::parser::MAX_DEPTH + 16;

impl Checker<'_> {
    fn err(&mut self, span: Span, msg: impl Into<String>) -> Ty {
        self.diags.push(Diag::error(span, msg));
        Ty::Unknown
    }

    fn declare(&mut self, name: &str, t: Ty) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), t);
        }
    }

    fn want(&mut self, span: Span, got: &Ty, want: &Ty, what: &str) {
        if !got.fits(want) {
            self.err(
                span,
                format!("{what} should be {}, found {}", want.show(), got.show()),
            );
        }
    }

    fn member(&self, name: &str) -> Option<&'_ Member> {
        self.view
            .get(name)
            .map(|&(c, m)| &self.prog.classes[c].members[m])
    }

    fn std_class(&mut self, e: &Expr) -> Option<&'static StdClass> {
        let ExprKind::Name(n) = &e.kind else {
            return None;
        };
        if self.lookup_local(n).is_some() || self.view.contains_key(n) {
            return None;
        }
        if let Some(s) = self.imports.iter().find(|s| s.name == n) {
            return Some(s);
        }
        if stdlib::class(n).is_some() {
            self.err(
                e.span,
                format!("{n} is not imported here: add import({n});"),
            );
        } else {
            self.err(e.span, format!("unknown class '{n}'"));
        }
        None
    }

    fn lookup_local(&self, n: &str) -> Option<Ty> {
        self.scopes.iter().rev().find_map(|s| s.get(n).cloned())
    }

    // ---- bitstring bodies ----

    fn bs_items(&mut self, items: &[BsItem]) {
        for it in items {
            match it {
                BsItem::Hex { .. } => {}
                BsItem::Asm { text, span } => self.asm(text, *span),
                BsItem::Unroll {
                    init,
                    cond,
                    step,
                    body,
                    ..
                } => {
                    self.scopes.push(HashMap::new());
                    self.stmt(init, CType::VOID);
                    let t = self.expr(cond);
                    self.want(cond.span, &t, &Ty::Int, "an unroll condition");
                    self.expr(step);
                    self.bs_items(body);
                    self.scopes.pop();
                }
                BsItem::Ref(e) => self.bs_ref(e),
            }
        }
    }

    /// Assembles the block for its errors; a line with interpolations is
    /// assembled when generated, only its labels count here.
    fn asm(&mut self, text: &str, span: Span) {
        let Some(isa) = self.isa else { return };
        let lines = asm_lines(text);
        let mut assembled = Vec::with_capacity(lines.len());
        for &(off, line) in &lines {
            if !line.contains('{') {
                assembled.push(line);
                continue;
            }
            let instr_at = split_labels(line).1.map_or(line.len(), |(at, _)| at);
            assembled.push(&line[..instr_at]);
            for (eoff, etext) in interpolations(line) {
                let at = span.lo as usize + off + eoff;
                match crate::parser::parse_expr_text(span.file, at, etext) {
                    Ok(e) => {
                        let t = self.expr(&e);
                        self.want(e.span, &t, &Ty::Int, "an asm interpolation");
                    }
                    Err(ds) => self.diags.extend(ds),
                }
            }
        }
        if let Err(errors) = isa.assemble_block(&assembled, self.labels) {
            for e in errors {
                let d = e.diag(isa, &self.prog.sources, span, &lines);
                self.diags.push(d);
            }
        }
    }

    fn bs_ref(&mut self, e: &Expr) {
        let (callee, args) = match &e.kind {
            ExprKind::Call(c, a) => (c.as_ref(), Some(a)),
            _ => (e, None),
        };
        for a in args.into_iter().flatten() {
            let t = self.expr(a);
            self.want(a.span, &t, &Ty::Int, "an argument of a bitstring function");
        }
        match &callee.kind {
            ExprKind::Name(n) => {
                let Some(m) = self.member(n) else {
                    if self.lookup_local(n).is_some() {
                        self.err(callee.span, format!("{n} is a number, not a bitstring; use a cast (e.g. x86_64.cast_imm_32({n}))"));
                    } else {
                        self.err(callee.span, format!("undeclared bitstring '{n}'"));
                    }
                    return;
                };
                match &m.kind {
                    MemberKind::Bitstring { params, .. } => {
                        let want = params.as_ref().map_or(0, Vec::len);
                        match (params.is_some(), args) {
                            (true, None) => {
                                self.err(callee.span, format!("{n} is a bitstring function: call it with {want} argument(s)"));
                            }
                            (false, Some(_)) => {
                                self.err(
                                    e.span,
                                    format!("{n} is a bitstring, not a function: no arguments"),
                                );
                            }
                            (true, Some(a)) if a.len() != want => {
                                self.err(
                                    e.span,
                                    format!("{n} takes {want} argument(s), given {}", a.len()),
                                );
                            }
                            _ => {}
                        }
                    }
                    _ => {
                        self.err(
                            callee.span,
                            format!(
                                "{n} is not a bitstring (a bitstring body concatenates bitstrings)"
                            ),
                        );
                    }
                }
            }
            ExprKind::Field(base, f) => {
                let Some(sc) = self.std_class(base) else {
                    return;
                };
                match sc.member(&f.name).map(|m| &m.kind) {
                    Some(StdKind::Asm(_)) if args.is_none() => {}
                    Some(StdKind::Cast { .. }) if args.is_some_and(|a| a.len() == 1) => {}
                    Some(StdKind::Cast { .. }) => {
                        self.err(e.span, format!("{}.{} takes one argument", sc.name, f.name));
                    }
                    Some(_) => {
                        self.err(e.span, format!("{}.{} is not a bitstring", sc.name, f.name));
                    }
                    None => {
                        self.err(f.span, format!("{} has no member {}", sc.name, f.name));
                    }
                }
            }
            _ => {
                self.err(e.span, "expected a bitstring name or call");
            }
        }
    }

    // ---- C statements and expressions ----

    fn stmt(&mut self, s: &Stmt, ret: CType) {
        if self.depth >= MAX_CHECK_DEPTH {
            self.err(
                s.span,
                format!("nested more deeply than {MAX_CHECK_DEPTH} levels"),
            );
            return;
        }
        self.depth += 1;
        self.stmt_inner(s, ret);
        self.depth -= 1;
    }

    fn stmt_inner(&mut self, s: &Stmt, ret: CType) {
        match &s.kind {
            StmtKind::Decl { ty, name, init } => {
                if let Some(e) = init {
                    let t = self.expr(e);
                    self.want(
                        e.span,
                        &t,
                        &Ty::of(*ty),
                        &format!("the value of {}", name.name),
                    );
                }
                self.declare(&name.name, Ty::of(*ty));
            }
            StmtKind::Expr(e) => {
                self.expr(e);
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.scopes.push(HashMap::new());
                if let Some(i) = init {
                    self.stmt(i, ret);
                }
                if let Some(c) = cond {
                    let t = self.expr(c);
                    self.cond(c.span, &t);
                }
                if let Some(st) = step {
                    self.expr(st);
                }
                self.stmt(body, ret);
                self.scopes.pop();
            }
            StmtKind::While { cond, body } => {
                let t = self.expr(cond);
                self.cond(cond.span, &t);
                self.stmt(body, ret);
            }
            StmtKind::If { cond, then, els } => {
                let t = self.expr(cond);
                self.cond(cond.span, &t);
                self.stmt(then, ret);
                if let Some(e) = els {
                    self.stmt(e, ret);
                }
            }
            StmtKind::Return(e) => match (e, ret.is_void()) {
                (Some(e), true) => {
                    self.expr(e);
                    self.err(e.span, "this function returns void");
                }
                (None, false) => {
                    self.err(s.span, "return needs a value here");
                }
                (Some(e), false) => {
                    let t = self.expr(e);
                    self.want(e.span, &t, &Ty::of(ret), "the returned value");
                }
                _ => {}
            },
            StmtKind::Block(v) => {
                self.scopes.push(HashMap::new());
                for s in v {
                    self.stmt(s, ret);
                }
                self.scopes.pop();
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Empty => {}
        }
    }

    fn cond(&mut self, span: Span, t: &Ty) {
        if !matches!(t, Ty::Int | Ty::Ptr(_) | Ty::Unknown) {
            self.err(
                span,
                format!(
                    "a condition should be a number or pointer, found {}",
                    t.show()
                ),
            );
        }
    }

    fn name(&mut self, n: &str, span: Span) -> Ty {
        if let Some(t) = self.lookup_local(n) {
            return t;
        }
        match self.member(n).map(|m| m.kind.clone()) {
            Some(MemberKind::Data { ty, .. }) => Ty::of(ty),
            Some(MemberKind::Bitstring { .. }) | Some(MemberKind::Function { .. }) => {
                self.err(span, format!("{n} is a function or bitstring: call it"))
            }
            _ => {
                if self.imports.iter().any(|s| s.name == n) {
                    self.err(
                        span,
                        format!("{n} is a class: name one of its members ({n}.…)"),
                    )
                } else {
                    self.err(span, format!("undeclared name '{n}'"))
                }
            }
        }
    }

    fn lvalue(&mut self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Name(n) => {
                if self.lookup_local(n).is_none()
                    && !matches!(
                        self.member(n).map(|m| &m.kind),
                        Some(MemberKind::Data { .. })
                    )
                {
                    return self.name(n, e.span);
                }
                self.name(n, e.span)
            }
            ExprKind::Unary(UnOp::Deref, _) | ExprKind::Index(..) => self.expr(e),
            _ => self.err(e.span, "cannot assign to this"),
        }
    }

    fn expr(&mut self, e: &Expr) -> Ty {
        if self.depth >= MAX_CHECK_DEPTH {
            return self.err(
                e.span,
                format!("nested more deeply than {MAX_CHECK_DEPTH} levels"),
            );
        }
        self.depth += 1;
        let t = self.expr_inner(e);
        self.depth -= 1;
        t
    }

    fn expr_inner(&mut self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Int(_) => Ty::Int,
            ExprKind::Str(_) => self.err(e.span, "strings are not part of the C subset"),
            ExprKind::Name(n) => self.name(n, e.span),
            ExprKind::Field(base, f) => {
                let Some(sc) = self.std_class(base) else {
                    return Ty::Unknown;
                };
                match sc.member(&f.name).map(|m| &m.kind) {
                    Some(StdKind::Const(_)) => Ty::Int,
                    Some(_) => self.err(
                        e.span,
                        format!(
                            "{}.{} is not a number (call or concatenate it)",
                            sc.name, f.name
                        ),
                    ),
                    None => self.err(f.span, format!("{} has no member {}", sc.name, f.name)),
                }
            }
            ExprKind::Call(callee, args) => self.call(e, callee, args),
            ExprKind::Index(a, i) => {
                let ta = self.expr(a);
                let ti = self.expr(i);
                self.want(i.span, &ti, &Ty::Int, "an index");
                match ta {
                    Ty::Ptr(_) | Ty::Unknown => Ty::Int,
                    t => self.err(
                        a.span,
                        format!("only a pointer can be indexed, not {}", t.show()),
                    ),
                }
            }
            ExprKind::Unary(op, a) => {
                let t = self.expr(a);
                match (op, &t) {
                    (_, Ty::Unknown) => Ty::Unknown,
                    (UnOp::Deref, Ty::Ptr(_)) => Ty::Int,
                    (UnOp::Deref, _) => self.err(
                        e.span,
                        format!("only a pointer can be dereferenced, not {}", t.show()),
                    ),
                    (UnOp::Not, Ty::Ptr(_)) => Ty::Int,
                    (_, Ty::Int) => Ty::Int,
                    _ => self.err(
                        e.span,
                        format!("'{:?}' needs a number, found {}", op, t.show()),
                    ),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (ta, tb) = (self.expr(a), self.expr(b));
                self.binary(e.span, *op, ta, tb)
            }
            ExprKind::Assign(op, l, r) => {
                let tl = self.lvalue(l);
                let tr = self.expr(r);
                let result = match op {
                    Some(op) => self.binary(e.span, *op, tl.clone(), tr),
                    None => tr,
                };
                self.want(r.span, &result, &tl, "the assigned value");
                tl
            }
            ExprKind::IncDec { target, .. } => {
                let t = self.lvalue(target);
                match t {
                    Ty::Int | Ty::Ptr(_) | Ty::Unknown => t,
                    t => self.err(e.span, format!("cannot increment {}", t.show())),
                }
            }
            ExprKind::Cond(c, a, b) => {
                let tc = self.expr(c);
                self.cond(c.span, &tc);
                let ta = self.expr(a);
                let tb = self.expr(b);
                if ta.fits(&tb) {
                    ta
                } else {
                    self.err(e.span, "the two branches have different types")
                }
            }
        }
    }

    fn binary(&mut self, span: Span, op: BinOp, a: Ty, b: Ty) -> Ty {
        use BinOp::*;
        match (op, &a, &b) {
            (_, Ty::Unknown, _) | (_, _, Ty::Unknown) => Ty::Unknown,
            (_, Ty::Int, Ty::Int) => Ty::Int,
            (Add, Ty::Ptr(_), Ty::Int) | (Sub, Ty::Ptr(_), Ty::Int) => a,
            (Add, Ty::Int, Ty::Ptr(_)) => b,
            (Sub, Ty::Ptr(_), Ty::Ptr(_)) => Ty::Int,
            (Lt | Le | Gt | Ge | Eq | Ne | And | Or, Ty::Ptr(_), Ty::Ptr(_) | Ty::Int)
            | (Eq | Ne | And | Or, Ty::Int, Ty::Ptr(_)) => Ty::Int,
            _ => self.err(
                span,
                format!(
                    "'{}' does not apply to {} and {}",
                    op.symbol(),
                    a.show(),
                    b.show()
                ),
            ),
        }
    }

    fn call(&mut self, e: &Expr, callee: &Expr, args: &[Expr]) -> Ty {
        let arg_tys: Vec<Ty> = args.iter().map(|a| self.expr(a)).collect();
        let check_args = |ck: &mut Self, what: &str, params: &[Ty], hint: Option<String>| {
            if params.len() != args.len() {
                let mut d = Diag::error(
                    e.span,
                    format!(
                        "{what} takes {} argument(s), given {}",
                        params.len(),
                        args.len()
                    ),
                );
                if let Some(h) = &hint {
                    d = d.note(h.clone());
                }
                ck.diags.push(d);
                return;
            }
            for (i, (a, p)) in args.iter().zip(params).enumerate() {
                if !arg_tys[i].fits(p) {
                    let mut d = Diag::error(
                        a.span,
                        format!(
                            "argument {} of {what} should be {}, found {}",
                            i + 1,
                            p.show(),
                            arg_tys[i].show()
                        ),
                    );
                    if let Some(h) = &hint {
                        d = d.note(h.clone());
                    }
                    ck.diags.push(d);
                }
            }
        };
        match &callee.kind {
            ExprKind::Name(n) if self.lookup_local(n).is_none() => {
                match self.member(n).map(|m| m.kind.clone()) {
                    Some(MemberKind::Function { ret, params, .. }) => {
                        let p: Vec<Ty> = params.iter().map(|p| Ty::of(p.ty)).collect();
                        check_args(self, n, &p, None);
                        Ty::of(ret)
                    }
                    Some(MemberKind::Bitstring { sub: Some(sig), params, .. }) => {
                        let p: Vec<Ty> = params.iter().flatten().map(|p| Ty::of(p.ty)).collect();
                        let hint = format!(
                            "{n}({}) generates the code; call the code with its C arguments: {n}({})({})",
                            params.iter().flatten().map(|p| p.name.name.as_str()).collect::<Vec<_>>().join(", "),
                            params.iter().flatten().map(|p| p.name.name.as_str()).collect::<Vec<_>>().join(", "),
                            sig.params.iter().map(|p| p.name.name.as_str()).collect::<Vec<_>>().join(", "),
                        );
                        check_args(self, &format!("bitstring function {n}"), &p, Some(hint));
                        Ty::Code(sig.params.iter().map(|p| p.ty).collect(), sig.ret)
                    }
                    Some(MemberKind::Bitstring { sub: None, .. }) => self.err(
                        callee.span,
                        format!("bitstring {n} has no C sub-type, so C cannot call it (declare it bitstring<void f(…)> {n}…)"),
                    ),
                    Some(MemberKind::Data { .. }) => self.err(callee.span, format!("{n} is data, not a function")),
                    _ => self.err(callee.span, format!("undeclared function '{n}'")),
                }
            }
            ExprKind::Field(base, f) => {
                let Some(sc) = self.std_class(base) else {
                    return Ty::Unknown;
                };
                match sc.member(&f.name).map(|m| &m.kind) {
                    Some(StdKind::Host { params, ret, .. }) => {
                        let p: Vec<Ty> = params.iter().map(|c| Ty::of(*c)).collect();
                        check_args(self, &format!("{}.{}", sc.name, f.name), &p, None);
                        Ty::of(*ret)
                    }
                    Some(_) => self.err(
                        e.span,
                        format!("{}.{} cannot be called from C", sc.name, f.name),
                    ),
                    None => self.err(f.span, format!("{} has no member {}", sc.name, f.name)),
                }
            }
            _ => match self.expr(callee) {
                Ty::Code(params, ret) => {
                    let p: Vec<Ty> = params.iter().map(|c| Ty::of(*c)).collect();
                    check_args(self, "the generated code", &p, None);
                    Ty::of(ret)
                }
                Ty::Unknown => Ty::Unknown,
                t => self.err(callee.span, format!("{} cannot be called", t.show())),
            },
        }
    }
}

/// `{expr}` pieces of an asm line: (offset of the expression, its text).
pub fn interpolations(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut rest = 0;
    while let Some(o) = line[rest..].find('{') {
        let start = rest + o + 1;
        match line[start..].find('}') {
            Some(c) => {
                out.push((start, &line[start..start + c]));
                rest = start + c + 1;
            }
            None => break,
        }
    }
    out
}
