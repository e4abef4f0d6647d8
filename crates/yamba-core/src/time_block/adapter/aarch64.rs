//! TIME_BLOCK on aarch64: the virtual counter, behind isb.

pub const NAME: &str = "cntvct";

#[inline(always)]
pub fn start() -> u64 {
    let v: u64;
    // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux.
    unsafe { std::arch::asm!("isb", "mrs {v}, cntvct_el0", "isb", v = out(reg) v) };
    v
}

#[inline(always)]
pub fn stop() -> u64 {
    start()
}
