//! Linux with glibc: sigaction with SA_SIGINFO handlers that read the
//! kernel's `siginfo_t`, tgkill, sigsuspend, a peer with PR_SET_PDEATHSIG,
//! and mprotect.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub const NAME: &str = "linux-glibc";

/// Signals the counting handler has run for, in this process.
static HANDLED: AtomicU64 = AtomicU64::new(0);
/// Protection faults the fault handler resolved.
static FAULTS: AtomicU64 = AtomicU64::new(0);
/// Address of the page whose faults the fault handler resolves.
static FAULT_PAGE: AtomicUsize = AtomicUsize::new(0);
static PAGE_LEN: AtomicUsize = AtomicUsize::new(4096);

use yamba_os::os_err;
pub(crate) use yamba_os::SharedPage;

extern "C" fn counting_handler(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    HANDLED.fetch_add(1, Ordering::Relaxed);
}

/// Resolves a fault on the registered page by making it accessible and
/// returning, so the faulting instruction restarts and succeeds. Any other
/// fault restores the default action, so a real bug still crashes.
extern "C" fn fault_handler(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let page = FAULT_PAGE.load(Ordering::Relaxed);
    let len = PAGE_LEN.load(Ordering::Relaxed);
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    if page != 0 && addr >= page && addr < page + len {
        // SAFETY: mprotect is async-signal-safe; the page is ours.
        unsafe {
            libc::mprotect(
                page as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        FAULTS.fetch_add(1, Ordering::Relaxed);
    } else {
        // SAFETY: restoring the default action from a handler is allowed.
        unsafe { libc::signal(libc::SIGSEGV, libc::SIG_DFL) };
    }
}

/// Which handler to install.
#[derive(Debug, Clone, Copy)]
pub enum Handler {
    /// Counts each delivery ([`handled`]).
    Counting,
    /// Resolves faults on the [`ProtPage`] ([`faults`]).
    Fault,
}

/// A previously installed action, to put back.
pub struct Saved(libc::c_int, libc::sigaction);

/// The action [`install`] installs.
pub fn action(h: Handler) -> libc::sigaction {
    // SAFETY: a zeroed sigaction is valid; fields are set below.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = match h {
        Handler::Counting => counting_handler as *const () as usize,
        Handler::Fault => fault_handler as *const () as usize,
    };
    act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: sa_mask is a valid sigset_t.
    unsafe { libc::sigemptyset(&mut act.sa_mask) };
    act
}

/// sigaction(2) with a prepared action: the operation `signal.sigaction` times.
#[inline(always)]
pub fn sigaction(sig: libc::c_int, act: &libc::sigaction) -> bool {
    // SAFETY: act is a valid sigaction.
    unsafe { libc::sigaction(sig, act, std::ptr::null_mut()) == 0 }
}

/// Installs `h` for `sig`, returning what was there before.
pub fn install(sig: libc::c_int, h: Handler) -> Result<Saved, String> {
    // SAFETY: old is filled by sigaction.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    let act = action(h);
    // SAFETY: act and old are valid sigaction structs.
    if unsafe { libc::sigaction(sig, &act, &mut old) } != 0 {
        return Err(os_err("sigaction failed"));
    }
    Ok(Saved(sig, old))
}

impl Drop for Saved {
    fn drop(&mut self) {
        // SAFETY: putting back the action sigaction gave us.
        unsafe { libc::sigaction(self.0, &self.1, std::ptr::null_mut()) };
    }
}

/// Whether `sig`'s installed handler is the one `h` installs.
pub fn is_installed(sig: libc::c_int, h: Handler) -> bool {
    // SAFETY: cur is filled by sigaction.
    let mut cur: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a query: cur is a valid sigaction for the kernel to fill.
    let ok = unsafe { libc::sigaction(sig, std::ptr::null(), &mut cur) } == 0;
    ok && cur.sa_sigaction == action(h).sa_sigaction
}

pub fn handled() -> u64 {
    HANDLED.load(Ordering::SeqCst)
}

pub fn reset_handled() {
    HANDLED.store(0, Ordering::SeqCst);
}

pub fn faults() -> u64 {
    FAULTS.load(Ordering::SeqCst)
}

pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

pub fn getpid() -> i32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() }
}

/// tgkill(2): `sig` to one thread. To oneself the handler runs before the
/// call returns (pending signals are delivered on the way out of the kernel).
#[inline(always)]
pub fn send(pid: i32, tid: i32, sig: libc::c_int) -> bool {
    // SAFETY: a plain system call.
    unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, sig) == 0 }
}

/// Blocks `sig` in this thread; the returned guard restores the old mask.
pub fn block(sig: libc::c_int) -> MaskGuard {
    // SAFETY: valid sigset_t values for sigprocmask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let mut waiting = old;
        libc::sigdelset(&mut waiting, sig);
        MaskGuard { old, waiting }
    }
}

/// The mask before [`block`], and the one to wait with.
pub struct MaskGuard {
    old: libc::sigset_t,
    waiting: libc::sigset_t,
}

impl MaskGuard {
    /// sigsuspend(2) with the signal unblocked: sleeps until a handler ran.
    #[inline(always)]
    pub fn suspend(&self) {
        // SAFETY: waiting is a valid sigset_t.
        unsafe { libc::sigsuspend(&self.waiting) };
    }
}

impl Drop for MaskGuard {
    fn drop(&mut self) {
        // SAFETY: restoring the saved mask.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

/// Forks a peer that runs `body` forever (killed by [`kill_and_reap`], or
/// when this process dies: PR_SET_PDEATHSIG). `body` must be async-signal-safe.
pub fn fork_peer<F: FnOnce()>(body: F) -> Result<i32, String> {
    let parent = getpid();
    // SAFETY: the child only runs async-signal-safe code and _exits.
    match unsafe { libc::fork() } {
        -1 => Err(os_err("fork failed")),
        // SAFETY: in the forked child: prctl, getppid and the body, then _exit.
        0 => unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            body();
            libc::_exit(0)
        },
        pid => Ok(pid),
    }
}

pub fn kill_and_reap(pid: i32) {
    // SAFETY: killing and reaping our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

/// One page that the fault handler resolves: [`ProtPage::revoke`] makes it
/// inaccessible, the next touch faults.
pub struct ProtPage {
    ptr: *mut u64,
    len: usize,
}

impl ProtPage {
    pub fn new(len: usize) -> Result<ProtPage, String> {
        let p = crate::os::map_anon(len).map_err(|e| format!("cannot map a page: {e}"))?;
        FAULT_PAGE.store(p as usize, Ordering::SeqCst);
        PAGE_LEN.store(len, Ordering::SeqCst);
        FAULTS.store(0, Ordering::SeqCst);
        Ok(ProtPage { ptr: p.cast(), len })
    }

    /// mprotect(PROT_NONE).
    pub fn revoke(&self) -> bool {
        // SAFETY: our own page.
        unsafe { libc::mprotect(self.ptr.cast(), self.len, libc::PROT_NONE) == 0 }
    }

    /// mprotect(PROT_READ | PROT_WRITE): what the handler does.
    pub fn grant(&self) -> bool {
        // SAFETY: our own page.
        unsafe {
            libc::mprotect(
                self.ptr.cast(),
                self.len,
                libc::PROT_READ | libc::PROT_WRITE,
            ) == 0
        }
    }

    /// The touch: a store that faults while the page is revoked.
    #[inline(always)]
    pub fn store(&self, v: u64) {
        // SAFETY: the page is mapped; a fault is resolved by the handler.
        unsafe { std::ptr::write_volatile(self.ptr, v) }
    }

    pub fn load(&self) -> u64 {
        // SAFETY: as above.
        unsafe { std::ptr::read_volatile(self.ptr) }
    }
}

impl Drop for ProtPage {
    fn drop(&mut self) {
        FAULT_PAGE.store(0, Ordering::SeqCst);
        // SAFETY: the page this ProtPage mapped and owns; the handler no
        // longer looks at it (FAULT_PAGE cleared above).
        unsafe { crate::os::unmap(self.ptr.cast(), self.len) };
    }
}
