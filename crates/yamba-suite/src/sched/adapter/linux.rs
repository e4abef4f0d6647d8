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
