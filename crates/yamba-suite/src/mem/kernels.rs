//! The bandwidth kernels (STREAM's read, write, copy, triad, plus
//! non-temporal write and copy) over arrays held in anonymous mappings.
//! Bytes are counted as STREAM counts them: each array element read or
//! written once (the hidden read-for-ownership of a cached store is not
//! counted).

use super::adapter::{nt, Anon, Pages};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// sum += a[i]
    Read,
    /// a[i] = i + c (ordinary, cached stores)
    Write,
    /// b[i] = a[i] (memcpy of each block; blocks are far below glibc's
    /// non-temporal threshold, so ordinary stores)
    Copy,
    /// a[i] = b[i] + s·c[i] (f64)
    Triad,
    /// a[i] = c with non-temporal stores (movntdq)
    WriteNt,
    /// b[i] = a[i] with non-temporal stores
    CopyNt,
}

impl Kernel {
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Read => "read",
            Kernel::Write => "write",
            Kernel::Copy => "copy",
            Kernel::Triad => "triad",
            Kernel::WriteNt => "write_nt",
            Kernel::CopyNt => "copy_nt",
        }
    }

    /// Arrays the kernel touches, each read or written once per element.
    pub fn arrays(self) -> usize {
        match self {
            Kernel::Read | Kernel::Write | Kernel::WriteNt => 1,
            Kernel::Copy | Kernel::CopyNt => 2,
            Kernel::Triad => 3,
        }
    }

    pub fn non_temporal(self) -> bool {
        matches!(self, Kernel::WriteNt | Kernel::CopyNt)
    }

    pub fn copies(self) -> bool {
        matches!(self, Kernel::Copy | Kernel::CopyNt)
    }
}

/// Value of word `i` of a copy's source: known, so the destination can be
/// checked against it.
pub fn pattern(i: usize) -> u64 {
    (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5A5A
}

/// Position-dependent checksum: a word out of place changes it.
pub fn checksum(words: impl Iterator<Item = u64>) -> u64 {
    words.enumerate().fold(0u64, |acc, (i, w)| {
        acc.wrapping_add(w.rotate_left((i % 64) as u32) ^ i as u64)
    })
}

/// The arrays of one kernel, all faulted in before any timing.
pub struct Arrays {
    kernel: Kernel,
    a: Anon,
    b: Option<Anon>,
    c: Option<Anon>,
    /// Words per array.
    pub words: usize,
}

impl Arrays {
    pub fn new(kernel: Kernel, bytes_per_array: usize) -> Result<Arrays, String> {
        let words = (bytes_per_array / 64).max(1) * 8;
        let make = || Anon::new(words * 8, Pages::Base, true);
        let mut a = make()?;
        let b = if kernel.arrays() >= 2 {
            Some(make()?)
        } else {
            None
        };
        let c = if kernel.arrays() >= 3 {
            Some(make()?)
        } else {
            None
        };
        for (i, w) in a.words()[..words].iter_mut().enumerate() {
            *w = pattern(i);
        }
        let mut arr = Arrays {
            kernel,
            a,
            b,
            c,
            words,
        };
        if kernel == Kernel::Triad {
            for x in arr.f64s(1) {
                *x = 1.0;
            }
            for x in arr.f64s(2) {
                *x = 2.0;
            }
        }
        Ok(arr)
    }

    fn slice(m: &mut Anon, words: usize) -> &mut [u64] {
        &mut m.words()[..words]
    }

    fn f64s(&mut self, which: usize) -> &mut [f64] {
        let m = match which {
            0 => &mut self.a,
            1 => self.b.as_mut().unwrap(),
            _ => self.c.as_mut().unwrap(),
        };
        let s = Self::slice(m, self.words);
        // SAFETY: u64 and f64 have the same size and alignment.
        unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut f64, s.len()) }
    }

    /// Bytes one pass over words [lo, hi) moves, as STREAM counts them.
    pub fn bytes(&self, words: usize) -> usize {
        words * 8 * self.kernel.arrays()
    }

    /// Runs the kernel over words [lo, hi) of its arrays.
    #[inline(never)]
    pub fn block(&mut self, lo: usize, hi: usize) -> u64 {
        let n = self.words;
        match self.kernel {
            Kernel::Read => Self::slice(&mut self.a, n)[lo..hi]
                .iter()
                .fold(0u64, |s, &x| s.wrapping_add(x)),
            Kernel::Write => {
                for (i, w) in Self::slice(&mut self.a, n)[lo..hi].iter_mut().enumerate() {
                    *w = (lo + i) as u64;
                }
                0
            }
            Kernel::WriteNt => {
                nt::write(&mut Self::slice(&mut self.a, n)[lo..hi], lo as u64);
                0
            }
            Kernel::Copy | Kernel::CopyNt => {
                let src = &Self::slice(&mut self.a, n)[lo..hi];
                let dst = &mut Self::slice(self.b.as_mut().unwrap(), n)[lo..hi];
                if self.kernel == Kernel::Copy {
                    dst.copy_from_slice(src);
                } else {
                    nt::copy(dst, src);
                }
                0
            }
            Kernel::Triad => {
                let s = std::hint::black_box(3.0f64);
                let b = Self::slice(self.b.as_mut().unwrap(), n)[lo..hi].as_ptr() as *const f64;
                let c = Self::slice(self.c.as_mut().unwrap(), n)[lo..hi].as_ptr() as *const f64;
                let a = &mut self.f64s(0)[lo..hi];
                for (i, x) in a.iter_mut().enumerate() {
                    // SAFETY: b and c have at least hi − lo words from lo.
                    unsafe { *x = *b.add(i) + s * *c.add(i) };
                }
                0
            }
        }
    }

    /// For a copy: whether the destination holds the source's known
    /// pattern (checksum of the destination against the pattern's).
    pub fn copy_verified(&mut self) -> Option<bool> {
        self.copy_verified_to(self.words)
    }

    /// For a copy: whether the first `words` words of the destination hold
    /// the source's pattern and the rest are still zero — what a copy that
    /// has only got that far must have left (a pass over arrays many times
    /// the cache may not finish within a short budget).
    pub fn copy_verified_to(&mut self, words: usize) -> Option<bool> {
        if !self.kernel.copies() {
            return None;
        }
        let (n, k) = (self.words, words.min(self.words));
        let dst = Self::slice(self.b.as_mut().unwrap(), n);
        let copied = checksum(dst[..k].iter().copied()) == checksum((0..k).map(pattern));
        Some(copied && dst[k..].iter().all(|&w| w == 0))
    }

    /// For the triad: whether every element is b + 3·c = 7.
    pub fn triad_verified(&mut self) -> Option<bool> {
        self.triad_verified_to(self.words)
    }

    /// For the triad: whether the first `words` elements are b + 3·c = 7
    /// and the rest still hold their initial pattern — what a triad that
    /// has only got that far must have left (as for a copy: a pass over
    /// arrays many times the cache may not finish within a short budget).
    pub fn triad_verified_to(&mut self, words: usize) -> Option<bool> {
        if self.kernel != Kernel::Triad {
            return None;
        }
        let k = words.min(self.words);
        let a = self.f64s(0);
        let done = a[..k].iter().all(|&x| x == 7.0);
        let untouched = a[k..]
            .iter()
            .enumerate()
            .all(|(i, x)| x.to_bits() == pattern(k + i));
        Some(done && untouched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_check_fails_unless_every_word_was_moved() {
        let mut a = Arrays::new(Kernel::Copy, 64 << 10).unwrap();
        assert_eq!(a.copy_verified(), Some(false), "nothing copied yet");
        a.block(0, a.words / 2);
        assert_eq!(a.copy_verified(), Some(false), "half copied");
        a.block(a.words / 2, a.words);
        assert_eq!(a.copy_verified(), Some(true));
        a.b.as_mut().unwrap().words()[5] ^= 1;
        assert_eq!(a.copy_verified(), Some(false), "one word corrupted");
        let mut a = Arrays::new(Kernel::Copy, 64 << 10).unwrap();
        a.block(0, a.words / 4);
        assert_eq!(
            a.copy_verified_to(a.words / 4),
            Some(true),
            "the first quarter"
        );
        assert_eq!(a.copy_verified_to(a.words / 2), Some(false), "not half");
        a.block(a.words / 2, a.words / 2 + 8);
        assert_eq!(
            a.copy_verified_to(a.words / 4),
            Some(false),
            "a stray block"
        );
        assert_eq!(a.bytes(a.words), 2 * (64 << 10));
    }

    #[test]
    fn triad_and_nt_copy_compute_what_they_claim() {
        let mut t = Arrays::new(Kernel::Triad, 16 << 10).unwrap();
        assert_eq!(t.triad_verified(), Some(false));
        t.block(0, t.words / 4);
        assert_eq!(t.triad_verified_to(t.words / 4), Some(true), "a quarter");
        assert_eq!(t.triad_verified_to(t.words / 2), Some(false), "not half");
        assert_eq!(t.triad_verified(), Some(false), "not all");
        t.block(t.words / 2, t.words / 2 + 8);
        assert_eq!(
            t.triad_verified_to(t.words / 4),
            Some(false),
            "a stray block"
        );
        t.block(0, t.words);
        assert_eq!(t.triad_verified(), Some(true));
        t.f64s(0)[3] = 7.5;
        assert_eq!(t.triad_verified(), Some(false), "one element wrong");
        if nt::unavailable().is_none() {
            let mut c = Arrays::new(Kernel::CopyNt, 16 << 10).unwrap();
            c.block(0, c.words);
            assert_eq!(c.copy_verified(), Some(true));
        }
    }
}
