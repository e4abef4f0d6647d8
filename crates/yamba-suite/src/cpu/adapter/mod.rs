//! Platform adapter for the `cpu` area: a system call made with the raw
//! instruction (nothing of libc in between: libc may cache or wrap some
//! calls), direct calls to the `yamba_callN` procedures from machine code,
//! and whether the vDSO serves clock_gettime.
//!
//! The interface every implementation provides:
//! - `NAME`: the adapter's name as results record it;
//! - `syscall0(nr) -> i64`, `SYS_GETPPID`;
//! - `calls::call(n, &args)` and `calls::dummy(n, &args)` (F: the same
//!   argument moves without the call);
//! - `vdso_mapped() -> bool`.
//!
//! The instructions differ by architecture, so the platforms here are
//! Linux on x86-64 and Linux on aarch64; everywhere else `unsupported.rs`
//! (whose `NAME` is `NO_ADAPTER`: the runner skips this area's benchmarks
//! with "no adapter for this platform").

#[cfg_attr(all(linux_adapters, target_arch = "x86_64"), path = "linux_x86_64.rs")]
#[cfg_attr(
    all(linux_adapters, target_arch = "aarch64"),
    path = "linux_aarch64.rs"
)]
#[cfg_attr(
    not(all(linux_adapters, any(target_arch = "x86_64", target_arch = "aarch64"))),
    path = "unsupported.rs"
)]
mod imp;

pub use imp::*;
