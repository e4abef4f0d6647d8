//! The bandwidth kernels (STREAM's read, write, copy, scale, add, triad,
//! non-temporal write and copy, an in-place read-modify-write, and libc's
//! memset and memcpy over a whole array as lmbench's bw_mem bzero and
//! bcopy call them) over arrays held in anonymous mappings. Bytes are
//! counted as STREAM counts them: each array element read or written once
//! (the hidden read-for-ownership of a cached store is not counted), so a
//! copy or an in-place update moves twice its array's bytes.

use super::adapter::{contiguous_share, nt, Anon, Pages};

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
    /// memset(a, 0, whole array): libc picks its own strategy by size
    /// (rep stosb, non-temporal stores beyond its threshold)
    Bzero,
    /// memcpy(b, a, whole array): likewise (glibc's bcopy, memmove and
    /// memcpy are one routine on x86-64)
    Bcopy,
    /// a[i] += 1: each word read and written back in place
    Rdwr,
    /// c[i] = a[i] + b[i] (f64, STREAM add)
    Add,
    /// b[i] = s·a[i] (f64, STREAM scale)
    Scale,
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
            Kernel::Bzero => "bzero",
            Kernel::Bcopy => "bcopy",
            Kernel::Rdwr => "rdwr",
            Kernel::Add => "add",
            Kernel::Scale => "scale",
        }
    }

    /// Arrays the kernel touches.
    pub fn arrays(self) -> usize {
        match self {
            Kernel::Read | Kernel::Write | Kernel::WriteNt | Kernel::Bzero | Kernel::Rdwr => 1,
            Kernel::Copy | Kernel::CopyNt | Kernel::Bcopy | Kernel::Scale => 2,
            Kernel::Triad | Kernel::Add => 3,
        }
    }

    /// Element accesses per index, each a read or a write of 8 bytes: the
    /// arrays, except in-place read-modify-write (one array, two accesses).
    pub fn accesses(self) -> usize {
        match self {
            Kernel::Rdwr => 2,
            k => k.arrays(),
        }
    }

    /// One libc call over the whole array, not a loop over blocks.
    pub fn whole_array(self) -> bool {
        matches!(self, Kernel::Bzero | Kernel::Bcopy)
    }

    /// Whether the result of a pass can be checked against known values.
    pub fn verifiable(self) -> bool {
        !matches!(self, Kernel::Read | Kernel::Write | Kernel::WriteNt)
    }

    pub fn non_temporal(self) -> bool {
        matches!(self, Kernel::WriteNt | Kernel::CopyNt)
    }

    pub fn copies(self) -> bool {
        matches!(self, Kernel::Copy | Kernel::CopyNt | Kernel::Bcopy)
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
        if kernel == Kernel::Add {
            arr.f64s(0).fill(1.0);
            arr.f64s(1).fill(2.0);
        }
        if kernel == Kernel::Scale {
            arr.f64s(0).fill(2.0);
        }
        Ok(arr)
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The least share, over the arrays, of neighbouring pages that are
    /// neighbours in physical memory too ([`contiguous_share`]: streaming
    /// over scattered base pages is slower); `None` where frame numbers
    /// cannot be read (without root).
    pub fn contiguous_share(&self) -> Option<f64> {
        [Some(&self.a), self.b.as_ref(), self.c.as_ref()]
            .into_iter()
            .flatten()
            .map(|m| contiguous_share(m.as_ptr(), self.words * 8).ok().flatten())
            .try_fold(1.0f64, |least, s| s.map(|s| least.min(s)))
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

    /// Bytes one pass over `words` words moves, as STREAM counts them.
    pub fn bytes(&self, words: usize) -> usize {
        words * 8 * self.kernel.accesses()
    }

    /// Runs the kernel over words [lo, hi) of its arrays.
    #[inline(never)]
    pub fn block(&mut self, lo: usize, hi: usize) -> u64 {
        let n = self.words;
        match self.kernel {
            Kernel::Read => {
                // Eight sums, a 64-byte line an iteration (four 16-byte
                // loads): with one line's loop of two loads a cycle, the
                // rate hung on where the loop fell — 110 GB/s in L1 with
                // it inside one 64-byte line of code, 58 across two (Zen 4).
                let words = &Self::slice(&mut self.a, n)[lo..hi];
                let lines = words.chunks_exact(8);
                let rest = lines.remainder();
                let mut acc = [0u64; 8];
                for line in lines {
                    for (a, &w) in acc.iter_mut().zip(line) {
                        *a = a.wrapping_add(w);
                    }
                }
                acc.iter().chain(rest).fold(0u64, |s, &x| s.wrapping_add(x))
            }
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
            Kernel::Bzero => {
                let a = &mut Self::slice(&mut self.a, n)[lo..hi];
                // SAFETY: a is valid for its length in bytes.
                unsafe { libc::memset(a.as_mut_ptr().cast(), 0, a.len() * 8) };
                0
            }
            Kernel::Bcopy => {
                let src = Self::slice(&mut self.a, n)[lo..hi].as_ptr();
                let dst = &mut Self::slice(self.b.as_mut().unwrap(), n)[lo..hi];
                // SAFETY: two distinct mappings, each valid for hi − lo words.
                unsafe { libc::memcpy(dst.as_mut_ptr().cast(), src.cast(), dst.len() * 8) };
                0
            }
            Kernel::Rdwr => {
                for w in &mut Self::slice(&mut self.a, n)[lo..hi] {
                    *w = w.wrapping_add(1);
                }
                0
            }
            Kernel::Add => {
                let a = Self::slice(&mut self.a, n)[lo..hi].as_ptr() as *const f64;
                let b = Self::slice(self.b.as_mut().unwrap(), n)[lo..hi].as_ptr() as *const f64;
                let c = &mut self.f64s(2)[lo..hi];
                for (i, x) in c.iter_mut().enumerate() {
                    // SAFETY: a and b have at least hi − lo words from lo.
                    unsafe { *x = *a.add(i) + *b.add(i) };
                }
                0
            }
            Kernel::Scale => {
                let s = std::hint::black_box(3.0f64);
                let a = Self::slice(&mut self.a, n)[lo..hi].as_ptr() as *const f64;
                let b = &mut self.f64s(1)[lo..hi];
                for (i, x) in b.iter_mut().enumerate() {
                    // SAFETY: a has at least hi − lo words from lo.
                    unsafe { *x = s * *a.add(i) };
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

    /// Whether the arrays hold what `blocks_done` blocks of `block_words`
    /// words, processed in order from the first and wrapping around, must
    /// have left; None for kernels whose result cannot be checked.
    pub fn verify(&mut self, blocks_done: u64, block_words: usize) -> Option<bool> {
        let bw = block_words.max(1);
        let blocks = (self.words / bw).max(1) as u64;
        // Words processed at least once, as a prefix.
        let prefix = bw * blocks_done.min(blocks) as usize;
        if blocks_done == 0 && self.kernel.verifiable() {
            return Some(false); // nothing done: nothing to vouch for
        }
        match self.kernel {
            Kernel::Copy | Kernel::CopyNt | Kernel::Bcopy => self.copy_verified_to(prefix),
            // A pass cut short by the budget leaves the rest untouched (on
            // the emulated arm64 system 222 of 2048 blocks).
            Kernel::Triad => self.triad_verified_to(prefix),
            Kernel::Bzero => Some(Self::slice(&mut self.a, prefix).iter().all(|&w| w == 0)),
            Kernel::Rdwr => {
                let (full, extra) = (blocks_done / blocks, blocks_done % blocks);
                let n = self.words;
                let a = Self::slice(&mut self.a, n);
                Some(a.iter().enumerate().all(|(i, &w)| {
                    let times = full + u64::from(((i / bw) as u64) < extra);
                    w == pattern(i).wrapping_add(times)
                }))
            }
            Kernel::Add => {
                let c = self.f64s(2);
                Some(c[..prefix].iter().all(|&x| x == 3.0) && c[prefix..].iter().all(|&x| x == 0.0))
            }
            Kernel::Scale => {
                let b = self.f64s(1);
                Some(b[..prefix].iter().all(|&x| x == 6.0) && b[prefix..].iter().all(|&x| x == 0.0))
            }
            Kernel::Read | Kernel::Write | Kernel::WriteNt => None,
        }
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

    /// Known work for the kernels lmbench and STREAM add: the result of a
    /// known number of blocks is checked, a corrupted word or a block
    /// short fails the check, and the bytes counted are the accesses made.
    #[test]
    fn new_kernels_leave_what_their_blocks_must_have_left() {
        let words = |a: &Arrays| a.words;
        for k in [Kernel::Bzero, Kernel::Bcopy] {
            let mut a = Arrays::new(k, 64 << 10).unwrap();
            assert_eq!(a.verify(0, a.words), Some(false), "{k:?}: nothing done");
            let n = words(&a);
            a.block(0, n);
            assert_eq!(a.verify(1, n), Some(true), "{k:?}");
            let which = if k == Kernel::Bzero {
                &mut a.a
            } else {
                a.b.as_mut().unwrap()
            };
            which.words()[17] ^= 4;
            assert_eq!(a.verify(1, n), Some(false), "{k:?}: one word changed");
        }
        // rdwr: 5 blocks of 4, over 2 blocks of the array: block 0 three
        // times, block 1 twice; a sixth block breaks it.
        let mut r = Arrays::new(Kernel::Rdwr, 64 << 10).unwrap();
        let half = r.words / 2;
        for b in 0..5 {
            let lo = (b % 2) * half;
            r.block(lo, lo + half);
        }
        assert_eq!(r.verify(5, half), Some(true));
        assert_eq!(r.verify(4, half), Some(false));
        r.block(0, half);
        assert_eq!(r.verify(5, half), Some(false));
        assert_eq!(r.bytes(r.words), 2 * (64 << 10), "read + written");
        for (k, want) in [
            (Kernel::Add, 3 * (64 << 10)),
            (Kernel::Scale, 2 * (64 << 10)),
        ] {
            let mut a = Arrays::new(k, 64 << 10).unwrap();
            let q = a.words / 4;
            a.block(0, q);
            assert_eq!(a.verify(1, q), Some(true), "{k:?}: the first quarter");
            assert_eq!(a.verify(2, q), Some(false), "{k:?}: not half");
            a.block(q, a.words);
            assert_eq!(a.verify(4, q), Some(true), "{k:?}: all");
            assert_eq!(a.bytes(a.words), want, "{k:?}");
        }
        assert_eq!(Arrays::new(Kernel::Read, 4096).unwrap().verify(9, 8), None);
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
