//! The syntax tree of a Yamba program (see docs/language.md for the grammar).

use crate::source::Span;

#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A file: includes and classes.
#[derive(Debug, Clone, Default)]
pub struct File {
    pub includes: Vec<(String, Span)>,
    pub classes: Vec<Class>,
}

/// `yamba [abstract] NAME [extends BASE] { members }`
#[derive(Debug, Clone)]
pub struct Class {
    pub name: Ident,
    pub is_abstract: bool,
    pub extends: Option<Ident>,
    pub members: Vec<Member>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub name: Ident,
    pub kind: MemberKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum MemberKind {
    /// `import(x86_64);` — the name is the member's name.
    Import,
    /// `int num_pages;`, `byte_t * pages = 0;`
    Data { ty: CType, init: Option<Expr> },
    /// `bitstring NAME;`, `bitstring NAME { … }`, `bitstring<sig> NAME(params) { … }`
    Bitstring {
        sub: Option<CSig>,
        params: Option<Vec<Param>>,
        body: Option<Vec<BsItem>>,
    },
    /// A C function: `void benchmark() { … }`; `body` None when only declared.
    Function {
        ret: CType,
        params: Vec<Param>,
        body: Option<Vec<Stmt>>,
    },
}

/// A C type: a base type and a pointer depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CType {
    pub base: Base,
    pub ptr: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    Void,
    /// An integer of this many bytes (all arithmetic is done in 64 bits).
    Int {
        bytes: u8,
        unsigned: bool,
    },
}

impl CType {
    pub const VOID: CType = CType {
        base: Base::Void,
        ptr: 0,
    };
    pub const INT: CType = CType {
        base: Base::Int {
            bytes: 4,
            unsigned: false,
        },
        ptr: 0,
    };
    pub const LONG: CType = CType {
        base: Base::Int {
            bytes: 8,
            unsigned: false,
        },
        ptr: 0,
    };
    pub const BYTE_PTR: CType = CType {
        base: Base::Int {
            bytes: 1,
            unsigned: true,
        },
        ptr: 1,
    };

    pub fn is_void(&self) -> bool {
        self.ptr == 0 && self.base == Base::Void
    }

    pub fn is_pointer(&self) -> bool {
        self.ptr > 0
    }

    /// Bytes a pointer of this type steps by (C pointer arithmetic).
    pub fn pointee_size(&self) -> i64 {
        match (self.ptr, self.base) {
            (0, _) => 1,
            (1, Base::Void) => 1,
            (1, Base::Int { bytes, .. }) => bytes as i64,
            _ => 8,
        }
    }

    pub fn display(&self) -> String {
        let base = match self.base {
            Base::Void => "void".to_string(),
            Base::Int {
                bytes: 1,
                unsigned: true,
            } => "byte_t".into(),
            Base::Int { bytes, unsigned } => format!(
                "{}{}",
                if unsigned { "unsigned " } else { "" },
                match bytes {
                    1 => "char",
                    2 => "short",
                    4 => "int",
                    _ => "long",
                }
            ),
        };
        if self.ptr == 0 {
            base
        } else {
            format!("{base} {}", "*".repeat(self.ptr as usize))
        }
    }
}

#[derive(Debug, Clone)]
pub struct Param {
    pub ty: CType,
    pub name: Ident,
}

/// The C signature a bitstring is sub-typed with: `void c_function(byte_t * first_page)`.
#[derive(Debug, Clone)]
pub struct CSig {
    pub ret: CType,
    pub name: Ident,
    pub params: Vec<Param>,
    pub span: Span,
}

/// One piece of a bitstring body; the pieces are concatenated.
#[derive(Debug, Clone)]
pub enum BsItem {
    /// `0x8B83`: bytes in the order written.
    Hex { bytes: Vec<u8>, span: Span },
    /// `asm { … }`: the text between the braces, `offset` its start in the file.
    Asm { text: String, span: Span },
    /// `unroll(init; cond; step) { … }`, evaluated when the code is generated.
    Unroll {
        init: Box<Stmt>,
        cond: Expr,
        step: Expr,
        body: Vec<BsItem>,
        /// The header, for listings: `unroll(unsigned int i = 0; i < m; i++)`.
        header: String,
        span: Span,
    },
    /// A bitstring member or function call: `prologue`, `touch(i)`,
    /// `x86_64.cast_imm_32(expr)`, `compiler_x86_64.prologue_standard`.
    Ref(Expr),
}

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    Decl {
        ty: CType,
        name: Ident,
        init: Option<Expr>,
    },
    Expr(Expr),
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    If {
        cond: Expr,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
    },
    Return(Option<Expr>),
    Block(Vec<Stmt>),
    Break,
    Continue,
    Empty,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            And => "&&",
            Or => "||",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
    Deref,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Int(i64),
    Str(String),
    Name(String),
    /// `a.b` — a standard or imported class's member.
    Field(Box<Expr>, Ident),
    Call(Box<Expr>, Vec<Expr>),
    Index(Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a = b`, `a += b` (op Some(Add)), …
    Assign(Option<BinOp>, Box<Expr>, Box<Expr>),
    /// `i++`, `--i`: delta ±1, `post` when the old value is the result.
    IncDec {
        target: Box<Expr>,
        delta: i64,
        post: bool,
    },
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// The dotted path this expression names, if it is one: `a`, `a.b`.
    pub fn path(&self) -> Option<Vec<&str>> {
        match &self.kind {
            ExprKind::Name(n) => Some(vec![n.as_str()]),
            ExprKind::Field(base, f) => {
                let mut p = base.path()?;
                p.push(f.name.as_str());
                Some(p)
            }
            _ => None,
        }
    }
}
