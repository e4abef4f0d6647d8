//! Linux: pipes, FIFOs, UNIX sockets, eventfd, futex, POSIX message
//! queues, shared memory, fork, and the kernel's switch counts and CPU
//! times from /proc.

use std::io;
use std::sync::atomic::AtomicU32;

use super::CpuTimes;

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
        attr.mq_msgsize = msgsize as libc::c_long;
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

/// Time CPU `cpu` has been busy (not idle or iowait), the part of it the
/// hypervisor took (steal), and its total time, in ns, from /proc/stat
/// (USER_HZ resolution, usually 10 ms).
pub fn cpu_busy_ns(cpu: usize) -> Option<CpuTimes> {
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
    Some(CpuTimes {
        busy_ns: (total - v[3] - v[4]) * tick,
        steal_ns: v[7] * tick,
        total_ns: total * tick,
    })
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

/// FUTEX_WAIT_PRIVATE (a word of this process only, as a thread lock's):
/// sleeps while `*word == expected`. 0 when woken, -1 otherwise (EAGAIN:
/// the word had changed; EINTR).
#[inline]
pub fn futex_wait_private(word: &AtomicU32, expected: u32) -> i64 {
    // SAFETY: word is a valid, aligned u32 for the whole call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        ) as i64
    }
}

/// FUTEX_WAKE_PRIVATE one waiter; returns how many were woken (0 or 1).
#[inline]
pub fn futex_wake_private(word: &AtomicU32) -> i64 {
    // SAFETY: word is a valid, aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        ) as i64
    }
}

/// A set of System V semaphores (semget IPC_PRIVATE), all 0 at first,
/// removed when dropped (IPC_RMID) — by the process that made it; a forked
/// peer leaves with `exit_now`, which runs no destructor.
pub struct SysvSems {
    id: i32,
}

impl SysvSems {
    pub fn new(count: usize) -> Result<SysvSems, String> {
        // SAFETY: no pointer arguments.
        let id = unsafe {
            libc::semget(
                libc::IPC_PRIVATE,
                count as i32,
                libc::IPC_CREAT | libc::IPC_EXCL | 0o600,
            )
        };
        let id = check(id, "semget(IPC_PRIVATE)").map_err(|e| {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::ENOSYS) => "System V semaphores are not in this kernel (ENOSYS)".into(),
                _ => e,
            }
        })?;
        let sems = SysvSems { id };
        for i in 0..count {
            check(
                // SAFETY: SETVAL takes an int as its fourth argument.
                unsafe { libc::semctl(id, i as i32, libc::SETVAL, 0) },
                "semctl(SETVAL)",
            )?;
        }
        Ok(sems)
    }

    /// One semop(2) of several operations done atomically, all or none:
    /// (semaphore, change). Blocks while a decrement would go below 0.
    /// False on error.
    #[inline]
    pub fn op(&self, ops: &[(u16, i16)]) -> bool {
        let mut buf = [libc::sembuf {
            sem_num: 0,
            sem_op: 0,
            sem_flg: 0,
        }; 4];
        for (b, &(n, o)) in buf.iter_mut().zip(ops) {
            b.sem_num = n;
            b.sem_op = o;
        }
        // SAFETY: buf holds ops.len() (≤ 4) valid sembufs.
        unsafe { libc::semop(self.id, buf.as_mut_ptr(), ops.len().min(4)) == 0 }
    }

    /// The semaphore's value (semctl GETVAL).
    pub fn value(&self, sem: u16) -> Option<i32> {
        // SAFETY: GETVAL takes no fourth argument.
        let v = unsafe { libc::semctl(self.id, sem as i32, libc::GETVAL) };
        (v >= 0).then_some(v)
    }
}

impl Drop for SysvSems {
    fn drop(&mut self) {
        // SAFETY: removing our own set; IPC_RMID takes no fourth argument.
        unsafe { libc::semctl(self.id, 0, libc::IPC_RMID) };
    }
}

/// POSIX semaphores (sem_init with pshared = 1) in memory shared with
/// processes forked afterwards, all 0 at first; destroyed and unmapped
/// when dropped.
pub struct PosixSems {
    base: *mut libc::sem_t,
    count: usize,
}

// SAFETY: sem_t is made for concurrent use from several threads and
// processes; the pointer is only used through sem_* calls.
unsafe impl Send for PosixSems {}
// SAFETY: as above.
unsafe impl Sync for PosixSems {}

impl PosixSems {
    pub fn new(count: usize) -> Result<PosixSems, String> {
        let bytes = count * std::mem::size_of::<libc::sem_t>();
        let base = crate::os::map_shared(bytes)?.cast::<libc::sem_t>();
        for i in 0..count {
            // SAFETY: base points to count sem_t's in a fresh shared mapping.
            if unsafe { libc::sem_init(base.add(i), 1, 0) } != 0 {
                let e = io::Error::last_os_error();
                // SAFETY: the fresh mapping above, not handed out.
                unsafe { crate::os::unmap(base.cast(), bytes) };
                return Err(format!("sem_init(pshared): {e}"));
            }
        }
        Ok(PosixSems { base, count })
    }

    #[inline]
    pub fn post(&self, i: usize) -> bool {
        assert!(i < self.count);
        // SAFETY: an initialised semaphore of ours.
        unsafe { libc::sem_post(self.base.add(i)) == 0 }
    }

    /// sem_wait, retried on EINTR; false on another error.
    #[inline]
    pub fn wait(&self, i: usize) -> bool {
        assert!(i < self.count);
        loop {
            // SAFETY: an initialised semaphore of ours.
            if unsafe { libc::sem_wait(self.base.add(i)) } == 0 {
                return true;
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return false;
            }
        }
    }

    /// sem_getvalue.
    pub fn value(&self, i: usize) -> Option<i32> {
        assert!(i < self.count);
        let mut v = 0;
        // SAFETY: an initialised semaphore of ours; v is a valid int.
        (unsafe { libc::sem_getvalue(self.base.add(i), &mut v) } == 0).then_some(v)
    }
}

impl Drop for PosixSems {
    fn drop(&mut self) {
        for i in 0..self.count {
            // SAFETY: initialised in new; nobody waits on it any more.
            unsafe { libc::sem_destroy(self.base.add(i)) };
        }
        // SAFETY: the mapping new() made; its semaphores are destroyed.
        unsafe {
            crate::os::unmap(
                self.base.cast(),
                self.count * std::mem::size_of::<libc::sem_t>(),
            )
        };
    }
}

/// A pthread mutex of the default type (PTHREAD_MUTEX_INITIALIZER), on
/// the heap so it never moves.
pub struct PthreadMutex {
    m: Box<std::cell::UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be locked from several threads.
unsafe impl Sync for PthreadMutex {}
// SAFETY: as above.
unsafe impl Send for PthreadMutex {}

impl PthreadMutex {
    pub fn new() -> Result<PthreadMutex, String> {
        Ok(PthreadMutex {
            m: Box::new(std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER)),
        })
    }

    /// pthread_mutex_lock; false on error.
    #[inline]
    pub fn lock(&self) -> bool {
        // SAFETY: an initialised mutex that does not move.
        unsafe { libc::pthread_mutex_lock(self.m.get()) == 0 }
    }

    /// pthread_mutex_unlock; false on error.
    #[inline]
    pub fn unlock(&self) -> bool {
        // SAFETY: as above; the caller holds it.
        unsafe { libc::pthread_mutex_unlock(self.m.get()) == 0 }
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: unlocked and unused by now.
        unsafe { libc::pthread_mutex_destroy(self.m.get()) };
    }
}
