//! Imported user classes. `import(A);` builds an instance of A inside its
//! importer (before the importer's data members, so their initialisers
//! can read `A.x`); `A.x`, `A.f(…)`, `A.code(m)` and `A.bits` in a
//! bitstring body are A's own members, run in A's instance — A's names
//! resolve in A (its bases, its imports), as `x86_64.page_size` resolves
//! in `x86_64`. The host functions' state (scratch files, mappings, the
//! page-out log) and the step and generation counts are the importer's:
//! what A does inside B's `benchmark()` is B's work, and the runner's
//! evidence sees it.

use super::{Instance, Piece, Value, R};
use crate::ast::{Expr, ExprKind, Ident, MemberKind};
use crate::source::Span;
use crate::stdlib::Host;
use std::collections::BTreeMap;
use std::rc::Rc;

impl<'p> Instance<'p> {
    /// Builds every user class the class (or a base) imports, with this
    /// instance's host and instruction set.
    pub(super) fn build_imports(&mut self) -> R<()> {
        for k in self.prog.user_imports(self.class) {
            let name = self.prog.classes[k].name.name.clone();
            let idle = Host::new(self.host.scratch.clone());
            let host = std::mem::replace(&mut self.host, idle);
            let mut sub =
                Instance::with_host(self.prog, &name, &BTreeMap::new(), host, Some(self.isa))?;
            std::mem::swap(&mut self.host, &mut sub.host);
            self.steps += sub.steps;
            self.generations += sub.generations;
            self.users.push((name, sub));
        }
        Ok(())
    }

    /// The imported user class `e` names (before a `.`), by its index.
    pub(super) fn user(&self, e: &Expr) -> Option<usize> {
        match &e.kind {
            ExprKind::Name(n) => self.users.iter().position(|(k, _)| k == n),
            _ => None,
        }
    }

    /// How many user classes the class imports (their indices for `user_instance`).
    pub(crate) fn user_count(&self) -> usize {
        self.users.len()
    }

    /// Every imported instance's compiled C parts, at any depth, with the
    /// path to it (depth first, in import order).
    pub(crate) fn user_jits(&self) -> Vec<(Vec<usize>, &crate::jit::Jit)> {
        let mut out = Vec::new();
        for (u, (_, sub)) in self.users.iter().enumerate() {
            if let Some(j) = sub.jit() {
                out.push((vec![u], j));
            }
            for (mut p, j) in sub.user_jits() {
                p.insert(0, u);
                out.push((p, j));
            }
        }
        out
    }

    /// Runs `f` in imported instance `u`, lending it this instance's host
    /// and counting its steps and generations as this instance's.
    pub(super) fn with_user<T>(
        &mut self,
        u: usize,
        f: impl FnOnce(&mut Instance<'p>) -> R<T>,
    ) -> R<T> {
        let sub = &mut self.users[u].1;
        std::mem::swap(&mut self.host, &mut sub.host);
        let (steps, generations) = (sub.steps, sub.generations);
        let r = f(sub);
        std::mem::swap(&mut self.host, &mut sub.host);
        let (steps, generations) = (sub.steps - steps, sub.generations - generations);
        self.steps += steps;
        self.generations += generations;
        r
    }

    /// A message from the imported instance, located here when it is not
    /// located already (then it is in the imported class's file).
    fn located(&self, span: Span, what: &str, m: String) -> String {
        if m.contains("\n  --> ") || m.contains("┌─") {
            m
        } else {
            self.at(span, format!("{what}: {m}"))
        }
    }

    /// `A.x`: a data member of imported class A.
    pub(crate) fn user_data(&mut self, u: usize, f: &Ident, span: Span) -> R<Value> {
        let (name, sub) = &self.users[u];
        match sub.data.get(&f.name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.at(span, format!("{name}.{} is not a data member", f.name))),
        }
    }

    /// `A.f(args)` from C: A's C function, or the code A's sub-typed
    /// bitstring function generates for `args`.
    pub(crate) fn user_call(
        &mut self,
        u: usize,
        f: &Ident,
        args: &[Value],
        span: Span,
    ) -> R<Value> {
        let what = format!("{}.{}", self.users[u].0, f.name);
        let r = match self.users[u].1.member_kind(&f.name) {
            Some(MemberKind::Function { .. }) => {
                self.with_user(u, |a| a.call_function(&f.name, args))
            }
            Some(MemberKind::Bitstring { .. }) => {
                let words: Vec<i64> = args.iter().map(Value::word).collect();
                self.with_user(u, |a| a.generate(&f.name, &words))
                    .map(Value::Code)
            }
            _ => Err(format!("{what} cannot be called")),
        };
        r.map_err(|m| self.located(span, &what, m))
    }

    /// `A.bits` or `A.fn(args)` in a bitstring body: A generates the
    /// bytes; they are concatenated here, their listing frames under this
    /// body's.
    pub(super) fn user_gen(&mut self, u: usize, f: &Ident, args: &[i64], span: Span) -> R<()> {
        let what = format!("{}.{}", self.users[u].0, f.name);
        let (bytes, pieces) = self
            .with_user(u, |a| a.fragment(&f.name, args))
            .map_err(|m| self.located(span, &what, m))?;
        let off = self.bytes.len();
        self.bytes.extend_from_slice(&bytes);
        for p in pieces {
            let mut frames = self.frames.clone();
            frames.extend(p.frames.iter().cloned());
            self.pieces.push(Piece {
                start: off + p.start,
                end: off + p.end,
                frames: Rc::new(frames),
            });
        }
        Ok(())
    }

    /// The bytes of bitstring `name` for `args`, as a piece of another
    /// class's code (not a function of its own: not mapped, not cached).
    fn fragment(&mut self, name: &str, args: &[i64]) -> R<(Vec<u8>, Vec<Piece>)> {
        let r = match self.view.get(name) {
            Some(&r) => r,
            None => return Err(format!("{} has no bitstring {name}", self.class_name())),
        };
        let saved = (
            std::mem::take(&mut self.bytes),
            std::mem::take(&mut self.pieces),
            std::mem::take(&mut self.frames),
        );
        let steps = self.steps;
        let res = self.gen_member(r, args, None);
        self.steps = steps;
        let bytes = std::mem::replace(&mut self.bytes, saved.0);
        let pieces = std::mem::replace(&mut self.pieces, saved.1);
        self.frames = saved.2;
        res.map(|()| (bytes, pieces))
    }
}
