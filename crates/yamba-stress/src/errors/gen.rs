//! Arguments for error-test calls: valid objects made fresh for each call
//! (a pipe with data in it, an armed timer, a file), and invalid values of
//! each class the documentation names — an fd that is not open, a pointer
//! to nothing mapped, to a PROT_NONE or read-only page, to kernel space,
//! a size no address space holds, flag bits no call accepts. Each argument
//! keeps a symbolic description (the same in every process, hence in a
//! replay) beside its raw value (which may differ: addresses move).

use crate::rng::Rng;
use crate::sys::{self, errno};
use crate::StressError;
use rand::Rng as _;
use std::ffi::CString;
use yamba_os::OsError;

/// One argument of a call.
#[derive(Debug, Clone)]
pub struct Arg {
    pub name: &'static str,
    pub raw: u64,
    pub desc: String,
}

/// A system call with its arguments.
#[derive(Debug, Clone)]
pub struct Call {
    pub name: &'static str,
    pub nr: libc::c_long,
    pub args: Vec<Arg>,
}

impl Call {
    /// `read(fd=<pipe write end>, buf=<rw buffer>, count=16)`
    pub fn describe(&self) -> String {
        let a: Vec<String> = self
            .args
            .iter()
            .map(|a| format!("{}={}", a.name, a.desc))
            .collect();
        format!("{}({})", self.name, a.join(", "))
    }

    /// `read(5, 0x7f3a…, 16)`
    pub fn raw(&self) -> String {
        let a: Vec<String> = self
            .args
            .iter()
            .map(|a| {
                if a.raw > 0xffff && (a.raw as i64) > 0 {
                    format!("{:#x}", a.raw)
                } else {
                    format!("{}", a.raw as i64)
                }
            })
            .collect();
        format!("{}({})", self.name, a.join(", "))
    }

    /// Makes the call; returns (return value, errno when it is -1).
    pub fn invoke(&self) -> (i64, i32) {
        let mut a = [0u64; 6];
        for (i, arg) in self.args.iter().take(6).enumerate() {
            a[i] = arg.raw;
        }
        // SAFETY: the arguments were built by the case for this call;
        // invalid pointers among them point at nothing we rely on (see
        // `Env`). A process-creating call that unexpectedly succeeds
        // returns 0 in the child, which leaves at once.
        let r = unsafe { libc::syscall(self.nr, a[0], a[1], a[2], a[3], a[4], a[5]) };
        let e = if r == -1 { errno() } else { 0 };
        if r == 0 && self.nr == libc::SYS_clone3 {
            // SAFETY: we are the unexpected child of clone3: leave.
            unsafe { libc::_exit(0) };
        }
        (r as i64, e)
    }
}

/// What a call leaves behind and how to clean it up afterwards.
#[derive(Debug)]
enum Cleanup {
    Close(i32),
    Unmap(usize, usize),
    Unlink(CString),
    Rmdir(CString),
    Reap(i32),
    /// If the call succeeded: close the fds it wrote at this address.
    CloseFdsAt(usize, usize),
    /// If the call succeeded: close the fd it returned.
    CloseReturned,
    /// If the call succeeded: unmap what it returned, of this length.
    UnmapReturned(usize),
    /// If the call succeeded: reap the child it returned.
    ReapReturned,
}

/// What every call of one error-test process can point at.
pub struct Env {
    /// Four read-write pages, zeroed before each call: valid buffers.
    pub rw: usize,
    pub rw_len: usize,
    /// A PROT_NONE page.
    pub none: usize,
    /// A read-only page (holds data, so reads succeed and writes fault).
    pub ro: usize,
    /// Eight read-write pages calls may mprotect, madvise, mremap.
    pub arena: usize,
    pub page: usize,
    /// The process's scratch directory (absolute), and a subdirectory in it.
    pub scratch: String,
    pub pid_max: i64,
    pub nofile: u64,
    /// Whether clone3 exists here (a seccomp filter may hide it).
    pub has_clone3: bool,
}

impl Env {
    pub fn new(scratch: &std::path::Path) -> Result<Env, StressError> {
        let page = sys::page_size();
        let map = |pages: usize, prot: i32| -> Result<usize, OsError> {
            // SAFETY: a fresh anonymous mapping.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    pages * page,
                    prot,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                Err(OsError::last("mmap"))
            } else {
                Ok(p as usize)
            }
        };
        let rw = map(4, libc::PROT_READ | libc::PROT_WRITE)?;
        let none = map(1, libc::PROT_NONE)?;
        let ro = map(1, libc::PROT_READ | libc::PROT_WRITE)?;
        // SAFETY: filling our own page, then making it read-only.
        unsafe {
            std::ptr::write_bytes(ro as *mut u8, 0x5a, page);
            libc::mprotect(ro as *mut libc::c_void, page, libc::PROT_READ);
        }
        let arena = map(8, libc::PROT_READ | libc::PROT_WRITE)?;
        let dir = scratch.join("d");
        std::fs::create_dir_all(&dir).map_err(StressError::create(&dir))?;
        // SAFETY: rlimit64 (64-bit fields on every target) is plain data; all-zero is a valid value.
        let mut rl: libc::rlimit64 = unsafe { std::mem::zeroed() };
        // SAFETY: rl is valid for getrlimit.
        unsafe { libc::getrlimit64(libc::RLIMIT_NOFILE, &mut rl) };
        // SAFETY: clone3 with a null argument and size 0 fails at once
        // (EINVAL), or with ENOSYS where it is not available.
        let probe = unsafe { libc::syscall(libc::SYS_clone3, 0usize, 0usize) };
        let has_clone3 = !(probe == -1 && errno() == libc::ENOSYS);
        // An RT signal whose unexpected delivery does nothing.
        // SAFETY: setting a disposition in this (error-test) process.
        unsafe { libc::signal(ignored_sig(), libc::SIG_IGN) };
        Ok(Env {
            rw,
            rw_len: 4 * page,
            none,
            ro,
            arena,
            page,
            scratch: scratch.to_string_lossy().into_owned(),
            pid_max: sys::pid_max(),
            nofile: rl.rlim_cur,
            has_clone3,
        })
    }
}

/// A real-time signal the error-test process ignores.
pub fn ignored_sig() -> i32 {
    libc::SIGRTMIN() + 10
}

/// Builds one call: draws random values, makes the objects it needs, and
/// remembers what to clean up.
pub struct Gen<'a> {
    pub rng: Rng,
    pub env: &'a Env,
    cleanup: Vec<Cleanup>,
    bump: usize,
    files: u32,
    /// Set by a case that cannot run here (why).
    pub unavailable: Option<&'static str>,
}

impl<'a> Gen<'a> {
    pub fn new(rng: Rng, env: &'a Env) -> Gen<'a> {
        // SAFETY: zeroing our own read-write pages.
        unsafe { std::ptr::write_bytes(env.rw as *mut u8, 0, env.rw_len) };
        Gen {
            rng,
            env,
            cleanup: Vec::new(),
            bump: 0,
            files: 0,
            unavailable: None,
        }
    }

    // ---- plain values -------------------------------------------------

    pub fn int(&self, name: &'static str, v: i64) -> Arg {
        Arg {
            name,
            raw: v as u64,
            desc: v.to_string(),
        }
    }

    pub fn hex(&self, name: &'static str, v: u64) -> Arg {
        Arg {
            name,
            raw: v,
            desc: format!("{v:#x}"),
        }
    }

    pub fn named(&self, name: &'static str, v: i64, what: &str) -> Arg {
        Arg {
            name,
            raw: v as u64,
            desc: what.to_string(),
        }
    }

    /// A random size no address space holds (≥ 2^57).
    pub fn huge(&mut self, name: &'static str) -> Arg {
        let v = self.rng.gen_range((1u64 << 57)..=u64::MAX);
        Arg {
            name,
            raw: v,
            desc: format!("<huge {v:#x}>"),
        }
    }

    /// Random flag bits, at least one of them outside `valid` (within
    /// `space`, the bits the argument can carry).
    pub fn bad_bits(&mut self, name: &'static str, valid: u64, space: u64) -> Arg {
        let invalid = space & !valid;
        let mut v = 0;
        while v & invalid == 0 {
            let bit = 1u64 << self.rng.gen_range(0..64);
            v = (self.rng.gen::<u64>() & invalid & self.rng.gen::<u64>()) | (bit & invalid);
        }
        Arg {
            name,
            raw: v,
            desc: format!("<bad flags {v:#x}>"),
        }
    }

    /// A random subset of `valid`.
    pub fn some_bits(&mut self, name: &'static str, valid: u64) -> Arg {
        let v = self.rng.gen::<u64>() & valid;
        Arg {
            name,
            raw: v,
            desc: format!("{v:#x}"),
        }
    }

    pub fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.rng.gen_range(0..from.len())]
    }

    // ---- fds ----------------------------------------------------------

    /// An fd number that is not open: a free number, a negative one, or
    /// one above any limit.
    pub fn closed_fd(&mut self, name: &'static str) -> Arg {
        match self.rng.gen_range(0..3) {
            0 => {
                let mut fd = self.rng.gen_range(600..1000);
                // SAFETY: F_GETFD only asks.
                while unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
                    fd += 1;
                }
                Arg {
                    name,
                    raw: fd as u64,
                    desc: "<closed fd>".into(),
                }
            }
            1 => {
                let fd = -self.rng.gen_range(1..=i32::MAX as i64);
                Arg {
                    name,
                    raw: fd as i32 as u32 as u64,
                    desc: "<negative fd>".into(),
                }
            }
            _ => {
                let fd = self.rng.gen_range((1 << 21)..i32::MAX);
                Arg {
                    name,
                    raw: fd as u64,
                    desc: "<fd beyond any limit>".into(),
                }
            }
        }
    }

    pub fn fd(&self, name: &'static str, fd: i32, what: &str) -> Arg {
        Arg {
            name,
            raw: fd as u64,
            desc: format!("<{what}>"),
        }
    }

    fn keep(&mut self, fd: i32) -> i32 {
        if fd >= 0 {
            self.cleanup.push(Cleanup::Close(fd));
        }
        fd
    }

    /// A non-blocking pipe; `data` bytes already written into it.
    pub fn pipe(&mut self, data: usize) -> (i32, i32) {
        let mut p = [-1i32; 2];
        // SAFETY: p is a valid 2-int array; writing from a local buffer.
        unsafe {
            libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK);
            if data > 0 {
                let b = [0x42u8; 64];
                libc::write(p[1], b.as_ptr().cast(), data.min(64));
            }
        }
        (self.keep(p[0]), self.keep(p[1]))
    }

    /// An AF_UNIX stream socket pair; `data` bytes waiting at the second end.
    pub fn socketpair(&mut self, data: usize) -> (i32, i32) {
        let mut p = [-1i32; 2];
        // SAFETY: p is a valid 2-int array; writing from a local buffer.
        unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
                p.as_mut_ptr(),
            );
            if data > 0 {
                let b = [0x42u8; 64];
                libc::write(p[0], b.as_ptr().cast(), data.min(64));
            }
        }
        (self.keep(p[0]), self.keep(p[1]))
    }

    pub fn eventfd(&mut self, count: u32) -> i32 {
        // SAFETY: plain system call.
        let fd = unsafe { libc::eventfd(count, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        self.keep(fd)
    }

    pub fn epoll(&mut self) -> i32 {
        // SAFETY: plain system call.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        self.keep(fd)
    }

    /// Registers `fd` with `ep` for input.
    pub fn watch(&mut self, ep: i32, fd: i32) {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: fd as u64,
        };
        // SAFETY: ev is a valid epoll_event.
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) };
    }

    /// A disarmed non-blocking timerfd.
    pub fn timerfd(&mut self) -> i32 {
        // SAFETY: plain system call.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        self.keep(fd)
    }

    /// A fresh path in the scratch directory (nothing there yet), removed afterwards.
    pub fn fresh_path(&mut self) -> String {
        self.files += 1;
        let p = format!("{}/e{}", self.env.scratch, self.files);
        self.cleanup
            .push(Cleanup::Unlink(CString::new(p.clone()).unwrap()));
        p
    }

    /// A regular file with `len` bytes, open with `flags`; removed afterwards.
    pub fn file(&mut self, len: usize, flags: i32) -> (i32, String) {
        let p = self.fresh_path();
        let c = CString::new(p.clone()).unwrap();
        // SAFETY: creating, filling and reopening our own scratch file.
        let fd = unsafe {
            let w = libc::open(
                c.as_ptr(),
                libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
                0o600,
            );
            if w >= 0 && len > 0 {
                let b = vec![0x61u8; len];
                libc::write(w, b.as_ptr().cast(), len);
            }
            if flags == libc::O_RDWR {
                w
            } else {
                libc::close(w);
                libc::open(c.as_ptr(), flags | libc::O_CLOEXEC)
            }
        };
        (self.keep(fd), p)
    }

    /// The scratch directory's subdirectory `d`, opened.
    pub fn dir_fd(&mut self) -> i32 {
        let c = CString::new(format!("{}/d", self.env.scratch)).unwrap();
        // SAFETY: opening our own directory.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        self.keep(fd)
    }

    /// A fresh directory in scratch, removed afterwards.
    pub fn fresh_dir(&mut self) -> String {
        self.files += 1;
        let p = format!("{}/dir{}", self.env.scratch, self.files);
        let c = CString::new(p.clone()).unwrap();
        // SAFETY: creating our own directory.
        unsafe { libc::mkdir(c.as_ptr(), 0o700) };
        self.cleanup.push(Cleanup::Rmdir(c));
        p
    }

    /// A child that has exited and not been reaped (a zombie).
    pub fn zombie(&mut self) -> i32 {
        // SAFETY: the child only exits; waitid with WNOWAIT waits for it
        // to exit without reaping it.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                libc::_exit(0);
            }
            if pid > 0 {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                );
                self.cleanup.push(Cleanup::Reap(pid));
            }
            pid
        }
    }

    // ---- memory -------------------------------------------------------

    /// `len` bytes of the zeroed read-write area (16-byte aligned).
    pub fn alloc(&mut self, len: usize) -> usize {
        let at = self.env.rw + self.bump;
        self.bump = (self.bump + len + 15) & !15;
        assert!(self.bump <= self.env.rw_len, "error-test buffers overflow");
        at
    }

    /// A valid buffer of `len` bytes holding `bytes` at its start.
    pub fn buf(&mut self, name: &'static str, len: usize, bytes: &[u8]) -> Arg {
        let at = self.alloc(len.max(bytes.len()));
        // SAFETY: within the read-write area.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at as *mut u8, bytes.len()) };
        Arg {
            name,
            raw: at as u64,
            desc: "<buffer>".into(),
        }
    }

    /// A valid buffer holding a plain value (a struct).
    pub fn value<T: Copy>(&mut self, name: &'static str, v: T, what: &str) -> Arg {
        let len = std::mem::size_of::<T>();
        let at = self.alloc(len);
        // SAFETY: within the read-write area, room for T, 16-byte aligned.
        unsafe { std::ptr::write(at as *mut T, v) };
        Arg {
            name,
            raw: at as u64,
            desc: format!("<{what}>"),
        }
    }

    /// A pointer the kernel can neither read nor write: null, a low page
    /// nothing maps, a PROT_NONE page, kernel space, or beyond the user
    /// address space.
    pub fn bad_ptr(&mut self, name: &'static str) -> Arg {
        self.bad_ptr_from(name, 0)
    }

    /// As [`Self::bad_ptr`] but never NULL: for arguments where NULL means
    /// "not wanted" (wait4's status, sigaction's act and oldact, …).
    pub fn bad_nonnull_ptr(&mut self, name: &'static str) -> Arg {
        self.bad_ptr_from(name, 1)
    }

    fn bad_ptr_from(&mut self, name: &'static str, first_class: u32) -> Arg {
        let off = self.rng.gen_range(0..64u64) * 8;
        let (raw, desc) = match self.rng.gen_range(first_class..5) {
            0 => (0, "NULL".to_string()),
            1 => {
                let p = self.rng.gen_range(1..15u64) * 4096 + off;
                (p, "<unmapped low page>".to_string())
            }
            2 => (self.env.none as u64 + off, "<PROT_NONE page>".to_string()),
            3 => (
                0xffff_ffff_8000_0000u64 + off * 512,
                "<kernel address>".to_string(),
            ),
            _ => (
                (1u64 << 60) + self.rng.gen_range(0..(1u64 << 40)) * 8,
                "<beyond the user address space>".to_string(),
            ),
        };
        Arg { name, raw, desc }
    }

    /// A pointer the kernel cannot write through: any [`Self::bad_ptr`], or
    /// a read-only page.
    pub fn unwritable_ptr(&mut self, name: &'static str) -> Arg {
        self.unwritable_from(name, 0)
    }

    /// As [`Self::unwritable_ptr`] but never NULL.
    pub fn unwritable_nonnull_ptr(&mut self, name: &'static str) -> Arg {
        self.unwritable_from(name, 1)
    }

    fn unwritable_from(&mut self, name: &'static str, first_class: u32) -> Arg {
        if self.rng.gen_range(0..3) == 0 {
            let off = self.rng.gen_range(0..64u64) * 8;
            Arg {
                name,
                raw: self.env.ro as u64 + off,
                desc: "<read-only page>".into(),
            }
        } else {
            self.bad_ptr_from(name, first_class)
        }
    }

    /// A page-aligned address where nothing is mapped (below mmap_min_addr).
    pub fn unmapped_page(&mut self, name: &'static str) -> Arg {
        let p = self.rng.gen_range(1..15u64) * 4096;
        Arg {
            name,
            raw: p,
            desc: "<unmapped page>".into(),
        }
    }

    /// A page of the arena (page-aligned, read-write).
    pub fn arena_page(&mut self, name: &'static str) -> Arg {
        let i = self.rng.gen_range(0..8) as usize;
        Arg {
            name,
            raw: (self.env.arena + i * self.env.page) as u64,
            desc: "<mapped page>".into(),
        }
    }

    /// An address inside the arena that is not page-aligned.
    pub fn unaligned(&mut self, name: &'static str) -> Arg {
        let i = self.rng.gen_range(0..8) as usize;
        let off = self.rng.gen_range(1..self.env.page);
        Arg {
            name,
            raw: (self.env.arena + i * self.env.page + off) as u64,
            desc: "<unaligned address>".into(),
        }
    }

    pub fn page(&self) -> usize {
        self.env.page
    }

    /// A C string in the read-write area.
    pub fn path(&mut self, name: &'static str, path: &str, what: &str) -> Arg {
        let mut b = path.as_bytes().to_vec();
        b.push(0);
        let a = self.buf(name, b.len(), &b);
        Arg {
            desc: format!("<{what}>"),
            ..a
        }
    }

    // ---- after the call -----------------------------------------------

    pub fn close_fds_at_on_success(&mut self, addr: u64, n: usize) {
        self.cleanup.push(Cleanup::CloseFdsAt(addr as usize, n));
    }

    pub fn close_returned_on_success(&mut self) {
        self.cleanup.push(Cleanup::CloseReturned);
    }

    pub fn unmap_returned_on_success(&mut self, len: usize) {
        self.cleanup.push(Cleanup::UnmapReturned(len));
    }

    pub fn reap_returned_on_success(&mut self) {
        self.cleanup.push(Cleanup::ReapReturned);
    }

    pub fn unmap_after(&mut self, addr: usize, len: usize) {
        self.cleanup.push(Cleanup::Unmap(addr, len));
    }

    /// Undoes everything the call's setup made (and what an unexpected
    /// success made), newest first.
    pub fn finish(mut self, ret: i64) {
        while let Some(c) = self.cleanup.pop() {
            // SAFETY: releasing objects this call's setup created, or the
            // call created; fds/pids/addresses are the ones recorded.
            unsafe {
                match c {
                    Cleanup::Close(fd) => {
                        libc::close(fd);
                    }
                    Cleanup::Unmap(a, l) => {
                        libc::munmap(a as *mut libc::c_void, l);
                    }
                    Cleanup::Unlink(p) => {
                        libc::unlink(p.as_ptr());
                    }
                    Cleanup::Rmdir(p) => {
                        libc::rmdir(p.as_ptr());
                    }
                    Cleanup::Reap(pid) => {
                        let mut st = 0;
                        libc::waitpid(pid, &mut st, libc::WNOHANG);
                    }
                    Cleanup::CloseFdsAt(at, n) if ret >= 0 => {
                        for i in 0..n {
                            let fd = std::ptr::read((at as *const i32).add(i));
                            if fd > 2 {
                                libc::close(fd);
                            }
                        }
                    }
                    Cleanup::CloseReturned if ret > 2 => {
                        libc::close(ret as i32);
                    }
                    Cleanup::UnmapReturned(len) if ret > 0 && ret != -1 => {
                        libc::munmap(ret as usize as *mut libc::c_void, len);
                    }
                    Cleanup::ReapReturned if ret > 0 => {
                        let mut st = 0;
                        libc::waitpid(ret as i32, &mut st, 0);
                    }
                    _ => {}
                }
            }
        }
        // Restore the arena's protection, whatever a call did to it.
        // SAFETY: our own arena mapping.
        unsafe {
            libc::mprotect(
                self.env.arena as *mut libc::c_void,
                8 * self.env.page,
                libc::PROT_READ | libc::PROT_WRITE,
            );
        }
    }
}
