//! Nothing a run starts outlives it, even when the run is killed with
//! SIGKILL (which no handler sees).
//!
//! Two layers. Each benchmark process asks the kernel to kill it when its
//! parent dies ([`die_with_parent`]: PR_SET_PDEATHSIG, then a check that
//! the parent did not die before the request took effect). And since a
//! benchmark's own helpers (a peer process spinning on shared memory, a
//! forked child) are not the run's children, a small guardian process the
//! run forks once holds the list of benchmark process groups alive; when
//! the run dies, the kernel closes the run's end of the guardian's pipe,
//! and the guardian kills every group still listed, then exits. It sits in
//! `read` the rest of the time, in a process group of its own, deaf to
//! Ctrl-C and hang-ups.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// Asks the kernel to SIGKILL this process when the thread that created it
/// ends, then checks that `parent` is still the parent — had it died
/// between fork and the request, the request would never fire. For a
/// freshly forked child (async-signal-safe: two system calls). Err when
/// the parent is already gone: the child should exit at once.
pub fn die_with_parent(parent: libc::pid_t) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number.
        let r = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != parent {
        return Err(io::Error::other("the parent process is gone"));
    }
    Ok(())
}

/// The run's guardian, started with the first benchmark process.
static GUARDIAN: Mutex<Option<Guardian>> = Mutex::new(None);
/// The descriptor of the run's end of the guardian's pipe (-1: none), for
/// a forked child to close without taking the lock.
static GUARDIAN_FD: AtomicI32 = AtomicI32::new(-1);
/// The guardian's process id (-1: none started).
static GUARDIAN_PID: AtomicI32 = AtomicI32::new(-1);

/// The guardian process this one started, if any: a child that lives as
/// long as this process (callers counting their children leave it out).
pub fn guardian_pid() -> Option<libc::pid_t> {
    Some(GUARDIAN_PID.load(Ordering::Relaxed)).filter(|&p| p > 0)
}

/// In a child forked (not exec'd) from the run: closes its inherited copy
/// of the run's end of the guardian's pipe. Otherwise the child — and every
/// helper it forks — would hold the pipe open after the run died, and the
/// guardian would never learn of it. Async-signal-safe (one close).
pub fn close_inherited() {
    let fd = GUARDIAN_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: closing this process's copy of an inherited descriptor.
        unsafe { libc::close(fd) };
    }
}

/// Most process groups the guardian tracks at once (benchmarks run one at
/// a time; tests run a few side by side).
const SLOTS: usize = 64;

/// The run's end of the guardian's pipe.
struct Guardian {
    tx: std::fs::File,
}

/// Tells the guardian (started on first use) that process group `pgid`
/// must die if this process does. Best effort: when no guardian can be
/// started, the benchmark process's own PDEATHSIG remains.
pub fn watch_group(pgid: libc::pid_t) {
    send(pgid);
}

/// Tells the guardian that group `pgid` is gone (reaped and killed), so
/// that its number, once reused, is never killed.
pub fn forget_group(pgid: libc::pid_t) {
    send(-pgid);
}

fn send(v: libc::pid_t) {
    use std::io::Write;
    let mut g = GUARDIAN.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        if v < 0 {
            return;
        }
        *g = Guardian::start().ok();
    }
    if let Some(guard) = g.as_mut() {
        // Four bytes: one atomic pipe write.
        if guard.tx.write_all(&v.to_ne_bytes()).is_err() {
            GUARDIAN_FD.store(-1, Ordering::Relaxed);
            *g = None;
        }
    }
}

impl Guardian {
    fn start() -> io::Result<Guardian> {
        use std::os::fd::FromRawFd;
        let mut fds = [0i32; 2];
        // SAFETY: fds is a valid 2-element array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the child runs only async-signal-safe system calls
        // (signal, setpgid, close, read, kill, _exit) and never returns.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: both ends were just made by pipe() and are ours alone.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
            return Err(e);
        }
        if pid == 0 {
            // SAFETY: see above.
            unsafe { guard(fds[0], fds[1]) }
        }
        // SAFETY: closing our copy of the read end; fds[1] is owned from here on.
        unsafe { libc::close(fds[0]) };
        GUARDIAN_FD.store(fds[1], Ordering::Relaxed);
        GUARDIAN_PID.store(pid, Ordering::Relaxed);
        Ok(Guardian {
            // SAFETY: fds[1] is an open pipe end nothing else owns.
            tx: unsafe { std::fs::File::from_raw_fd(fds[1]) },
        })
    }
}

/// The guardian's life: collect groups until the run's end of the pipe
/// closes, then kill those still listed.
///
/// # Safety
/// In a freshly forked child only.
unsafe fn guard(rx: i32, tx: i32) -> ! {
    libc::close(tx);
    // Hold nothing of the run's: not its standard streams (a reader of its
    // output waits for their end), nor any other descriptor.
    let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
    if null >= 0 {
        for fd in 0..3 {
            if fd != rx {
                libc::dup2(null, fd);
            }
        }
    }
    #[cfg(target_os = "linux")]
    {
        let top = libc::c_uint::MAX;
        if rx > 3 {
            libc::syscall(libc::SYS_close_range, 3u32, (rx - 1) as u32, 0u32);
        }
        libc::syscall(libc::SYS_close_range, (rx + 1).max(3) as u32, top, 0u32);
    }
    libc::signal(libc::SIGINT, libc::SIG_IGN);
    libc::signal(libc::SIGHUP, libc::SIG_IGN);
    libc::signal(libc::SIGTERM, libc::SIG_IGN);
    libc::setpgid(0, 0);
    let mut groups = [0 as libc::pid_t; SLOTS];
    loop {
        let mut buf = [0u8; 4];
        let n = libc::read(rx, buf.as_mut_ptr().cast(), 4);
        if n == 4 {
            let v = libc::pid_t::from_ne_bytes(buf);
            if v > 0 {
                if let Some(slot) = groups.iter_mut().find(|g| **g == 0) {
                    *slot = v;
                }
            } else if let Some(slot) = groups.iter_mut().find(|g| **g == -v) {
                *slot = 0;
            }
            continue;
        }
        if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        // End of the pipe: the run is gone (or done, with nothing listed).
        for &g in &groups {
            if g > 0 {
                libc::kill(-g, libc::SIGKILL);
            }
        }
        libc::_exit(0);
    }
}
