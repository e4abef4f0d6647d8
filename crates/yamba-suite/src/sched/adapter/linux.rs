//! Linux: getrusage(RUSAGE_THREAD) switch counts, a forked child leading a
//! session of its own (an autogroup), and /proc/self/autogroup.

pub const NAME: &str = "linux";

/// Context switches of the calling thread: (voluntary, involuntary).
pub fn thread_switches() -> (u64, u64) {
    // SAFETY: ru is a valid rusage to fill.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
    }
}

/// Runs `f` in a forked child that leads a new session, and so (with
/// CONFIG_SCHED_AUTOGROUP) a scheduling group of its own; returns the
/// child's exit code. `f` reports back through memory from
/// [`map_shared`].
pub fn run_in_new_session<F: FnOnce() -> i32>(f: F) -> Result<i32, String> {
    // SAFETY: the child runs f and _exits; the parent only waits.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            libc::setsid();
            // A new session leaves the benchmark's process group: die with
            // the benchmark instead of outliving a killed run.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(101);
            libc::_exit(code);
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Err(format!("waitpid: {}", std::io::Error::last_os_error()));
            }
        }
        if libc::WIFEXITED(status) {
            Ok(libc::WEXITSTATUS(status))
        } else {
            Err(format!(
                "the child died of signal {}",
                libc::WTERMSIG(status)
            ))
        }
    }
}

/// Raises the calling process's autogroup to nice `nice` (it competes
/// with other sessions' groups by this weight, whatever its threads'
/// own nice values). Needs root or CAP_SYS_NICE; Err says why not.
pub fn set_autogroup_nice(nice: i32) -> Result<(), String> {
    std::fs::write("/proc/self/autogroup", nice.to_string())
        .map_err(|e| format!("cannot set the autogroup's nice to {nice}: {e}"))
}

pub(crate) use crate::os::{map_shared, unmap};

/// CLOCK_MONOTONIC now, in ns (the clock every deadline is set on).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// The calling thread's timer slack in ns (prctl PR_GET_TIMERSLACK).
pub fn timer_slack_ns() -> Option<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer.
    let r = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    (r >= 0).then_some(r as u64)
}

/// Sets the calling thread's timer slack (PR_SET_TIMERSLACK; 0 would mean
/// "back to the default", so 1 ns is the least). Any thread may.
pub fn set_timer_slack_ns(ns: u64) -> Result<(), String> {
    // SAFETY: PR_SET_TIMERSLACK takes a number.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
    if r < 0 {
        return Err(format!(
            "prctl(PR_SET_TIMERSLACK, {ns}): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline_ns` (clock_nanosleep with
/// TIMER_ABSTIME; an interrupted sleep is resumed with the same deadline).
pub fn sleep_until(deadline_ns: u64) -> Result<(), String> {
    let ts = timespec(deadline_ns);
    loop {
        // SAFETY: ts is a valid timespec; no remainder with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        match r {
            0 => return Ok(()),
            libc::EINTR => continue,
            e => {
                return Err(format!(
                    "clock_nanosleep: {}",
                    std::io::Error::from_raw_os_error(e)
                ))
            }
        }
    }
}

/// Sleeps `ns` from now (clock_nanosleep, relative): test only, the
/// planted defect of a relative sleep where an absolute one is meant.
pub fn sleep_for(ns: u64) -> Result<(), String> {
    let ts = timespec(ns);
    // SAFETY: ts is a valid timespec.
    let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
    if r != 0 {
        return Err(format!(
            "clock_nanosleep: {}",
            std::io::Error::from_raw_os_error(r)
        ));
    }
    Ok(())
}

/// A periodic timerfd on CLOCK_MONOTONIC: first expiry at an absolute
/// time (TFD_TIMER_ABSTIME), then every period; closed when dropped.
pub struct PeriodicTimer {
    fd: i32,
}

impl PeriodicTimer {
    pub fn start(first_ns: u64, period_ns: u64) -> Result<PeriodicTimer, String> {
        // SAFETY: no pointer arguments.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(format!(
                "timerfd_create: {}",
                std::io::Error::last_os_error()
            ));
        }
        let t = PeriodicTimer { fd };
        let spec = libc::itimerspec {
            it_interval: timespec(period_ns),
            it_value: timespec(first_ns),
        };
        // SAFETY: spec is a valid itimerspec; no old value asked for.
        let r = unsafe {
            libc::timerfd_settime(fd, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        if r < 0 {
            return Err(format!(
                "timerfd_settime: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(t)
    }

    /// Blocks until the next expiry; the expirations since the last read
    /// (1 unless periods went by unread).
    pub fn wait(&self) -> Result<u64, String> {
        let mut n = 0u64;
        loop {
            // SAFETY: n is 8 writable bytes.
            let r = unsafe { libc::read(self.fd, (&mut n as *mut u64).cast(), 8) };
            if r == 8 {
                return Ok(n);
            }
            let e = std::io::Error::last_os_error();
            if r < 0 && e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(format!("read of the timerfd: {r} bytes, {e}"));
        }
    }
}

impl Drop for PeriodicTimer {
    fn drop(&mut self) {
        // SAFETY: our descriptor.
        unsafe { libc::close(self.fd) };
    }
}

/// SIGALRM from setitimer(ITIMER_REAL), taken synchronously: while it
/// lives, the calling thread blocks SIGALRM and waits for it with
/// sigtimedwait. Dropping it disarms the timer, discards a pending
/// SIGALRM and restores the thread's mask.
pub struct AlarmTimer {
    old_mask: libc::sigset_t,
    set: libc::sigset_t,
    old_action: libc::sigaction,
}

/// SIGALRM's handler while an `AlarmTimer` lives: an alarm delivered to
/// another thread of the process (which does not block it) then does
/// nothing, instead of ending the process; the waiting thread misses it
/// and says so.
extern "C" fn ignore_alarm(_: libc::c_int) {}

impl AlarmTimer {
    pub fn new() -> Result<AlarmTimer, String> {
        // SAFETY: sigset_t's are filled by sigemptyset/sigaddset before use;
        // pthread_sigmask changes only the calling thread's mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old_mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGALRM);
            let mut action: libc::sigaction = std::mem::zeroed();
            let mut old_action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore_alarm as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(libc::SIGALRM, &action, &mut old_action) < 0 {
                return Err(format!("sigaction: {}", std::io::Error::last_os_error()));
            }
            let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old_mask);
            if r != 0 {
                libc::sigaction(libc::SIGALRM, &old_action, std::ptr::null_mut());
                return Err(format!(
                    "pthread_sigmask: {}",
                    std::io::Error::from_raw_os_error(r)
                ));
            }
            Ok(AlarmTimer {
                old_mask,
                set,
                old_action,
            })
        }
    }

    /// Arms a one-shot ITIMER_REAL of `ns` from now (lmbench's lat_usleep
    /// -u itimer re-arms it so after each signal).
    pub fn arm(&self, ns: u64) -> Result<(), String> {
        let v = libc::itimerval {
            it_interval: libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            it_value: libc::timeval {
                tv_sec: (ns / 1_000_000_000) as libc::time_t,
                tv_usec: ((ns % 1_000_000_000) / 1000).max(1) as libc::suseconds_t,
            },
        };
        // SAFETY: v is a valid itimerval; no old value asked for.
        if unsafe { libc::setitimer(libc::ITIMER_REAL, &v, std::ptr::null_mut()) } < 0 {
            return Err(format!("setitimer: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Waits for SIGALRM, at most `timeout_ns`: Ok(true) when it came.
    pub fn wait(&self, timeout_ns: u64) -> Result<bool, String> {
        let ts = timespec(timeout_ns);
        loop {
            // SAFETY: set is initialised; info may be null; ts is valid.
            let r = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &ts) };
            if r == libc::SIGALRM {
                return Ok(true);
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) => return Ok(false),
                Some(libc::EINTR) => continue,
                _ => return Err(format!("sigtimedwait: {e}")),
            }
        }
    }
}

impl Drop for AlarmTimer {
    fn drop(&mut self) {
        let zero = libc::itimerval {
            it_interval: libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            it_value: libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
        };
        let none = timespec(0);
        // SAFETY: disarming our timer, taking a pending SIGALRM if any, and
        // restoring the mask and the handler saved in new().
        unsafe {
            libc::setitimer(libc::ITIMER_REAL, &zero, std::ptr::null_mut());
            libc::sigtimedwait(&self.set, std::ptr::null_mut(), &none);
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut());
            libc::sigaction(libc::SIGALRM, &self.old_action, std::ptr::null_mut());
        }
    }
}
