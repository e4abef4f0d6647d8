//! What can stop a Yamba class from becoming a benchmark, a listing or a
//! run: one line each (an abstract class's names every member it leaves
//! undefined), the text `yamba lang` and `yamba asm` print.
//!
//! Errors met while a class runs (the evaluator's, the stdlib's, the
//! runner's) stay strings: they are located in the source by the
//! evaluator, and end as a benchmark's failed reason in its results file.

use crate::source::Errors;

#[derive(Debug, thiserror::Error)]
pub enum LangError {
    /// A class name the program does not declare; `classes` are those it does.
    #[error("no class {class} (classes: {})", .classes.join(", "))]
    NoClass { class: String, classes: Vec<String> },
    /// A class that cannot run: declared abstract, or leaving members
    /// undefined; with the concrete classes that extend it.
    #[error("class {class} is abstract{}", abstract_detail(.undefined, .concrete))]
    Abstract {
        class: String,
        undefined: Vec<Undefined>,
        concrete: Vec<String>,
    },
    #[error("no instruction set imported and this host's is not supported")]
    NoIsa,
    /// A class whose imports generate code for different instruction sets.
    #[error("class {0} imports classes of different instruction sets")]
    MixedIsas(String),
    /// `yamba asm` text that would end the generated class's block early.
    #[error("the {what} '{text}' contains a brace; write instructions separated by ';'")]
    Brace { what: &'static str, text: String },
    /// A program that does not parse or check: its rendered diagnostics.
    #[error(transparent)]
    Program(#[from] Errors),
    /// The class failed while generating code (the evaluator's message).
    #[error("{0}")]
    Eval(String),
    /// The run's configuration could not be recorded in its results file.
    #[error("{0}")]
    Config(serde_json::Error),
    /// The results file cannot be written where it was asked for.
    #[error(transparent)]
    Output(#[from] yamba_results::output::OutputError),
}

/// A member a class leaves undefined, as the error names it.
#[derive(Debug, Clone)]
pub struct Undefined {
    /// `bitstring name(params)`, `type name()`.
    pub member: String,
    /// The class that declared it.
    pub declared_in: String,
    /// Where: `file:line:col`.
    pub at: String,
}

fn abstract_detail(undefined: &[Undefined], concrete: &[String]) -> String {
    if undefined.is_empty() {
        return " (declared 'yamba abstract'); run a class that extends it".into();
    }
    let mut msg = ": it leaves undefined".to_string();
    for u in undefined {
        msg.push_str(&format!(
            "\n  {}  (declared in {} at {})",
            u.member, u.declared_in, u.at
        ));
    }
    if !concrete.is_empty() {
        msg.push_str(&format!(
            "\nconcrete classes extending it: {}",
            concrete.join(", ")
        ));
    }
    msg
}

/// An evaluator's caller (its errors are strings) reports a class that
/// cannot run as one.
impl From<LangError> for String {
    fn from(e: LangError) -> String {
        e.to_string()
    }
}
