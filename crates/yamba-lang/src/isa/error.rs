//! Why one line of assembly does not assemble: the text an asm block's
//! diagnostic shows after `<isa> asm: `, naming the line, operand or term.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AsmError {
    #[error("unknown {isa} instruction '{name}'")]
    UnknownInstruction { isa: &'static str, name: String },
    /// A memory operand without a size, where forms of several sizes fit.
    #[error("'{0}': the memory operand's size is ambiguous; say byte, word, dword or qword ptr")]
    AmbiguousSize(String),
    /// A branch to an address: targets are labels of the same block.
    #[error("'{0}': a branch's target must be a label of this asm block")]
    Branch(String),
    #[error("'{line}': no {isa} form of {mnemonic} takes these operands")]
    NoForm {
        isa: &'static str,
        line: String,
        mnemonic: String,
    },
    #[error("'{0}': memory operand never closed (missing ])")]
    Unclosed(String),
    /// A memory operand `[..]` whose inside does not address memory.
    #[error("'{operand}': {why}")]
    Memory { operand: String, why: MemoryError },
    #[error("'{0}': a size (ptr) needs a memory operand [..]")]
    SizeWithoutMemory(String),
    #[error("'{0}' is not a register, an immediate or a memory operand")]
    NotAnOperand(String),
    #[error("label '{0}' is not defined in this asm block")]
    UndefinedLabel(String),
    #[error("label '{0}' is defined twice in this asm block")]
    DuplicateLabel(String),
    /// A label is an address in the code; only a branch's target can be one.
    #[error("label '{label}' used by {mnemonic}, which is not a branch: only a branch's target can be a label")]
    LabelNotBranch { label: String, mnemonic: String },
    /// Labels are local to one block: blocks are placed independently
    /// (unrolled, repeated), so another block's label has no one address.
    #[error("label '{0}' is in another asm block: a branch cannot leave its own asm block")]
    BranchOutOfBlock(String),
    #[error("'{0}' is a register, not a label name")]
    RegisterLabel(String),
    /// Only short forms exist (loop, jrcxz) and the label is beyond them.
    #[error("'{line}': the label is out of this branch's reach ({message})")]
    OutOfReach { line: String, message: String },
    /// An aarch64 line asm-rs refuses, with its message.
    #[error("'{line}': {message}")]
    Aarch64 { line: String, message: String },
}

/// What is wrong inside the brackets of an x86 memory operand.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryError {
    #[error("'{0}' is not register*scale")]
    NotScaled(String),
    #[error("'{0}': one index register, scaled by 1, 2, 4 or 8")]
    BadIndex(String),
    #[error("a register cannot be subtracted ('-{0}')")]
    Subtracted(String),
    #[error("at most a base and an index register")]
    TooManyRegisters,
    #[error("'{0}' is not a register or a number")]
    NotATerm(String),
}
