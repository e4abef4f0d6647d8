//! The C parts on a host with no code generator of ours (neither
//! Cranelift's back ends, x86-64 and aarch64, nor the C compiler's, x86):
//! nothing is compiled, the runner interprets them and says so
//! ([`unavailable`]), and `lang disasm` of C functions is an error.
//! The same names as the compiler's module, so the rest of the language
//! has no cfg of its own.

use crate::eval::Instance;
use crate::stdlib::Value;

type R<T> = Result<T, String>;

pub use crate::backend::Backend;

/// Why the C parts are not compiled on this host (None where they are).
pub fn unavailable(_backend: Backend) -> Option<String> {
    Some("no code generator of yamba's for this host's instruction set (Cranelift: x86-64, aarch64; the C compiler: x86): the C parts run in the interpreter".into())
}

/// No C compiler of ours runs here.
pub fn c_compiler() -> Option<String> {
    None
}

/// Never built: [`Jit::build`] always fails here.
pub enum Jit {}

impl Jit {
    pub fn build(_inst: &Instance, backend: Backend) -> R<Jit> {
        Err(unavailable(backend).unwrap_or_default())
    }

    pub fn backend(&self) -> Backend {
        match *self {}
    }

    pub fn has(&self, _name: &str) -> bool {
        match *self {}
    }

    pub fn class_name(&self) -> &str {
        match *self {}
    }

    pub fn sizes(&self) -> Vec<(&str, usize)> {
        match *self {}
    }

    pub(crate) fn busy(&self) -> bool {
        match *self {}
    }

    pub fn addr(&self) -> usize {
        match *self {}
    }

    pub fn code_len(&self) -> usize {
        match *self {}
    }

    pub fn counts(&self) -> (u64, u64) {
        match *self {}
    }

    pub fn call(&self, _inst: &mut Instance, _name: &str, _args: &[Value]) -> R<Value> {
        match *self {}
    }

    pub fn listing(&self, _only: Option<&str>, _with_bytes: bool) -> String {
        match *self {}
    }
}
