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
    match m {
        1 => looped!(groups, op()),
        2 => looped!(groups, x2(op)),
        4 => looped!(groups, x4(op)),
        8 => looped!(groups, x8(op)),
        16 => looped!(groups, x16(op)),
        32 => looped!(groups, x32(op)),
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
