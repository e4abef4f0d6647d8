//! The Yamba language (seed 003, section 5): abstract benchmark templates,
//! platform classes that `extend` them with machine code (hex literals,
//! casts, `asm { }`), `unroll` evaluated at run time, bitstrings sub-typed
//! as C functions — compiled here, at run time, for the host; measured by
//! yamba's harness like every built-in benchmark. See docs/language.md.

pub mod asm;
pub mod ast;
pub mod backend;
pub mod check;
pub mod error;
pub mod eval;
pub mod exec;
pub mod isa;
// The C parts compiled: by Cranelift on x86-64 and aarch64, by the
// system's C compiler on x86-32 (nothing of Cranelift built there);
// elsewhere interpreted.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "x86")),
    path = "jit/unsupported.rs"
)]
pub mod jit;
pub mod lexer;
pub mod model;
pub mod parser;
pub mod runner;
pub mod session;
pub mod source;
pub mod stdlib;

pub use backend::Backend;
pub use error::LangError;
pub use eval::{Compiled, Instance};
pub use isa::Isa;
pub use model::Program;
pub use source::{Diag, Errors, Sources, Span};

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Parses and checks files: every error and warning, rendered
/// (file:line:col, the line, a caret). Ok with the warnings' text when
/// there is no error.
pub fn check_files(paths: &[PathBuf]) -> Result<(Program, String), Errors> {
    let (p, warnings) = Program::load(paths)?;
    let text = p.sources.render_all(&warnings);
    Ok((p, text))
}

/// The listing of bitstring function `func` of `class` for `args`, in the
/// seed's style (see [`Compiled::listing`]).
pub fn disasm(
    prog: &Program,
    class: &str,
    func: &str,
    args: &[i64],
    settings: &BTreeMap<String, String>,
    with_bytes: bool,
) -> Result<String, LangError> {
    let scratch = std::env::temp_dir();
    let mut inst = Instance::new(prog, class, settings, scratch).map_err(LangError::Eval)?;
    let code = inst.generate(func, args).map_err(LangError::Eval)?;
    Ok(code.listing(with_bytes))
}

/// The listing of `class`'s C functions compiled to native code (all, or
/// the one named `func`; `A.f` names imported class A's), each under a
/// comment naming it. With no `func`, the imported classes' compiled
/// functions follow the class's own: they run inside its timed calls too.
/// `backend` compiles them (`lang disasm --backend`).
pub fn disasm_c(
    prog: &Program,
    class: &str,
    func: Option<&str>,
    settings: &BTreeMap<String, String>,
    with_bytes: bool,
    backend: Backend,
) -> Result<String, LangError> {
    let scratch = std::env::temp_dir();
    let mut inst = Instance::new(prog, class, settings, scratch).map_err(LangError::Eval)?;
    if let Some(why) = jit::unavailable(backend) {
        return Err(LangError::Eval(format!(
            "the C parts cannot be compiled here: {why}"
        )));
    }
    inst.compile_c_with(backend).map_err(LangError::Eval)?;
    let jit = inst.jit().expect("compiled");
    let users = inst.user_jits();
    match func.map(|f| (f, f.split_once('.'))) {
        None => {
            let mut out = jit.listing(None, with_bytes);
            for (_, u) in users.iter().filter(|(_, u)| u.code_len() > 0) {
                out.push('\n');
                out.push_str(&u.listing(None, with_bytes));
            }
            Ok(out)
        }
        Some((_, Some((a, f)))) => users
            .iter()
            .find(|(_, u)| u.class_name() == a && u.has(f))
            .map(|(_, u)| u.listing(Some(f), with_bytes))
            .ok_or_else(|| {
                LangError::Eval(format!(
                    "{class} imports no class {a} with a compiled C function {f}()"
                ))
            }),
        Some((f, None)) if jit.has(f) => Ok(jit.listing(Some(f), with_bytes)),
        Some((f, None)) => Err(LangError::Eval(format!("{class} has no C function {f}()"))),
    }
}
