//! Calls, for both code generators (compile.rs, cc.rs): what a call
//! expression calls is decided once ([`resolve`]: the callee, its arity
//! and value type, or the error at its place, the same text from both),
//! and walked once ([`lower`]); each generator only emits the parts its
//! way ([`Emit`]).

use super::{t_of, Addrs, SiteKind, UserOp, MAX_ARGS, T};
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

/// The code generator's view of the class: its instance, its compiled
/// functions' signatures (name, parameters, value type), the baked
/// addresses, and which names are local variables where the call is.
pub(crate) struct Scope<'a, 'p> {
    pub(crate) inst: &'a Instance<'p>,
    pub(crate) sigs: &'a [Sig],
    pub(crate) addrs: &'a Addrs,
    pub(crate) is_local: &'a dyn Fn(&str) -> bool,
}

/// Resolves call `e` (`callee(args)` with `nargs` arguments), or the
/// error (its place and text) the code generators report.
pub(crate) fn resolve<'e>(
    s: &Scope,
    e: &'e Expr,
    callee: &'e Expr,
    nargs: usize,
) -> Result<Call<'e>, (Span, String)> {
    match &callee.kind {
        ExprKind::Name(n) if !(s.is_local)(n) => match s.inst.member_kind(n) {
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
            if (s.is_local)(n) {
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

/// What a code generator emits for the parts of a call; [`lower`] walks
/// the call with them. `V` is the generator's value: a Cranelift value, a
/// C expression.
pub(crate) trait Emit {
    type V: Clone;
    /// The value of expression `e`, or its error at its place.
    fn value(&mut self, e: &Expr) -> Result<Self::V, String>;
    /// The class's instance, its compiled functions' signatures and the
    /// baked addresses.
    fn parts(&self) -> (&Instance<'_>, &[Sig], &Addrs);
    /// Whether `n` is a local variable where the call is.
    fn is_local(&self, n: &str) -> bool;
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
    ) -> Result<Self::V, String>;
}

/// Call `e` (`callee(args)`) emitted by `g`: its value and static type.
pub(crate) fn lower<G: Emit>(
    g: &mut G,
    e: &Expr,
    callee: &Expr,
    args: &[Expr],
) -> Result<(G::V, T), String> {
    let mut vals = Vec::with_capacity(args.len());
    for a in args {
        vals.push(g.value(a)?);
    }
    let call = {
        let (inst, sigs, addrs) = g.parts();
        let is_local = |n: &str| g.is_local(n);
        let scope = Scope {
            inst,
            sigs,
            addrs,
            is_local: &is_local,
        };
        resolve(&scope, e, callee, vals.len())
    }
    .map_err(|(s, m)| g.error_at(s, m))?;
    let values = |g: &mut G, args: &[Expr]| -> Result<Vec<G::V>, String> {
        args.iter().map(|a| g.value(a)).collect()
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
