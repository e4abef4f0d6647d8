//! Creating, using and destroying each kind of object, with the checks
//! each destruction makes (see the module documentation of `churn`).

use super::signals;
use super::{Kind, Worker};
use crate::sys::{self, errno};
use crate::StressError;
use rand::Rng as _;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::Ordering;

/// Child processes one worker can hold (slots in its shared counters).
pub const CHILD_SLOTS: usize = 64;
/// Slices of the backing file, one per live shared mapping.
pub const FILE_SLOTS: usize = 16;
/// Pages per slice of the backing file.
const SLICE_PAGES: usize = 8;
const THREAD_STACK: usize = 256 << 10;

/// One live object and what its destruction will check.
#[derive(Debug)]
pub enum Object {
    Process {
        pid: i32,
        slot: usize,
        sent: u64,
    },
    Thread {
        thread: libc::pthread_t,
        efd: i32,
        stack: usize,
    },
    Pipe {
        r: i32,
        w: i32,
    },
    Socketpair {
        a: i32,
        b: i32,
    },
    Eventfd {
        fd: i32,
        count: u64,
    },
    Epoll {
        fd: i32,
        watched: u32,
    },
    Timerfd {
        fd: i32,
        armed_ns: u64,
        delay_ns: u64,
    },
    MmapAnon {
        addr: usize,
        pages: usize,
        token: u64,
    },
    MmapFile {
        addr: usize,
        slice: usize,
        pages: usize,
        token: u64,
    },
    File {
        fd: i32,
        name: String,
        sum: u64,
        len: usize,
    },
}

impl Object {
    pub fn kind(&self) -> Kind {
        match self {
            Object::Process { .. } => Kind::Process,
            Object::Thread { .. } => Kind::Thread,
            Object::Pipe { .. } => Kind::Pipe,
            Object::Socketpair { .. } => Kind::Socketpair,
            Object::Eventfd { .. } => Kind::Eventfd,
            Object::Epoll { .. } => Kind::Epoll,
            Object::Timerfd { .. } => Kind::Timerfd,
            Object::MmapAnon { .. } => Kind::MmapAnon,
            Object::MmapFile { .. } => Kind::MmapFile,
            Object::File { .. } => Kind::File,
        }
    }

    /// The fds this object holds.
    pub fn fds(&self) -> Vec<i32> {
        match *self {
            Object::Thread { efd, .. } => vec![efd],
            Object::Pipe { r, w } => vec![r, w],
            Object::Socketpair { a, b } => vec![a, b],
            Object::Eventfd { fd, .. }
            | Object::Epoll { fd, .. }
            | Object::Timerfd { fd, .. }
            | Object::File { fd, .. } => vec![fd],
            _ => vec![],
        }
    }

    /// An fd epoll can watch, if the object has one.
    fn pollable(&self) -> Option<i32> {
        match *self {
            Object::Pipe { r, .. } => Some(r),
            Object::Socketpair { a, .. } => Some(a),
            Object::Eventfd { fd, .. } | Object::Timerfd { fd, .. } => Some(fd),
            _ => None,
        }
    }
}

/// Spins for `ns` nanoseconds without a system call.
pub fn spin(ns: u64) {
    let t0 = crate::shared::now_ns();
    let mut x = 1u64;
    while crate::shared::now_ns() - t0 < ns {
        for _ in 0..64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        std::hint::black_box(x);
    }
}

/// The worker's backing file for shared file mappings.
pub fn create_backing(path: &std::path::Path, page: usize) -> Result<(), StressError> {
    let f = std::fs::File::create(path).map_err(StressError::create(path))?;
    f.set_len((FILE_SLOTS * SLICE_PAGES * page) as u64)
        .map_err(|error| StressError::Size {
            path: path.to_path_buf(),
            error,
        })
}

fn close(fd: i32) {
    // SAFETY: closing an fd this worker owns.
    unsafe { libc::close(fd) };
}

fn fd_or_errno(r: i32) -> Result<i32, i32> {
    if r < 0 {
        Err(errno())
    } else {
        Ok(r)
    }
}

/// FNV-1a, to check a file's contents.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Whether [addr, addr+len) has no mapping left (mincore fails with ENOMEM).
fn unmapped(addr: usize, len: usize) -> bool {
    let mut vec = [0u8; 64];
    // SAFETY: mincore only writes len/page bytes into vec (≤ 64 here).
    let r = unsafe { libc::mincore(addr as *mut libc::c_void, len, vec.as_mut_ptr()) };
    r != 0 && errno() == libc::ENOMEM
}

impl Worker<'_> {
    fn token(&self) -> u64 {
        ((self.spec.index as u64) << 48) | (self.op & 0xffff_ffff_ffff) | 1
    }

    pub(super) fn create(&mut self, kind: Kind) -> Result<Object, i32> {
        // SAFETY: (throughout) system calls on memory and fds this worker owns.
        unsafe {
            match kind {
                Kind::Pipe => {
                    let mut p = [0i32; 2];
                    if libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) != 0 {
                        return Err(errno());
                    }
                    Ok(Object::Pipe { r: p[0], w: p[1] })
                }
                Kind::Socketpair => {
                    let ty = [libc::SOCK_STREAM, libc::SOCK_DGRAM, libc::SOCK_SEQPACKET]
                        [self.rng.gen_range(0..3)];
                    let mut p = [0i32; 2];
                    let flags = libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
                    if libc::socketpair(libc::AF_UNIX, ty | flags, 0, p.as_mut_ptr()) != 0 {
                        return Err(errno());
                    }
                    Ok(Object::Socketpair { a: p[0], b: p[1] })
                }
                Kind::Eventfd => {
                    let count = self.rng.gen_range(0..1000u64);
                    let fd = fd_or_errno(libc::eventfd(
                        count as u32,
                        libc::EFD_NONBLOCK | libc::EFD_CLOEXEC,
                    ))?;
                    Ok(Object::Eventfd { fd, count })
                }
                Kind::Epoll => self.create_epoll(),
                Kind::Timerfd => self.create_timerfd(),
                Kind::MmapAnon => self.create_mmap_anon(),
                Kind::MmapFile => self.create_mmap_file(),
                Kind::File => self.create_file(),
                Kind::Thread => self.create_thread(),
                Kind::Process => self.create_process(),
                Kind::Signal | Kind::Cpu => Err(libc::EINVAL),
            }
        }
    }

    /// An epoll instance watching up to 3 of the pool's pollable fds.
    fn create_epoll(&mut self) -> Result<Object, i32> {
        // SAFETY: epoll_create1 takes no pointers.
        let fd = fd_or_errno(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        let candidates: Vec<i32> = self.pool.iter().filter_map(Object::pollable).collect();
        let mut watched = 0;
        if !candidates.is_empty() {
            let n = self.rng.gen_range(0..=3usize.min(candidates.len()));
            let mut chosen: Vec<i32> = Vec::new();
            for _ in 0..n {
                let c = candidates[self.rng.gen_range(0..candidates.len())];
                if !chosen.contains(&c) {
                    chosen.push(c);
                }
            }
            for c in chosen {
                let mut ev = libc::epoll_event {
                    events: libc::EPOLLIN as u32,
                    u64: c as u64,
                };
                // SAFETY: fd is our epoll instance, c a live fd of the pool, ev valid.
                if unsafe { libc::epoll_ctl(fd, libc::EPOLL_CTL_ADD, c, &mut ev) } == 0 {
                    watched += 1;
                } else {
                    let d = format!(
                        "epoll create: epoll_ctl(ADD) of live fd {c} failed: {}",
                        sys::errno_name(errno())
                    );
                    self.violation("data", d);
                }
            }
        }
        Ok(Object::Epoll { fd, watched })
    }

    /// A timerfd armed to fire once, 1–200 µs from now.
    fn create_timerfd(&mut self) -> Result<Object, i32> {
        // SAFETY: timerfd_create takes no pointers.
        let fd = fd_or_errno(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        let delay_ns = self.rng.gen_range(1_000..200_000u64);
        if let Err(e) = arm(fd, delay_ns) {
            close(fd);
            return Err(e);
        }
        Ok(Object::Timerfd {
            fd,
            armed_ns: crate::shared::now_ns(),
            delay_ns,
        })
    }

    /// 1–32 private anonymous pages, each stamped with a token.
    fn create_mmap_anon(&mut self) -> Result<Object, i32> {
        let pages = self.rng.gen_range(1..=32usize);
        // SAFETY: a fresh anonymous mapping, the kernel chooses where.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                pages * self.page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(errno());
        }
        let token = self.token();
        for i in 0..pages {
            // SAFETY: p is the fresh writable mapping of `pages` pages just made.
            unsafe {
                std::ptr::write_volatile(p.cast::<u8>().add(i * self.page).cast::<u64>(), token)
            };
        }
        Ok(Object::MmapAnon {
            addr: p as usize,
            pages,
            token,
        })
    }

    /// 1–SLICE_PAGES pages of a free slice of the backing file, shared,
    /// each stamped with a token.
    fn create_mmap_file(&mut self) -> Result<Object, i32> {
        let slice = self.free_file_slots.pop().ok_or(libc::EAGAIN)?;
        let pages = self.rng.gen_range(1..=SLICE_PAGES);
        let path = CString::new(self.backing.as_os_str().as_bytes()).unwrap();
        // SAFETY: path is NUL-terminated.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            let e = errno();
            self.free_file_slots.push(slice);
            return Err(e);
        }
        // SAFETY: a fresh shared mapping of a file we opened, inside its length.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                pages * self.page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                (slice * SLICE_PAGES * self.page) as libc::off_t,
            )
        };
        let e = errno();
        // The mapping holds the file; the fd is not needed.
        close(fd);
        if p == libc::MAP_FAILED {
            self.free_file_slots.push(slice);
            return Err(e);
        }
        let token = self.token();
        for i in 0..pages {
            // SAFETY: p is the fresh writable mapping of `pages` pages just made.
            unsafe {
                std::ptr::write_volatile(p.cast::<u8>().add(i * self.page).cast::<u64>(), token)
            };
        }
        Ok(Object::MmapFile {
            addr: p as usize,
            slice,
            pages,
            token,
        })
    }

    /// A new file in the worker's folder, open, with 1–16384 random bytes
    /// (their checksum kept).
    fn create_file(&mut self) -> Result<Object, i32> {
        self.file_seq += 1;
        let name = format!("f{}", self.file_seq);
        let path = CString::new(self.spec.scratch.join(&name).as_os_str().as_bytes()).unwrap();
        // SAFETY: path is NUL-terminated.
        let fd = fd_or_errno(unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                0o600,
            )
        })?;
        let len = self.rng.gen_range(1..=16384usize);
        let mut data = vec![0u8; len];
        self.rng.fill(&mut data[..]);
        // SAFETY: data holds len bytes; fd is the file just opened.
        let n = unsafe { libc::pwrite(fd, data.as_ptr().cast(), len, 0) };
        if n != len as isize {
            let e = if n < 0 { errno() } else { libc::EIO };
            close(fd);
            // SAFETY: path is NUL-terminated; the file this call created.
            unsafe { libc::unlink(path.as_ptr()) };
            return Err(e);
        }
        Ok(Object::File {
            fd,
            name,
            sum: fnv(&data),
            len,
        })
    }

    fn create_thread(&mut self) -> Result<Object, i32> {
        // SAFETY: the thread runs `blocked_thread` on a stack mapped here
        // and kept until it is joined; its argument is its own eventfd.
        unsafe {
            let efd = fd_or_errno(libc::eventfd(0, libc::EFD_CLOEXEC))?;
            let stack = libc::mmap(
                std::ptr::null_mut(),
                THREAD_STACK,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if stack == libc::MAP_FAILED {
                let e = errno();
                close(efd);
                return Err(e);
            }
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            libc::pthread_attr_init(&mut attr);
            libc::pthread_attr_setstack(&mut attr, stack, THREAD_STACK);
            // The thread inherits a mask blocking the counted signals, so
            // the worker's self-signals are always handled by its main thread.
            let block = signals::all();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
            let mut t: libc::pthread_t = std::mem::zeroed();
            let e = libc::pthread_create(
                &mut t,
                &attr,
                blocked_thread,
                efd as usize as *mut libc::c_void,
            );
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            libc::pthread_attr_destroy(&mut attr);
            if e != 0 {
                close(efd);
                libc::munmap(stack, THREAD_STACK);
                return Err(e);
            }
            Ok(Object::Thread {
                thread: t,
                efd,
                stack: stack as usize,
            })
        }
    }

    fn create_process(&mut self) -> Result<Object, i32> {
        let slot = self.free_child_slots.pop().ok_or(libc::EAGAIN)?;
        self.child_counts[slot].store(0, Ordering::SeqCst);
        signals::CHILD_SLOT.store(slot, Ordering::SeqCst);
        // SAFETY: the child runs only async-signal-safe calls: it resets
        // its counter with the counted signals blocked (so none is
        // missed), then waits for them until told to exit.
        unsafe {
            let parent = libc::getpid();
            let block = signals::all();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigprocmask(libc::SIG_BLOCK, &block, &mut old);
            let pid = libc::fork();
            if pid == 0 {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(71);
                }
                let _ = libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
                signals::HANDLED.store(0, Ordering::SeqCst);
                let mut waiting = old;
                libc::sigdelset(&mut waiting, signals::data_sig());
                libc::sigdelset(&mut waiting, signals::exit_sig());
                loop {
                    libc::sigsuspend(&waiting);
                }
            }
            let e = errno();
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            if pid < 0 {
                self.free_child_slots.push(slot);
                return Err(e);
            }
            Ok(Object::Process { pid, slot, sent: 0 })
        }
    }

    pub(super) fn use_object(&mut self, i: usize) {
        let now = crate::shared::now_ns();
        let len = self.rng.gen_range(1..=64usize);
        let mut out = [0u8; 64];
        self.rng.fill(&mut out[..len]);
        let page = self.page;
        let pick = self.rng.gen_range(0..32usize);
        let inc = self.rng.gen_range(1..1000u64);
        let problem: Option<String> = match &mut self.pool[i] {
            Object::Pipe { r, w } => round_trip(*w, *r, &out[..len], "pipe"),
            Object::Socketpair { a, b } => round_trip(*a, *b, &out[..len], "socket pair"),
            Object::Eventfd { fd, count } => {
                // SAFETY: writing 8 bytes from a local.
                let n = unsafe { libc::write(*fd, (&inc as *const u64).cast(), 8) };
                if n == 8 {
                    *count += inc;
                    None
                } else {
                    Some(format!(
                        "eventfd write failed: {}",
                        sys::errno_name(errno())
                    ))
                }
            }
            Object::Epoll { fd, watched } => {
                let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 8];
                // SAFETY: evs has room for 8 events.
                let n = unsafe { libc::epoll_pwait(*fd, evs.as_mut_ptr(), 8, 0, std::ptr::null()) };
                (n < 0 || n as u32 > *watched).then(|| {
                    format!(
                        "epoll_wait returned {n} ({}) with {watched} fds watched",
                        sys::errno_name(errno())
                    )
                })
            }
            Object::Timerfd {
                fd,
                armed_ns,
                delay_ns,
            } => {
                let p = expired_check(*fd, *armed_ns, *delay_ns, now);
                if p.is_none() {
                    *armed_ns = now;
                    let _ = arm(*fd, *delay_ns);
                }
                p
            }
            Object::MmapAnon { addr, pages, token } => {
                // Drop one page: it must read back as zeros, then hold data again.
                let at = *addr + (pick % *pages) * page;
                // SAFETY: `at` is a page of this mapping.
                unsafe {
                    libc::madvise(at as *mut libc::c_void, page, libc::MADV_DONTNEED);
                    let v = std::ptr::read_volatile(at as *const u64);
                    std::ptr::write_volatile(at as *mut u64, *token);
                    (v != 0)
                        .then(|| format!("a page dropped with MADV_DONTNEED read {v:#x}, not 0"))
                }
            }
            Object::MmapFile {
                addr, pages, token, ..
            } => check_pages(*addr, *pages, page, *token),
            Object::File { fd, sum, len, .. } => check_file(*fd, *len, *sum),
            Object::Thread { .. } | Object::Process { .. } => None,
        };
        if let Some(p) = problem {
            let kind = self.pool[i].kind();
            self.violation("data", format!("{} use: {p}", kind.name()));
        }
    }

    /// Destroys `obj` (its fds released and listed in `released` by the
    /// caller); `forget` (test plant) leaves its fds open, its mapping
    /// mapped, its file in place.
    pub(super) fn destroy_object(&mut self, obj: Object, forget: bool) {
        let page = self.page;
        let close_all = |o: &Object| {
            if !forget {
                o.fds().into_iter().for_each(close);
            }
        };
        let problem: Option<String> = match &obj {
            Object::Pipe { .. } | Object::Socketpair { .. } | Object::Epoll { .. } => {
                close_all(&obj);
                None
            }
            Object::Eventfd { fd, count } => {
                let mut v = 0u64;
                // SAFETY: reading 8 bytes into a local.
                let n = unsafe { libc::read(*fd, (&mut v as *mut u64).cast(), 8) };
                let e = errno();
                close_all(&obj);
                match (n, *count) {
                    (8, c) if v == c => None,
                    (-1, 0) if e == libc::EAGAIN => None,
                    _ => Some(format!(
                        "eventfd read {} (n={n}, {}), expected {count}",
                        v,
                        sys::errno_name(e)
                    )),
                }
            }
            Object::Timerfd {
                fd,
                armed_ns,
                delay_ns,
            } => {
                let p = expired_check(*fd, *armed_ns, *delay_ns, crate::shared::now_ns());
                close_all(&obj);
                p
            }
            Object::File { fd, name, sum, len } => {
                let p = check_file(*fd, *len, *sum);
                close_all(&obj);
                let path = self.spec.scratch.join(name);
                let gone = forget || (std::fs::remove_file(&path).is_ok() && !path.exists());
                p.or_else(|| {
                    (!gone).then(|| format!("file {} still exists after unlink", path.display()))
                })
            }
            Object::MmapAnon { addr, pages, token } => {
                let p = check_pages(*addr, *pages, page, *token);
                if forget {
                    return self.report_problem(&obj, p);
                }
                // SAFETY: unmapping this object's own mapping.
                unsafe { libc::munmap(*addr as *mut libc::c_void, pages * page) };
                p.or_else(|| {
                    (!unmapped(*addr, pages * page))
                        .then(|| format!("{:#x}+{} pages still mapped after munmap", addr, pages))
                })
            }
            Object::MmapFile {
                addr,
                slice,
                pages,
                token,
            } => {
                let p = check_pages(*addr, *pages, page, *token)
                    .or_else(|| self.check_backing(*slice, *token));
                if forget {
                    // Its slice stays taken, as the mapping does.
                    return self.report_problem(&obj, p);
                }
                // SAFETY: unmapping this object's own mapping.
                unsafe { libc::munmap(*addr as *mut libc::c_void, pages * page) };
                self.free_file_slots.push(*slice);
                p.or_else(|| {
                    (!unmapped(*addr, pages * page)).then(|| {
                        format!("{:#x}+{} file pages still mapped after munmap", addr, pages)
                    })
                })
            }
            Object::Thread { thread, efd, stack } => {
                let one = 1u64;
                // SAFETY: waking the thread through its eventfd, joining it,
                // then unmapping the stack it no longer runs on.
                unsafe {
                    libc::write(*efd, (&one as *const u64).cast(), 8);
                    let e = libc::pthread_join(*thread, std::ptr::null_mut());
                    close_all(&obj);
                    if e == 0 {
                        libc::munmap(*stack as *mut libc::c_void, THREAD_STACK);
                        None
                    } else {
                        Some(format!("pthread_join failed: {}", sys::errno_name(e)))
                    }
                }
            }
            Object::Process { pid, slot, sent } => {
                let p = self.end_child(*pid, *slot, *sent);
                self.free_child_slots.push(*slot);
                p
            }
        };
        self.report_problem(&obj, problem);
    }

    fn report_problem(&mut self, obj: &Object, problem: Option<String>) {
        if let Some(p) = problem {
            let inv = if p.contains("signal") {
                "signals"
            } else {
                "data"
            };
            self.violation(inv, format!("{} destroy: {p}", obj.kind().name()));
        }
    }

    /// Tells a child to exit, reaps it, and compares the signals it handled
    /// with those sent.
    fn end_child(&mut self, pid: i32, slot: usize, sent: u64) -> Option<String> {
        let mut tries = 0;
        while let Err(e) = signals::queue(pid, signals::exit_sig(), 0) {
            tries += 1;
            if e != libc::EAGAIN || tries > 1000 {
                // SAFETY: our own child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut status = 0;
        loop {
            // SAFETY: reaping our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid || (r < 0 && errno() != libc::EINTR) {
                break;
            }
        }
        let handled = self.child_counts[slot].load(Ordering::SeqCst);
        self.report.signals.child_sent += sent;
        self.report.signals.child_handled += handled.min(sent);
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            return Some(format!(
                "child {pid} did not exit cleanly (wait status {status:#x})"
            ));
        }
        (handled != sent)
            .then(|| format!("child {pid} handled {handled} of {sent} signals sent to it"))
    }

    /// Reads the backing file where a shared mapping wrote: the page cache
    /// must show through read(2) what was written through the mapping.
    fn check_backing(&self, slice: usize, token: u64) -> Option<String> {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::open(&self.backing).ok()?;
        let mut b = [0u8; 8];
        let off = (slice * SLICE_PAGES * self.page) as u64;
        match f.read_exact_at(&mut b, off) {
            Ok(()) if u64::from_ne_bytes(b) == token => None,
            Ok(()) => Some(format!(
                "read(2) of the backing file shows {:#x}, the mapping wrote {token:#x}",
                u64::from_ne_bytes(b)
            )),
            Err(e) => Some(format!("cannot read the backing file: {e}")),
        }
    }

    /// Sends one queued signal: to a child process (if any, half the time)
    /// or to the worker itself.
    pub(super) fn signal(&mut self) {
        let children: Vec<usize> = (0..self.pool.len())
            .filter(|&i| matches!(self.pool[i], Object::Process { .. }))
            .collect();
        let to_child = !children.is_empty() && self.rng.gen_bool(0.5);
        let result = if to_child {
            let i = children[self.rng.gen_range(0..children.len())];
            let Object::Process { pid, sent, .. } = &mut self.pool[i] else {
                unreachable!()
            };
            let r = signals::queue(*pid, signals::data_sig(), 1);
            if r.is_ok() {
                *sent += 1;
            }
            r
        } else {
            let r = signals::queue(sys::getpid(), signals::self_sig(), 1);
            if r.is_ok() {
                self.report.signals.self_sent += 1;
            }
            r
        };
        match result {
            Ok(()) => self.stats(Kind::Signal).created += 1,
            Err(e) => {
                *self
                    .stats(Kind::Signal)
                    .failed
                    .entry(sys::errno_name(e))
                    .or_default() += 1
            }
        }
    }
}

extern "C" fn blocked_thread(arg: *mut libc::c_void) -> *mut libc::c_void {
    let fd = arg as usize as i32;
    let mut v = 0u64;
    loop {
        // SAFETY: reading 8 bytes into a local from the thread's eventfd.
        let n = unsafe { libc::read(fd, (&mut v as *mut u64).cast(), 8) };
        if n == 8 || (n < 0 && errno() != libc::EINTR) {
            return std::ptr::null_mut();
        }
    }
}

/// Arms a one-shot timer `delay_ns` from now.
fn arm(fd: i32, delay_ns: u64) -> Result<(), i32> {
    let t = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (delay_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (delay_ns % 1_000_000_000) as libc::c_long,
        },
    };
    // SAFETY: t is a valid itimerspec.
    if unsafe { libc::timerfd_settime(fd, 0, &t, std::ptr::null_mut()) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// A one-shot timer armed `delay_ns` after `armed_ns` must have expired
/// once a second past that: its read then returns ≥ 1 expiration.
fn expired_check(fd: i32, armed_ns: u64, delay_ns: u64, now: u64) -> Option<String> {
    let mut n = 0u64;
    // SAFETY: reading 8 bytes into a local.
    let r = unsafe { libc::read(fd, (&mut n as *mut u64).cast(), 8) };
    let e = errno();
    let overdue = now.saturating_sub(armed_ns) > delay_ns + 1_000_000_000;
    match r {
        8 if n >= 1 => None,
        -1 if e == libc::EAGAIN && !overdue => None,
        _ => Some(format!(
            "timerfd armed for {delay_ns} ns {:.3} s ago: read gave {r} ({}), {n} expirations",
            now.saturating_sub(armed_ns) as f64 / 1e9,
            sys::errno_name(e)
        )),
    }
}

/// Writes `data` into `w` and reads it back from `r`.
fn round_trip(w: i32, r: i32, data: &[u8], what: &str) -> Option<String> {
    let mut back = [0u8; 64];
    // SAFETY: writing from and reading into local buffers.
    let (n, m) = unsafe {
        let n = libc::write(w, data.as_ptr().cast(), data.len());
        let m = libc::read(r, back.as_mut_ptr().cast(), back.len());
        (n, m)
    };
    if n != data.len() as isize {
        return Some(format!(
            "{what}: wrote {n} of {} bytes ({})",
            data.len(),
            sys::errno_name(errno())
        ));
    }
    (m != n || back[..data.len()] != *data)
        .then(|| format!("{what}: {} bytes in, {m} different bytes out", data.len()))
}

fn check_pages(addr: usize, pages: usize, page: usize, token: u64) -> Option<String> {
    for i in 0..pages {
        // SAFETY: page i of a live mapping of `pages` pages.
        let v = unsafe { std::ptr::read_volatile((addr + i * page) as *const u64) };
        if v != token {
            return Some(format!(
                "page {i} of {addr:#x} holds {v:#x}, not {token:#x}"
            ));
        }
    }
    None
}

fn check_file(fd: i32, len: usize, sum: u64) -> Option<String> {
    let mut buf = vec![0u8; len + 1];
    // SAFETY: reading into a buffer of len + 1 bytes.
    let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), len + 1, 0) };
    if n != len as isize {
        return Some(format!(
            "file read back {n} bytes of {len} ({})",
            sys::errno_name(errno())
        ));
    }
    (fnv(&buf[..len]) != sum).then(|| "file contents differ from what was written".to_string())
}
