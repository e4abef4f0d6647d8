//! The C parts of a class compiled to native code at run time, with
//! Cranelift (compile.rs: cranelift-codegen and cranelift-frontend; the
//! host's ISA from cranelift-native) on x86-64 and aarch64, or with the
//! system's C compiler (cc.rs) on x86-32, where Cranelift has no back end,
//! and on x86-64 when asked ([`Backend`]). `setup()`, `benchmark()`,
//! `benchmark_dummy()` and every other C function of the class run as
//! machine code; the interpreter (eval.rs) stays as the reference (`lang
//! run --interpret`). Both generators give this module the same `Out`,
//! and both are walked by walk.rs: names, types, conversions, calls and
//! errors decided once, each generator emitting the parts its way.
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
//!
//! An imported user class has a Jit of its own (in its instance, built
//! first); the importer's code calls its functions directly and loads its
//! data words, both addresses baked in as constants. The call from Rust
//! (`Jit::call`, the root) arms every Jit below it with the root instance
//! and the path to its own, so an imported class's trampolines reach its
//! instance with the importer's host lent, as interpreted.

mod cc;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod compile;
mod walk;

use crate::ast::CType;
use crate::eval::{coerce, Instance};
use crate::exec::ExecMem;
use crate::isa::Isa;
use crate::source::Span;
use crate::stdlib::{HostFn, Value};
use std::cell::UnsafeCell;

type R<T> = Result<T, String>;

/// The static type of a value, as both code generators (compile.rs,
/// cc.rs) track it: narrower than check.rs's `Ty` (no code values, no
/// error type), and `Copy`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum T {
    Int,
    Ptr(i64),
    Void,
}

pub(crate) fn t_of(c: CType) -> T {
    if c.is_pointer() {
        T::Ptr(c.pointee_size())
    } else if c.is_void() {
        T::Void
    } else {
        T::Int
    }
}

pub use crate::backend::Backend;

/// Why `backend` cannot compile the C parts on this host (None: it can).
/// Cranelift: never here (see unsupported.rs for hosts without any back
/// end); the C compiler: when it cannot be run or cannot build for this
/// host (asked once per process, see cc.rs).
pub fn unavailable(backend: Backend) -> Option<String> {
    match backend {
        Backend::Cranelift if cfg!(target_arch = "x86") => {
            Some("Cranelift has no back end for x86-32: the C compiler compiles the C parts there (--backend cc)".into())
        }
        Backend::Cranelift => None,
        Backend::Cc => cc::unavailable(),
    }
}

/// The C compiler [`Backend::Cc`] runs, as results name it (`clang …`,
/// `gcc …`); None when there is none that runs.
pub fn c_compiler() -> Option<String> {
    cc::compiler_name().ok()
}

/// Most arguments a compiled function takes when called from Rust, and
/// what generated code is passed (as `ExecMem::call` does).
pub const MAX_ARGS: usize = 6;

/// The runtime block compiled code reads and writes (offsets are baked in).
/// Each Jit has one; a call from Rust (`Jit::call`, the root) arms its own
/// and those of the imported classes' Jits below it, whose code the
/// root's calls directly.
#[repr(C)]
pub(crate) struct Rt {
    /// 0: no error; else the index + 1 of the site that raised it.
    err: i64,
    /// C calls nested now in this class (the interpreter's limit, 256,
    /// is per instance too).
    depth: i64,
    /// Calls of generated code and of host functions, for the runner's evidence.
    code_calls: i64,
    host_calls: i64,
    /// The root call's instance (set at each call from Rust).
    inst: *mut u8,
    /// A message for `err` when the site's own is not it (host and generation errors).
    msg: Option<String>,
    /// This Jit's sites, for the trampolines.
    sites: *const Site,
    nsites: usize,
    /// Armed by a running call from Rust: a call of this class's
    /// functions from Rust meanwhile is interpreted (`Instance::call_function`).
    busy: bool,
    /// From the root instance to this Jit's instance (users' indices).
    path: Vec<usize>,
    /// The root call's Jit (this one, for the root).
    root: *const Jit,
}

impl Rt {
    fn new() -> Rt {
        Rt {
            err: 0,
            depth: 0,
            code_calls: 0,
            host_calls: 0,
            inst: std::ptr::null_mut(),
            msg: None,
            sites: std::ptr::null(),
            nsites: 0,
            busy: false,
            path: Vec::new(),
            root: std::ptr::null(),
        }
    }

    /// The site `i`, the root instance and the path from it to this Jit's.
    ///
    /// # Safety
    /// Only inside a call made by `Jit::call` (which sets the pointers and
    /// holds `&mut Instance` for the call's length); `i` a site index the
    /// compiler gave the calling code.
    unsafe fn site_and_inst<'a>(
        rt: *mut Rt,
        i: i64,
    ) -> (&'a Site, &'a mut Instance<'a>, &'a [usize]) {
        // SAFETY: the caller's contract; the path is not changed while
        // the call runs (an armed Rt is re-armed only when idle).
        unsafe {
            (
                &*(*rt).sites.add((i as usize).min((*rt).nsites - 1)),
                &mut *((*rt).inst as *mut Instance),
                &*(&(*rt).path as *const Vec<usize>),
            )
        }
    }
}

/// Addresses the code holds as constants.
pub(crate) struct Addrs {
    pub(crate) rt: i64,
    pub(crate) data: i64,
    /// The functions' addresses (Cranelift's code calls through it; the
    /// C compiler's calls its own functions directly).
    #[cfg_attr(target_arch = "x86", allow(dead_code))]
    pub(crate) table: i64,
    pub(crate) host: i64,
    pub(crate) gen: i64,
    pub(crate) user: i64,
    /// `div_helper` (the C compiler's code divides through it on x86-32).
    pub(crate) div: i64,
    /// Each imported user class's compiled code (by its index; None:
    /// not compiled), called and read directly.
    pub(crate) users: Vec<Option<UserAddrs>>,
}

/// What the code needs of an imported class's Jit.
pub(crate) struct UserAddrs {
    /// Its runtime block (the code reads its `err` after a call).
    pub(crate) rt: i64,
    /// Its data members' words, in `layout`'s order.
    pub(crate) data: i64,
    pub(crate) layout: Vec<(String, CType)>,
    /// Its functions: name, address, number of parameters.
    pub(crate) funcs: Vec<(String, i64, usize)>,
}

pub(crate) struct Out {
    pub(crate) bytes: Vec<u8>,
    pub(crate) funcs: Vec<JitFn>,
    pub(crate) sites: Vec<Site>,
}

pub(crate) fn function_names(inst: &Instance) -> Vec<String> {
    inst.c_functions().into_iter().map(|(n, _)| n).collect()
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
    /// `A.code(m)` called at once), reached through the interpreter's
    /// instance of A (see `eval/imports.rs`): `A.code(m)`, and `A.f` when
    /// it is not called directly (not compiled, a wrong argument count).
    User {
        user: usize,
        member: crate::ast::Ident,
        nargs: usize,
        op: UserOp,
    },
    /// A direct call of imported class `user`'s compiled function raised
    /// an error: the message is that class's Jit's (its file, its place).
    Inside { user: usize },
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
    /// Who compiled the C parts.
    pub backend: Backend,
    pub class: String,
    code: ExecMem,
    bytes: Vec<u8>,
    pub funcs: Vec<JitFn>,
    rt: Box<UnsafeCell<Rt>>,
    data: Box<UnsafeCell<Vec<i64>>>,
    sites: Vec<Site>,
    _table: Box<[i64]>,
    /// The imported classes' Jits at any depth, with the path to each
    /// (`Instance::user_jits`). They live in the imported instances, which
    /// live in this Jit's; they are replaced only by `compile_c` of the
    /// instance this Jit is in, which replaces this Jit too.
    users: Vec<(Vec<usize>, *const Jit)>,
}

impl Jit {
    /// Compiles every C function (with a body) of `inst`'s class with
    /// `backend`. A construct the compiler does not take is an error at
    /// its place.
    pub fn build(inst: &Instance, backend: Backend) -> R<Jit> {
        let isa = Isa::host()
            .ok_or("the C parts are compiled for x86-64, aarch64 and x86-32 hosts only")?;
        let nfuncs = function_names(inst).len();
        let rt = Box::new(UnsafeCell::new(Rt::new()));
        let layout = inst.data_layout();
        let data = Box::new(UnsafeCell::new(vec![0i64; layout.len().max(1)]));
        let mut table = vec![0i64; nfuncs.max(1)].into_boxed_slice();
        let addrs = Addrs {
            rt: rt.get() as i64,
            data: data_ptr(&data) as i64,
            table: table.as_ptr() as i64,
            host: host_trampoline as *const () as i64,
            gen: gen_trampoline as *const () as i64,
            user: user_trampoline as *const () as i64,
            div: div_helper as *const () as i64,
            users: (0..inst.user_count())
                .map(|u| {
                    let sub = inst.user_instance(u);
                    sub.jit().map(|j| UserAddrs {
                        rt: j.rt.get() as i64,
                        data: data_ptr(&j.data) as i64,
                        layout: sub.data_layout(),
                        funcs: j
                            .funcs
                            .iter()
                            .map(|f| {
                                (
                                    f.name.clone(),
                                    (j.code.addr() + f.offset) as i64,
                                    f.params.len(),
                                )
                            })
                            .collect(),
                    })
                })
                .collect(),
        };
        let out = match backend {
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            Backend::Cranelift => compile::compile_all(inst, &layout, &addrs)?,
            #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
            Backend::Cranelift => return Err(unavailable(backend).unwrap_or_default()),
            Backend::Cc => cc::compile_all(inst, &layout, &addrs)?,
        };
        let code = ExecMem::new(&out.bytes).map_err(|e| e.to_string())?;
        for (slot, f) in table.iter_mut().zip(&out.funcs) {
            *slot = (code.addr() + f.offset) as i64;
        }
        Ok(Jit {
            isa,
            backend,
            class: inst.class_name().to_string(),
            code,
            bytes: out.bytes,
            funcs: out.funcs,
            rt,
            data,
            sites: out.sites,
            _table: table,
            users: inst
                .user_jits()
                .into_iter()
                .map(|(p, j)| (p, j as *const Jit))
                .collect(),
        })
    }

    /// Who compiled the C parts.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn has(&self, name: &str) -> bool {
        self.funcs.iter().any(|f| f.name == name)
    }

    /// The class whose C functions these are.
    pub fn class_name(&self) -> &str {
        &self.class
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

    /// Whether a call from Rust is running this class's code (armed).
    pub(crate) fn busy(&self) -> bool {
        // SAFETY: a read of a flag only Rust code sets, single-threaded.
        unsafe { (*self.rt.get()).busy }
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
        let root_inst = inst as *mut Instance as *mut u8;
        // SAFETY: the Rt boxes are ours and the imported classes' Jits'
        // (live, see `users`; idle: a busy one is not called from Rust);
        // no compiled code runs now.
        unsafe {
            self.arm(root_inst, self, &[]);
            for (path, j) in &self.users {
                (**j).arm(root_inst, self, path);
            }
        }
        self.sync(inst, false);
        let addr = self.code.addr() + f.offset;
        // SAFETY: `addr` is a function this module compiled with the
        // platform's C convention, taking `f.params.len()` i64 arguments
        // and returning an i64 (argument registers beyond them are unread).
        let r = unsafe {
            let func: extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64 =
                std::mem::transmute(addr);
            func(a[0], a[1], a[2], a[3], a[4], a[5])
        };
        self.sync(inst, true);
        // SAFETY: the code has returned; the boxes are ours again (and
        // the imported Jits live, as above).
        let (err, msg) = unsafe {
            for (_, j) in &self.users {
                let r = (**j).rt.get();
                (*r).busy = false;
                (*r).inst = std::ptr::null_mut();
            }
            (*rt).busy = false;
            (*rt).inst = std::ptr::null_mut();
            ((*rt).err, (*rt).msg.take())
        };
        if err != 0 {
            return Err(self.error(inst, err, msg));
        }
        Ok(coerce(f.ret, Value::Int(r)))
    }

    /// Sets up this Jit's Rt for a call from Rust: no error, depth 0,
    /// the root call's instance and Jit, the path from that instance to
    /// this Jit's.
    ///
    /// # Safety
    /// No compiled code of this Jit runs.
    unsafe fn arm(&self, inst: *mut u8, root: *const Jit, path: &[usize]) {
        let rt = self.rt.get();
        // SAFETY: the caller's contract.
        unsafe {
            (*rt).err = 0;
            (*rt).msg = None;
            (*rt).depth = 0;
            (*rt).inst = inst;
            (*rt).sites = self.sites.as_ptr();
            (*rt).nsites = self.sites.len();
            (*rt).busy = true;
            if (*rt).path != path {
                (*rt).path = path.to_vec();
            }
            (*rt).root = root;
        }
    }

    /// Copies the data words of this (root) Jit and of every imported
    /// class's into their instances (`to_instances`), or back: around
    /// Rust code that may read or set data members (code generation, an
    /// imported class's members through the trampoline), and around a call.
    fn sync(&self, inst: &mut Instance, to_instances: bool) {
        let blocks = std::iter::once((&[][..], self)).chain(
            self.users
                .iter()
                // SAFETY: the imported Jits live (see `users`).
                .map(|(p, j)| (&p[..], unsafe { &**j })),
        );
        for (path, j) in blocks {
            // SAFETY: no compiled code of `j` runs while Rust code does
            // (it is below a trampoline call or has returned); the words
            // are its own.
            let words = unsafe { &mut *j.data.get() };
            let i = inst.at_path_mut(path);
            if to_instances {
                i.set_data_words(words);
            } else {
                i.data_words(words);
            }
        }
    }

    /// The message of error `err` (a site index + 1) raised in this Jit's
    /// code run on `inst`: the site's own, or, for an error inside an
    /// imported class's code, that class's Jit's — its file, its place,
    /// as the interpreter reports it.
    fn error(&self, inst: &Instance, err: i64, msg: Option<String>) -> String {
        if let Some(m) = msg {
            return m;
        }
        let site = &self.sites[(err - 1) as usize];
        match &site.kind {
            SiteKind::Error(m) => inst.at(site.span, m.clone()),
            SiteKind::Inside { user } => {
                let sub = inst.user_instance(*user);
                match sub.jit() {
                    Some(j) => {
                        // SAFETY: the code has returned; the Rt is idle.
                        let (e, m) = unsafe {
                            let r = j.rt.get();
                            ((*r).err, (*r).msg.take())
                        };
                        j.error(sub, e.max(1), m)
                    }
                    None => inst.at(site.span, "error"),
                }
            }
            _ => inst.at(site.span, "error"),
        }
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
                "/* {}.{}({}) -> {}: C compiled by {}, {} bytes of {} */\n",
                self.class,
                f.name,
                params.join(", "),
                f.ret.display(),
                self.backend.label(),
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

/// `extern "C"` 64-bit division for the C compiler's code (cc.rs) on
/// x86-32, where gcc would call libgcc's `__divdi3` (a relocation): `a / b`
/// (`rem` 0) or `a % b`. The code has already raised division by zero and
/// turned a divisor of -1 into a negation, as Cranelift's code does.
extern "C" fn div_helper(a: i64, b: i64, rem: i64) -> i64 {
    if b == 0 {
        0
    } else if rem != 0 {
        a.wrapping_rem(b)
    } else {
        a.wrapping_div(b)
    }
}

/// `extern "C"` host call: `site` names the function, `args` its words.
extern "C" fn host_trampoline(rt: *mut Rt, site: i64, args: *const i64) -> i64 {
    // SAFETY: called only by compiled code, inside `Jit::call`, with its
    // own Rt and a site index the compiler gave this call.
    let (site, inst, _) = unsafe { Rt::site_and_inst(rt, site) };
    // SAFETY: as above; no other reference to the Rt is live here.
    let rt = unsafe { &mut *rt };
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
    let (site, inst, path) = unsafe { Rt::site_and_inst(rt, site) };
    let SiteKind::Gen {
        name,
        nargs,
        call,
        cache,
    } = &site.kind
    else {
        return 0;
    };
    // SAFETY: the compiler stores MAX_ARGS words there before the call.
    let words = unsafe { std::slice::from_raw_parts(args, MAX_ARGS) };
    // Generation evaluates expressions that may read or set data members
    // (this class's and, through `A.bits`, its imports').
    // SAFETY: as in host_trampoline: the root Jit lives while it runs.
    let root = unsafe { &*(*rt).root };
    root.sync(inst, true);
    let r = inst.with_path(path, |a| a.generate(name, &words[..*nargs]));
    root.sync(inst, false);
    // SAFETY: as in host_trampoline.
    let rt = unsafe { &mut *rt };
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
/// interpreter's instance of it (`Instance::user_data`/`user_call`). A's
/// code (`A.code(m)`) comes this way; A's compiled functions and data
/// are reached directly (see docs/language.md, "The C parts are
/// compiled"), this only when A's function is not compiled.
extern "C" fn user_trampoline(rt: *mut Rt, site: i64, args: *const i64) -> i64 {
    // SAFETY: as in host_trampoline.
    let (site, inst, path) = unsafe { Rt::site_and_inst(rt, site) };
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
    // SAFETY: as in gen_trampoline.
    let root = unsafe { &*(*rt).root };
    root.sync(inst, true);
    let r = inst.with_path(path, |a| match op {
        UserOp::Data => a.user_data(*user, member, site.span),
        UserOp::Call { .. } | UserOp::Code { .. } => a.user_call(*user, member, &vals, site.span),
    });
    root.sync(inst, false);
    // SAFETY: as in gen_trampoline.
    let rt = unsafe { &mut *rt };
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
