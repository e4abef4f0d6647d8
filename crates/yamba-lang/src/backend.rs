//! Which code generator compiles a class's C parts (src/jit): Cranelift
//! where it has a back end (x86-64, aarch64), the system's C compiler on
//! x86-32, where Cranelift has none (and on x86-64 when asked, so that
//! generator is tested on the usual host too). See docs/language.md.

/// The code generator of the C parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Cranelift (cranelift-codegen), in process.
    Cranelift,
    /// The system's C compiler (`$CC`, else clang, else `cc`), run on C source
    /// written from the class; its relocation-free `.text` is mapped by
    /// yamba as Cranelift's code is.
    Cc,
}

impl Backend {
    /// This host's default: Cranelift where it has a back end, else the C compiler.
    pub fn host() -> Backend {
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            Backend::Cranelift
        } else {
            Backend::Cc
        }
    }

    /// The name results and options use (`cranelift`, `cc`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cranelift => "cranelift",
            Backend::Cc => "cc",
        }
    }

    /// `cranelift` or `cc` (as `--backend` takes it).
    pub fn parse(s: &str) -> Option<Backend> {
        match s {
            "cranelift" => Some(Backend::Cranelift),
            "cc" => Some(Backend::Cc),
            _ => None,
        }
    }

    /// How listings and results say who compiled the C parts.
    pub fn label(self) -> &'static str {
        match self {
            Backend::Cranelift => "Cranelift",
            Backend::Cc => "the system C compiler",
        }
    }
}
