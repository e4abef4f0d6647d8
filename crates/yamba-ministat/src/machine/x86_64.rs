//! Debian's ministat on x86-64 (SSE2, no FMA).

/// `AddPoint`'s sums: `sy += a; syy += a * a;` as the machine code does
/// them: `sy` in the destination register (a NaN sum stays), and for
/// `syy` the square in the destination (the square's NaN wins).
pub fn add_point(sum: f64, sum_of_squares: f64, a: f64) -> (f64, f64) {
    (c_add(sum, a), c_add(a * a, sum_of_squares))
}

/// The pooled variance's numerator, `(n_ds - 1) * Var(ds) + (n_rs - 1) *
/// Var(rs)`: two products, each rounded, then their sum.
pub fn pooled_sum(ds_n1: f64, ds_var: f64, rs_n1: f64, rs_var: f64) -> f64 {
    ds_n1 * ds_var + rs_n1 * rs_var
}

/// `(int)x` (`cvttsd2si`): truncated, and `INT_MIN` for NaN or anything
/// out of range.
pub fn to_int(x: f64) -> i32 {
    if x.is_nan() || x >= 2_147_483_648.0 || x <= -2_147_483_649.0 {
        i32::MIN
    } else {
        x as i32
    }
}

/// `a + b` as `addsd` computes it with `a` in the destination register:
/// when both are NaN, the result is `a`, with its sign, which gets
/// printed. Rust's `+` leaves the operand order to the compiler.
fn c_add(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else {
        a + b
    }
}
