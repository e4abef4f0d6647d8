//! What only the compiler (src/jit) asks of an instance: its data as
//! words in slot order, and the way into its imported classes' instances.
//! Built only where there is a compiler (Cranelift on x86-64 and aarch64,
//! the C compiler on x86).

use super::{coerce, Instance, MemberKind, Value, R};
use crate::ast::{CType, Expr};

impl<'p> Instance<'p> {
    /// Data members in slot order, with their types (for the compiler).
    pub(crate) fn data_layout(&self) -> Vec<(String, CType)> {
        let mut v: Vec<(usize, &String)> = self.data.index.iter().map(|(k, &i)| (i, k)).collect();
        v.sort();
        v.into_iter()
            .map(|(i, k)| (k.clone(), self.data.slots[i].0))
            .collect()
    }

    /// The data members' words, in slot order.
    pub(crate) fn data_words(&self, out: &mut [i64]) {
        for (o, (_, v)) in out.iter_mut().zip(&self.data.slots) {
            *o = v.word();
        }
    }

    /// Sets the data members from words (C's conversion to each type).
    pub(crate) fn set_data_words(&mut self, w: &[i64]) {
        for (x, (ty, v)) in w.iter().zip(self.data.slots.iter_mut()) {
            *v = coerce(*ty, Value::Int(*x));
        }
    }

    /// For the compiler: the imported user class `e` names and the kind
    /// of its member `f` (None: `e` names no imported user class).
    pub(crate) fn user_member(&self, e: &Expr, f: &str) -> Option<(usize, Option<&'p MemberKind>)> {
        let u = self.user(e)?;
        Some((u, self.users[u].1.member_kind(f)))
    }

    /// Imported instance `u`.
    pub(crate) fn user_instance(&self, u: usize) -> &Instance<'p> {
        &self.users[u].1
    }

    /// The instance `path` (users' indices, one per level) leads to.
    pub(crate) fn at_path_mut(&mut self, path: &[usize]) -> &mut Instance<'p> {
        match path.split_first() {
            None => self,
            Some((&u, rest)) => self.users[u].1.at_path_mut(rest),
        }
    }

    /// Runs `f` in the instance `path` leads to, each level lending it
    /// this instance's host and counting its steps and generations (as
    /// `with_user` does for one level): the compiled code of an imported
    /// class calls back into Rust through this.
    pub(crate) fn with_path<T>(
        &mut self,
        path: &[usize],
        f: impl FnOnce(&mut Instance<'p>) -> R<T>,
    ) -> R<T> {
        match path.split_first() {
            None => f(self),
            Some((&u, rest)) => self.with_user(u, |a| a.with_path(rest, f)),
        }
    }
}
