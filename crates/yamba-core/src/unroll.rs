//! Run-time loop unrolling.
//!
//! The program P'' is a loop of n/m iterations whose body is m copies of the
//! operation P. Each supported degree is a separately compiled body
//! (`#[inline(always)]` doubling, so the copies really are consecutive in the
//! machine code); the degree is picked at run time.

/// Degrees of unrolling that have a compiled body.
pub const DEGREES: [u32; 6] = [1, 2, 4, 8, 16, 32];

#[inline(always)]
fn x2<F: FnMut()>(f: &mut F) {
    f();
    f();
}
#[inline(always)]
fn x4<F: FnMut()>(f: &mut F) {
    x2(f);
    x2(f);
}
#[inline(always)]
fn x8<F: FnMut()>(f: &mut F) {
    x4(f);
    x4(f);
}
#[inline(always)]
fn x16<F: FnMut()>(f: &mut F) {
    x8(f);
    x8(f);
}
#[inline(always)]
fn x32<F: FnMut()>(f: &mut F) {
    x16(f);
    x16(f);
}

macro_rules! looped {
    ($groups:expr, $body:expr) => {{
        let mut g = $groups;
        while std::hint::black_box(g) > 0 {
            $body;
            g -= 1;
        }
    }};
}

/// Runs `groups` iterations of a body of `m` consecutive calls of `op`.
/// `m` must be one of [`DEGREES`].
#[inline(never)]
pub fn run_unrolled<F: FnMut()>(m: u32, groups: u64, op: &mut F) {
    // SAFETY: `op` is a valid exclusive reference for the call.
    unsafe { loop_fn::<F>(m)(groups, op) }
}

/// P'' — `groups` iterations of a body of `M` consecutive calls of the
/// operation — as a function of its own with the C calling convention,
/// so that a copy of its machine code elsewhere can be called through a
/// pointer of this type ([`crate::placement`]). Nothing but the loop is
/// in it: no dispatch on the degree (a jump table's targets would lead a
/// copy back to the original).
///
/// The operation comes as `&mut F`, not a raw pointer: a reference
/// argument tells the compiler nothing else can see the operation's state,
/// so it keeps that state in registers across the calls the operation
/// makes (a call chain stays a chain through `rax`, not through memory).
pub type LoopFn<F> = unsafe extern "C-unwind" fn(u64, &mut F);

#[inline(never)]
unsafe extern "C-unwind" fn looped<F: FnMut(), const M: u32>(groups: u64, op: &mut F) {
    match M {
        1 => looped!(groups, op()),
        2 => looped!(groups, x2(op)),
        4 => looped!(groups, x4(op)),
        8 => looped!(groups, x8(op)),
        16 => looped!(groups, x16(op)),
        _ => looped!(groups, x32(op)),
    }
}

/// The compiled P'' of degree `m` for `F`. `m` must be one of [`DEGREES`].
pub fn loop_fn<F: FnMut()>(m: u32) -> LoopFn<F> {
    match m {
        1 => looped::<F, 1>,
        2 => looped::<F, 2>,
        4 => looped::<F, 4>,
        8 => looped::<F, 8>,
        16 => looped::<F, 16>,
        32 => looped::<F, 32>,
        _ => panic!("unroll degree {m} has no compiled body (use one of {DEGREES:?})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_degree_runs_m_times_per_group() {
        for m in DEGREES {
            let mut count = 0u64;
            run_unrolled(m, 7, &mut || count += 1);
            assert_eq!(count, 7 * m as u64);
        }
    }
}
