//! Queued real-time signals a worker sends and counts: to itself (handled
//! before `sigqueue` returns, since only its main thread accepts them) and
//! to its child processes, which count what they handle and hand the count
//! back through shared memory when told to exit. Real-time signals queue
//! rather than merge, so every one sent must be handled: a difference is a
//! lost signal.

use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// To the worker itself.
pub fn self_sig() -> i32 {
    libc::SIGRTMIN() + 1
}

/// To a child: count one.
pub fn data_sig() -> i32 {
    libc::SIGRTMIN() + 2
}

/// To a child: publish the count and exit. Numbered above `data_sig`, and
/// blocked while a data signal is handled: the kernel delivers lower
/// real-time signals first, so every data signal queued before it is
/// handled before it.
pub fn exit_sig() -> i32 {
    libc::SIGRTMIN() + 3
}

/// Self-signals handled (in the worker), or data signals handled (in a child).
pub static HANDLED: AtomicU64 = AtomicU64::new(0);
/// The shared counters children publish into, and this child's index there.
pub static CHILD_COUNTS: AtomicPtr<AtomicU64> = AtomicPtr::new(std::ptr::null_mut());
pub static CHILD_SLOT: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_count(_: libc::c_int) {
    HANDLED.fetch_add(1, Ordering::SeqCst);
}

extern "C" fn on_exit(_: libc::c_int) {
    let p = CHILD_COUNTS.load(Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: p points at the worker's shared array of CHILD_SLOTS
        // counters; CHILD_SLOT was set below that before the fork.
        unsafe {
            (*p.add(CHILD_SLOT.load(Ordering::SeqCst)))
                .store(HANDLED.load(Ordering::SeqCst), Ordering::SeqCst)
        };
    }
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(0) };
}

/// Installs the counting handlers (in the worker, before any child is forked).
pub fn install() {
    let h = on_count as extern "C" fn(libc::c_int) as usize;
    crate::sys::set_handler(self_sig(), h, &[]);
    crate::sys::set_handler(data_sig(), h, &[exit_sig()]);
    crate::sys::set_handler(
        exit_sig(),
        on_exit as extern "C" fn(libc::c_int) as usize,
        &[data_sig()],
    );
}

/// The set of the three signals, to block around fork and in pool threads.
pub fn all() -> libc::sigset_t {
    // SAFETY: s is a valid sigset_t for these calls.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in [self_sig(), data_sig(), exit_sig()] {
            libc::sigaddset(&mut s, sig);
        }
        s
    }
}

/// sigqueue(2): queues `sig` for `pid`. Returns the errno on failure.
pub fn queue(pid: i32, sig: i32, value: usize) -> Result<(), i32> {
    let v = libc::sigval {
        sival_ptr: value as *mut libc::c_void,
    };
    // SAFETY: plain system call.
    if unsafe { libc::sigqueue(pid, sig, v) } == 0 {
        Ok(())
    } else {
        Err(crate::sys::errno())
    }
}
