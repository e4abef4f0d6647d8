//! The C parts of a class compiled to native code at run time, with
//! Cranelift (cranelift-codegen and cranelift-frontend; the host's ISA
//! from cranelift-native). `setup()`, `benchmark()`, `benchmark_dummy()`
//! and every other C function of the class run as machine code; the
//! interpreter (eval.rs) stays as the reference (`lang run --interpret`).
//!
//! Why not cranelift-jit: it maps code with its own allocator. Here each
//! function is compiled to position-independent bytes with no relocations
//! (every call is indirect, through an address the code holds as a
//! constant or loads from a table), and all are mapped by `exec::ExecMem`,
//! the same W^X path and evidence as the bitstrings.
//!
//! What the code refers to lives in boxes this `Jit` owns, at fixed
//! addresses: the runtime block `Rt` (error, call depth, counters, the
//! instance being run), the data members' words, the table of function
//! addresses and one inline cache per site that generates bitstring code.
//! Host functions (stdlib) and code generation are `extern "C"`
//! trampolines into Rust. Semantics are the interpreter's, value for value:
//! 64-bit arithmetic, C's conversion on assignment, zero-extending loads,
//! the same errors (division by zero, null pointer, calls nested deeper
//! than 256) at the same places.

mod compile;

use crate::ast::CType;
use crate::eval::{coerce, Instance};
use crate::exec::ExecMem;
use crate::isa::Isa;
use crate::source::Span;
use crate::stdlib::{HostFn, Value};
use std::cell::UnsafeCell;

type R<T> = Result<T, String>;

/// Why the C parts are not compiled on this host: never here (see
/// unsupported.rs for hosts without a Cranelift back end).
pub const UNAVAILABLE: Option<&str> = None;

/// Most arguments a compiled function takes when called from Rust, and
/// what generated code is passed (as `ExecMem::call` does).
pub const MAX_ARGS: usize = 6;

/// The runtime block compiled code reads and writes (offsets are baked in).
#[repr(C)]
pub(crate) struct Rt {
    /// 0: no error; else the index + 1 of the site that raised it.
    err: i64,
    /// C calls nested now (the interpreter's limit is 256).
    depth: i64,
    /// Calls of generated code and of host functions, for the runner's evidence.
    code_calls: i64,
    host_calls: i64,
    /// The instance being run (set at each call from Rust).
    inst: *mut u8,
    /// A message for `err` when the site's own is not it (host and generation errors).
    msg: Option<String>,
    /// The running Jit's sites and data words, for the trampolines.
    sites: *const Site,
    nsites: usize,
    data: *mut i64,
    ndata: usize,
}

impl Rt {
    /// The site `i` and the instance being run.
    ///
    /// # Safety
    /// Only inside a call made by `Jit::call` (which sets the pointers and
    /// holds `&mut Instance` for the call's length); `i` a site index the
    /// compiler gave the calling code.
    unsafe fn site_and_inst<'a>(&self, i: i64) -> (&'a Site, &'a mut Instance<'a>) {
        // SAFETY: the caller's contract.
        unsafe {
            (
                &*self.sites.add((i as usize).min(self.nsites - 1)),
                &mut *(self.inst as *mut Instance),
            )
        }
    }
}

pub(crate) enum SiteKind {
    /// A fixed error raised by the code (division by zero, null pointer, …).
    Error(String),
    /// A host function of a standard class.
    Host {
        f: HostFn,
        what: String,
        ret: CType,
        nargs: usize,
    },
    /// A member of an imported user class (`A.x`, `A.f(args)`,
    /// `A.code(m)` called at once), run in the interpreter's instance of A
    /// (see `eval/imports.rs`).
    User {
        user: usize,
        member: crate::ast::Ident,
        nargs: usize,
        op: UserOp,
    },
    /// `name(args)`: generates bitstring code; `call`: it is called at once
    /// (`name(m)(a)`), so code that cannot run here is an error.
    Gen {
        name: String,
        nargs: usize,
        call: Option<Span>,
        cache: Box<UnsafeCell<[i64; 2 + MAX_ARGS]>>,
    },
}

/// What compiled code asks of an imported user class.
pub(crate) enum UserOp {
    /// Reads data member `A.x`.
    Data,
    /// Calls C function `A.f(args)`, whose value has C type `ret`.
    Call { ret: CType },
    /// Generates `A.code(args)`, called at once at `call`: its address.
    Code { call: Span },
}

pub(crate) struct Site {
    span: Span,
    kind: SiteKind,
}

/// One compiled C function.
pub struct JitFn {
    pub name: String,
    pub params: Vec<CType>,
    pub ret: CType,
    pub offset: usize,
    pub len: usize,
}

/// The class's C functions as native code.
pub struct Jit {
    pub isa: Isa,
    pub class: String,
    code: ExecMem,
    bytes: Vec<u8>,
    pub funcs: Vec<JitFn>,
    rt: Box<UnsafeCell<Rt>>,
    data: Box<UnsafeCell<Vec<i64>>>,
    sites: Vec<Site>,
    _table: Box<[i64]>,
}

impl Jit {
    /// Compiles every C function (with a body) of `inst`'s class. A
    /// construct the compiler does not take is an error at its place.
    pub fn build(inst: &Instance) -> R<Jit> {
        let isa =
            Isa::host().ok_or("the C parts are compiled for x86-64 and aarch64 hosts only")?;
        let nfuncs = compile::function_names(inst).len();
        let rt = Box::new(UnsafeCell::new(Rt {
            err: 0,
            depth: 0,
            code_calls: 0,
            host_calls: 0,
            inst: std::ptr::null_mut(),
            msg: None,
            sites: std::ptr::null(),
            nsites: 0,
            data: std::ptr::null_mut(),
            ndata: 0,
        }));
        let layout = inst.data_layout();
        let data = Box::new(UnsafeCell::new(vec![0i64; layout.len().max(1)]));
        let mut table = vec![0i64; nfuncs.max(1)].into_boxed_slice();
        let addrs = compile::Addrs {
            rt: rt.get() as i64,
            data: data_ptr(&data) as i64,
            table: table.as_ptr() as i64,
            host: host_trampoline as *const () as i64,
            gen: gen_trampoline as *const () as i64,
            user: user_trampoline as *const () as i64,
        };
        let out = compile::compile_all(inst, &layout, &addrs)?;
        let code = ExecMem::new(&out.bytes).map_err(|e| e.to_string())?;
        for (slot, f) in table.iter_mut().zip(&out.funcs) {
            *slot = (code.addr() + f.offset) as i64;
        }
        Ok(Jit {
            isa,
            class: inst.class_name().to_string(),
            code,
            bytes: out.bytes,
            funcs: out.funcs,
            rt,
            data,
            sites: out.sites,
            _table: table,
        })
    }

    pub fn has(&self, name: &str) -> bool {
        self.funcs.iter().any(|f| f.name == name)
    }

    /// Each compiled function's name and size in bytes.
    pub fn sizes(&self) -> Vec<(&str, usize)> {
        self.funcs
            .iter()
            .map(|f| (f.name.as_str(), f.len))
            .collect()
    }

    /// Address of the mapped code (for the W^X evidence).
    pub fn addr(&self) -> usize {
        self.code.addr()
    }

    pub fn code_len(&self) -> usize {
        self.bytes.len()
    }

    /// Calls of generated code and of host functions so far.
    pub fn counts(&self) -> (u64, u64) {
        // SAFETY: no compiled code runs while `&self` is borrowed here
        // (calls take the Jit out of the instance, single-threaded).
        let rt = unsafe { &*self.rt.get() };
        (rt.code_calls as u64, rt.host_calls as u64)
    }

    /// Runs compiled function `name` on `inst` (which the Jit was taken
    /// out of): data members in, the call, data members out.
    pub fn call(&self, inst: &mut Instance, name: &str, args: &[Value]) -> R<Value> {
        let f = self
            .funcs
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| format!("{name}() was not compiled"))?;
        if f.params.len() != args.len() {
            return Err(format!("{name} takes {} argument(s)", f.params.len()));
        }
        if args.len() > MAX_ARGS {
            return Err(format!(
                "{name}() takes {} arguments: a compiled function is called from the runner with at most {MAX_ARGS}",
                args.len()
            ));
        }
        let mut a = [0i64; MAX_ARGS];
        for (d, s) in a.iter_mut().zip(args) {
            *d = s.word();
        }
        let rt = self.rt.get();
        // SAFETY: the Rt box is ours; no compiled code runs now.
        unsafe {
            (*rt).err = 0;
            (*rt).msg = None;
            (*rt).depth = 0;
            (*rt).inst = inst as *mut Instance as *mut u8;
            (*rt).sites = self.sites.as_ptr();
            (*rt).nsites = self.sites.len();
            (*rt).data = data_ptr(&self.data);
            (*rt).ndata = (*self.data.get()).len();
            inst.data_words(&mut *self.data.get());
        }
        let addr = self.code.addr() + f.offset;
        // SAFETY: `addr` is a function this module compiled with the
        // platform's C convention, taking `f.params.len()` i64 arguments
        // and returning an i64 (argument registers beyond them are unread).
        let r = unsafe {
            let func: extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64 =
                std::mem::transmute(addr);
            func(a[0], a[1], a[2], a[3], a[4], a[5])
        };
        // SAFETY: the code has returned; the boxes are ours again.
        let (err, msg) = unsafe {
            inst.set_data_words(&*self.data.get());
            (*rt).inst = std::ptr::null_mut();
            ((*rt).err, (*rt).msg.take())
        };
        if err != 0 {
            return Err(match msg {
                Some(m) => m,
                None => {
                    let site = &self.sites[(err - 1) as usize];
                    match &site.kind {
                        SiteKind::Error(m) => inst.at(site.span, m.clone()),
                        _ => inst.at(site.span, "error"),
                    }
                }
            });
        }
        Ok(coerce(f.ret, Value::Int(r)))
    }

    /// The compiled C functions, each instruction listed (the seed's
    /// listing style: a comment naming the function, then its code).
    pub fn listing(&self, only: Option<&str>, with_bytes: bool) -> String {
        let mut out = String::new();
        for f in self
            .funcs
            .iter()
            .filter(|f| only.is_none_or(|o| o == f.name))
        {
            let b = &self.bytes[f.offset..f.offset + f.len];
            let params: Vec<String> = f.params.iter().map(CType::display).collect();
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!(
                "/* {}.{}({}) -> {}: C compiled by Cranelift, {} bytes of {} */\n",
                self.class,
                f.name,
                params.join(", "),
                f.ret.display(),
                f.len,
                self.isa.name()
            ));
            for insn in self.isa.disassemble(b) {
                if with_bytes {
                    let hex: Vec<String> = b[insn.offset..insn.offset + insn.len]
                        .iter()
                        .map(|x| format!("{x:02x}"))
                        .collect();
                    out.push_str(&format!(
                        "{:<32} // {:04x}: {}\n",
                        insn.text,
                        insn.offset,
                        hex.join(" ")
                    ));
                } else {
                    out.push_str(&insn.text);
                    out.push('\n');
                }
            }
        }
        out
    }
}

fn data_ptr(d: &UnsafeCell<Vec<i64>>) -> *mut i64 {
    // SAFETY: taking the address of the Vec's buffer; its length never changes.
    unsafe { (*d.get()).as_mut_ptr() }
}

/// `extern "C"` host call: `site` names the function, `args` its words.
extern "C" fn host_trampoline(rt: *mut Rt, site: i64, args: *const i64) -> i64 {
    // SAFETY: called only by compiled code, inside `Jit::call`, with its
    // own Rt and a site index the compiler gave this call.
    let (rt, (site, inst)) = unsafe { (&mut *rt, (*rt).site_and_inst(site)) };
    let SiteKind::Host {
        f,
        what,
        ret,
        nargs,
    } = &site.kind
    else {
        return 0;
    };
    // SAFETY: the compiler stores MAX_ARGS words there before the call.
    let words = unsafe { std::slice::from_raw_parts(args, MAX_ARGS) };
    let vals: Vec<Value> = words[..*nargs].iter().map(|w| Value::Int(*w)).collect();
    rt.host_calls += 1;
    match f(&mut inst.host, &vals) {
        Ok(v) => coerce(*ret, v).word(),
        Err(m) => {
            rt.msg = Some(inst.at(site.span, format!("{what}: {m}")));
            rt.err = 1;
            0
        }
    }
}

/// `extern "C"` code generation: `name(args)` through `Instance::generate`
/// (cached there), the site's inline cache filled for the next call.
extern "C" fn gen_trampoline(rt: *mut Rt, site: i64, args: *const i64) -> i64 {
    // SAFETY: as in host_trampoline.
    let (rt, (site, inst)) = unsafe { (&mut *rt, (*rt).site_and_inst(site)) };
    let (data, ndata) = (rt.data, rt.ndata);
    let SiteKind::Gen {
        name,
        nargs,
        call,
        cache,
    } = &site.kind
    else {
        return 0;
    };
    // SAFETY: the compiler stores MAX_ARGS words there before the call;
    // `data` is the running Jit's data block of `ndata` words.
    let (words, data) = unsafe {
        (
            std::slice::from_raw_parts(args, MAX_ARGS),
            std::slice::from_raw_parts_mut(data, ndata),
        )
    };
    // Generation evaluates expressions that may read or set data members.
    inst.set_data_words(data);
    let r = inst.generate(name, &words[..*nargs]);
    inst.data_words(data);
    match r {
        Ok(c) => {
            if let (Some(span), false) = (call, c.executable()) {
                let e = c.call(&[]).err().unwrap_or_default();
                rt.msg = Some(inst.at(*span, e));
                rt.err = 1;
                return 0;
            }
            // SAFETY: the cache is this site's; the code reads it only
            // between calls of this trampoline.
            let cache = unsafe { &mut *cache.get() };
            cache[1] = c.addr() as i64;
            cache[2..2 + nargs].copy_from_slice(&words[..*nargs]);
            cache[0] = 1;
            c.addr() as i64
        }
        Err(m) => {
            rt.msg = Some(inst.at(site.span, m));
            rt.err = 1;
            0
        }
    }
}

/// `extern "C"` use of an imported user class's member: through the
/// interpreter's instance of it (`Instance::user_data`/`user_call`), so an
/// imported class's C functions run interpreted inside compiled code (see
/// docs/language.md, "The C parts are compiled").
extern "C" fn user_trampoline(rt: *mut Rt, site: i64, args: *const i64) -> i64 {
    // SAFETY: as in host_trampoline.
    let (rt, (site, inst)) = unsafe { (&mut *rt, (*rt).site_and_inst(site)) };
    let SiteKind::User {
        user,
        member,
        nargs,
        op,
    } = &site.kind
    else {
        return 0;
    };
    // SAFETY: the compiler stores MAX_ARGS words there before the call.
    let words = unsafe { std::slice::from_raw_parts(args, MAX_ARGS) };
    let vals: Vec<Value> = words[..*nargs].iter().map(|w| Value::Int(*w)).collect();
    let r = match op {
        UserOp::Data => inst.user_data(*user, member, site.span),
        UserOp::Call { .. } | UserOp::Code { .. } => {
            inst.user_call(*user, member, &vals, site.span)
        }
    };
    let fail = |rt: &mut Rt, m: String| {
        rt.msg = Some(m);
        rt.err = 1;
        0
    };
    match (op, r) {
        (_, Err(m)) => fail(rt, m),
        (UserOp::Code { call }, Ok(Value::Code(c))) => {
            if !c.executable() {
                let e = c.call(&[]).err().unwrap_or_default();
                return fail(rt, inst.at(*call, e));
            }
            // A keeps the code in its cache for as long as it lives.
            c.addr() as i64
        }
        (UserOp::Code { .. }, Ok(_)) => fail(
            rt,
            inst.at(site.span, format!("{} does not make code", member.name)),
        ),
        (_, Ok(Value::Code(_))) => fail(
            rt,
            inst.at(
                site.span,
                format!(
                    "{} makes code: the compiler calls it only where it is made, {}(m)(args)",
                    member.name, member.name
                ),
            ),
        ),
        (UserOp::Call { ret }, Ok(v)) => coerce(*ret, v).word(),
        (UserOp::Data, Ok(v)) => v.word(),
    }
}
