//! The sort ministat gets from glibc's `qsort`.
//!
//! ministat sorts with `qsort` and a comparator that calls NaN equal to
//! everything and -0 equal to 0. With such ties the order that comes out
//! depends on the algorithm, and it shows: the minimum prints as `-0` or
//! `0`, a NaN lands first or last. glibc (2.36, Debian 12) sorts arrays of
//! doubles with a top-down merge sort, reproduced here step by step so
//! that every tie resolves the same way.

use std::cmp::Ordering;

/// ministat's `dbl_cmp`: `<` is less, `>` is greater, anything else
/// (equal, or either side NaN) is a tie.
fn dbl_cmp(a: f64, b: f64) -> Ordering {
    if a < b {
        Ordering::Less
    } else if a > b {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// Sorts like glibc's `msort_with_tmp`: split at `n / 2`, sort both halves,
/// merge taking from the left half on ties.
pub fn glibc_qsort(values: &mut [f64]) {
    let mut scratch = vec![0.0; values.len()];
    merge_sort(values, &mut scratch);
}

fn merge_sort(values: &mut [f64], scratch: &mut [f64]) {
    let n = values.len();
    if n <= 1 {
        return;
    }
    let (left, right) = values.split_at_mut(n / 2);
    merge_sort(left, scratch);
    merge_sort(right, scratch);
    let (mut i, mut j, mut out) = (0, 0, 0);
    while i < left.len() && j < right.len() {
        if dbl_cmp(left[i], right[j]) != Ordering::Greater {
            scratch[out] = left[i];
            i += 1;
        } else {
            scratch[out] = right[j];
            j += 1;
        }
        out += 1;
    }
    // What is left of the right half is already in place; glibc copies
    // back only the merged part and the rest of the left half.
    let rest = left.len() - i;
    scratch[out..out + rest].copy_from_slice(&left[i..]);
    values[..out + rest].copy_from_slice(&scratch[..out + rest]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_plain_numbers() {
        let mut v = vec![3.0, -1.0, 2.5, 1e9, -7.0, 0.0, 2.5];
        glibc_qsort(&mut v);
        assert_eq!(v, vec![-7.0, -1.0, 0.0, 2.5, 2.5, 3.0, 1e9]);
    }

    #[test]
    fn is_stable_for_signed_zeros() {
        let mut v = vec![0.0, -0.0, 1.0];
        glibc_qsort(&mut v);
        assert!(v[0].is_sign_positive() && v[1].is_sign_negative());
        let mut v = vec![-0.0, 0.0, -1.0];
        glibc_qsort(&mut v);
        assert!(v[1].is_sign_negative() && v[2].is_sign_positive());
    }

    /// The real glibc `qsort` with the same comparator must agree, NaNs
    /// and signed zeros included.
    #[test]
    fn matches_libc_qsort() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let pool = [
            f64::NAN,
            -f64::NAN,
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.0,
            f64::INFINITY,
        ];
        for _ in 0..5_000 {
            let len = rng.gen_range(0..40);
            let values: Vec<f64> = (0..len)
                .map(|_| pool[rng.gen_range(0..pool.len())])
                .collect();
            let mut ours = values.clone();
            glibc_qsort(&mut ours);
            let mut theirs = values.clone();
            // SAFETY: a valid, exclusively borrowed array of doubles, its
            // length, the element size and a comparator reading two doubles.
            unsafe {
                libc::qsort(
                    theirs.as_mut_ptr().cast(),
                    theirs.len(),
                    std::mem::size_of::<f64>(),
                    Some(c_dbl_cmp),
                );
            }
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&ours), bits(&theirs), "input {values:?}");
        }
    }

    extern "C" fn c_dbl_cmp(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
        // SAFETY: qsort passes pointers to elements of the double array.
        let (a, b) = unsafe { (*a.cast::<f64>(), *b.cast::<f64>()) };
        dbl_cmp(a, b) as libc::c_int
    }
}
