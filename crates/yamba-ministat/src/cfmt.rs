//! C `printf` number formatting, as glibc does it.
//!
//! ministat prints every number with `%g`, `%13.8g` or `%.1f`, and Rust's
//! `{}` formatting differs from C's (no exponent rules, no trailing-zero
//! trimming, `NaN` instead of `nan`). Byte-for-byte output needs C's rules,
//! so they are rebuilt here on top of Rust's correctly rounded `{:.*e}`,
//! which, like glibc, rounds the exact binary value half to even.

/// Formats `x` like C's `printf("%.<precision>g", x)` (no flags).
///
/// A precision of 0 counts as 1, as in C.
pub fn format_g(x: f64, precision: usize) -> String {
    if let Some(special) = non_finite(x) {
        return special.to_string();
    }
    let precision = precision.max(1);
    let (negative, digits, exponent) = decimal_digits(x, precision);
    let body = if exponent < -4 || exponent >= precision as i32 {
        scientific(&digits, exponent)
    } else {
        fixed(&digits, exponent)
    };
    if negative {
        format!("-{body}")
    } else {
        body
    }
}

/// Formats `x` like C's `printf("%<width>.<precision>g", x)`: right-justified
/// in at least `width` columns, never truncated.
pub fn format_g_width(x: f64, width: usize, precision: usize) -> String {
    format!("{:>width$}", format_g(x, precision))
}

/// C's spelling of infinities and NaNs, sign included (`-nan` is common:
/// x86 makes negative NaNs out of invalid operations such as `inf - inf`).
fn non_finite(x: f64) -> Option<&'static str> {
    match (x.is_nan(), x.is_infinite(), x.is_sign_negative()) {
        (true, _, false) => Some("nan"),
        (true, _, true) => Some("-nan"),
        (_, true, false) => Some("inf"),
        (_, true, true) => Some("-inf"),
        _ => None,
    }
}

/// The sign, the `precision` significant digits and the decimal exponent of
/// `x` once correctly rounded, as `%.<precision-1>e` would print them.
fn decimal_digits(x: f64, precision: usize) -> (bool, String, i32) {
    let sci = format!("{:.*e}", precision - 1, x);
    let (mantissa, exponent) = sci
        .split_once('e')
        .expect("Rust's {:e} output always has an exponent");
    let exponent = exponent
        .parse()
        .expect("Rust's {:e} exponent is an integer");
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).map(char::from);
    (x.is_sign_negative(), digits.collect(), exponent)
}

/// `%e` style with `%g`'s trailing-zero trimming: `d.ddde±XX`.
fn scientific(digits: &str, exponent: i32) -> String {
    let mantissa = trim_fraction(&digits[..1], &digits[1..]);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

/// `%f` style with `%g`'s trailing-zero trimming; `exponent` is below the
/// number of digits, so every digit lands in the output.
fn fixed(digits: &str, exponent: i32) -> String {
    if exponent >= 0 {
        let split = exponent as usize + 1;
        trim_fraction(&digits[..split], &digits[split..])
    } else {
        let zeros = "0".repeat(exponent.unsigned_abs() as usize - 1);
        trim_fraction("0", &format!("{zeros}{digits}"))
    }
}

/// Joins integer and fraction digits, dropping trailing zeros of the
/// fraction and the point itself when nothing is left after it.
fn trim_fraction(integer: &str, fraction: &str) -> String {
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        integer.to_string()
    } else {
        format!("{integer}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values() {
        assert_eq!(format_g(0.0, 6), "0");
        assert_eq!(format_g(-0.0, 6), "-0");
        assert_eq!(format_g(1.0, 6), "1");
        assert_eq!(format_g(240.0, 6), "240");
        assert_eq!(format_g(212.2149, 6), "212.215");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(0.00001, 6), "1e-05");
        assert_eq!(format_g(123456.0, 6), "123456");
        assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(format_g(999999.5, 6), "1e+06");
        assert_eq!(format_g(1e100, 6), "1e+100");
        assert_eq!(format_g(-2.5e-300, 6), "-2.5e-300");
        assert_eq!(format_g(5e-324, 6), "4.94066e-324");
    }

    #[test]
    fn width_and_precision() {
        assert_eq!(format_g_width(36105.6, 13, 8), "      36105.6");
        assert_eq!(format_g_width(0.0015165751, 13, 8), " 0.0015165751");
        assert_eq!(format_g_width(0.000547722557505, 13, 8), "0.00054772256");
        assert_eq!(format_g_width(27193155863.8, 13, 8), "2.7193156e+10");
        assert_eq!(format_g_width(41020150.7714, 13, 8), "     41020151");
    }

    #[test]
    fn ties_round_half_even_like_glibc() {
        assert_eq!(format_g(0.5, 0), "0.5");
        assert_eq!(format_g(2.5, 1), "2");
        assert_eq!(format_g(3.5, 1), "4");
        assert_eq!(format_g(0.125, 2), "0.12");
    }

    #[test]
    fn non_finite_values() {
        assert_eq!(format_g(f64::NAN, 6), "nan");
        assert_eq!(format_g(-f64::NAN, 6), "-nan");
        assert_eq!(format_g(f64::INFINITY, 6), "inf");
        assert_eq!(format_g_width(f64::NEG_INFINITY, 13, 8), "         -inf");
    }

    /// Checks against glibc's own `snprintf` on many random bit patterns
    /// and on values near the `%g` style boundaries.
    #[test]
    fn matches_libc_snprintf() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x9e37);
        let mut values: Vec<f64> = (0..200_000)
            .map(|_| f64::from_bits(rng.gen::<u64>()))
            .collect();
        for e in -310..310 {
            let base = 10f64.powi(e);
            for m in [1.0, 0.99999995, 9.9999995, 9.99999949, 5.0, 1.00000005] {
                values.push(base * m);
                values.push(-base * m);
            }
        }
        values.extend((0..100_000).map(|_| rng.gen_range(-1e7..1e7f64).round() / 8.0));
        for x in values {
            for (width, precision) in [(0, 6), (13, 8), (0, 1), (0, 17)] {
                assert_eq!(
                    format_g_width(x, width, precision),
                    libc_g(x, width, precision),
                    "value {x:e} ({:#x}), %{width}.{precision}g",
                    x.to_bits()
                );
            }
        }
    }

    fn libc_g(x: f64, width: usize, precision: usize) -> String {
        let mut buf = [0u8; 512];
        let format = std::ffi::CString::new(format!("%{width}.{precision}g")).unwrap();
        // SAFETY: the buffer is large enough for any %g of a double at these
        // precisions, its length is passed, and the format takes one double.
        let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), format.as_ptr(), x) };
        String::from_utf8(buf[..n as usize].to_vec()).unwrap()
    }
}
