//! The C parts where Cranelift has no back end for the host (x86-32
//! among them): nothing is compiled, the runner interprets them and says
//! so ([`UNAVAILABLE`]), and `lang disasm` of C functions is an error.
//! The same names as the compiler's module, so the rest of the language
//! has no cfg of its own.

use crate::eval::Instance;
use crate::stdlib::Value;

type R<T> = Result<T, String>;

/// Why the C parts are not compiled on this host (None where they are).
pub const UNAVAILABLE: Option<&str> = Some(
    "Cranelift has no back end for this host's instruction set (x86-32 among them): the C parts run in the interpreter",
);

/// Never built: [`Jit::build`] always fails here.
pub enum Jit {}

impl Jit {
    pub fn build(_inst: &Instance) -> R<Jit> {
        Err(UNAVAILABLE.unwrap_or_default().to_string())
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
