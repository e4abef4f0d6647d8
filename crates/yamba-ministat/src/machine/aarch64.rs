//! Debian's ministat on arm64, as GCC compiled it (`-ffp-contract=fast`
//! is GCC's default: `a * b + c` becomes one `fmadd`).

/// `AddPoint`'s sums: `sy = fadd(sy, a)` (a NaN sum stays) and `syy =
/// fmadd(a, a, syy)`: one rounding, and the addend's NaN wins, then `a`'s.
pub fn add_point(sum: f64, sum_of_squares: f64, a: f64) -> (f64, f64) {
    let sum = if sum.is_nan() { sum } else { sum + a };
    let sum_of_squares = if sum_of_squares.is_nan() {
        sum_of_squares
    } else {
        a.mul_add(a, sum_of_squares)
    };
    (sum, sum_of_squares)
}

/// The pooled variance's numerator: the first product rounded, the second
/// fused with the sum (`fmadd(n_rs - 1, Var(rs), (n_ds - 1) * Var(ds))`).
pub fn pooled_sum(ds_n1: f64, ds_var: f64, rs_n1: f64, rs_var: f64) -> f64 {
    let first = ds_n1 * ds_var;
    if first.is_nan() {
        first
    } else {
        rs_n1.mul_add(rs_var, first)
    }
}

/// `(int)x` (`fcvtzs`): truncated, saturated to the `int` range, and 0 for
/// NaN — what Rust's `as` does.
pub fn to_int(x: f64) -> i32 {
    x as i32
}
