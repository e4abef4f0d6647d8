//! Linux with glibc: fork, clone(CLONE_VM | CLONE_VFORK), posix_spawn,
//! execve, pthreads, waitpid, and VmRSS from /proc/self/status.

use std::ffi::CString;

pub const NAME: &str = "linux-glibc";

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

use yamba_os::os_err;
pub(crate) use yamba_os::SharedPage;

/// fork(2) through libc (atfork handlers included, as any program pays);
/// the child runs `child` and `_exit`s with what it returns. `child`
/// must be async-signal-safe: no allocation, no locks.
pub fn fork<F: FnOnce() -> i32>(child: F) -> Result<i32, String> {
    // SAFETY: the child only runs `child` (async-signal-safe by contract)
    // and _exits without unwinding or running destructors.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(os_err("fork failed")),
        0 => {
            let code = child();
            // SAFETY: ends the child at once.
            unsafe { libc::_exit(code) }
        }
        p => Ok(p),
    }
}

/// Waits for `pid` and says how it ended.
pub fn wait(pid: i32) -> Result<Exit, String> {
    let mut status = 0;
    loop {
        // SAFETY: status is a valid int.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(os_err("waitpid failed"));
        }
    }
    if libc::WIFEXITED(status) {
        Ok(Exit::Code(libc::WEXITSTATUS(status)))
    } else {
        Ok(Exit::Signal(libc::WTERMSIG(status)))
    }
}

/// A stack for the vfork child. It runs only `_exit`, so a small one
/// suffices; the parent is suspended while the child uses it.
pub struct VforkStack(Vec<u8>);

impl VforkStack {
    pub fn new() -> VforkStack {
        VforkStack(vec![0u8; 64 * 1024])
    }
}

impl Default for VforkStack {
    fn default() -> Self {
        Self::new()
    }
}

extern "C" fn vfork_child(_: *mut libc::c_void) -> libc::c_int {
    // SAFETY: _exit is async-signal-safe and does not touch the shared memory.
    unsafe { libc::_exit(7) }
}

/// vfork + _exit(7): clone(CLONE_VM | CLONE_VFORK | SIGCHLD), exactly
/// what vfork(2) is, with its own stack so Rust never has to return
/// twice from a function. Returns the child's pid once it has exited
/// (the parent is resumed only then); reap it with [`wait`].
pub fn vfork_exit(stack: &mut VforkStack) -> Result<i32, String> {
    let top = stack.0.as_mut_ptr_range().end as usize & !15;
    // SAFETY: the child runs vfork_child on its own stack and exits;
    // CLONE_VFORK suspends us until then, so nothing races on memory.
    let pid = unsafe {
        libc::clone(
            vfork_child,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::null_mut(),
        )
    };
    if pid < 0 {
        Err(os_err("clone(CLONE_VM|CLONE_VFORK) failed"))
    } else {
        Ok(pid)
    }
}

/// A program to run, prepared before any fork (no allocation after).
pub struct Program {
    path: CString,
    argv: [*const libc::c_char; 2],
    envp: [*const libc::c_char; 1],
}

impl Program {
    pub fn new(path: &str) -> Result<Program, String> {
        let c = CString::new(path).map_err(|_| format!("bad program path {path:?}"))?;
        let mut p = Program {
            path: c,
            argv: [std::ptr::null(); 2],
            envp: [std::ptr::null()],
        };
        p.argv[0] = p.path.as_ptr();
        Ok(p)
    }
}

/// posix_spawn(3) of the program with an empty environment (glibc
/// implements it with clone(CLONE_VM | CLONE_VFORK) and execve).
pub fn spawn(p: &Program) -> Result<i32, String> {
    let mut pid = 0;
    // SAFETY: path, argv and envp are NUL-terminated and outlive the call.
    let r = unsafe {
        libc::posix_spawn(
            &mut pid,
            p.path.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            p.argv.as_ptr() as *const *mut libc::c_char,
            p.envp.as_ptr() as *const *mut libc::c_char,
        )
    };
    if r != 0 {
        return Err(format!(
            "posix_spawn failed: {}",
            std::io::Error::from_raw_os_error(r)
        ));
    }
    Ok(pid)
}

/// fork + execve of the program; the child exits 127 if exec fails.
pub fn fork_exec(p: &Program) -> Result<i32, String> {
    fork(|| {
        // SAFETY: execve with prepared NUL-terminated arrays; on failure
        // the child exits 127.
        unsafe { libc::execve(p.path.as_ptr(), p.argv.as_ptr(), p.envp.as_ptr()) };
        127
    })
}

/// Runs in each created thread: counts that it ran.
extern "C" fn thread_body(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: arg is the &AtomicU64 passed by thread_create_join, alive until join.
    let ran = unsafe { &*(arg as *const std::sync::atomic::AtomicU64) };
    ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::ptr::null_mut()
}

/// pthread_create (default attributes) + pthread_join; the thread adds
/// one to `ran`.
pub fn thread_create_join(ran: &std::sync::atomic::AtomicU64) -> Result<(), String> {
    // SAFETY: t is filled by pthread_create; the argument outlives the
    // thread because we join it before returning.
    unsafe {
        let mut t: libc::pthread_t = std::mem::zeroed();
        let arg = ran as *const _ as *mut libc::c_void;
        let r = libc::pthread_create(&mut t, std::ptr::null(), thread_body, arg);
        if r != 0 {
            return Err(format!(
                "pthread_create failed: {}",
                std::io::Error::from_raw_os_error(r)
            ));
        }
        let r = libc::pthread_join(t, std::ptr::null_mut());
        if r != 0 {
            return Err(format!(
                "pthread_join failed: {}",
                std::io::Error::from_raw_os_error(r)
            ));
        }
    }
    Ok(())
}

/// Anonymous private memory of `bytes`, every page written, backed by
/// base pages (MADV_NOHUGEPAGE) so fork has one PTE per 4 KiB to copy.
pub struct TouchedHeap {
    ptr: *mut u8,
    len: usize,
}

impl TouchedHeap {
    pub fn new(bytes: usize, page: usize) -> Result<TouchedHeap, String> {
        let b = crate::os::map_anon(bytes).map_err(|e| format!("cannot map {bytes} bytes: {e}"))?;
        // SAFETY: advising and writing our own fresh mapping, within its length.
        unsafe {
            libc::madvise(b.cast(), bytes, libc::MADV_NOHUGEPAGE);
            let mut off = 0;
            while off < bytes {
                std::ptr::write_volatile(b.add(off), 1);
                off += page;
            }
            Ok(TouchedHeap { ptr: b, len: bytes })
        }
    }
}

impl Drop for TouchedHeap {
    fn drop(&mut self) {
        // SAFETY: the heap this TouchedHeap mapped and owns.
        unsafe { crate::os::unmap(self.ptr, self.len) };
    }
}

/// The process's resident set (VmRSS), in bytes.
pub fn vm_rss_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// The process's resident anonymous memory (RssAnon), in bytes: what fork
/// copies page table entries of and exit frees (file pages it leaves to
/// fault in again), so what makes one process's fork dearer than
/// another's.
pub fn rss_anon_bytes() -> Option<u64> {
    status_bytes("RssAnon:")
}

/// A size line of /proc/self/status (`FIELD:  N kB`), in bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
