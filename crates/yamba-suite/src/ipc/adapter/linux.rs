//! Linux: pipes, FIFOs, UNIX sockets, eventfd, futex, POSIX message
//! queues, shared memory, fork, and the kernel's switch counts and CPU
//! times from /proc.

use std::io;
use std::sync::atomic::AtomicU32;

pub const NAME: &str = "linux";

fn check(r: libc::c_int, what: &str) -> Result<libc::c_int, String> {
    if r < 0 {
        Err(format!("{what}: {}", io::Error::last_os_error()))
    } else {
        Ok(r)
    }
}

/// A pipe: (read end, write end), close-on-exec.
pub fn pipe() -> Result<(i32, i32), String> {
    let mut fds = [0i32; 2];
    check(
        // SAFETY: fds is a valid 2-element array.
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) },
        "pipe2",
    )?;
    Ok((fds[0], fds[1]))
}

/// A FIFO (named pipe, lmbench's lat_fifo): (read end, write end), both
/// close-on-exec, its name already gone — made in a private directory
/// (mkdtemp in the temporary directory), opened at both ends, then removed
/// with the directory, so nothing is left behind even if the run dies.
pub fn fifo() -> Result<(i32, i32), String> {
    use std::ffi::{CString, OsString};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut template = std::env::temp_dir()
        .join("yamba-fifo-XXXXXX")
        .into_os_string()
        .into_vec();
    template.push(0);
    // SAFETY: template is NUL-terminated and writable; mkdtemp fills in
    // the X's in place.
    if unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) }.is_null() {
        return Err(format!(
            "mkdtemp in {}: {}",
            std::env::temp_dir().display(),
            io::Error::last_os_error()
        ));
    }
    template.pop();
    let dir = std::path::PathBuf::from(OsString::from_vec(template));
    let path = dir.join("fifo");
    let opened = CString::new(path.as_os_str().as_bytes())
        .map_err(|e| e.to_string())
        .and_then(|c| open_fifo(&c));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir(&dir);
    opened
}

/// Makes the FIFO `path` and opens it: the read end first, non-blocking
/// (it opens at once), so the write end finds a reader and opens too; the
/// read end then blocks again, as a pipe's does.
fn open_fifo(path: &std::ffi::CStr) -> Result<(i32, i32), String> {
    // SAFETY: path is NUL-terminated.
    check(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, "mkfifo")?;
    let r = check(
        // SAFETY: as above.
        unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        },
        "open the FIFO for reading",
    )?;
    let w = check(
        // SAFETY: as above.
        unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) },
        "open the FIFO for writing",
    )
    .inspect_err(|_| close(r))?;
    // SAFETY: r is our descriptor; no pointer arguments.
    let flags = unsafe { libc::fcntl(r, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(r, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        let e = io::Error::last_os_error();
        close(r);
        close(w);
        return Err(format!("fcntl on the FIFO: {e}"));
    }
    Ok((r, w))
}

/// A connected pair of UNIX sockets, stream or datagram.
pub fn socketpair(datagram: bool) -> Result<(i32, i32), String> {
    let kind = if datagram {
        libc::SOCK_DGRAM
    } else {
        libc::SOCK_STREAM
    };
    let mut fds = [0i32; 2];
    check(
        // SAFETY: fds is a valid 2-element array.
        unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                kind | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        },
        "socketpair(AF_UNIX)",
    )?;
    Ok((fds[0], fds[1]))
}

/// An eventfd with counter 0 (blocking reads).
pub fn eventfd() -> Result<i32, String> {
    // SAFETY: no pointer arguments.
    check(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) }, "eventfd")
}

/// A POSIX message queue of one message of `msgsize` bytes, opened for
/// reading and writing and unlinked at once (the descriptor keeps it
/// alive; nothing is left behind in /dev/mqueue). Err says why not.
pub fn mq_anonymous(tag: &str, msgsize: i64) -> Result<i32, String> {
    let name = std::ffi::CString::new(format!("/yamba-{}-{tag}", std::process::id()))
        .map_err(|e| e.to_string())?;
    // SAFETY: attr is zeroed then filled; name is NUL-terminated.
    unsafe {
        let mut attr: libc::mq_attr = std::mem::zeroed();
        attr.mq_maxmsg = 1;
        attr.mq_msgsize = msgsize;
        let q = libc::mq_open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o600 as libc::mode_t,
            &attr as *const libc::mq_attr,
        );
        if q < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ENOSYS) => {
                    "POSIX message queues are not supported by this kernel (ENOSYS)".into()
                }
                _ => format!("mq_open: {e}"),
            });
        }
        libc::mq_unlink(name.as_ptr());
        Ok(q)
    }
}

pub fn close(fd: i32) {
    // SAFETY: closing a descriptor we own.
    unsafe { libc::close(fd) };
}

/// A second descriptor for the same open file (or message queue: on
/// Linux an mqd_t is a descriptor), close-on-exec.
pub fn dup(fd: i32) -> Result<i32, String> {
    // SAFETY: no pointer arguments.
    check(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) }, "dup")
}

/// Writes exactly `buf`; false on error or a short write.
#[inline]
pub fn write_all(fd: i32, buf: &[u8]) -> bool {
    // SAFETY: buf is valid for buf.len() bytes.
    unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) == buf.len() as isize }
}

/// Reads exactly `buf.len()` bytes in one call; false otherwise.
#[inline]
pub fn read_exact(fd: i32, buf: &mut [u8]) -> bool {
    // SAFETY: buf is valid for buf.len() bytes.
    unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) == buf.len() as isize }
}

#[inline]
pub fn mq_send(q: i32, byte: u8) -> bool {
    // SAFETY: one valid byte.
    unsafe { libc::mq_send(q, (&byte as *const u8).cast(), 1, 0) == 0 }
}

/// Receives one message into `buf` (at least the queue's msgsize).
#[inline]
pub fn mq_receive(q: i32, buf: &mut [u8]) -> Option<u8> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n =
        unsafe { libc::mq_receive(q, buf.as_mut_ptr().cast(), buf.len(), std::ptr::null_mut()) };
    (n == 1).then(|| buf[0])
}

/// FUTEX_WAIT (shared: works across processes on a MAP_SHARED word):
/// sleeps while `*word == expected`.
#[inline]
pub fn futex_wait(word: &AtomicU32, expected: u32) -> i64 {
    // SAFETY: word is a valid, aligned u32 for the whole call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        ) as i64
    }
}

/// FUTEX_WAKE one waiter; returns how many were woken.
#[inline]
pub fn futex_wake(word: &AtomicU32) -> i64 {
    // SAFETY: word is a valid, aligned u32.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 1) as i64 }
}

#[inline]
pub fn sched_yield() {
    // SAFETY: no preconditions.
    unsafe { libc::sched_yield() };
}

/// fork(2). Ok(0) in the child, Ok(pid) in the parent.
pub fn fork() -> Result<i32, String> {
    // SAFETY: the child only runs the peer loop and _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    Ok(pid)
}

pub fn exit_now(code: i32) -> ! {
    // SAFETY: ends the (child) process without running the parent's destructors.
    unsafe { libc::_exit(code) }
}

/// Kills and reaps a peer process.
pub fn kill_and_reap(pid: i32) {
    // SAFETY: pid is our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }
}

/// Kernel-counted context switches of the calling thread:
/// (voluntary, involuntary).
pub fn thread_switches() -> (u64, u64) {
    // SAFETY: ru is a valid rusage to fill.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
    }
}

/// Context switches of another process (its main thread), from
/// /proc/<pid>/status: (voluntary, involuntary).
pub fn process_switches(pid: i32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let get = |key: &str| -> Option<u64> {
        s.lines()
            .find(|l| l.starts_with(key))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    Some((
        get("voluntary_ctxt_switches:")?,
        get("nonvoluntary_ctxt_switches:")?,
    ))
}

/// Time CPU `cpu` has been busy (not idle or iowait) and its total
/// time, in ns, from /proc/stat (USER_HZ resolution, usually 10 ms).
pub fn cpu_busy_ns(cpu: usize) -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let name = format!("cpu{cpu}");
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&name))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 8 {
        return None;
    }
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let tick = 1e9 / hz;
    let total: f64 = v.iter().sum();
    Some(((total - v[3] - v[4]) * tick, total * tick))
}

/// CPU time a task has used, in ns (schedstat's first field): of
/// process `pid`'s main thread, or of the calling thread.
pub fn cpu_time_ns(pid: Option<i32>) -> Option<u64> {
    schedstat(pid, 0)
}

fn schedstat(pid: Option<i32>, field: usize) -> Option<u64> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/schedstat"),
        None => "/proc/thread-self/schedstat".into(),
    };
    std::fs::read_to_string(path)
        .ok()?
        .split_whitespace()
        .nth(field)?
        .parse()
        .ok()
}

/// Puts the calling thread (and the processes it forks afterwards) in
/// SCHED_BATCH — no wake-up preemption — or back in SCHED_OTHER.
/// Either needs no privilege. A real-time thread is left as it is
/// (equal-priority SCHED_FIFO tasks do not preempt each other either):
/// Ok(false) then.
pub fn set_batch(batch: bool) -> Result<bool, String> {
    // SAFETY: no arguments but the calling thread.
    let now = unsafe { libc::sched_getscheduler(0) };
    if now == libc::SCHED_FIFO || now == libc::SCHED_RR {
        return Ok(false);
    }
    let policy = if batch {
        libc::SCHED_BATCH
    } else {
        libc::SCHED_OTHER
    };
    // SAFETY: param is a valid sched_param; 0 is the calling thread.
    let r = unsafe {
        let param: libc::sched_param = std::mem::zeroed();
        libc::sched_setscheduler(0, policy, &param)
    };
    check(r, "sched_setscheduler").map(|_| true)
}

/// Time a task has spent runnable but waiting for a CPU, in ns
/// (schedstat's run_delay): of process `pid`'s main thread, or of the
/// calling thread when `pid` is None. None without schedstats.
pub fn run_delay_ns(pid: Option<i32>) -> Option<u64> {
    schedstat(pid, 1)
}
