//! The C subset's syntax tree to Cranelift IR, one function at a time.
//!
//! Every value is an i64, as in the interpreter; a static type (integer,
//! pointer with its pointee's size, void) decides pointer arithmetic and
//! what a load reads. Assignments convert to the declared type (C's
//! conversions: truncate, then sign- or zero-extend). Errors the
//! interpreter raises while running (division by zero, null pointer,
//! calls nested deeper than 256) are raised by the code at the same
//! places; ones it would raise whatever the values (not a pointer, an
//! undeclared name, a construct the compiler does not take) are errors
//! here, before anything runs.

use super::walk::{self, Class, Emit, Sig};
use super::{t_of, Addrs, JitFn, Out, Rt, Site, SiteKind, UserOp, MAX_ARGS, T};
use crate::ast::*;
use crate::eval::Instance;
use crate::source::Span;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I16, I32, I64, I8};
use cranelift_codegen::ir::{
    self, AbiParam, Block, BlockArg, InstBuilder, MemFlags, Signature, StackSlot, StackSlotData,
    StackSlotKind, UserFuncName, Value as V,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use std::cell::UnsafeCell;
use std::mem::offset_of;

type R<T> = Result<T, String>;

fn target_isa() -> R<cranelift_codegen::isa::OwnedTargetIsa> {
    let mut flags = settings::builder();
    flags
        .set("opt_level", "speed")
        .map_err(|e| format!("cranelift: {e}"))?;
    let builder = cranelift_native::builder().map_err(|e| format!("cranelift: {e}"))?;
    builder
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("cranelift: {e}"))
}

/// Compiles every C function of `inst`'s class, laid out one after another.
pub(super) fn compile_all(inst: &Instance, layout: &[(String, CType)], addrs: &Addrs) -> R<Out> {
    let isa = target_isa()?;
    let fns = inst.c_functions();
    let sigs: Vec<Sig> = fns
        .iter()
        .map(|(n, m)| match &m.kind {
            MemberKind::Function { ret, params, .. } => {
                (n.clone(), params.iter().map(|p| p.ty).collect(), *ret)
            }
            _ => unreachable!("c_functions returns functions"),
        })
        .collect();
    let mut out = Out {
        bytes: Vec::new(),
        funcs: Vec::new(),
        sites: Vec::new(),
    };
    let mut fbc = FunctionBuilderContext::new();
    for (idx, (name, member)) in fns.iter().enumerate() {
        let MemberKind::Function {
            ret,
            params,
            body: Some(body),
        } = &member.kind
        else {
            continue;
        };
        let mut sig = Signature::new(isa.default_call_conv());
        for _ in params {
            sig.params.push(AbiParam::new(I64));
        }
        sig.returns.push(AbiParam::new(I64));
        let mut func = ir::Function::with_name_signature(UserFuncName::user(0, idx as u32), sig);
        {
            let b = FunctionBuilder::new(&mut func, &mut fbc);
            let mut fc = Fc {
                b,
                inst,
                layout,
                sigs: &sigs,
                addrs,
                sites: &mut out.sites,
                locals: Vec::new(),
                loops: Vec::new(),
                ret: *ret,
                ret_block: Block::from_u32(0),
                err_block: Block::from_u32(0),
                slot: None,
                call_conv: isa.default_call_conv(),
            };
            fc.function(member.name.span, params, body)?;
            fc.b.finalize();
        }
        let mut ctx = Context::for_function(func);
        let code = ctx
            .compile(&*isa, &mut ControlPlane::default())
            .map_err(|e| {
                inst.at(
                    member.name.span,
                    format!("cranelift could not compile {name}(): {:?}", e.inner),
                )
            })?;
        if !code.buffer.relocs().is_empty() {
            return Err(inst.at(
                member.name.span,
                format!("compiled {name}() needs relocations (the code must not)"),
            ));
        }
        while !out.bytes.len().is_multiple_of(16) {
            out.bytes.push(0);
        }
        let offset = out.bytes.len();
        out.bytes.extend_from_slice(code.code_buffer());
        out.funcs.push(JitFn {
            name: name.clone(),
            params: params.iter().map(|p| p.ty).collect(),
            ret: *ret,
            offset,
            len: code.code_buffer().len(),
        });
    }
    Ok(out)
}

struct Fc<'a, 'b> {
    b: FunctionBuilder<'b>,
    inst: &'a Instance<'a>,
    layout: &'a [(String, CType)],
    sigs: &'a [Sig],
    addrs: &'a Addrs,
    sites: &'a mut Vec<Site>,
    locals: Vec<(String, CType, Variable)>,
    /// (break, continue) targets of the loops around.
    loops: Vec<(Block, Block)>,
    ret: CType,
    ret_block: Block,
    err_block: Block,
    /// MAX_ARGS words on the stack, passed to the trampolines.
    slot: Option<StackSlot>,
    call_conv: cranelift_codegen::isa::CallConv,
}

/// Where the two ways of `&&`, `||` or `?:` meet: `merge` takes the
/// value; `els` is `?:`'s second way.
struct Join {
    els: Option<Block>,
    merge: Block,
}

fn trusted() -> MemFlags {
    MemFlags::trusted()
}

impl<'a, 'b> Fc<'a, 'b> {
    fn err(&self, span: Span, msg: impl Into<String>) -> String {
        self.inst.at(
            span,
            format!(
                "{} (compiling the C parts; `lang run --interpret` runs the interpreter instead)",
                msg.into()
            ),
        )
    }

    fn iconst(&mut self, v: i64) -> V {
        self.b.ins().iconst(I64, v)
    }

    fn rt_field(&mut self, off: usize) -> V {
        let rt = self.iconst(self.addrs.rt);
        self.b.ins().load(I64, trusted(), rt, off as i32)
    }

    fn set_rt_field(&mut self, off: usize, v: V) {
        let rt = self.iconst(self.addrs.rt);
        self.b.ins().store(trusted(), v, rt, off as i32);
    }

    fn site(&mut self, span: Span, kind: SiteKind) -> i64 {
        self.sites.push(Site { span, kind });
        self.sites.len() as i64 - 1
    }

    /// Code that raises error `msg` at `span` when `cond` is non-zero.
    fn raise_if(&mut self, cond: V, span: Span, msg: &str) {
        let idx = self.site(span, SiteKind::Error(msg.to_string()));
        self.raise_site_if(cond, idx);
    }

    /// Code that raises site `idx`'s error when `cond` is non-zero.
    fn raise_site_if(&mut self, cond: V, idx: i64) {
        let raise = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(cond, raise, &[], cont, &[]);
        self.b.switch_to_block(raise);
        self.b.set_cold_block(raise);
        let e = self.iconst(idx + 1);
        self.set_rt_field(offset_of!(Rt, err), e);
        self.b.ins().jump(self.err_block, &[]);
        self.b.switch_to_block(cont);
    }

    /// After a call: leave (unwinding) when it raised an error.
    fn check_err(&mut self) {
        let e = self.rt_field(offset_of!(Rt, err));
        let cont = self.b.create_block();
        self.b.ins().brif(e, self.err_block, &[], cont, &[]);
        self.b.switch_to_block(cont);
    }

    /// A jump that ends the current block; what follows is unreachable.
    fn jump_away(&mut self, target: Block, args: &[BlockArg]) {
        self.b.ins().jump(target, args);
        let next = self.b.create_block();
        self.b.switch_to_block(next);
    }

    fn function(&mut self, name_span: Span, params: &[Param], body: &[Stmt]) -> R<()> {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        self.ret_block = self.b.create_block();
        self.b.append_block_param(self.ret_block, I64);
        self.err_block = self.b.create_block();
        self.b.set_cold_block(self.err_block);
        let args: Vec<V> = self.b.block_params(entry).to_vec();
        // The interpreter's limit on nested calls, at the same place.
        let d = self.rt_field(offset_of!(Rt, depth));
        let d1 = self.b.ins().iadd_imm(d, 1);
        let over = self.b.ins().icmp_imm(IntCC::SignedGreaterThan, d1, 256);
        self.raise_if(over, name_span, "calls nest deeper than 256");
        self.set_rt_field(offset_of!(Rt, depth), d1);
        for (p, a) in params.iter().zip(args) {
            walk::declare(self, &p.name.name, p.ty, a);
        }
        for s in body {
            walk::stmt(self, s)?;
        }
        let zero = self.iconst(0);
        self.b.ins().jump(self.ret_block, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(self.ret_block);
        let v = self.b.block_params(self.ret_block)[0];
        self.set_rt_field(offset_of!(Rt, depth), d);
        self.b.ins().return_(&[v]);
        self.b.switch_to_block(self.err_block);
        self.set_rt_field(offset_of!(Rt, depth), d);
        let zero = self.iconst(0);
        self.b.ins().return_(&[zero]);
        self.b.seal_all_blocks();
        Ok(())
    }

    /// The address `p + index·size` (null checked) and the size.
    fn address(&mut self, span: Span, (p, t): (V, T), index: V) -> R<(V, i64)> {
        let T::Ptr(size) = t else {
            return Err(self.err(span, "not a pointer"));
        };
        let null = self.b.ins().icmp_imm(IntCC::Equal, p, 0);
        self.raise_if(null, span, "null pointer");
        let o = self.b.ins().imul_imm(index, size);
        Ok((self.b.ins().iadd(p, o), size))
    }

    /// Stores up to MAX_ARGS words (zeros after `vals`) on the stack; their address.
    fn spill(&mut self, vals: &[V]) -> V {
        let slot = *self.slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                (MAX_ARGS * 8) as u32,
                3,
            ))
        });
        let zero = self.b.ins().iconst(I64, 0);
        for i in 0..MAX_ARGS {
            let v = vals.get(i).copied().unwrap_or(zero);
            self.b.ins().stack_store(v, slot, (i * 8) as i32);
        }
        self.b.ins().stack_addr(I64, slot, 0)
    }

    fn sig(&mut self, n: usize) -> ir::SigRef {
        let mut sig = Signature::new(self.call_conv);
        for _ in 0..n {
            sig.params.push(AbiParam::new(I64));
        }
        sig.returns.push(AbiParam::new(I64));
        self.b.import_signature(sig)
    }

    /// A call of a trampoline (host function or code generation).
    fn trampoline(&mut self, addr: i64, site: i64, vals: &[V]) -> V {
        let args = self.spill(vals);
        let sig = self.sig(3);
        let f = self.iconst(addr);
        let rt = self.iconst(self.addrs.rt);
        let s = self.iconst(site);
        let call = self.b.ins().call_indirect(sig, f, &[rt, s, args]);
        let r = self.b.inst_results(call)[0];
        self.check_err();
        r
    }

    fn bump(&mut self, off: usize) {
        let c = self.rt_field(off);
        let c = self.b.ins().iadd_imm(c, 1);
        self.set_rt_field(off, c);
    }
}

/// A function body's parts, as this generator emits them (the walk: walk.rs).
impl Emit for Fc<'_, '_> {
    type V = V;
    type Var = Variable;
    type Join = Join;
    type Label = Block;

    fn locals(&mut self) -> &mut Vec<(String, CType, Variable)> {
        &mut self.locals
    }

    fn loops(&mut self) -> &mut Vec<(Block, Block)> {
        &mut self.loops
    }

    fn ret_type(&self) -> CType {
        self.ret
    }

    fn new_var(&mut self, _ty: CType, v: V) -> Variable {
        let var = self.b.declare_var(I64);
        self.b.def_var(var, v);
        var
    }

    fn label(&mut self, _what: &str) -> Block {
        self.b.create_block()
    }

    fn place(&mut self, l: &Block) {
        self.b.switch_to_block(*l);
    }

    fn goto(&mut self, l: &Block) {
        self.b.ins().jump(*l, &[]);
    }

    fn branch(&mut self, v: V, then: &Block, other: &Block) {
        self.b.ins().brif(v, *then, &[], *other, &[]);
    }

    fn leave(&mut self, l: &Block) {
        self.jump_away(*l, &[]);
    }

    fn ret(&mut self, v: V) {
        self.jump_away(self.ret_block, &[BlockArg::Value(v)]);
    }

    fn class(&self) -> Class<'_, '_> {
        Class {
            inst: self.inst,
            layout: self.layout,
            sigs: self.sigs,
            addrs: self.addrs,
        }
    }

    fn locals_now(&self) -> &[(String, CType, Variable)] {
        &self.locals
    }

    fn read_var(&mut self, var: &Variable) -> V {
        self.b.use_var(*var)
    }

    fn write_var(&mut self, var: &Variable, v: V) {
        self.b.def_var(*var, v);
    }

    fn read_word(&mut self, base: i64, i: usize) -> V {
        let a = self.iconst(base);
        self.b.ins().load(I64, trusted(), a, (i * 8) as i32)
    }

    fn write_word(&mut self, base: i64, i: usize, v: V) {
        let a = self.iconst(base);
        self.b.ins().store(trusted(), v, a, (i * 8) as i32);
    }

    fn int(&mut self, v: i64) -> V {
        self.iconst(v)
    }

    fn unary(&mut self, op: UnOp, v: V) -> V {
        match op {
            UnOp::Neg => self.b.ins().ineg(v),
            UnOp::Not => {
                let c = self.b.ins().icmp_imm(IntCC::Equal, v, 0);
                self.b.ins().uextend(I64, c)
            }
            UnOp::BitNot => self.b.ins().bnot(v),
            UnOp::Deref => unreachable!("a dereference is a load (walk::expr)"),
        }
    }

    fn logical_begin(&mut self, and: bool, l: V) -> Join {
        let rhs = self.b.create_block();
        let merge = self.b.create_block();
        self.b.append_block_param(merge, I64);
        let short = self.iconst(if and { 0 } else { 1 });
        let short = [BlockArg::Value(short)];
        if and {
            self.b.ins().brif(l, rhs, &[], merge, &short);
        } else {
            self.b.ins().brif(l, merge, &short, rhs, &[]);
        }
        self.b.switch_to_block(rhs);
        Join { els: None, merge }
    }

    fn logical_end(&mut self, j: Join, r: V) -> V {
        let c = self.b.ins().icmp_imm(IntCC::NotEqual, r, 0);
        let c = self.b.ins().uextend(I64, c);
        self.b.ins().jump(j.merge, &[BlockArg::Value(c)]);
        self.b.switch_to_block(j.merge);
        self.b.block_params(j.merge)[0]
    }

    fn cond_begin(&mut self, c: V) -> Join {
        let tb = self.b.create_block();
        let eb = self.b.create_block();
        let merge = self.b.create_block();
        self.b.append_block_param(merge, I64);
        self.b.ins().brif(c, tb, &[], eb, &[]);
        self.b.switch_to_block(tb);
        Join {
            els: Some(eb),
            merge,
        }
    }

    fn cond_else(&mut self, j: &Join, a: V) {
        self.b.ins().jump(j.merge, &[BlockArg::Value(a)]);
        let els = j.els.expect("cond_begin's join");
        self.b.switch_to_block(els);
    }

    fn cond_end(&mut self, j: Join, b: V) -> V {
        self.b.ins().jump(j.merge, &[BlockArg::Value(b)]);
        self.b.switch_to_block(j.merge);
        self.b.block_params(j.merge)[0]
    }

    fn error_at(&self, span: Span, msg: String) -> String {
        self.err(span, msg)
    }

    fn call_own(&mut self, idx: usize, vals: &[V]) -> V {
        let sig = self.sig(vals.len());
        let table = self.iconst(self.addrs.table);
        let f = self.b.ins().load(I64, trusted(), table, (idx * 8) as i32);
        let call = self.b.ins().call_indirect(sig, f, vals);
        let r = self.b.inst_results(call)[0];
        self.check_err();
        r
    }

    fn host(&mut self, span: Span, site: SiteKind, vals: &[V]) -> V {
        let site = self.site(span, site);
        self.trampoline(self.addrs.host, site, vals)
    }

    fn user(&mut self, span: Span, user: usize, f: &Ident, vals: &[V], op: UserOp) -> V {
        let kind = SiteKind::User {
            user,
            member: f.clone(),
            nargs: vals.len(),
            op,
        };
        let site = self.site(span, kind);
        self.trampoline(self.addrs.user, site, vals)
    }

    fn call_user(&mut self, span: Span, user: usize, addr: i64, rt: i64, vals: &[V]) -> V {
        let sig = self.sig(vals.len());
        let f = self.iconst(addr);
        let call = self.b.ins().call_indirect(sig, f, vals);
        let r = self.b.inst_results(call)[0];
        let rt = self.iconst(rt);
        let err = self
            .b
            .ins()
            .load(I64, trusted(), rt, offset_of!(Rt, err) as i32);
        let idx = self.site(span, SiteKind::Inside { user });
        self.raise_site_if(err, idx);
        r
    }

    fn call_code(&mut self, addr: V, vals: &[V], ret: CType) -> (V, T) {
        self.bump(offset_of!(Rt, code_calls));
        let zero = self.iconst(0);
        let words: Vec<V> = (0..MAX_ARGS)
            .map(|i| vals.get(i).copied().unwrap_or(zero))
            .collect();
        let sig = self.sig(MAX_ARGS);
        let call = self.b.ins().call_indirect(sig, addr, &words);
        let r = self.b.inst_results(call)[0];
        self.coerce(ret, r)
    }

    fn generate(&mut self, e: &Expr, name: &str, vals: &[V], call: Option<Span>) -> R<V> {
        if vals.len() > MAX_ARGS {
            return Err(self.err(e.span, "more than 6 arguments"));
        }
        let cache = Box::new(UnsafeCell::new([0i64; 2 + MAX_ARGS]));
        let c = cache.get() as i64;
        let site = self.site(
            e.span,
            SiteKind::Gen {
                name: name.to_string(),
                nargs: vals.len(),
                call,
                cache,
            },
        );
        let base = self.iconst(c);
        let done = self.b.create_block();
        self.b.append_block_param(done, I64);
        let miss = self.b.create_block();
        let mut ok = self.b.ins().load(I64, trusted(), base, 0);
        for (i, v) in vals.iter().enumerate() {
            let w = self
                .b
                .ins()
                .load(I64, trusted(), base, ((2 + i) * 8) as i32);
            let eq = self.b.ins().icmp(IntCC::Equal, w, *v);
            let eq = self.b.ins().uextend(I64, eq);
            ok = self.b.ins().band(ok, eq);
        }
        let hit = self.b.create_block();
        self.b.ins().brif(ok, hit, &[], miss, &[]);
        self.b.switch_to_block(hit);
        let a = self.b.ins().load(I64, trusted(), base, 8);
        self.b.ins().jump(done, &[BlockArg::Value(a)]);
        self.b.switch_to_block(miss);
        self.b.set_cold_block(miss);
        let r = self.trampoline(self.addrs.gen, site, vals);
        self.b.ins().jump(done, &[BlockArg::Value(r)]);
        self.b.switch_to_block(done);
        Ok(self.b.block_params(done)[0])
    }
    fn coerce(&mut self, ty: CType, v: V) -> (V, T) {
        if ty.is_void() {
            return (self.iconst(0), T::Void);
        }
        if ty.is_pointer() {
            return (v, t_of(ty));
        }
        let Base::Int { bytes, unsigned } = ty.base else {
            return (v, T::Int);
        };
        let narrow = match bytes {
            1 => I8,
            2 => I16,
            4 => I32,
            _ => return (v, T::Int),
        };
        let n = self.b.ins().ireduce(narrow, v);
        let w = if unsigned {
            self.b.ins().uextend(I64, n)
        } else {
            self.b.ins().sextend(I64, n)
        };
        (w, T::Int)
    }

    fn load(&mut self, span: Span, p: (V, T), index: V) -> R<(V, T)> {
        let (a, size) = self.address(span, p, index)?;
        let f = MemFlags::new();
        let ins = self.b.ins();
        Ok((
            match size {
                1 => ins.uload8(I64, f, a, 0),
                2 => ins.uload16(I64, f, a, 0),
                4 => ins.uload32(f, a, 0),
                _ => ins.load(I64, f, a, 0),
            },
            T::Int,
        ))
    }

    fn store(&mut self, span: Span, p: (V, T), index: V, v: V) -> R<(V, T)> {
        let (a, size) = self.address(span, p, index)?;
        let f = MemFlags::new();
        let ins = self.b.ins();
        match size {
            1 => ins.istore8(f, v, a, 0),
            2 => ins.istore16(f, v, a, 0),
            4 => ins.istore32(f, v, a, 0),
            _ => ins.store(f, v, a, 0),
        };
        Ok((v, T::Int))
    }

    fn binary(&mut self, span: Span, op: BinOp, (a, ta): (V, T), (b, tb): (V, T)) -> (V, T) {
        use BinOp::*;
        match (op, ta, tb) {
            (Add, T::Ptr(s), _) => {
                let o = self.b.ins().imul_imm(b, s);
                return (self.b.ins().iadd(a, o), T::Ptr(s));
            }
            (Add, _, T::Ptr(s)) => {
                let o = self.b.ins().imul_imm(a, s);
                return (self.b.ins().iadd(b, o), T::Ptr(s));
            }
            (Sub, T::Ptr(s), T::Ptr(_)) => {
                let d = self.b.ins().isub(a, b);
                if s == 1 {
                    return (d, T::Int);
                }
                let sv = self.iconst(s);
                return (self.b.ins().sdiv(d, sv), T::Int);
            }
            (Sub, T::Ptr(s), _) => {
                let o = self.b.ins().imul_imm(b, s);
                return (self.b.ins().isub(a, o), T::Ptr(s));
            }
            _ => {}
        }
        let cmp = |s: &mut Self, cc: IntCC| {
            let c = s.b.ins().icmp(cc, a, b);
            s.b.ins().uextend(I64, c)
        };
        let v = match op {
            Add => self.b.ins().iadd(a, b),
            Sub => self.b.ins().isub(a, b),
            Mul => self.b.ins().imul(a, b),
            Div | Rem => {
                let z = self.b.ins().icmp_imm(IntCC::Equal, b, 0);
                self.raise_if(z, span, "division by zero");
                // i64::MIN / -1 wraps (the interpreter's wrapping_div); the
                // hardware would trap, so -1 divides as 1 and is negated.
                let m1 = self.b.ins().icmp_imm(IntCC::Equal, b, -1);
                let one = self.iconst(1);
                let d = self.b.ins().select(m1, one, b);
                if op == Div {
                    let q = self.b.ins().sdiv(a, d);
                    let n = self.b.ins().ineg(a);
                    self.b.ins().select(m1, n, q)
                } else {
                    let r = self.b.ins().srem(a, d);
                    let zero = self.iconst(0);
                    self.b.ins().select(m1, zero, r)
                }
            }
            Shl => self.b.ins().ishl(a, b),
            Shr => self.b.ins().sshr(a, b),
            BitAnd => self.b.ins().band(a, b),
            BitOr => self.b.ins().bor(a, b),
            BitXor => self.b.ins().bxor(a, b),
            Lt => cmp(self, IntCC::SignedLessThan),
            Le => cmp(self, IntCC::SignedLessThanOrEqual),
            Gt => cmp(self, IntCC::SignedGreaterThan),
            Ge => cmp(self, IntCC::SignedGreaterThanOrEqual),
            Eq => cmp(self, IntCC::Equal),
            Ne => cmp(self, IntCC::NotEqual),
            And | Or => {
                let x = self.b.ins().icmp_imm(IntCC::NotEqual, a, 0);
                let y = self.b.ins().icmp_imm(IntCC::NotEqual, b, 0);
                let c = if op == And {
                    self.b.ins().band(x, y)
                } else {
                    self.b.ins().bor(x, y)
                };
                self.b.ins().uextend(I64, c)
            }
        };
        (v, T::Int)
    }
}
