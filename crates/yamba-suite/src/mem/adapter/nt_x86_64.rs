//! x86-64: movntdq (SSE2) stores, then sfence.

use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_set1_epi64x, _mm_sfence, _mm_stream_si128};

/// Why non-temporal stores cannot be used here, if they cannot.
pub fn unavailable() -> Option<String> {
    if std::arch::is_x86_feature_detected!("sse2") {
        None
    } else {
        Some("CPU lacks SSE2 (movntdq)".into())
    }
}

/// Fills `dst` (16-byte aligned, length a multiple of 2 words) with
/// `value` using movntdq, then fences so the stores are complete when
/// this returns. Callers must have checked [`unavailable`].
pub fn write(dst: &mut [u64], value: u64) {
    assert!((dst.as_ptr() as usize) & 15 == 0 && dst.len() & 1 == 0);
    // SAFETY: sse2 checked by the caller; every store is inside `dst`
    // and 16-byte aligned (asserted above).
    unsafe {
        let v = _mm_set1_epi64x(value as i64);
        let p = dst.as_mut_ptr() as *mut __m128i;
        for i in 0..dst.len() / 2 {
            _mm_stream_si128(p.add(i), v);
        }
        _mm_sfence();
    }
}

/// Copies `src` to `dst` with ordinary loads and movntdq stores.
pub fn copy(dst: &mut [u64], src: &[u64]) {
    assert!(dst.len() == src.len() && dst.len() & 1 == 0);
    assert!((dst.as_ptr() as usize | src.as_ptr() as usize) & 15 == 0);
    // SAFETY: as in `write`; loads stay inside `src`, aligned.
    unsafe {
        let d = dst.as_mut_ptr() as *mut __m128i;
        let s = src.as_ptr() as *const __m128i;
        for i in 0..dst.len() / 2 {
            _mm_stream_si128(d.add(i), _mm_load_si128(s.add(i)));
        }
        _mm_sfence();
    }
}
