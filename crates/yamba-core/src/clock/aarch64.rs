//! aarch64 adapter: the generic timer's virtual counter.
//! Not exercised on the x86-64 CI machines; kept behind the same seam.

/// `isb; mrs cntvct_el0`: the ISB keeps the read from being hoisted above
/// earlier instructions.
#[inline(always)]
pub fn cntvct_ordered() -> u64 {
    let v: u64;
    // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux.
    unsafe {
        std::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack, nomem));
    }
    v
}

/// The counter's nominal frequency (CNTFRQ_EL0), as firmware set it.
pub fn cntfrq() -> u64 {
    let v: u64;
    // SAFETY: CNTFRQ_EL0 is readable from EL0.
    unsafe {
        std::arch::asm!("mrs {v}, cntfrq_el0", v = out(reg) v, options(nostack, nomem));
    }
    v
}
