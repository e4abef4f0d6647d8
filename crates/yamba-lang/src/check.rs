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
    import_cycles(prog, &mut diags);
    diags
}

/// One import as an instance needs it: class `from` (through the import
/// written in class `written_in`, itself or a base) needs class `to`.
struct ImportEdge {
    from: usize,
    to: usize,
    written_in: usize,
    span: Span,
}

/// Every user-class import, per class that needs it (a class needs what
/// its bases import too: its instance holds theirs).
fn import_edges(prog: &Program) -> Vec<ImportEdge> {
    let mut edges = Vec::new();
    for from in 0..prog.classes.len() {
        for written_in in prog.chain(from) {
            for m in &prog.classes[written_in].members {
                if let (MemberKind::Import, Some(to)) = (&m.kind, prog.class(&m.name.name)) {
                    edges.push(ImportEdge {
                        from,
                        to,
                        written_in,
                        span: m.name.span,
                    });
                }
            }
        }
    }
    edges
}

/// Classes that import each other in a cycle: an instance of each would
/// hold an instance of itself. Reported once per cycle, at the import of
/// its first class (in program order), naming the whole cycle; the other
/// imports of the cycle are located in notes. A class importing itself
/// directly has an error of its own (in `check_class`).
fn import_cycles(prog: &Program, diags: &mut Vec<Diag>) {
    let edges = import_edges(prog);
    let mut reported: Vec<Vec<usize>> = Vec::new();
    for (ei, e) in edges.iter().enumerate() {
        if e.from == e.to && e.written_in == e.from {
            continue;
        }
        // The shortest way from e.to back to e.from: a breadth-first search
        // remembering the edge that reached each class.
        let mut came: HashMap<usize, usize> = HashMap::new();
        let mut frontier = vec![e.to];
        let mut found = e.to == e.from;
        while !found && !frontier.is_empty() {
            let mut next = Vec::new();
            for &c in &frontier {
                for (k, f) in edges.iter().enumerate() {
                    if f.from != c || came.contains_key(&f.to) || f.to == e.to {
                        continue;
                    }
                    came.insert(f.to, k);
                    if f.to == e.from {
                        found = true;
                    }
                    next.push(f.to);
                }
            }
            frontier = next;
        }
        if !found {
            continue;
        }
        let mut path = vec![ei];
        let mut at = e.from;
        let mut back = Vec::new();
        while at != e.to {
            let k = came[&at];
            back.push(k);
            at = edges[k].from;
        }
        path.extend(back.into_iter().rev());
        let mut key: Vec<usize> = path.iter().map(|&k| edges[k].from).collect();
        key.sort_unstable();
        key.dedup();
        if reported.contains(&key) {
            continue;
        }
        reported.push(key);
        let name = |c: usize| prog.classes[c].name.name.as_str();
        let step = |f: &ImportEdge| {
            if f.written_in == f.from {
                format!("{} imports {}", name(f.from), name(f.to))
            } else {
                format!(
                    "{} imports {} through its base {}",
                    name(f.from),
                    name(f.to),
                    name(f.written_in)
                )
            }
        };
        let mut cycle = vec![name(e.from)];
        cycle.extend(path.iter().map(|&k| name(edges[k].to)));
        let msg = if path.len() == 1 {
            format!(
                "{}: an instance of {} would hold one of itself",
                step(e),
                name(e.from)
            )
        } else {
            format!("import cycle: {}", cycle.join(" -> "))
        };
        let mut d = Diag::error(e.span, msg);
        for &k in &path[1..] {
            let f = &edges[k];
            d = d.note(format!("{} at {}", step(f), prog.sources.location(f.span)));
        }
        diags.push(d);
    }
}

/// `import(NAME);` in class `ci`: a standard class, or a concrete class of
/// the program other than `ci`; its name may not also name a member the
/// class sees, or `NAME.x` would be ambiguous.
fn check_import(prog: &Program, ci: usize, m: &Member, diags: &mut Vec<Diag>) {
    let c = &prog.classes[ci];
    let n = &m.name.name;
    let inherited = c
        .extends
        .as_ref()
        .and_then(|e| prog.class(&e.name))
        .filter(|_| !cycle(prog, ci))
        .and_then(|b| prog.members(b).get(n).copied());
    if let Some((bc, bm)) = inherited {
        diags.push(
            Diag::error(
                m.name.span,
                format!(
                    "import({n}) is ambiguous: {} also has a member {n}, inherited from {}, so {n}.… could name either",
                    c.name.name, prog.classes[bc].name.name
                ),
            )
            .note(format!(
                "the member is declared at {}",
                prog.sources.location(prog.classes[bc].members[bm].name.span)
            )),
        );
    }
    if stdlib::class(n).is_some() {
        return;
    }
    let Some(k) = prog.class(n) else {
        let mut d = Diag::error(m.name.span, format!("import of unknown class '{n}'"))
            .note(format!("standard classes: {}", stdlib::names().join(", ")));
        let mut mine: Vec<&str> = prog
            .class_names()
            .into_iter()
            .filter(|&x| x != c.name.name)
            .collect();
        mine.sort_unstable();
        if !mine.is_empty() {
            d = d.note(format!(
                "classes of this program (its files and what they include): {}",
                mine.join(", ")
            ));
        }
        if let Some(near) = closest(n, stdlib::names().into_iter().chain(mine)) {
            d = d.note(format!("did you mean {near}?"));
        }
        diags.push(d);
        return;
    };
    if k == ci {
        diags.push(Diag::error(
            m.name.span,
            format!("class {n} imports itself: a class uses its own members by their names"),
        ));
        return;
    }
    let undefined = prog.undefined(k);
    let target = &prog.classes[k];
    if target.is_abstract || !undefined.is_empty() {
        let why = if undefined.is_empty() {
            "it is declared 'yamba abstract'".to_string()
        } else {
            format!(
                "it leaves {} undefined",
                undefined
                    .iter()
                    .map(|(m, _)| m.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let mut d = Diag::error(
            m.name.span,
            format!("cannot import abstract class {n}: {why}"),
        )
        .note("an imported class is built as it is and its members used directly, so it must be concrete");
        let concrete: Vec<&str> = (0..prog.classes.len())
            .filter(|&x| {
                x != ci
                    && prog.chain(x).contains(&k)
                    && !prog.classes[x].is_abstract
                    && prog.undefined(x).is_empty()
            })
            .map(|x| prog.classes[x].name.name.as_str())
            .collect();
        if !concrete.is_empty() {
            d = d.note(format!(
                "concrete classes extending it: {}",
                concrete.join(", ")
            ));
        }
        diags.push(d);
    }
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
            let mut d = Diag::error(
                e.span,
                format!("class {} extends unknown class {}", c.name.name, e.name),
            );
            let names = prog.class_names().into_iter().filter(|&n| n != c.name.name);
            if let Some(near) = closest(&e.name, names) {
                d = d.note(format!("did you mean {near}?"));
            } else if stdlib::class(&e.name).is_some() {
                d = d.note(format!(
                    "{} is a standard class: import({});",
                    e.name, e.name
                ));
            }
            diags.push(d);
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
        match m.kind {
            MemberKind::Import => check_import(prog, ci, m, diags),
            // A member named like a class a base imports.
            _ => {
                let base = c
                    .extends
                    .as_ref()
                    .and_then(|e| prog.class(&e.name))
                    .filter(|_| !cycle(prog, ci));
                let by = base.and_then(|b| {
                    prog.chain(b).into_iter().find_map(|k| {
                        prog.classes[k]
                            .members
                            .iter()
                            .find(|i| {
                                matches!(i.kind, MemberKind::Import) && i.name.name == m.name.name
                            })
                            .map(|i| (k, i.name.span))
                    })
                });
                if let Some((k, at)) = by {
                    diags.push(
                        Diag::error(
                            m.name.span,
                            format!(
                                "member {n} is ambiguous: {} imports class {n}, so {n}.… could name either",
                                prog.classes[k].name.name,
                                n = m.name.name
                            ),
                        )
                        .note(format!("imported at {}", prog.sources.location(at))),
                    );
                }
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
            for m in c
                .members
                .iter()
                .filter(|m| !matches!(m.kind, MemberKind::Import))
            {
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
        class: ci,
        view: prog.members(ci),
        imports: prog.imports(ci),
        users: prog.user_imports(ci),
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
                if !ret.is_void() && !always_returns(body) {
                    ck.diags.push(Diag::warning(
                        m.name.span,
                        format!(
                            "{}() returns {} but can reach its end without a return (it then returns 0)",
                            m.name.name,
                            ret.display()
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
}

/// The name among `names` nearest `name` when it looks like a typo of it:
/// at most a third of its letters wrong, by edit distance; the first in
/// order among equals. Names under three letters get none (any other
/// short name would be "near").
fn closest<'n>(name: &str, names: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    let limit = name.chars().count() / 3;
    if limit == 0 {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for cand in names {
        if cand == name {
            continue;
        }
        let d = edit_distance(name, cand);
        if d <= limit && best.is_none_or(|(bd, bn)| (d, cand) < (bd, bn)) {
            best = Some((d, cand));
        }
    }
    best.map(|(_, n)| n)
}

/// Edit distance by characters, a swap of two neighbours counting as one
/// edit (`Bsae` is one from `Base`): optimal string alignment.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let w = b.len() + 1;
    let mut d: Vec<usize> = vec![0; (a.len() + 1) * w];
    for (j, x) in d.iter_mut().take(w).enumerate() {
        *x = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// Whether every way through `body` ends in a `return` (or a loop that
/// never ends): a conservative reading, as C compilers warn.
fn always_returns(body: &[Stmt]) -> bool {
    fn returns(s: &Stmt) -> bool {
        let forever =
            |cond: Option<&Expr>| cond.is_none_or(|c| matches!(c.kind, ExprKind::Int(v) if v != 0));
        match &s.kind {
            StmtKind::Return(_) => true,
            StmtKind::Block(v) => always_returns(v),
            StmtKind::If {
                then, els: Some(e), ..
            } => returns(then) && returns(e),
            StmtKind::While { cond, body } => forever(Some(cond)) && !breaks(body),
            StmtKind::For { cond, body, .. } => forever(cond.as_ref()) && !breaks(body),
            _ => false,
        }
    }
    /// A `break` that leaves this loop (not one of a loop inside it).
    fn breaks(s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Break => true,
            StmtKind::Block(v) => v.iter().any(breaks),
            StmtKind::If { then, els, .. } => breaks(then) || els.as_deref().is_some_and(breaks),
            _ => false,
        }
    }
    body.iter().any(returns)
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

/// A class imported here: a standard one or one of the program's.
enum Imported {
    Std(&'static StdClass),
    User(usize),
}

struct Checker<'a> {
    prog: &'a Program,
    /// The class being checked.
    class: usize,
    view: HashMap<String, MemberRef>,
    imports: Vec<&'static StdClass>,
    /// User classes imported (by the class or its bases).
    users: Vec<usize>,
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

impl<'a> Checker<'a> {
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

    fn member(&self, name: &str) -> Option<&'a Member> {
        let prog = self.prog;
        self.view
            .get(name)
            .map(|&(c, m)| &prog.classes[c].members[m])
    }

    /// The class `e` names before a `.`: one imported here. Anything
    /// else is reported (once) and gives None.
    fn imported(&mut self, e: &Expr) -> Option<Imported> {
        let ExprKind::Name(n) = &e.kind else {
            self.err(
                e.span,
                "only an imported class has members named with '.' (CLASS.member)",
            );
            return None;
        };
        if self.lookup_local(n).is_some() {
            self.err(
                e.span,
                format!("{n} is a local variable or parameter here, not a class: only an imported class has members named with '.'"),
            );
            return None;
        }
        if self.member(n).is_some() {
            let is_import = self.imports.iter().any(|s| s.name == n)
                || self
                    .users
                    .iter()
                    .any(|&k| self.prog.classes[k].name.name == *n);
            // An import and a member of one name: reported where declared.
            if !is_import {
                self.err(
                    e.span,
                    format!("{n} is a member of {}, not a class: only an imported class has members named with '.'", self.prog.classes[self.class].name.name),
                );
            }
            return None;
        }
        if let Some(s) = self.imports.iter().find(|s| s.name == n) {
            return Some(Imported::Std(s));
        }
        if let Some(&k) = self
            .users
            .iter()
            .find(|&&k| self.prog.classes[k].name.name == *n)
        {
            return Some(Imported::User(k));
        }
        let written = self.prog.chain(self.class).into_iter().any(|c| {
            self.prog.classes[c]
                .members
                .iter()
                .any(|m| matches!(m.kind, MemberKind::Import) && m.name.name == *n)
        });
        if written {
            // An import of an unknown class: reported at the import.
        } else if stdlib::class(n).is_some() || self.prog.class(n).is_some() {
            self.err(
                e.span,
                format!("{n} is not imported here: add import({n});"),
            );
        } else {
            self.err(e.span, format!("unknown class '{n}'"));
        }
        None
    }

    /// A member `f` of user class `k` as this class names it: `K.f`.
    fn user_member(&mut self, k: usize, f: &Ident) -> Option<&'a Member> {
        let prog = self.prog;
        match prog.members(k).get(&f.name) {
            Some(&(c, m)) => Some(&prog.classes[c].members[m]),
            None => {
                let view = prog.members(k);
                let mut d = Diag::error(
                    f.span,
                    format!("{} has no member {}", prog.classes[k].name.name, f.name),
                );
                if let Some(near) = closest(&f.name, view.keys().map(String::as_str)) {
                    d = d.note(format!(
                        "did you mean {}.{near}?",
                        prog.classes[k].name.name
                    ));
                }
                self.diags.push(d);
                None
            }
        }
    }

    fn std_no_member(&mut self, sc: &StdClass, f: &Ident) -> Ty {
        let mut d = Diag::error(f.span, format!("{} has no member {}", sc.name, f.name));
        if let Some(near) = closest(&f.name, sc.members.iter().map(|m| m.name)) {
            d = d.note(format!("did you mean {}.{near}?", sc.name));
        }
        self.diags.push(d);
        Ty::Unknown
    }

    /// A note for a name used unqualified that only an import has.
    fn qualify_hint(&self, n: &str) -> Option<String> {
        let mut found: Vec<String> = self
            .imports
            .iter()
            .filter(|s| s.member(n).is_some())
            .map(|s| s.name.to_string())
            .collect();
        found.extend(
            self.users
                .iter()
                .filter(|&&k| self.prog.members(k).contains_key(n))
                .map(|&k| self.prog.classes[k].name.name.clone()),
        );
        match found.as_slice() {
            [] => None,
            [one] => Some(format!(
                "{n} is a member of imported class {one}: name it {one}.{n}"
            )),
            many => Some(format!(
                "{n} is a member of imported classes {}: name it CLASS.{n}",
                many.join(", ")
            )),
        }
    }

    /// An error that a note may complete (see `qualify_hint`).
    /// Or, when no import has it, the closest name in scope (a typo).
    fn err_hint(&mut self, span: Span, msg: String, name: &str) -> Ty {
        let mut d = Diag::error(span, msg);
        if let Some(h) = self.qualify_hint(name) {
            d = d.note(h);
        } else {
            let names = self
                .scopes
                .iter()
                .flat_map(|s| s.keys())
                .chain(self.view.keys())
                .map(String::as_str);
            if let Some(near) = closest(name, names) {
                d = d.note(format!("did you mean '{near}'?"));
            }
        }
        self.diags.push(d);
        Ty::Unknown
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

    /// A bitstring named in a body: a function takes its arguments, a
    /// plain bitstring none.
    fn bs_arity(
        &mut self,
        n: &str,
        params: Option<&Vec<Param>>,
        args: Option<&Vec<Expr>>,
        e: &Expr,
        callee: &Expr,
    ) {
        let want = params.map_or(0, Vec::len);
        match (params.is_some(), args) {
            (true, None) => {
                self.err(
                    callee.span,
                    format!("{n} is a bitstring function: call it with {want} argument(s)"),
                );
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
                        self.err_hint(callee.span, format!("undeclared bitstring '{n}'"), n);
                    }
                    return;
                };
                match &m.kind {
                    MemberKind::Bitstring { params, .. } => {
                        self.bs_arity(n, params.as_ref(), args, e, callee)
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
                let sc = match self.imported(base) {
                    None => return,
                    Some(Imported::Std(sc)) => sc,
                    Some(Imported::User(k)) => {
                        let Some(m) = self.user_member(k, f) else {
                            return;
                        };
                        let n = format!("{}.{}", self.prog.classes[k].name.name, f.name);
                        match &m.kind {
                            MemberKind::Bitstring { params, .. } => {
                                self.bs_arity(&n, params.as_ref(), args, e, callee)
                            }
                            _ => {
                                self.err(
                                    e.span,
                                    format!("{n} is not a bitstring (a bitstring body concatenates bitstrings)"),
                                );
                            }
                        }
                        return;
                    }
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
                        self.std_no_member(sc, f);
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
                if self.imports.iter().any(|s| s.name == n)
                    || self
                        .users
                        .iter()
                        .any(|&k| self.prog.classes[k].name.name == n)
                {
                    self.err(
                        span,
                        format!("{n} is a class: name one of its members ({n}.…)"),
                    )
                } else {
                    self.err_hint(span, format!("undeclared name '{n}'"), n)
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
            ExprKind::Field(base, f) => {
                let t = self.expr(e);
                match (&base.kind, t) {
                    (_, Ty::Unknown) => Ty::Unknown,
                    (ExprKind::Name(c), _) if stdlib::class(c).is_some() => self.err(
                        e.span,
                        format!("{c}.{} is a constant of a standard class: it cannot be assigned", f.name),
                    ),
                    (ExprKind::Name(c), _) => self.err(
                        e.span,
                        format!("{c}.{} is data of imported class {c}: only {c}'s own functions assign it (call one, {c}.f(…))", f.name),
                    ),
                    _ => self.err(e.span, "cannot assign to this"),
                }
            }
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
                let sc = match self.imported(base) {
                    None => return Ty::Unknown,
                    Some(Imported::Std(sc)) => sc,
                    Some(Imported::User(k)) => {
                        let Some(m) = self.user_member(k, f) else {
                            return Ty::Unknown;
                        };
                        return match &m.kind {
                            MemberKind::Data { ty, .. } => Ty::of(*ty),
                            _ => self.err(
                                e.span,
                                format!(
                                    "{}.{} is a function or bitstring: call it",
                                    self.prog.classes[k].name.name, f.name
                                ),
                            ),
                        };
                    }
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
                    None => self.std_no_member(sc, f),
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
        // A member called by its name, or an imported class's by CLASS.NAME.
        let named: Option<(String, Option<MemberKind>)> = match &callee.kind {
            ExprKind::Name(n) if self.lookup_local(n).is_none() => {
                Some((n.clone(), self.member(n).map(|m| m.kind.clone())))
            }
            ExprKind::Field(base, f) => match self.imported(base) {
                None => return Ty::Unknown,
                Some(Imported::User(k)) => {
                    let Some(m) = self.user_member(k, f) else {
                        return Ty::Unknown;
                    };
                    let n = format!("{}.{}", self.prog.classes[k].name.name, f.name);
                    Some((n, Some(m.kind.clone())))
                }
                Some(Imported::Std(sc)) => {
                    return match sc.member(&f.name).map(|m| &m.kind) {
                        Some(StdKind::Host { params, ret, .. }) => {
                            let p: Vec<Ty> = params.iter().map(|c| Ty::of(*c)).collect();
                            check_args(self, &format!("{}.{}", sc.name, f.name), &p, None);
                            Ty::of(*ret)
                        }
                        Some(_) => self.err(
                            e.span,
                            format!("{}.{} cannot be called from C", sc.name, f.name),
                        ),
                        None => self.std_no_member(sc, f),
                    };
                }
            },
            _ => None,
        };
        match named {
            Some((n, kind)) => {
                let n = n.as_str();
                match kind {
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
                    _ => self.err_hint(callee.span, format!("undeclared function '{n}'"), n),
                }
            }
            None => match self.expr(callee) {
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
