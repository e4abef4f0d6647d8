//! The walk of the C subset's functions, once for both code generators
//! (compile.rs: Cranelift IR; cc.rs: C source): names and what they
//! denote, static types, conversions on assignment, what a call calls
//! ([`resolve`]) and the errors at their places, the same text from
//! both; and the statements: scopes, loops, `break`/`continue`,
//! returns. Each generator emits the parts its way ([`Emit`]):
//! constants, variables, words, operators, loads and stores, joins,
//! labels and jumps, calls.

use super::{t_of, Addrs, SiteKind, UserOp, MAX_ARGS, T};

type R<T> = Result<T, String>;
use crate::ast::*;
use crate::eval::Instance;
use crate::source::Span;
use crate::stdlib::StdKind;

/// A compiled function's signature: name, parameter types, value type.
pub(crate) type Sig = (String, Vec<CType>, CType);

/// A resolved call `callee(args)`.
pub(crate) enum Call<'e> {
    /// The class's own C function, `idx` in the compiled functions.
    Own { idx: usize, ret: CType },
    /// A bitstring called as a function: its code is generated here and
    /// the value is the code's address.
    Gen { name: &'e str },
    /// Imported class `user`'s C function `f`: `direct` is its compiled
    /// address and runtime block when it is compiled with this many
    /// parameters; else it goes through the trampoline (the interpreter's
    /// instance then says what it says).
    UserFn {
        user: usize,
        f: &'e Ident,
        ret: CType,
        direct: Option<(i64, i64)>,
    },
    /// `A.code(m)(args)`: A generates (or finds) the code through the
    /// trampoline, then it is called here.
    UserCode {
        user: usize,
        f: &'e Ident,
        inner_args: &'e [Expr],
        ret: CType,
    },
    /// A standard class's host function, through the host trampoline.
    Host { site: SiteKind, ret: CType },
    /// `name(m)(args)`: the class's bitstring generated (or found), then
    /// called.
    Code {
        name: &'e str,
        inner_args: &'e [Expr],
        ret: CType,
    },
}

/// The class as the code generators see it: its instance, its data
/// members' words (`layout`, at `addrs.data`), its compiled functions'
/// signatures and the baked addresses.
pub(crate) struct Class<'a, 'p> {
    pub(crate) inst: &'a Instance<'p>,
    pub(crate) layout: &'a [(String, CType)],
    pub(crate) sigs: &'a [Sig],
    pub(crate) addrs: &'a Addrs,
}

/// Resolves call `e` (`callee(args)` with `nargs` arguments), or the
/// error (its place and text) the code generators report.
pub(crate) fn resolve<'e>(
    s: &Class,
    is_local: &dyn Fn(&str) -> bool,
    e: &'e Expr,
    callee: &'e Expr,
    nargs: usize,
) -> Result<Call<'e>, (Span, String)> {
    match &callee.kind {
        ExprKind::Name(n) if !is_local(n) => match s.inst.member_kind(n) {
            Some(MemberKind::Function { .. }) => {
                let Some(idx) = s.sigs.iter().position(|g| &g.0 == n) else {
                    return Err((e.span, format!("{n}() is declared but not defined")));
                };
                let (params, ret) = (s.sigs[idx].1.len(), s.sigs[idx].2);
                if params != nargs {
                    return Err((e.span, format!("{n} takes {params} argument(s)")));
                }
                Ok(Call::Own { idx, ret })
            }
            Some(MemberKind::Bitstring { .. }) => Ok(Call::Gen { name: n }),
            _ => Err((callee.span, format!("undeclared function '{n}'"))),
        },
        ExprKind::Field(base, f) if s.inst.user_member(base, &f.name).is_some() => {
            let Some((user, kind)) = s.inst.user_member(base, &f.name) else {
                unreachable!("guarded above");
            };
            let ret = match kind {
                Some(MemberKind::Function { ret, .. }) => *ret,
                Some(MemberKind::Bitstring { .. }) => {
                    return Err((
                        e.span,
                        format!(
                        "{0} makes code: the compiler calls it only where it is made, {0}(m)(args)",
                        f.name
                    ),
                    ))
                }
                _ => return Err((callee.span, format!("'{}' cannot be called", f.name))),
            };
            if nargs > MAX_ARGS {
                return Err((e.span, "more than 6 arguments".into()));
            }
            let direct = s.addrs.users[user].as_ref().and_then(|u| {
                let &(_, addr, n) = u.funcs.iter().find(|g| g.0 == f.name)?;
                (n == nargs).then_some((addr, u.rt))
            });
            Ok(Call::UserFn {
                user,
                f,
                ret,
                direct,
            })
        }
        ExprKind::Call(inner, inner_args) if matches!(&inner.kind, ExprKind::Field(base, f) if s.inst.user_member(base, &f.name).is_some()) =>
        {
            let ExprKind::Field(base, f) = &inner.kind else {
                unreachable!("guarded above");
            };
            let Some((user, Some(MemberKind::Bitstring { sub, .. }))) =
                s.inst.user_member(base, &f.name)
            else {
                return Err((callee.span, "not callable".into()));
            };
            if inner_args.len() > MAX_ARGS {
                return Err((callee.span, "more than 6 arguments".into()));
            }
            Ok(Call::UserCode {
                user,
                f,
                inner_args,
                ret: sub.as_ref().map_or(CType::VOID, |s| s.ret),
            })
        }
        ExprKind::Field(base, f) => {
            let sc = s
                .inst
                .std_class(base)
                .ok_or_else(|| (base.span, "not an imported standard class".to_string()))?;
            match sc.member(&f.name).map(|m| &m.kind) {
                Some(StdKind::Host { f: hf, ret, .. }) => {
                    if nargs > MAX_ARGS {
                        return Err((e.span, "more than 6 arguments".into()));
                    }
                    Ok(Call::Host {
                        site: SiteKind::Host {
                            f: *hf,
                            what: format!("{}.{}", sc.name, f.name),
                            ret: *ret,
                            nargs,
                        },
                        ret: *ret,
                    })
                }
                _ => Err((e.span, format!("{}.{} cannot be called", sc.name, f.name))),
            }
        }
        ExprKind::Call(inner, inner_args) => {
            let ExprKind::Name(n) = &inner.kind else {
                return Err((callee.span, "not callable".into()));
            };
            let Some(MemberKind::Bitstring { sub, .. }) = s.inst.member_kind(n) else {
                return Err((callee.span, "not callable".into()));
            };
            if is_local(n) {
                return Err((callee.span, "not callable".into()));
            }
            Ok(Call::Code {
                name: n,
                inner_args,
                ret: sub.as_ref().map_or(CType::VOID, |s| s.ret),
            })
        }
        _ => Err((
            callee.span,
            "the compiler calls generated code only where it is made: name(m)(args)".into(),
        )),
    }
}

/// What a code generator emits for the parts of a function's body;
/// [`stmt`], [`expr`], [`assign`] and [`call`] walk it with them. `V` is
/// the generator's value (a Cranelift value, a C expression), `Var` a
/// local variable, `Join` where the two ways of `&&`, `||` and `?:` meet.
pub(crate) trait Emit {
    type V: Clone;
    type Var: Clone;
    type Join;
    /// A place in the code that jumps go to.
    type Label: Clone;
    /// The class compiled.
    fn class(&self) -> Class<'_, '_>;
    /// The local variables in scope, innermost last: name, declared
    /// type, variable.
    fn locals(&mut self) -> &mut Vec<(String, CType, Self::Var)>;
    /// The loops around the walk, innermost last: (break, continue).
    fn loops(&mut self) -> &mut Vec<(Self::Label, Self::Label)>;
    /// The function's value type.
    fn ret_type(&self) -> CType;
    /// The local variables in scope, to read (as [`Emit::locals`]).
    fn locals_now(&self) -> &[(String, CType, Self::Var)];
    /// Local variable `n` where the walk is: its declared type and variable.
    fn find_local(&self, n: &str) -> Option<(CType, Self::Var)> {
        self.locals_now()
            .iter()
            .rev()
            .find(|(k, _, _)| k == n)
            .map(|(_, t, v)| (*t, v.clone()))
    }
    /// A new variable of declared type `ty` holding `v` (already of it).
    fn new_var(&mut self, ty: CType, v: Self::V) -> Self::Var;
    fn label(&mut self, what: &str) -> Self::Label;
    /// The code continues at `l`: only after a jump ([`Emit::goto`],
    /// [`Emit::branch`]).
    fn place(&mut self, l: &Self::Label);
    /// Jumps to `l`; a [`Emit::place`] follows.
    fn goto(&mut self, l: &Self::Label);
    /// Goes on at `then` when `v` is not 0, else at `other`; `then` is
    /// placed next. (Labels are made in the order the code runs: Cranelift
    /// lays blocks out by it, and a loop's body made after its exit was
    /// laid out after the exit, 1.7x slower on the 4 KiB loop.)
    fn branch(&mut self, v: Self::V, then: &Self::Label, other: &Self::Label);
    /// Jumps to `l` (`break`, `continue`) and goes on in unreachable code.
    fn leave(&mut self, l: &Self::Label);
    /// Returns `v` (of the function's type) from the function.
    fn ret(&mut self, v: Self::V);
    fn read_var(&mut self, var: &Self::Var) -> Self::V;
    fn write_var(&mut self, var: &Self::Var, v: Self::V);
    /// Word `i` (64-bit) of the words at baked address `base` (the data
    /// members, an imported class's data): as base and offset, so that
    /// Cranelift keeps one base for all of them.
    fn read_word(&mut self, base: i64, i: usize) -> Self::V;
    fn write_word(&mut self, base: i64, i: usize, v: Self::V);
    fn int(&mut self, v: i64) -> Self::V;
    /// `-v`, `!v` or `~v` (a dereference is a [`Emit::load`]).
    fn unary(&mut self, op: UnOp, v: Self::V) -> Self::V;
    /// `a op b` with the pointer arithmetic of their static types;
    /// division by zero raised at `span`.
    fn binary(&mut self, span: Span, op: BinOp, a: (Self::V, T), b: (Self::V, T)) -> (Self::V, T);
    /// `v` converted to declared type `ty` (on assignment, parameters,
    /// values returned).
    fn coerce(&mut self, ty: CType, v: Self::V) -> (Self::V, T);
    /// A load through pointer `p` at `index` (null checked at `span`),
    /// zero-extended to 64 bits, as the interpreter's.
    fn load(&mut self, span: Span, p: (Self::V, T), index: Self::V) -> R<(Self::V, T)>;
    /// A store of `v` through pointer `p` at `index` (null checked).
    fn store(&mut self, span: Span, p: (Self::V, T), index: Self::V, v: Self::V)
        -> R<(Self::V, T)>;
    /// `l && …` (`and`) or `l || …`: the right side's code follows only
    /// where it is evaluated, then [`Emit::logical_end`] with its value.
    fn logical_begin(&mut self, and: bool, l: Self::V) -> Self::Join;
    /// The value (0 or 1) of the `&&` or `||` begun at `j`.
    fn logical_end(&mut self, j: Self::Join, r: Self::V) -> Self::V;
    /// `c ? … : …`: the first value's code follows, then
    /// [`Emit::cond_else`] with it, the second's, [`Emit::cond_end`].
    fn cond_begin(&mut self, c: Self::V) -> Self::Join;
    fn cond_else(&mut self, j: &Self::Join, a: Self::V);
    fn cond_end(&mut self, j: Self::Join, b: Self::V) -> Self::V;
    /// The error text at `span` (the generator's wording around `msg`).
    fn error_at(&self, span: Span, msg: String) -> String;
    /// A call of the class's own compiled function `idx`; an error it
    /// raised unwinds this code too.
    fn call_own(&mut self, idx: usize, vals: &[Self::V]) -> Self::V;
    /// Host function call `site`, through the host trampoline.
    fn host(&mut self, span: Span, site: SiteKind, vals: &[Self::V]) -> Self::V;
    /// `op` on member `f` of imported user class `user`, through the
    /// trampoline (`jit::user_trampoline`; `A.code(m)`, `A.x`, or a
    /// function of A's that is not called directly): its word.
    fn user(&mut self, span: Span, user: usize, f: &Ident, vals: &[Self::V], op: UserOp)
        -> Self::V;
    /// A direct call of imported class `user`'s compiled function at
    /// `addr` (its value already converted to its type); an error it
    /// raised (in its Rt, `rt`) unwinds this code too, reported as its.
    fn call_user(
        &mut self,
        span: Span,
        user: usize,
        addr: i64,
        rt: i64,
        vals: &[Self::V],
    ) -> Self::V;
    /// Calls generated code at `addr` with `vals` (six words of the
    /// pointer's width, as `ExecMem::call`), counted; its value as the
    /// sub-type's `ret`.
    fn call_code(&mut self, addr: Self::V, vals: &[Self::V], ret: CType) -> (Self::V, T);
    /// Code generating bitstring `name` for `vals` (an inline cache of the
    /// last arguments and address before the trampoline); its address.
    fn generate(
        &mut self,
        e: &Expr,
        name: &str,
        vals: &[Self::V],
        call: Option<Span>,
    ) -> R<Self::V>;
}

/// Call `e` (`callee(args)`) emitted by `g`: its value and static type.
pub(crate) fn call<G: Emit>(g: &mut G, e: &Expr, callee: &Expr, args: &[Expr]) -> R<(G::V, T)> {
    let mut vals = Vec::with_capacity(args.len());
    for a in args {
        vals.push(expr(g, a)?.0);
    }
    let call = resolve(
        &g.class(),
        &|n| g.find_local(n).is_some(),
        e,
        callee,
        vals.len(),
    )
    .map_err(|(s, m)| g.error_at(s, m))?;
    let values = |g: &mut G, args: &[Expr]| -> R<Vec<G::V>> {
        args.iter().map(|a| Ok(expr(g, a)?.0)).collect()
    };
    Ok(match call {
        Call::Own { idx, ret } => (g.call_own(idx, &vals), t_of(ret)),
        Call::Gen { name } => (g.generate(e, name, &vals, None)?, T::Int),
        Call::UserFn {
            user,
            f,
            ret,
            direct,
        } => {
            let r = match direct {
                Some((addr, rt)) => g.call_user(e.span, user, addr, rt, &vals),
                // Not compiled (declared only) or a wrong argument count:
                // the interpreter's instance says what it says.
                None => g.user(e.span, user, f, &vals, UserOp::Call { ret }),
            };
            (r, t_of(ret))
        }
        Call::UserCode {
            user,
            f,
            inner_args,
            ret,
        } => {
            let ivals = values(g, inner_args)?;
            let addr = g.user(callee.span, user, f, &ivals, UserOp::Code { call: e.span });
            g.call_code(addr, &vals, ret)
        }
        Call::Host { site, ret } => (g.host(e.span, site, &vals), t_of(ret)),
        Call::Code {
            name,
            inner_args,
            ret,
        } => {
            let ivals = values(g, inner_args)?;
            let addr = g.generate(callee, name, &ivals, Some(e.span))?;
            g.call_code(addr, &vals, ret)
        }
    })
}

/// The data member `n`'s word (base, index) and declared type.
fn data_word<G: Emit>(g: &G, n: &str) -> Option<((i64, usize), CType)> {
    let c = g.class();
    let i = c.layout.iter().position(|(k, _)| k == n)?;
    Some(((c.addrs.data, i), c.layout[i].1))
}

/// Expression `e` emitted by `g`: its value and static type, or the
/// error at its place.
pub(crate) fn expr<G: Emit>(g: &mut G, e: &Expr) -> R<(G::V, T)> {
    Ok(match &e.kind {
        ExprKind::Int(v) => (g.int(*v), T::Int),
        ExprKind::Str(_) => {
            return Err(g.error_at(e.span, "strings are not part of the C subset".into()))
        }
        ExprKind::Name(n) => {
            if let Some((ty, var)) = g.find_local(n) {
                (g.read_var(&var), t_of(ty))
            } else if let Some(((base, i), ty)) = data_word(g, n) {
                (g.read_word(base, i), t_of(ty))
            } else {
                return Err(g.error_at(e.span, format!("undeclared name '{n}'")));
            }
        }
        ExprKind::Field(base, f) if g.class().inst.user_member(base, &f.name).is_some() => {
            let class = g.class();
            let Some((user, Some(MemberKind::Data { ty, .. }))) =
                class.inst.user_member(base, &f.name)
            else {
                return Err(g.error_at(e.span, format!("'{}' is not a data member", f.name)));
            };
            let ty = *ty;
            // A's data words: A's compiled code keeps them, the Rust side
            // copies them to and from A's instance.
            let word = class.addrs.users[user].as_ref().and_then(|u| {
                let i = u.layout.iter().position(|(k, _)| k == &f.name)?;
                Some((u.data, i))
            });
            match word {
                Some((base, i)) => (g.read_word(base, i), t_of(ty)),
                None => (g.user(e.span, user, f, &[], UserOp::Data), t_of(ty)),
            }
        }
        ExprKind::Field(base, f) => {
            let Some(sc) = g.class().inst.std_class(base) else {
                return Err(g.error_at(base.span, "not an imported standard class".into()));
            };
            match sc.member(&f.name).map(|m| &m.kind) {
                Some(StdKind::Const(c)) => (g.int(c()), T::Int),
                _ => {
                    return Err(
                        g.error_at(e.span, format!("{}.{} is not a number", sc.name, f.name))
                    )
                }
            }
        }
        ExprKind::Call(callee, args) => call(g, e, callee, args)?,
        ExprKind::Index(p, i) => {
            let pv = expr(g, p)?;
            let (iv, _) = expr(g, i)?;
            g.load(e.span, pv, iv)?
        }
        ExprKind::Unary(op, a) => {
            let (v, t) = expr(g, a)?;
            match op {
                UnOp::Deref => {
                    let zero = g.int(0);
                    g.load(e.span, (v, t), zero)?
                }
                _ => (g.unary(*op, v), T::Int),
            }
        }
        ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
            let (l, _) = expr(g, a)?;
            let j = g.logical_begin(*op == BinOp::And, l);
            let (r, _) = expr(g, b)?;
            (g.logical_end(j, r), T::Int)
        }
        ExprKind::Binary(op, a, b) => {
            let l = expr(g, a)?;
            let r = expr(g, b)?;
            g.binary(e.span, *op, l, r)
        }
        ExprKind::Assign(op, l, r) => {
            let rv = expr(g, r)?;
            let v = match op {
                Some(op) => {
                    let lv = expr(g, l)?;
                    g.binary(e.span, *op, lv, rv)
                }
                None => rv,
            };
            assign(g, l, v)?
        }
        ExprKind::IncDec {
            target,
            delta,
            post,
        } => {
            let old = expr(g, target)?;
            let d = (g.int(*delta), T::Int);
            let new = g.binary(e.span, BinOp::Add, old.clone(), d);
            let new = assign(g, target, new)?;
            if *post {
                old
            } else {
                new
            }
        }
        ExprKind::Cond(c, a, b) => {
            let (cv, _) = expr(g, c)?;
            let j = g.cond_begin(cv);
            let (av, at) = expr(g, a)?;
            g.cond_else(&j, av);
            let (bv, bt) = expr(g, b)?;
            if at != bt {
                return Err(g.error_at(
                    e.span,
                    format!("the two values of ?: have different types ({at:?} and {bt:?}): the compiler needs one"),
                ));
            }
            (g.cond_end(j, bv), at)
        }
    })
}

/// `target = v` emitted by `g`, `v` converted to the target's type: the
/// value assigned and its type.
pub(crate) fn assign<G: Emit>(g: &mut G, target: &Expr, (v, _): (G::V, T)) -> R<(G::V, T)> {
    match &target.kind {
        ExprKind::Name(n) => {
            if let Some((ty, var)) = g.find_local(n) {
                let (w, t) = g.coerce(ty, v);
                g.write_var(&var, w.clone());
                return Ok((w, t));
            }
            if let Some(((base, i), ty)) = data_word(g, n) {
                let (w, t) = g.coerce(ty, v);
                g.write_word(base, i, w.clone());
                return Ok((w, t));
            }
            Err(g.error_at(target.span, format!("undeclared name '{n}'")))
        }
        ExprKind::Unary(UnOp::Deref, p) => {
            let pv = expr(g, p)?;
            let zero = g.int(0);
            g.store(target.span, pv, zero, v)
        }
        ExprKind::Index(p, i) => {
            let pv = expr(g, p)?;
            let (iv, _) = expr(g, i)?;
            g.store(target.span, pv, iv, v)
        }
        _ => Err(g.error_at(target.span, "cannot assign to this".into())),
    }
}

/// `name`, of declared type `ty`, holding `v` converted to it, in scope
/// from here.
pub(crate) fn declare<G: Emit>(g: &mut G, name: &str, ty: CType, v: G::V) {
    let (v, _) = g.coerce(ty, v);
    let var = g.new_var(ty, v);
    g.locals().push((name.to_string(), ty, var));
}

/// Statement `s` emitted by `g`, or the error at its place.
pub(crate) fn stmt<G: Emit>(g: &mut G, s: &Stmt) -> R<()> {
    match &s.kind {
        StmtKind::Decl { ty, name, init } => {
            let v = match init {
                Some(e) => expr(g, e)?.0,
                None => g.int(0),
            };
            declare(g, &name.name, *ty, v);
        }
        StmtKind::Expr(e) => {
            expr(g, e)?;
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            let mark = g.locals().len();
            if let Some(i) = init {
                stmt(g, i)?;
            }
            let (head, body_l) = (g.label("head"), g.label("body"));
            let (step_l, exit) = (g.label("step"), g.label("exit"));
            g.goto(&head);
            g.place(&head);
            match cond {
                Some(c) => {
                    let (v, _) = expr(g, c)?;
                    g.branch(v, &body_l, &exit);
                }
                None => g.goto(&body_l),
            }
            g.place(&body_l);
            g.loops().push((exit.clone(), step_l.clone()));
            let r = scoped(g, body);
            g.loops().pop();
            r?;
            g.goto(&step_l);
            g.place(&step_l);
            if let Some(st) = step {
                expr(g, st)?;
            }
            g.goto(&head);
            g.place(&exit);
            g.locals().truncate(mark);
        }
        StmtKind::While { cond, body } => {
            let (head, body_l, exit) = (g.label("head"), g.label("body"), g.label("exit"));
            g.goto(&head);
            g.place(&head);
            let (v, _) = expr(g, cond)?;
            g.branch(v, &body_l, &exit);
            g.place(&body_l);
            g.loops().push((exit.clone(), head.clone()));
            let r = scoped(g, body);
            g.loops().pop();
            r?;
            g.goto(&head);
            g.place(&exit);
        }
        StmtKind::If { cond, then, els } => {
            let (v, _) = expr(g, cond)?;
            let (then_l, other) = (g.label("then"), g.label("else"));
            let merge = g.label("endif");
            g.branch(v, &then_l, &other);
            g.place(&then_l);
            scoped(g, then)?;
            g.goto(&merge);
            g.place(&other);
            if let Some(x) = els {
                scoped(g, x)?;
            }
            g.goto(&merge);
            g.place(&merge);
        }
        StmtKind::Return(e) => {
            let v = match e {
                Some(e) => {
                    let (v, _) = expr(g, e)?;
                    let ty = g.ret_type();
                    g.coerce(ty, v).0
                }
                None => g.int(0),
            };
            g.ret(v);
        }
        StmtKind::Block(v) => {
            let mark = g.locals().len();
            for s in v {
                stmt(g, s)?;
            }
            g.locals().truncate(mark);
        }
        StmtKind::Break | StmtKind::Continue => {
            let Some((brk, cont)) = g.loops().last().cloned() else {
                return Err(g.error_at(s.span, "break or continue outside a loop".into()));
            };
            let target = if matches!(s.kind, StmtKind::Break) {
                brk
            } else {
                cont
            };
            g.leave(&target);
        }
        StmtKind::Empty => {}
    }
    Ok(())
}

/// A statement in a scope of its own (a loop's or an if's body).
fn scoped<G: Emit>(g: &mut G, s: &Stmt) -> R<()> {
    let mark = g.locals().len();
    let r = stmt(g, s);
    g.locals().truncate(mark);
    r
}
