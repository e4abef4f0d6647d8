//! The reference binary's arithmetic where C leaves it to the machine.
//!
//! ministat's C does not say which NaN `a + b` keeps when both are NaN,
//! whether `a * b + c` is rounded once or twice, or what `(int)x` is for a
//! NaN or an out-of-range `x`; the compiler and the CPU decide, and the
//! output shows it (`nan` or `-nan`, the last digit of a deviation, a plot
//! or a crash). Byte-for-byte output follows Debian's `ministat` binary on
//! each architecture, read from its machine code:
//! - `x86_64.rs`: SSE2 without FMA (`addsd` keeps its destination's NaN;
//!   invalid operations make a negative NaN), `cvttsd2si` (NaN and out of
//!   range give `INT_MIN`, which crashes the plot);
//! - `aarch64.rs`: GCC contracts `syy += a * a` and the pooled variance's
//!   sum into `fmadd` (one rounding; the addend's NaN wins), invalid
//!   operations make a positive NaN, and `fcvtzs` saturates (NaN gives 0).
//!
//! Other architectures get the x86-64 rules, unchecked.
//!
//! The interface: `add_point`, `pooled_sum`, `to_int`.

#[cfg_attr(target_arch = "aarch64", path = "aarch64.rs")]
#[cfg_attr(not(target_arch = "aarch64"), path = "x86_64.rs")]
mod imp;

pub(super) use imp::*;
