//! C number parsing (`strtod`, `strtol`) as glibc does it in the C locale.
//!
//! ministat accepts a token when `strtod` consumes all of it, so whatever
//! glibc's `strtod` takes (hex floats, `inf`, `nan(...)`, leading blanks)
//! is data, and anything else is "Invalid data". Options go through
//! `strtol`/`strtod` too, with their overflow quirks. These functions
//! return the value and how many bytes were consumed (0: no conversion).

/// C's `isspace` in the C locale.
pub fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `strtod(s, &end)`: the value and the length of the prefix consumed.
pub fn strtod(s: &[u8]) -> (f64, usize) {
    let start = s.iter().take_while(|&&b| is_c_space(b)).count();
    let (negative, body) = match s.get(start) {
        Some(b'-') => (true, start + 1),
        Some(b'+') => (false, start + 1),
        _ => (false, start),
    };
    let parsed = special(&s[body..])
        .or_else(|| hexadecimal(&s[body..]))
        .or_else(|| decimal(&s[body..]));
    match parsed {
        Some((magnitude, len)) => {
            let value = if negative { -magnitude } else { magnitude };
            (value, body + len)
        }
        None => (0.0, 0),
    }
}

/// `strtol(s, &end, 10)`: saturates at the `long` range on overflow, as
/// glibc does (ministat never looks at `errno`).
pub fn strtol(s: &[u8]) -> (i64, usize) {
    let start = s.iter().take_while(|&&b| is_c_space(b)).count();
    let (negative, body) = match s.get(start) {
        Some(b'-') => (true, start + 1),
        Some(b'+') => (false, start + 1),
        _ => (false, start),
    };
    let digits = s[body..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return (0, 0);
    }
    let magnitude = s[body..body + digits].iter().fold(0i128, |acc, &d| {
        (acc * 10 + i128::from(d - b'0')).min(i128::from(i64::MAX) + 1)
    });
    let value = if negative { -magnitude } else { magnitude };
    let value = value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    (value, body + digits)
}

/// `atoi(s)`: `(int)strtol(s, NULL, 10)`, wrapping like the C cast.
pub fn atoi(s: &[u8]) -> i32 {
    strtol(s).0 as i32
}

/// `inf`, `infinity` and `nan`, `nan(n-char-sequence)`, any case.
fn special(s: &[u8]) -> Option<(f64, usize)> {
    let starts =
        |word: &str| s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word.as_bytes());
    if starts("infinity") {
        Some((f64::INFINITY, 8))
    } else if starts("inf") {
        Some((f64::INFINITY, 3))
    } else if starts("nan") {
        let chars = s[3..]
            .iter()
            .skip(1)
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let closed = s.get(3) == Some(&b'(') && s.get(4 + chars) == Some(&b')');
        Some((f64::NAN, if closed { 5 + chars } else { 3 }))
    } else {
        None
    }
}

/// Decimal: digits with an optional point (at least one digit), then an
/// exponent only when it has digits. Rust's parser rounds correctly, as
/// glibc does, so the consumed text is handed to it.
fn decimal(s: &[u8]) -> Option<(f64, usize)> {
    let int_digits = count_digits(s, 0, u8::is_ascii_digit);
    let mut len = int_digits;
    let mut frac_digits = 0;
    if s.get(len) == Some(&b'.') {
        frac_digits = count_digits(s, len + 1, u8::is_ascii_digit);
        len += 1 + frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    len += exponent_len(s, len, b'e');
    let text = std::str::from_utf8(&s[..len]).ok()?;
    Some((text.parse().ok()?, len))
}

/// Hexadecimal: `0x` then hex digits with an optional point (at least one
/// digit), then an optional binary exponent `p±ddd`. Without a hex digit
/// after `0x`, this is not hex and the decimal parser consumes just `0`.
fn hexadecimal(s: &[u8]) -> Option<(f64, usize)> {
    if s.len() < 3 || s[0] != b'0' || !matches!(s[1], b'x' | b'X') {
        return None;
    }
    let int_digits = count_digits(s, 2, u8::is_ascii_hexdigit);
    let int_end = 2 + int_digits;
    let has_point = s.get(int_end) == Some(&b'.');
    let frac_digits = if has_point {
        count_digits(s, int_end + 1, u8::is_ascii_hexdigit)
    } else {
        0
    };
    if int_digits + frac_digits == 0 {
        return None;
    }
    let mut mantissa = HexMantissa::default();
    s[2..int_end].iter().for_each(|&d| mantissa.push(d, false));
    let mut len = int_end;
    if has_point {
        let frac = &s[int_end + 1..int_end + 1 + frac_digits];
        frac.iter().for_each(|&d| mantissa.push(d, true));
        len += 1 + frac_digits;
    }
    let exp_len = exponent_len(s, len, b'p');
    let binary_exponent = if exp_len > 0 {
        parse_exponent(&s[len + 1..len + exp_len])
    } else {
        0
    };
    len += exp_len;
    Some((mantissa.to_f64(binary_exponent), len))
}

fn count_digits(s: &[u8], from: usize, is_digit: fn(&u8) -> bool) -> usize {
    s.get(from..)
        .map_or(0, |rest| rest.iter().take_while(|b| is_digit(b)).count())
}

/// Length of an exponent part (`e±ddd` or `p±ddd`) at `at`, 0 if absent
/// or without digits.
fn exponent_len(s: &[u8], at: usize, marker: u8) -> usize {
    if !s.get(at).is_some_and(|b| b.eq_ignore_ascii_case(&marker)) {
        return 0;
    }
    let signed = matches!(s.get(at + 1), Some(b'+' | b'-'));
    let digits_at = at + 1 + usize::from(signed);
    match count_digits(s, digits_at, u8::is_ascii_digit) {
        0 => 0,
        digits => digits_at + digits - at,
    }
}

/// A signed decimal exponent, clamped far beyond any double's range.
fn parse_exponent(s: &[u8]) -> i64 {
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = digits.iter().fold(0i64, |acc, &d| {
        (acc * 10 + i64::from(d - b'0')).min(1 << 40)
    });
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The first 64 significant bits of a hex mantissa, with a sticky bit for
/// any nonzero digit beyond them, and the power of two they are scaled by.
#[derive(Default)]
struct HexMantissa {
    bits: u64,
    sticky: bool,
    scale: i64,
}

impl HexMantissa {
    fn push(&mut self, digit: u8, fractional: bool) {
        let value = u64::from((digit as char).to_digit(16).expect("hex digit"));
        if self.bits >> 60 == 0 {
            self.bits = self.bits << 4 | value;
            if fractional {
                self.scale -= 4;
            }
        } else {
            self.sticky |= value != 0;
            if !fractional {
                self.scale += 4;
            }
        }
    }

    /// Rounds `bits × 2^(scale + exponent)` to the nearest double, ties to
    /// even, through subnormals and overflow as IEEE 754 prescribes.
    fn to_f64(&self, exponent: i64) -> f64 {
        if self.bits == 0 {
            return 0.0;
        }
        let shift = self.bits.leading_zeros();
        let bits = u128::from(self.bits << shift);
        // The value is bits × 2^(e - 63) with bits in [2^63, 2^64).
        let e = self.scale + exponent - i64::from(shift) + 63;
        if e > 1023 {
            return f64::INFINITY;
        }
        // A double is m × 2^q with m < 2^53 and q >= -1074 (subnormals).
        let q = (e - 52).max(-1074);
        let drop = q - (e - 63);
        if drop > 64 {
            return 0.0;
        }
        let drop = drop as u32;
        let mut m = bits >> drop;
        let rest = bits & ((1u128 << drop) - 1);
        let half = 1u128 << (drop - 1);
        if rest > half || (rest == half && (self.sticky || m & 1 == 1)) {
            m += 1;
        }
        let (m, q) = if m >> 53 != 0 {
            (m >> 1, q + 1)
        } else {
            (m, q)
        };
        let m = m as u64;
        if m < 1 << 52 {
            return f64::from_bits(m);
        }
        let biased = q + 1075;
        if biased >= 2047 {
            return f64::INFINITY;
        }
        f64::from_bits((biased as u64) << 52 | (m - (1 << 52)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use std::ffi::CString;

    fn value(s: &str) -> (f64, usize) {
        strtod(s.as_bytes())
    }

    #[test]
    fn decimal_forms() {
        assert_eq!(value("42"), (42.0, 2));
        assert_eq!(value("  -1.5e3xyz"), (-1500.0, 8));
        assert_eq!(value("+.5"), (0.5, 3));
        assert_eq!(value("5."), (5.0, 2));
        assert_eq!(value("1e"), (1.0, 1));
        assert_eq!(value("1e+"), (1.0, 1));
        assert_eq!(value("1e400"), (f64::INFINITY, 5));
        assert_eq!(value("1e-400"), (0.0, 6));
        assert_eq!(value("."), (0.0, 0));
        assert_eq!(value("-"), (0.0, 0));
        assert_eq!(value(""), (0.0, 0));
        assert_eq!(value("abc"), (0.0, 0));
    }

    #[test]
    fn hex_and_special_forms() {
        assert_eq!(value("0x10"), (16.0, 4));
        assert_eq!(value("0x1p-2"), (0.25, 6));
        assert_eq!(value("0X.8P1"), (1.0, 6));
        assert_eq!(value("0x"), (0.0, 1));
        assert_eq!(value("0xg"), (0.0, 1));
        assert_eq!(value("0x1p"), (1.0, 3));
        assert_eq!(value("-INF"), (f64::NEG_INFINITY, 4));
        assert_eq!(value("infinityx"), (f64::INFINITY, 8));
        assert_eq!(value("infinit"), (f64::INFINITY, 3));
        let (nan, used) = value("-nan(0x1_f)");
        assert!(nan.is_nan() && nan.is_sign_negative() && used == 11);
        assert_eq!(value("nan(").1, 3);
        assert_eq!(value("nan(a b)").1, 3);
    }

    #[test]
    fn strtol_forms() {
        assert_eq!(strtol(b" +12x"), (12, 4));
        assert_eq!(strtol(b"-7"), (-7, 2));
        assert_eq!(strtol(b""), (0, 0));
        assert_eq!(strtol(b"+"), (0, 0));
        assert_eq!(strtol(b"99999999999999999999"), (i64::MAX, 20));
        assert_eq!(strtol(b"-99999999999999999999"), (i64::MIN, 21));
        assert_eq!(atoi(b"4294967370"), 74);
    }

    fn libc_strtod(s: &[u8]) -> (f64, usize) {
        let c = CString::new(s).expect("no NUL in test strings");
        let mut end = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string and a valid end pointer slot.
        let v = unsafe { libc::strtod(c.as_ptr(), &mut end) };
        (v, end as usize - c.as_ptr() as usize)
    }

    fn libc_strtol(s: &[u8]) -> (i64, usize) {
        let c = CString::new(s).expect("no NUL in test strings");
        let mut end = std::ptr::null_mut();
        // SAFETY: as above.
        let v = unsafe { libc::strtol(c.as_ptr(), &mut end, 10) };
        (v, end as usize - c.as_ptr() as usize)
    }

    fn same(a: (f64, usize), b: (f64, usize)) -> bool {
        let bits_equal = a.0.to_bits() == b.0.to_bits();
        let both_nan =
            a.0.is_nan() && b.0.is_nan() && a.0.is_sign_negative() == b.0.is_sign_negative();
        a.1 == b.1 && (bits_equal || both_nan)
    }

    /// Random strings over the characters number syntax is made of, and
    /// random doubles written in decimal and hex, against glibc's strtod.
    #[test]
    fn matches_libc_strtod_and_strtol() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(42);
        let alphabet = b"0123456789000111.eEpPxX+- \tinfatyINFATYn()_abcdef";
        let mut inputs: Vec<Vec<u8>> = (0..300_000)
            .map(|_| {
                let len = rng.gen_range(0..14);
                (0..len)
                    .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                    .collect()
            })
            .collect();
        for _ in 0..100_000 {
            let x = f64::from_bits(rng.gen::<u64>());
            inputs.push(format!("{x:e}").into_bytes());
            inputs.push(format!("{:.3e}", x).into_bytes());
            inputs.push(hex_float(x, rng.gen_range(0..20)).into_bytes());
        }
        for _ in 0..20_000 {
            let digits: String = (0..rng.gen_range(1..40))
                .map(|_| char::from(b'0' + rng.gen_range(0..10)))
                .collect();
            inputs.push(format!("0x{}p-{}", &digits, rng.gen_range(1000..1200)).into_bytes());
            inputs.push(format!("{}e-{}", &digits, rng.gen_range(300..360)).into_bytes());
        }
        for input in &inputs {
            assert!(
                same(strtod(input), libc_strtod(input)),
                "strtod({:?}): ours {:?}, libc {:?}",
                String::from_utf8_lossy(input),
                strtod(input),
                libc_strtod(input)
            );
            assert_eq!(
                strtol(input),
                libc_strtol(input),
                "strtol({:?})",
                String::from_utf8_lossy(input)
            );
        }
    }

    /// `x` in hex with `extra` more (random) hex digits than it needs, so
    /// that rounding of long mantissas is exercised too.
    fn hex_float(x: f64, extra: usize) -> String {
        let bits = x.to_bits();
        let sign = if x.is_sign_negative() { "-" } else { "" };
        let exponent = ((bits >> 52) & 0x7ff) as i64;
        let mantissa = bits & ((1 << 52) - 1);
        let tail: String = (0..extra).map(|i| ['0', '8', 'f', '1'][i % 4]).collect();
        if exponent == 0 {
            format!("{sign}0x0.{mantissa:013x}{tail}p-1022")
        } else {
            format!("{sign}0x1.{mantissa:013x}{tail}p{}", exponent - 1023)
        }
    }

    proptest! {
        #[test]
        fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let (_, used) = strtod(&bytes);
            prop_assert!(used <= bytes.len());
            let (_, used) = strtol(&bytes);
            prop_assert!(used <= bytes.len());
        }
    }
}
