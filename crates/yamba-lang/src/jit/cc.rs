//! The C subset's syntax tree to C source, compiled by the system's C
//! compiler (`$CC`, else clang, else `cc`): the code generator where
//! Cranelift has no back end (x86-32), and on x86-64 when asked
//! (`--backend cc`).
//!
//! The same contract as compile.rs, and the same walk of expressions
//! (walk.rs): every value an `i64`, the same static types, the same
//! conversions, errors raised at the same sites, the same counters, and position-independent bytes with no relocation — every
//! outside address (the runtime block, data words, trampolines, the
//! imported classes' code and data, the division helper) is an integer
//! constant in the source. The class's functions are `static` (calls
//! between them are pc-relative) and `used` (emitted with the C calling
//! convention whatever gcc inlines). The object's `.text` is copied out
//! and mapped by `exec::ExecMem` (mod.rs), as Cranelift's code: an object
//! with a relocation, with bytes in any other allocated section, or for
//! another architecture is refused, never patched.

use super::walk::{self, Class, Emit, Sig};
use super::{t_of, Addrs, JitFn, Out, Rt, Site, SiteKind, UserOp, MAX_ARGS, T};
use crate::ast::*;
use crate::eval::Instance;
use crate::source::Span;
use std::cell::UnsafeCell;
use std::fmt::Write as _;
use std::mem::offset_of;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

type R<T> = Result<T, String>;

/// The compiler command: `$CC` split at spaces; else `clang` when it
/// runs, else `cc`. clang first because the suite's own loops are
/// LLVM's code (rustc's back end): a class's C loop compiled by clang is
/// compiled as the same loop in the suite, where gcc's code for a 64-bit
/// chain on x86-32 was 1.23× LLVM's (the 4 KiB loop of
/// examples/jit_loop.rs, gcc 12 against clang 14, both written by hand
/// too). Results name the compiler (`params.c_compiler`).
fn compiler() -> Vec<String> {
    let cc = std::env::var("CC").unwrap_or_default();
    let v: Vec<String> = cc.split_whitespace().map(str::to_string).collect();
    if !v.is_empty() {
        return v;
    }
    let clang = vec!["clang".to_string()];
    if identify(&clang).is_ok() {
        clang
    } else {
        vec!["cc".to_string()]
    }
}

/// Which compiler `compiler()` runs, read from its predefined macros
/// (`-dM -E`): the flags that keep its code freestanding and in `.text`
/// alone differ between gcc and clang.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Family {
    Gcc,
    Clang,
}

/// The family and version (major.minor.patch) of compiler command `cc`,
/// found once per command and process.
fn identify(cc: &[String]) -> R<(Family, String)> {
    use std::sync::Mutex;
    type Known = Vec<(Vec<String>, R<(Family, String)>)>;
    static KNOWN: Mutex<Known> = Mutex::new(Vec::new());
    let mut known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, r)) = known.iter().find(|(k, _)| k == cc) {
        return r.clone();
    }
    let shown = format!("{} -dM -E -x c /dev/null", cc.join(" "));
    let r = Command::new(&cc[0])
        .args(&cc[1..])
        .args(["-dM", "-E", "-x", "c", "/dev/null"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("the C compiler could not be run: `{shown}`: {e} (set CC)"))
        .and_then(|o| {
            let macros = String::from_utf8_lossy(&o.stdout);
            let def = |name: &str| {
                macros
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
                    .map_or("?", str::trim)
                    .to_string()
            };
            let version = |[a, b, c]: [&str; 3]| format!("{}.{}.{}", def(a), def(b), def(c));
            if !o.status.success() {
                Err(format!("`{shown}` failed ({})", o.status))
            } else if macros.contains("#define __clang__ ") {
                Ok((
                    Family::Clang,
                    format!(
                        "clang {}",
                        version(["__clang_major__", "__clang_minor__", "__clang_patchlevel__"])
                    ),
                ))
            } else if macros.contains("#define __GNUC__ ") {
                Ok((
                    Family::Gcc,
                    format!(
                        "gcc {}",
                        version(["__GNUC__", "__GNUC_MINOR__", "__GNUC_PATCHLEVEL__"])
                    ),
                ))
            } else {
                Err(format!(
                    "`{}` is neither gcc nor clang (no __GNUC__ or __clang__): set CC to one",
                    cc.join(" ")
                ))
            }
        });
    known.push((cc.to_vec(), r.clone()));
    r
}

/// The compiler the C parts are compiled with, as results name it
/// (`gcc 12.2.0`, `clang 14.0.6`), or why there is none.
pub(crate) fn compiler_name() -> R<String> {
    identify(&compiler()).map(|(_, v)| v)
}

/// Flags for code that is freestanding, relocation-free and in `.text`
/// alone: no PIC/PIE (addresses are immediates), no libc or libgcc calls
/// (builtins, loop-to-memset, jump tables and vector constants would be
/// calls, tables or constants elsewhere), no unwind tables, no CET notes.
pub(crate) const FLAGS: &[&str] = &[
    "-O2",
    "-c",
    "-w",
    "-fno-pic",
    "-fno-pie",
    "-ffreestanding",
    "-fno-builtin",
    "-fno-strict-aliasing",
    "-fwrapv",
    "-fno-jump-tables",
    "-fno-stack-protector",
    "-fno-asynchronous-unwind-tables",
    "-fno-unwind-tables",
    "-fno-exceptions",
    "-fcf-protection=none",
    "-fno-unroll-loops",
];

/// gcc's own: no loop-to-memset, no vectors, no hot/cold split
/// (`.text.unlikely`), no clones of the functions (each one's listing is
/// all its code).
const GCC_FLAGS: &[&str] = &[
    "-fno-tree-loop-distribute-patterns",
    "-fno-tree-vectorize",
    "-fno-reorder-blocks-and-partition",
    "-fno-ipa-cp",
    "-fno-ipa-sra",
    "-fno-partial-inlining",
];

/// clang's own: no vectors, no implicit vector or floating-point
/// instructions (merging the zero stores of a call's argument words into
/// SSE stores left 32 unreferenced bytes in `.rodata.cst16`, and the
/// object was refused), and no address-significance table.
/// (No loop unrolling for either is in FLAGS: yamba chooses the unroll
/// degree; clang 14's own unrolling of the 4 KiB loop made it 1.08× the
/// same loop in Rust, which LLVM leaves rolled, and 0.98× without.) LLVM
/// neither splits functions nor changes a `used` function's signature at
/// -O2; a loop it turned into a memset call would be a relocation, and
/// refused (every load and store of the program is volatile, which it
/// does not turn into one).
const CLANG_FLAGS: &[&str] = &[
    "-fno-vectorize",
    "-fno-slp-vectorize",
    "-mno-implicit-float",
    "-fno-addrsig",
];

/// The full command line for source on stdin, object to `out`.
fn command_line(cc: Vec<String>, family: Family, out: &str) -> Vec<String> {
    let mut v = cc;
    if cfg!(target_arch = "x86") {
        v.push("-m32".into());
    }
    v.extend(FLAGS.iter().map(|f| f.to_string()));
    let own = match family {
        Family::Gcc => GCC_FLAGS,
        Family::Clang => CLANG_FLAGS,
    };
    v.extend(own.iter().map(|f| f.to_string()));
    v.extend(["-x", "c", "-", "-o", out].map(String::from));
    v
}

/// C source in, object bytes out (a temporary directory for the object).
/// An error names the command and the first line of its stderr.
pub(crate) fn run_compiler(source: &str) -> R<Vec<u8>> {
    run_compiler_as(compiler(), source)
}

/// `run_compiler` with compiler command `cc` (its program and first flags).
fn run_compiler_as(cc: Vec<String>, source: &str) -> R<Vec<u8>> {
    use std::io::Write;
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory for cc: {e}"))?;
    let obj = dir.path().join("c_parts.o");
    let (family, _) = identify(&cc)?;
    let argv = command_line(cc, family, &obj.to_string_lossy());
    let shown = argv.join(" ");
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("the C compiler could not be run: `{shown}`: {e} (set CC)"))?;
    let wrote = child
        .stdin
        .take()
        .map(|mut i| i.write_all(source.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("`{shown}`: {e}"))?;
    if !out.status.success() || !matches!(wrote, Some(Ok(()))) {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("(no message)");
        return Err(format!("`{shown}` failed ({}): {first}", out.status));
    }
    std::fs::read(&obj).map_err(|e| format!("{}: {e}", obj.display()))
}

/// Why the C compiler cannot compile the C parts here (None: it can),
/// found once per process by compiling a small function and reading it.
pub(crate) fn unavailable() -> Option<String> {
    static WHY: OnceLock<Option<String>> = OnceLock::new();
    WHY.get_or_init(|| {
        if !cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
            return Some("the C compiler back end is for x86 hosts (x86-32, and x86-64 when asked)".into());
        }
        let src = format!("{PRELUDE_COMMON}static i64 f(i64 a) __attribute__((used));\nstatic i64 f(i64 a) {{ return a + 1; }}\n");
        match run_compiler(&src).and_then(|o| text_of(&o, &["f"]).map(|_| ())) {
            Ok(()) => None,
            Err(e) => Some(format!("no usable C compiler: {e}")),
        }
    })
    .clone()
}

/// `.text`'s bytes and each function's (offset, size) in them.
pub(crate) type Text = (Vec<u8>, Vec<(usize, usize)>);

/// The `.text` bytes of object `obj` and each of `names`' (offset, size)
/// in it. Refused: an object for another architecture, with any
/// relocation, with bytes in an allocated section other than `.text`
/// (data, constants, another code section), or with a symbol it does not
/// define.
pub(crate) fn text_of(obj: &[u8], names: &[&str]) -> R<Text> {
    use object::{Architecture, Object, ObjectSection, ObjectSymbol, SectionFlags, SectionKind};
    let f = object::File::parse(obj).map_err(|e| format!("the C compiler's object: {e}"))?;
    let want = if cfg!(target_arch = "x86") {
        Architecture::I386
    } else if cfg!(target_arch = "x86_64") {
        Architecture::X86_64
    } else {
        Architecture::Aarch64
    };
    if f.architecture() != want {
        return Err(format!(
            "the C compiler made code for {:?}, not this host's {want:?}",
            f.architecture()
        ));
    }
    let mut text = None;
    for s in f.sections() {
        let name = s.name().unwrap_or("?");
        let nrel = s.relocations().count();
        if nrel > 0 || name.starts_with(".rel") {
            return Err(format!(
                "the C compiler's code needs relocations ({name}: {nrel}): it must have none, every address a constant"
            ));
        }
        let alloc = match s.flags() {
            SectionFlags::Elf { sh_flags, .. } => sh_flags.0 & object::elf::SHF_ALLOC.0 != 0,
            _ => true,
        };
        if name == ".text" {
            text = Some(s);
        } else if alloc && s.size() > 0 && s.kind() != SectionKind::Note {
            return Err(format!(
                "the C compiler put {} bytes in section {name}: only .text is mapped",
                s.size()
            ));
        }
    }
    let text = text.ok_or("the C compiler's object has no .text section")?;
    let bytes = text
        .data()
        .map_err(|e| format!("the C compiler's .text: {e}"))?
        .to_vec();
    for s in f.symbols() {
        if s.is_undefined() && !s.name().unwrap_or("").is_empty() || s.is_common() {
            return Err(format!(
                "the C compiler's code refers to {} outside it",
                s.name().unwrap_or("?")
            ));
        }
    }
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let s = f
            .symbols()
            .find(|s| s.name() == Ok(n) && s.section_index() == Some(text.index()))
            .ok_or_else(|| format!("the C compiler's object has no function {n} in .text"))?;
        let (off, len) = (s.address() as usize, s.size() as usize);
        if off + len > bytes.len() {
            return Err(format!("{n}: outside .text"));
        }
        out.push((off, len));
    }
    Ok((bytes, out))
}

/// Types and access macros every source starts with (no header: the
/// code is freestanding). Loads and stores through the program's
/// pointers are volatile and unaligned, as the interpreter's: each one
/// happens (a page touched is touched) and any address works.
const PRELUDE_COMMON: &str = "\
typedef long long i64;
typedef unsigned long long u64;
typedef __UINTPTR_TYPE__ uptr;
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef u16 u16u __attribute__((aligned(1)));
typedef u32 u32u __attribute__((aligned(1)));
typedef u64 u64u __attribute__((aligned(1)));
#define W(a) (*(i64 *)(uptr)(a))
#define LD(ty, a) ((i64)*(volatile ty *)(uptr)(a))
#define ST(ty, a, v) (*(volatile ty *)(uptr)(a) = (ty)(v))
typedef i64 (*tramp_t)(void *, i64, const i64 *);
typedef uptr (*code_t)(uptr, uptr, uptr, uptr, uptr, uptr);
static inline __attribute__((always_inline)) uptr yamba_opaque(uptr a) { __asm__(\"\" : \"+r\"(a)); return a; }
#define FP(ty, a) ((ty)yamba_opaque((uptr)(a)))
";

fn lit(v: i64) -> String {
    if (-(1 << 31)..(1 << 31)).contains(&v) {
        format!("{v}LL")
    } else {
        format!("(i64)0x{:x}ULL", v as u64)
    }
}

fn sym(idx: usize) -> String {
    format!("yamba_c{idx}")
}

/// Compiles every C function of `inst`'s class: one C source, one run
/// of the compiler, the functions where the object's symbols say.
/// The C type of an integer narrower than 64 bits (`None` for 64-bit
/// integers, pointers and the rest, which stay `i64`).
fn narrow(ty: CType) -> Option<&'static str> {
    if ty.is_pointer() {
        return None;
    }
    let Base::Int { bytes, unsigned } = ty.base else {
        return None;
    };
    Some(match (bytes, unsigned) {
        (1, true) => "u8",
        (1, false) => "i8",
        (2, true) => "u16",
        (2, false) => "i16",
        (4, true) => "u32",
        (4, false) => "i32",
        _ => return None,
    })
}

pub(crate) fn compile_all(inst: &Instance, layout: &[(String, CType)], addrs: &Addrs) -> R<Out> {
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
    let mut sites = Vec::new();
    let mut src = String::from(PRELUDE_COMMON);
    if cfg!(target_arch = "x86") {
        // 64-bit division through a Rust helper (gcc -m32 would call
        // libgcc's __divdi3: a relocation).
        let _ = writeln!(
            src,
            "#define YDIV(a, b) (FP(i64 (*)(i64, i64, i64), {})((a), (b), 0))",
            lit(addrs.div)
        );
        let _ = writeln!(
            src,
            "#define YREM(a, b) (FP(i64 (*)(i64, i64, i64), {})((a), (b), 1))",
            lit(addrs.div)
        );
    } else {
        src.push_str("#define YDIV(a, b) ((a) / (b))\n#define YREM(a, b) ((a) % (b))\n");
    }
    let params_c = |n: usize| {
        if n == 0 {
            "void".to_string()
        } else {
            (0..n)
                .map(|i| format!("i64 a{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    for (idx, (_, ps, _)) in sigs.iter().enumerate() {
        let _ = writeln!(
            src,
            "static i64 {}({}) __attribute__((used));",
            sym(idx),
            params_c(ps.len())
        );
    }
    let mut names = Vec::new();
    let mut meta = Vec::new();
    for (idx, (name, member)) in fns.iter().enumerate() {
        let MemberKind::Function {
            ret,
            params,
            body: Some(body),
        } = &member.kind
        else {
            continue;
        };
        let mut fc = Fc {
            inst,
            layout,
            sigs: &sigs,
            addrs,
            sites: &mut sites,
            locals: Vec::new(),
            loops: Vec::new(),
            ret: *ret,
            code: String::new(),
            ntemps: 0,
            vars: Vec::new(),
            nlabels: 0,
        };
        fc.function(member.name.span, params, body)?;
        let _ = writeln!(
            src,
            "static i64 {}({})\n{{\n    i64 d = W({}), rv = 0, ya[{MAX_ARGS}];",
            sym(idx),
            params_c(params.len()),
            fc.rt(offset_of!(Rt, depth))
        );
        for i in 0..fc.ntemps {
            let _ = writeln!(src, "    i64 t{i} = 0;");
        }
        for (i, c) in fc.vars.iter().enumerate() {
            let _ = writeln!(src, "    {c} v{i} = 0;");
        }
        src.push_str(&fc.code);
        let _ = writeln!(
            src,
            "    rv = 0;\nyret:\n    W({d}) = d;\n    return rv;\nyerr:\n    W({d}) = d;\n    return 0;\n}}",
            d = fc.rt(offset_of!(Rt, depth))
        );
        names.push(sym(idx));
        meta.push((name.clone(), params.iter().map(|p| p.ty).collect(), *ret));
    }
    if names.is_empty() {
        return Ok(Out {
            bytes: Vec::new(),
            funcs: Vec::new(),
            sites,
        });
    }
    let obj = run_compiler(&src)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (bytes, places) = text_of(&obj, &refs)?;
    let funcs = meta
        .into_iter()
        .zip(places)
        .map(|((name, params, ret), (offset, len))| JitFn {
            name,
            params,
            ret,
            offset,
            len,
        })
        .collect();
    Ok(Out {
        bytes,
        funcs,
        sites,
    })
}

struct Fc<'a, 'b> {
    inst: &'a Instance<'a>,
    layout: &'a [(String, CType)],
    sigs: &'a [Sig],
    addrs: &'a Addrs,
    sites: &'b mut Vec<Site>,
    /// Name, type, C variable.
    locals: Vec<(String, CType, String)>,
    /// (break, continue) labels of the loops around.
    loops: Vec<(String, String)>,
    ret: CType,
    code: String,
    ntemps: usize,
    /// Each local variable's C type.
    vars: Vec<&'static str>,
    nlabels: usize,
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

    /// A baked address plus `off`, as C.
    fn rt(&self, off: usize) -> String {
        lit(self.addrs.rt + off as i64)
    }

    fn line(&mut self, s: impl AsRef<str>) {
        self.code.push_str("    ");
        self.code.push_str(s.as_ref());
        self.code.push('\n');
    }

    /// A new temporary holding `e` (every value the code keeps is one:
    /// a temporary is assigned once, so its name stays its value).
    fn tmp(&mut self, e: impl AsRef<str>) -> String {
        let t = format!("t{}", self.ntemps);
        self.ntemps += 1;
        self.line(format!("{t} = {};", e.as_ref()));
        t
    }

    fn site(&mut self, span: Span, kind: SiteKind) -> i64 {
        self.sites.push(Site { span, kind });
        self.sites.len() as i64 - 1
    }

    /// Code that raises error `msg` at `span` when `cond` (C) holds.
    fn raise_if(&mut self, cond: &str, span: Span, msg: &str) {
        let idx = self.site(span, SiteKind::Error(msg.to_string()));
        self.raise_site_if(cond, idx);
    }

    fn raise_site_if(&mut self, cond: &str, idx: i64) {
        let e = self.rt(offset_of!(Rt, err));
        self.line(format!(
            "if (__builtin_expect(({cond}) != 0, 0)) {{ W({e}) = {}; goto yerr; }}",
            idx + 1
        ));
    }

    /// After a call: leave (unwinding) when it raised an error.
    fn check_err(&mut self) {
        let e = self.rt(offset_of!(Rt, err));
        self.line(format!("if (__builtin_expect(W({e}) != 0, 0)) goto yerr;"));
    }

    fn function(&mut self, name_span: Span, params: &[Param], body: &[Stmt]) -> R<()> {
        // The interpreter's limit on nested calls, at the same place.
        self.raise_if("d + 1 > 256", name_span, "calls nest deeper than 256");
        let depth = self.rt(offset_of!(Rt, depth));
        self.line(format!("W({depth}) = d + 1;"));
        for (i, p) in params.iter().enumerate() {
            walk::declare(self, &p.name.name, p.ty, format!("a{i}"));
        }
        for s in body {
            walk::stmt(self, s)?;
        }
        Ok(())
    }

    /// A new local variable, stored in its declared width when that is
    /// narrower than 64 bits. Every value assigned to it is already
    /// converted to that type (`coerce`), so storing it narrow changes no
    /// value; it tells the compiler the range, which on x86-32 keeps a
    /// 32-bit loop counter in one register instead of a pair.
    fn var(&mut self, ty: CType) -> String {
        self.vars.push(narrow(ty).unwrap_or("i64"));
        format!("v{}", self.vars.len() - 1)
    }

    /// The address `p + index·size` (null checked) and the size.
    fn address(&mut self, span: Span, (p, t): (String, T), index: &str) -> R<(String, i64)> {
        let T::Ptr(size) = t else {
            return Err(self.err(span, "not a pointer"));
        };
        self.raise_if(&format!("{p} == 0"), span, "null pointer");
        Ok((
            self.tmp(format!("(i64)((u64){p} + (u64){index} * {size}ULL)")),
            size,
        ))
    }

    fn width(size: i64) -> &'static str {
        match size {
            1 => "u8",
            2 => "u16u",
            4 => "u32u",
            _ => "u64u",
        }
    }

    /// A call of a trampoline (host function, code generation, imported
    /// class): the words in `ya`, zeros after `vals`.
    fn trampoline(&mut self, addr: i64, site: i64, vals: &[String]) -> String {
        for i in 0..MAX_ARGS {
            let v = vals.get(i).cloned().unwrap_or_else(|| "0LL".into());
            self.line(format!("ya[{i}] = {v};"));
        }
        let t = self.tmp(format!(
            "FP(tramp_t, {})((void *)(uptr){}, {site}LL, ya)",
            lit(addr),
            lit(self.addrs.rt)
        ));
        self.check_err();
        t
    }

    fn bump(&mut self, off: usize) {
        let a = self.rt(off);
        self.line(format!("W({a}) += 1;"));
    }
}

/// A function body's parts, as this generator emits them (the walk: walk.rs).
impl Emit for Fc<'_, '_> {
    type V = String;
    type Var = String;
    type Join = String;
    type Label = String;

    fn locals(&mut self) -> &mut Vec<(String, CType, String)> {
        &mut self.locals
    }

    fn loops(&mut self) -> &mut Vec<(String, String)> {
        &mut self.loops
    }

    fn ret_type(&self) -> CType {
        self.ret
    }

    fn new_var(&mut self, ty: CType, v: String) -> String {
        let var = self.var(ty);
        self.line(format!("{var} = {v};"));
        var
    }

    fn label(&mut self, what: &str) -> String {
        self.nlabels += 1;
        format!("L{}_{what}", self.nlabels)
    }

    fn place(&mut self, l: &String) {
        self.line(format!("{l}:;"));
    }

    fn goto(&mut self, l: &String) {
        self.line(format!("goto {l};"));
    }

    fn branch(&mut self, v: String, _then: &String, other: &String) {
        self.line(format!("if (!{v}) goto {other};"));
    }

    fn leave(&mut self, l: &String) {
        self.goto(l);
    }

    fn ret(&mut self, v: String) {
        self.line(format!("rv = {v};"));
        self.line("goto yret;");
    }

    fn class(&self) -> Class<'_, '_> {
        Class {
            inst: self.inst,
            layout: self.layout,
            sigs: self.sigs,
            addrs: self.addrs,
        }
    }

    fn locals_now(&self) -> &[(String, CType, String)] {
        &self.locals
    }

    fn read_var(&mut self, var: &String) -> String {
        self.tmp(var)
    }

    fn write_var(&mut self, var: &String, v: String) {
        self.line(format!("{var} = {v};"));
    }

    fn read_word(&mut self, base: i64, i: usize) -> String {
        self.tmp(format!("W({})", lit(base + (i * 8) as i64)))
    }

    fn write_word(&mut self, base: i64, i: usize, v: String) {
        self.line(format!("W({}) = {v};", lit(base + (i * 8) as i64)));
    }

    fn int(&mut self, v: i64) -> String {
        lit(v)
    }

    fn unary(&mut self, op: UnOp, v: String) -> String {
        match op {
            UnOp::Neg => self.tmp(format!("(i64)(0ULL - (u64){v})")),
            UnOp::Not => self.tmp(format!("(i64)({v} == 0)")),
            UnOp::BitNot => self.tmp(format!("~{v}")),
            UnOp::Deref => unreachable!("a dereference is a load (walk::expr)"),
        }
    }

    fn logical_begin(&mut self, and: bool, l: String) -> String {
        let t = self.tmp("0LL");
        if and {
            self.line(format!("if ({l}) {{"));
        } else {
            self.line(format!("{t} = 1; if (!{l}) {{"));
        }
        t
    }

    fn logical_end(&mut self, t: String, r: String) -> String {
        self.line(format!("{t} = (i64)({r} != 0); }}"));
        t
    }

    fn cond_begin(&mut self, c: String) -> String {
        let t = self.tmp("0LL");
        self.line(format!("if ({c}) {{"));
        t
    }

    fn cond_else(&mut self, t: &String, a: String) {
        self.line(format!("{t} = {a}; }} else {{"));
    }

    fn cond_end(&mut self, t: String, b: String) -> String {
        self.line(format!("{t} = {b}; }}"));
        t
    }

    fn error_at(&self, span: Span, msg: String) -> String {
        self.err(span, msg)
    }

    fn call_own(&mut self, idx: usize, vals: &[String]) -> String {
        let r = self.tmp(format!("{}({})", sym(idx), vals.join(", ")));
        self.check_err();
        r
    }

    fn host(&mut self, span: Span, site: SiteKind, vals: &[String]) -> String {
        let site = self.site(span, site);
        self.trampoline(self.addrs.host, site, vals)
    }

    fn user(&mut self, span: Span, user: usize, f: &Ident, vals: &[String], op: UserOp) -> String {
        let kind = SiteKind::User {
            user,
            member: f.clone(),
            nargs: vals.len(),
            op,
        };
        let site = self.site(span, kind);
        self.trampoline(self.addrs.user, site, vals)
    }

    fn call_user(
        &mut self,
        span: Span,
        user: usize,
        addr: i64,
        rt: i64,
        vals: &[String],
    ) -> String {
        let ty = if vals.is_empty() {
            "void".to_string()
        } else {
            vec!["i64"; vals.len()].join(", ")
        };
        let r = self.tmp(format!(
            "FP(i64 (*)({ty}), {})({})",
            lit(addr),
            vals.join(", ")
        ));
        let idx = self.site(span, SiteKind::Inside { user });
        self.raise_site_if(&format!("W({})", lit(rt + offset_of!(Rt, err) as i64)), idx);
        r
    }

    fn call_code(&mut self, addr: String, vals: &[String], ret: CType) -> (String, T) {
        self.bump(offset_of!(Rt, code_calls));
        let words: Vec<String> = (0..MAX_ARGS)
            .map(|i| format!("(uptr){}", vals.get(i).map_or("0LL", String::as_str)))
            .collect();
        let r = self.tmp(format!("(i64)FP(code_t, {addr})({})", words.join(", ")));
        self.coerce(ret, r)
    }

    fn generate(&mut self, e: &Expr, name: &str, vals: &[String], call: Option<Span>) -> R<String> {
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
        let mut hit = format!("W({}) != 0", lit(c));
        for (i, v) in vals.iter().enumerate() {
            let _ = write!(hit, " && W({}) == {v}", lit(c + ((2 + i) * 8) as i64));
        }
        let t = self.tmp("0LL");
        self.line(format!("if ({hit}) {{ {t} = W({}); }} else {{", lit(c + 8)));
        let r = self.trampoline(self.addrs.gen, site, vals);
        self.line(format!("{t} = {r}; }}"));
        Ok(t)
    }
    fn coerce(&mut self, ty: CType, v: String) -> (String, T) {
        if ty.is_void() {
            return ("0LL".into(), T::Void);
        }
        if ty.is_pointer() {
            return (v, t_of(ty));
        }
        match narrow(ty) {
            Some(c) => (self.tmp(format!("(i64)({c})({v})")), T::Int),
            None => (v, T::Int),
        }
    }

    fn load(&mut self, span: Span, p: (String, T), index: String) -> R<(String, T)> {
        let (a, size) = self.address(span, p, &index)?;
        Ok((self.tmp(format!("LD({}, {a})", Self::width(size))), T::Int))
    }

    fn store(&mut self, span: Span, p: (String, T), index: String, v: String) -> R<(String, T)> {
        let (a, size) = self.address(span, p, &index)?;
        self.line(format!("ST({}, {a}, {v});", Self::width(size)));
        Ok((v, T::Int))
    }

    fn binary(
        &mut self,
        span: Span,
        op: BinOp,
        (a, ta): (String, T),
        (b, tb): (String, T),
    ) -> (String, T) {
        use BinOp::*;
        match (op, ta, tb) {
            (Add, T::Ptr(s), _) => {
                return (
                    self.tmp(format!("(i64)((u64){a} + (u64){b} * {s}ULL)")),
                    T::Ptr(s),
                );
            }
            (Add, _, T::Ptr(s)) => {
                return (
                    self.tmp(format!("(i64)((u64){b} + (u64){a} * {s}ULL)")),
                    T::Ptr(s),
                );
            }
            (Sub, T::Ptr(s), T::Ptr(_)) => {
                let d = self.tmp(format!("(i64)((u64){a} - (u64){b})"));
                if s == 1 {
                    return (d, T::Int);
                }
                return (self.tmp(format!("YDIV({d}, {s}LL)")), T::Int);
            }
            (Sub, T::Ptr(s), _) => {
                return (
                    self.tmp(format!("(i64)((u64){a} - (u64){b} * {s}ULL)")),
                    T::Ptr(s),
                );
            }
            _ => {}
        }
        let e = match op {
            Add => format!("(i64)((u64){a} + (u64){b})"),
            Sub => format!("(i64)((u64){a} - (u64){b})"),
            Mul => format!("(i64)((u64){a} * (u64){b})"),
            Div | Rem => {
                self.raise_if(&format!("{b} == 0"), span, "division by zero");
                // i64::MIN / -1 wraps (the interpreter's wrapping_div);
                // the hardware would trap.
                if op == Div {
                    format!("{b} == -1 ? (i64)(0ULL - (u64){a}) : YDIV({a}, {b})")
                } else {
                    format!("{b} == -1 ? 0LL : YREM({a}, {b})")
                }
            }
            Shl => format!("(i64)((u64){a} << ({b} & 63))"),
            Shr => format!("{a} >> ({b} & 63)"),
            BitAnd => format!("{a} & {b}"),
            BitOr => format!("{a} | {b}"),
            BitXor => format!("{a} ^ {b}"),
            Lt => format!("(i64)({a} < {b})"),
            Le => format!("(i64)({a} <= {b})"),
            Gt => format!("(i64)({a} > {b})"),
            Ge => format!("(i64)({a} >= {b})"),
            Eq => format!("(i64)({a} == {b})"),
            Ne => format!("(i64)({a} != {b})"),
            And => format!("(i64)({a} != 0 && {b} != 0)"),
            Or => format!("(i64)({a} != 0 || {b} != 0)"),
        };
        (self.tmp(e), T::Int)
    }
}

#[cfg(all(test, any(target_arch = "x86", target_arch = "x86_64")))]
mod tests {
    use super::*;

    fn object(body: &str) -> Vec<u8> {
        run_compiler(&format!("{PRELUDE_COMMON}{body}")).unwrap()
    }

    #[test]
    fn a_function_alone_is_taken_with_its_place_in_text() {
        let o = object(
            "static i64 f(i64 a) __attribute__((used));\nstatic i64 f(i64 a) { return a * 3; }\n\
             static i64 g(i64 a) __attribute__((used));\nstatic i64 g(i64 a) { return f(a) + 1; }\n",
        );
        let (text, places) = text_of(&o, &["f", "g"]).unwrap();
        assert_eq!(places.len(), 2);
        for (off, len) in places {
            assert!(len > 0 && off + len <= text.len());
        }
        // Both end in ret (c3) on x86.
        assert_eq!(text[places_end(&o, "f") - 1], 0xc3);
    }

    fn places_end(o: &[u8], n: &str) -> usize {
        let (_, p) = text_of(o, &[n]).unwrap();
        p[0].0 + p[0].1
    }

    #[test]
    fn an_object_needing_a_relocation_is_refused() {
        // A global defined elsewhere: its address is the linker's to fill.
        let o = object("extern i64 elsewhere;\ni64 f(void) { return elsewhere; }\n");
        let e = text_of(&o, &["f"]).unwrap_err();
        assert!(e.contains("needs relocations"), "{e}");
    }

    #[test]
    fn bytes_outside_text_are_refused() {
        // Constants the code does not reference (so no relocation): still
        // bytes in .rodata, which is never mapped.
        let o = object(
            "static const i64 k[4] __attribute__((used)) = {1, 2, 3, 4};\n\
             static i64 f(void) __attribute__((used));\nstatic i64 f(void) { return 1; }\n",
        );
        let e = text_of(&o, &["f"]).unwrap_err();
        assert!(
            e.contains("only .text is mapped") && e.contains(".rodata"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_function_is_an_error_naming_it() {
        let o =
            object("static i64 f(void) __attribute__((used));\nstatic i64 f(void) { return 1; }\n");
        let e = text_of(&o, &["g"]).unwrap_err();
        assert!(e.contains("no function g"), "{e}");
    }

    #[test]
    fn a_missing_compiler_and_a_failed_compile_say_which_command_and_why() {
        let e = run_compiler_as(vec!["/nonexistent/yamba-cc".into()], "int x;").unwrap_err();
        assert!(
            e.contains("could not be run") && e.contains("`/nonexistent/yamba-cc "),
            "{e}"
        );
        let e = run_compiler("this is not C").unwrap_err();
        assert!(e.contains("failed") && e.contains("error"), "{e}");
    }

    #[test]
    fn the_compiler_is_known_by_its_family_and_a_stranger_is_refused() {
        // `true` runs and defines nothing: neither family, so refused by name.
        let e = identify(&["true".to_string()]).unwrap_err();
        assert!(e.contains("`true` is neither gcc nor clang"), "{e}");
        let mut missing = Vec::new();
        for (cc, family) in [("gcc", Family::Gcc), ("clang", Family::Clang)] {
            match identify(&[cc.to_string()]) {
                Ok((f, v)) => {
                    assert_eq!(f, family, "{v}");
                    assert!(v.starts_with(&format!("{cc} ")), "{v}");
                    assert_eq!(v.split('.').count(), 3, "{v}");
                }
                Err(e) => missing.push(format!("{cc}: {e}")),
            }
        }
        if !missing.is_empty() {
            yamba_testkit::skip!("not installed: {}", missing.join("; "));
        }
    }
}
