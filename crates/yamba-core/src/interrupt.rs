//! Ctrl-C, SIGTERM and SIGHUP: stop after the benchmark in progress is
//! killed, keep what finished.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The signal that interrupted, 0 when none (or when set by a test).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signals that end a run as Ctrl-C does.
pub const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs handlers for [`SIGNALS`] that only set a flag (no SA_RESTART,
/// so a waiting poll returns at once).
pub fn install() {
    // SAFETY: the handler only stores to atomics, which is async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        for sig in SIGNALS {
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The signal that interrupted the run, if one did.
pub fn signal() -> Option<libc::c_int> {
    Some(SIGNAL.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// The exit status for an interrupted run: 128 + the signal, as a shell
/// reports a process that signal killed (130 for Ctrl-C, 143 for SIGTERM).
pub fn exit_status() -> i32 {
    128 + signal().unwrap_or(libc::SIGINT)
}

/// For tests: pretend Ctrl-C was pressed (or undo it).
pub fn set_interrupted(v: bool) {
    INTERRUPTED.store(v, Ordering::SeqCst);
}
