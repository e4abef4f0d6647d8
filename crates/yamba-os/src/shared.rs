//! Memory shared with processes forked after it was made (MAP_SHARED,
//! anonymous, zeroed by the kernel): how a peer or a worker reports to its
//! parent, and how a parent tells its children to stop.

use crate::OsError;
use std::sync::atomic::AtomicU64;

/// A value of type `T` in a shared anonymous mapping. `T` must be valid
/// when all-zero (atomics, arrays of atomics).
pub struct Shared<T> {
    ptr: *mut T,
}

// SAFETY: T is only reached through shared references to atomics.
unsafe impl<T: Sync> Send for Shared<T> {}
// SAFETY: as for Send: &T is all anyone gets, and T is Sync.
unsafe impl<T: Sync> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// `T` must be valid when all-zero (atomics, arrays of atomics).
    pub fn new_zeroed() -> Result<Shared<T>, OsError> {
        let p = crate::mmap::map_shared(std::mem::size_of::<T>().max(1))?;
        Ok(Shared { ptr: p.cast() })
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the mapping lives as long as self and was zeroed, which
        // is a valid T for the atomics-only types used here.
        unsafe { &*self.ptr }
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping this Shared made and owns; references to it
        // borrow self, so none outlives the drop.
        unsafe { crate::mmap::unmap(self.ptr.cast(), std::mem::size_of::<T>().max(1)) };
    }
}

/// A 4 KiB page shared with forked children, as 512 atomic words: how a
/// child reports timestamps or counters to its parent.
pub struct SharedPage(Shared<[AtomicU64; 512]>);

impl SharedPage {
    pub fn new() -> Result<SharedPage, OsError> {
        Shared::new_zeroed()
            .map(SharedPage)
            .map_err(|e| OsError::SharedPage(Box::new(e)))
    }

    /// Slot `i` (0..512) of the page.
    pub fn slot(&self, i: usize) -> &AtomicU64 {
        assert!(i < 512);
        &self.0[i]
    }
}
