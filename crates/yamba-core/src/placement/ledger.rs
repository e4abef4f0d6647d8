//! Where and when placed copies were put, for a sampling profiler in the
//! parent process.
//!
//! A sample in a placed copy lies in an anonymous mapping: no file names
//! it. And copies come and go at the same addresses — each block maps its
//! own and unmaps them when it ends, and the next block's mapping lands in
//! the same free range, a copy of another function at an address where
//! one of the last was — so an address names a function only from the
//! time a copy is put there until the next. The profiled child (a fork of
//! the profiler) writes an [`Entry`] for each copy, with the time it was
//! installed, into memory it shares with the parent ([`Ledger`]), before
//! the copy can run; once the child is gone, the profiler reads which
//! function each sample's address copied at the sample's time
//! (`profile::placed`). Writing an entry costs a clock read and a few
//! stores when a block starts, never inside a measured loop; a process
//! that no profiler asked to record writes nothing.

use crate::clock::monotonic_ns;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// What a placed copy is a copy of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The measured code: the loop P'', or a single operation's call.
    Code,
    /// Its dummy loop F, timed beside it.
    Dummy,
}

/// One placed copy: `len` bytes at `start`, copying the function at
/// `source` (the same bytes, relative references re-aimed), installed at
/// `at_ns` on CLOCK_MONOTONIC — the clock the profiler's samples carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Entry {
    pub at_ns: u64,
    pub start: u64,
    pub len: u64,
    pub source: u64,
    /// 1 for a copy of the dummy F, 0 for the measured code (plain
    /// integers: the entry is written by another process).
    pub dummy: u64,
}

impl Entry {
    pub fn role(&self) -> Role {
        if self.dummy == 1 {
            Role::Dummy
        } else {
            Role::Code
        }
    }
}

#[repr(C)]
struct Header {
    /// Entries claimed so far, including those past `capacity`.
    next: AtomicU64,
    capacity: u64,
    /// When the first copy found the ledger full (0: none did).
    full_at_ns: AtomicU64,
}

/// What a ledger holds once its writer is gone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// The entries, in the order they were written.
    pub entries: Vec<Entry>,
    /// Copies that found the ledger full.
    pub unrecorded: u64,
    /// When the first of those was made: from then on an address may
    /// hold a copy the ledger does not know, so no sample from then on
    /// can be named by it.
    pub full_at_ns: Option<u64>,
}

/// Entries shared between a profiler and the child it forks: an
/// anonymous shared mapping, a header and then `capacity` entries.
pub struct Ledger {
    base: *mut Header,
    bytes: usize,
}

/// The ledger this process records its copies in (null: none).
static RECORDING: AtomicPtr<Header> = AtomicPtr::new(std::ptr::null_mut());

impl Ledger {
    /// A ledger for `capacity` entries, shared with children forked after.
    pub fn new(capacity: usize) -> std::io::Result<Ledger> {
        let bytes = std::mem::size_of::<Header>() + capacity * std::mem::size_of::<Entry>();
        // SAFETY: a new shared anonymous mapping; nothing else refers to it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let base = p.cast::<Header>();
        // SAFETY: the mapping is page-aligned, zeroed and large enough for
        // the header; no other process shares it yet.
        unsafe {
            base.write(Header {
                next: AtomicU64::new(0),
                capacity: capacity as u64,
                full_at_ns: AtomicU64::new(0),
            })
        };
        Ok(Ledger { base, bytes })
    }

    /// Makes this process record its copies here: the profiled child,
    /// after the fork, before its work.
    pub fn record_here(&self) {
        RECORDING.store(self.base, Ordering::Release);
    }

    /// What the ledger holds. Read once the writing process is gone (its
    /// exit and the parent's wait order its stores before these loads).
    pub fn recorded(&self) -> Recorded {
        // SAFETY: the header lies at the start of our mapping.
        let h = unsafe { &*self.base };
        let claimed = h.next.load(Ordering::Acquire);
        let kept = claimed.min(h.capacity) as usize;
        // SAFETY: the entries follow the header; `kept` ≤ capacity of them
        // were written (a claimed entry is written before the child exits).
        let entries = unsafe { std::slice::from_raw_parts(entries_of(self.base), kept) };
        let full_at_ns = h.full_at_ns.load(Ordering::Acquire);
        Recorded {
            entries: entries.to_vec(),
            unrecorded: claimed - kept as u64,
            full_at_ns: (full_at_ns > 0).then_some(full_at_ns),
        }
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        // This process stops recording into a ledger that is going away.
        let _ = RECORDING.compare_exchange(
            self.base,
            std::ptr::null_mut(),
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
        // SAFETY: unmapping our own mapping, which nothing refers to now.
        unsafe { libc::munmap(self.base.cast(), self.bytes) };
    }
}

fn entries_of(base: *mut Header) -> *mut Entry {
    // SAFETY: one header past the base stays inside the mapping (it holds
    // the header and the entries); the header's size is a multiple of the
    // entries' alignment.
    unsafe { base.add(1).cast::<Entry>() }
}

/// Records a copy of `len` bytes at `start` of the function at `source`
/// (in `role`), when this process records into a ledger; call it once the
/// copy is installed and before it runs.
pub fn note(start: usize, len: usize, source: usize, role: Role) {
    let h = RECORDING.load(Ordering::Acquire);
    if h.is_null() {
        return;
    }
    let at_ns = monotonic_ns();
    // SAFETY: a non-null RECORDING points at a live ledger's header (a
    // ledger clears it when dropped, and the forked child's copy of the
    // mapping lives until the child exits).
    let h_ref = unsafe { &*h };
    let i = h_ref.next.fetch_add(1, Ordering::AcqRel);
    if i < h_ref.capacity {
        // SAFETY: entry i < capacity lies inside the mapping, and this
        // process alone claimed it.
        unsafe {
            entries_of(h).add(i as usize).write(Entry {
                at_ns,
                start: start as u64,
                len: len as u64,
                source: source as u64,
                dummy: u64::from(role == Role::Dummy),
            })
        };
    } else {
        let _ =
            h_ref
                .full_at_ns
                .compare_exchange(0, at_ns.max(1), Ordering::AcqRel, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forked child's entries reach the parent, in order, with their
    /// times; past the capacity they are counted, not written; a process
    /// not recording writes nothing.
    #[test]
    fn a_forked_childs_copies_reach_the_parent() {
        let ledger = Ledger::new(3).unwrap();
        note(1, 1, 1, Role::Code); // not recording: nothing
        let before = monotonic_ns();
        // SAFETY: the child only stores into the shared mapping and _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            ledger.record_here();
            for k in 0..5usize {
                let role = if k == 1 { Role::Dummy } else { Role::Code };
                note(0x1000 * (k + 1), 64, 0x500 + k, role);
            }
            // SAFETY: leave without running the test harness's handlers.
            unsafe { libc::_exit(0) };
        }
        let mut st = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
        let Recorded {
            entries,
            unrecorded,
            full_at_ns,
        } = ledger.recorded();
        assert_eq!(unrecorded, 2);
        assert!(
            full_at_ns.is_some_and(|t| t >= entries[2].at_ns),
            "{full_at_ns:?}"
        );
        let starts: Vec<u64> = entries.iter().map(|e| e.start).collect();
        assert_eq!(starts, [0x1000, 0x2000, 0x3000]);
        assert_eq!(entries[2].source, 0x502);
        let roles: Vec<Role> = entries.iter().map(Entry::role).collect();
        assert_eq!(roles, [Role::Code, Role::Dummy, Role::Code]);
        assert!(entries.iter().all(|e| e.len == 64 && e.at_ns >= before));
        assert!(entries.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
        assert!(RECORDING.load(Ordering::Acquire).is_null());
    }
}
