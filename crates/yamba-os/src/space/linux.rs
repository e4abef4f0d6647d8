//! Linux: creating N of each primitive and holding them, counting that
//! they exist in /proc/self (the census), and reading what memory the
//! kernel (/proc/meminfo) and this process (VmRSS, smaps_rollup) account.

use super::Kernel;
use crate::{Kind, OsError};
use std::os::fd::{FromRawFd, OwnedFd};

pub const NAME: &str = "linux-procfs";

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Folds every CPU's pending counter deltas into /proc/meminfo
/// (vm.stat_refresh, root only). Without it the counters lag by up to the
/// per-CPU thresholds. Returns whether it worked.
pub fn refresh_counters() -> bool {
    std::fs::write("/proc/sys/vm/stat_refresh", b"1").is_ok()
}

pub fn kernel() -> Option<Kernel> {
    let text = read("/proc/meminfo")?;
    let kib = |key: &str| -> Option<f64> {
        let line = text.lines().find(|l| l.split(':').next() == Some(key))?;
        Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? * 1024.0)
    };
    Some(Kernel {
        s_reclaimable: kib("SReclaimable")?,
        s_unreclaim: kib("SUnreclaim")?,
        kernel_stack: kib("KernelStack")?,
        page_tables: kib("PageTables")?,
    })
}

/// The number after `key` in a /proc status-like file.
fn field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A `Key:  N kB` field, in bytes.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    Some(field(text, key)? * 1024)
}

/// This process's VmRSS, in bytes.
pub fn own_rss() -> Option<u64> {
    kib_field(&read("/proc/self/status")?, "VmRSS:")
}

/// Private memory (clean + dirty) of process `pid`, from smaps_rollup.
pub fn private_bytes(pid: i32) -> Option<u64> {
    let t = read(&format!("/proc/{pid}/smaps_rollup"))?;
    Some(kib_field(&t, "Private_Clean:")? + kib_field(&t, "Private_Dirty:")?)
}

fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// How many of `kind` this process has now: open fds, threads, children of
/// this thread, or mappings — counted independently of our own bookkeeping.
/// None for the kinds with no census (file mappings, signals, CPU time).
pub fn census(kind: Kind) -> Option<u64> {
    match kind {
        Kind::Thread => field(&read("/proc/self/status")?, "Threads:"),
        Kind::Process => {
            let pid = std::process::id();
            let t = read(&format!("/proc/{pid}/task/{}/children", gettid()))?;
            Some(t.split_whitespace().count() as u64)
        }
        Kind::MmapAnon => Some(one_page_anon_mappings(&read("/proc/self/maps")?)),
        Kind::Pipe
        | Kind::Socketpair
        | Kind::Eventfd
        | Kind::Epoll
        | Kind::Timerfd
        | Kind::File => Some(std::fs::read_dir("/proc/self/fd").ok()?.count() as u64),
        Kind::MmapFile | Kind::Signal | Kind::Cpu => None,
    }
}

/// Mappings that look like ours: one page, private, read-write, anonymous.
/// Counting only these keeps the allocator's own mappings (heap arenas,
/// large buffers, which come and go as /proc is read) out of the census.
pub fn one_page_anon_mappings(maps: &str) -> u64 {
    one_page_anon_starts(maps).count() as u64
}

/// Start addresses of the one-page, private, read-write, anonymous
/// mappings in a /proc/<pid>/maps text.
fn one_page_anon_starts(maps: &str) -> impl Iterator<Item = usize> + '_ {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    maps.lines().filter_map(move |l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (a, b) = f.first()?.split_once('-')?;
        let hex = |x: &str| usize::from_str_radix(x, 16).ok();
        let (a, b) = (hex(a)?, hex(b)?);
        let ours = b.checked_sub(a) == Some(page)
            && f.get(1) == Some(&"rw-p")
            && f.get(4) == Some(&"0")
            && f.len() == 5;
        ours.then_some(a)
    })
}

/// How many of `pages` (addresses this process mapped, and maybe has
/// since unmapped) lie in a private read-write anonymous mapping: the
/// census by identity, blind to mappings others in this process made
/// meanwhile (an allocator's, a library's). Containment, not a start
/// address: another one-page mapping the kernel puts in the hole beside
/// one of ours merges with it into one larger mapping, and ours is still
/// there.
pub fn still_mapped(pages: &[usize]) -> Option<u64> {
    let maps = read("/proc/self/maps")?;
    Some(contained(&anon_rw_ranges(&maps), pages))
}

/// The [start, end) of every private read-write anonymous mapping.
fn anon_rw_ranges(maps: &str) -> Vec<(usize, usize)> {
    let mut ranges: Vec<(usize, usize)> = maps
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (a, b) = f.first()?.split_once('-')?;
            let hex = |x: &str| usize::from_str_radix(x, 16).ok();
            let anon = f.get(1) == Some(&"rw-p") && f.get(4) == Some(&"0") && f.len() == 5;
            anon.then_some((hex(a)?, hex(b)?))
        })
        .collect();
    ranges.sort_unstable();
    ranges
}

/// How many of `pages` lie inside one of the sorted, disjoint `ranges`.
fn contained(ranges: &[(usize, usize)], pages: &[usize]) -> u64 {
    pages
        .iter()
        .filter(|&&p| {
            let i = ranges.partition_point(|&(start, _)| start <= p);
            i > 0 && p < ranges[i - 1].1
        })
        .count() as u64
}

pub fn raise_nofile(need: u64) -> u64 {
    let open = census(Kind::Pipe).unwrap_or(64);
    let want = open + need + 64;
    // rlim_t is 32 bits wide on 32-bit targets: a wanted limit beyond it
    // is asked for as the largest it can say.
    #[allow(clippy::useless_conversion)] // u64 to u64 on 64-bit targets
    let as_rlim = |v: u64| libc::rlim_t::try_from(v).unwrap_or(libc::rlim_t::MAX);
    #[allow(clippy::useless_conversion)]
    let as_u64 = |v: libc::rlim_t| u64::from(v);
    // SAFETY: rl is a valid rlimit.
    unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl);
        if as_u64(rl.rlim_cur) >= want {
            return as_u64(rl.rlim_cur) - open;
        }
        let raised = libc::rlimit {
            rlim_cur: as_rlim(want),
            rlim_max: rl.rlim_max.max(as_rlim(want)),
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) != 0 {
            let fallback = libc::rlimit {
                rlim_cur: rl.rlim_max,
                rlim_max: rl.rlim_max,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &fallback);
        }
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl);
        as_u64(rl.rlim_cur).saturating_sub(open)
    }
}

/// N objects of one kind, alive until dropped. Dropping destroys them:
/// fds close, threads and children are released and reaped, pages unmapped.
/// If the benchmark dies instead, fds die with it and children get EOF on
/// their release pipe (and PR_SET_PDEATHSIG).
pub struct Batch {
    fds: Vec<OwnedFd>,
    children: Vec<i32>,
    threads: Vec<libc::pthread_t>,
    /// Write end of the pipe the blocked threads and children read.
    release: Option<OwnedFd>,
    pages: Vec<usize>,
    page: usize,
    /// Names of the files this batch created (Kind::File), unlinked on
    /// drop after their descriptors close.
    paths: Vec<std::ffi::CString>,
}

fn pipe() -> Result<(OwnedFd, OwnedFd), OsError> {
    let mut p = [0i32; 2];
    // SAFETY: p is a valid 2-int array.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(OsError::last("pipe2 failed"));
    }
    // SAFETY: fresh fds we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) })
}

fn fd(r: i32, what: &str) -> Result<OwnedFd, OsError> {
    if r < 0 {
        Err(OsError::last(what))
    } else {
        // SAFETY: a fresh fd we own.
        Ok(unsafe { OwnedFd::from_raw_fd(r) })
    }
}

extern "C" fn blocked_thread(arg: *mut libc::c_void) -> *mut libc::c_void {
    let mut b = 0u8;
    // SAFETY: arg carries the release pipe's read end, open until all threads are joined.
    unsafe { libc::read(arg as usize as i32, (&mut b as *mut u8).cast(), 1) };
    std::ptr::null_mut()
}

impl Batch {
    fn empty(page: usize) -> Batch {
        Batch {
            fds: Vec::new(),
            children: Vec::new(),
            threads: Vec::new(),
            release: None,
            pages: Vec::new(),
            page,
            paths: Vec::new(),
        }
    }

    /// Creates `n` of `kind`; returns once every one exists (threads and
    /// children are blocked in read(2), not merely started). A socketpair
    /// is AF_UNIX SOCK_STREAM; a mapping (`MmapAnon`) is one anonymous
    /// page on its own (its own VMA), touched.
    pub fn create(kind: Kind, n: usize, page: usize) -> Result<Batch, OsError> {
        use std::os::fd::AsRawFd;
        let mut b = Batch::empty(page);
        // Room for every descriptor up front: no reallocation among the creates.
        b.fds.reserve(n * kind.fds() as usize);
        // SAFETY (all blocks below): plain system calls on fds and memory we own.
        match kind {
            Kind::Pipe => (0..n).try_for_each(|_| {
                let (r, w) = pipe()?;
                b.fds.extend([r, w]);
                Ok::<(), OsError>(())
            })?,
            Kind::Socketpair => (0..n).try_for_each(|_| {
                let mut p = [0i32; 2];
                let t = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
                // SAFETY: p is a valid 2-element array.
                if unsafe { libc::socketpair(libc::AF_UNIX, t, 0, p.as_mut_ptr()) } != 0 {
                    return Err(OsError::last("socketpair failed"));
                }
                b.fds
                    .extend([fd(p[0], "socketpair")?, fd(p[1], "socketpair")?]);
                Ok(())
            })?,
            Kind::Eventfd => (0..n).try_for_each(|_| {
                let f = fd(
                    // SAFETY: eventfd takes no pointers.
                    unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) },
                    "eventfd failed",
                )?;
                b.fds.push(f);
                Ok::<(), OsError>(())
            })?,
            Kind::Epoll => (0..n).try_for_each(|_| {
                let f = fd(
                    // SAFETY: epoll_create1 takes no pointers.
                    unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
                    "epoll_create1 failed",
                )?;
                b.fds.push(f);
                Ok::<(), OsError>(())
            })?,
            Kind::Timerfd => (0..n).try_for_each(|_| {
                // SAFETY: timerfd_create takes no pointers.
                let r = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
                b.fds.push(fd(r, "timerfd_create failed")?);
                Ok::<(), OsError>(())
            })?,
            Kind::MmapAnon => b.map_pages(n)?,
            Kind::Thread => {
                let (r, w) = pipe()?;
                b.release = Some(w);
                let arg = r.as_raw_fd() as usize as *mut libc::c_void;
                b.fds.push(r);
                for _ in 0..n {
                    // SAFETY: pthread_t is plain data, written by pthread_create.
                    let mut t: libc::pthread_t = unsafe { std::mem::zeroed() };
                    // SAFETY: t is valid; blocked_thread only reads its pipe's fd (arg) and returns.
                    let e = unsafe {
                        libc::pthread_create(&mut t, std::ptr::null(), blocked_thread, arg)
                    };
                    if e != 0 {
                        return Err(OsError::Call {
                            what: format!(
                                "pthread_create failed after {} threads",
                                b.threads.len()
                            ),
                            error: std::io::Error::from_raw_os_error(e),
                        });
                    }
                    b.threads.push(t);
                }
                wait_blocked_threads()?;
            }
            Kind::Process => b.fork_children(n)?,
            Kind::File => return Err(OsError::FileNeedsDirectory),
            Kind::MmapFile | Kind::Signal | Kind::Cpu => return Err(OsError::NotCreated(kind)),
        }
        Ok(b)
    }

    /// One page per mapping, each with a free page after it so the kernel
    /// cannot merge neighbours into one VMA; every page touched.
    fn map_pages(&mut self, n: usize) -> Result<(), OsError> {
        let page = self.page;
        let span = 2 * n * page;
        // Reserve a span, release it, then map inside it with
        // MAP_FIXED_NOREPLACE (fails rather than clobbering anything).
        let base =
            crate::mmap::reserve(span).map_err(OsError::call("cannot reserve address space"))?;
        // SAFETY: the reservation just made, never handed out.
        unsafe { crate::mmap::unmap(base, span) };
        for i in 0..n {
            let p = crate::mmap::map_anon_at(base as usize + 2 * i * page, page)
                .map_err(OsError::call("mmap of one page failed"))?;
            self.pages.push(p as usize);
            // SAFETY: p is a fresh, writable page of our own.
            unsafe { std::ptr::write_volatile(p, 1) };
        }
        Ok(())
    }

    fn fork_children(&mut self, n: usize) -> Result<(), OsError> {
        use std::os::fd::AsRawFd;
        let (release_r, release_w) = pipe()?;
        let (ready_r, ready_w) = pipe()?;
        let (rr, rw, yw) = (
            release_r.as_raw_fd(),
            release_w.as_raw_fd(),
            ready_w.as_raw_fd(),
        );
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        for _ in 0..n {
            // SAFETY: the child runs only async-signal-safe calls, then _exits.
            let pid = unsafe { libc::fork() };
            if pid < 0 {
                return Err(OsError::last(format!(
                    "fork failed after {} children",
                    self.children.len()
                )));
            }
            if pid == 0 {
                // SAFETY: in the forked child: prctl, getppid, reads and writes on inherited fds, then _exit.
                unsafe {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                    // Keep only the two pipe ends it uses (as 0 and 1):
                    // holding other batches' release ends would keep
                    // their children from ever seeing EOF.
                    let _ = rw;
                    libc::dup2(rr, 0);
                    libc::dup2(yw, 1);
                    libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
                    let mut b = 1u8;
                    libc::write(1, (&b as *const u8).cast(), 1);
                    libc::read(0, (&mut b as *mut u8).cast(), 1);
                    libc::_exit(0);
                }
            }
            self.children.push(pid);
        }
        drop(ready_w);
        self.release = Some(release_w);
        self.fds.push(release_r);
        // Every child is blocked once it has written its byte.
        let mut got = 0usize;
        let mut buf = [0u8; 256];
        while got < n {
            // SAFETY: reading into our buffer.
            let r = unsafe { libc::read(ready_r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if r <= 0 {
                return Err(OsError::ChildrenNotReady {
                    ready: got,
                    asked: n,
                });
            }
            got += r as usize;
        }
        Ok(())
    }

    /// Creates a new empty file at each of `names` (none may exist), each
    /// held open for writing: a Kind::File is a dentry, an inode and a
    /// descriptor. Dropping closes them, then unlinks them. The names are
    /// the caller's, built before, so creating is only the system calls.
    pub fn files(names: Vec<std::ffi::CString>) -> Result<Batch, OsError> {
        let mut b = Batch::empty(0);
        b.fds.reserve(names.len());
        b.paths = names;
        for i in 0..b.paths.len() {
            let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
            // SAFETY: the name is NUL-terminated.
            let r = unsafe { libc::open(b.paths[i].as_ptr(), flags, 0o600) };
            if r < 0 {
                let e = OsError::last(format!("open(O_CREAT|O_EXCL) failed after {i} files"));
                // Only the names created so far are ours to unlink.
                b.paths.truncate(i);
                return Err(e);
            }
            b.fds.push(fd(r, "open")?);
        }
        Ok(b)
    }

    pub fn children(&self) -> &[i32] {
        &self.children
    }

    /// Addresses of the pages this batch mapped (Kind::MmapAnon).
    pub fn pages(&self) -> &[usize] {
        &self.pages
    }
}

/// Waits until every thread but this one sleeps (state S in
/// /proc/self/task/*/stat: blocked in read), at most 10 s.
fn wait_blocked_threads() -> Result<(), OsError> {
    let me = gettid().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let others: Vec<bool> = std::fs::read_dir("/proc/self/task")
            .map_err(OsError::call("cannot list threads"))?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy() != me)
            .map(|e| {
                std::fs::read_to_string(e.path().join("stat"))
                    .ok()
                    .and_then(|s| s.rsplit(") ").next().map(|t| t.starts_with('S')))
                    .unwrap_or(false)
            })
            .collect();
        let sleeping = others.iter().filter(|&&s| s).count();
        if sleeping == others.len() {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(OsError::ThreadsNotBlocked {
                blocked: sleeping,
                threads: others.len(),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // Closing the release pipe's write end wakes every blocked thread
        // and child with EOF.
        self.release = None;
        for t in self.threads.drain(..) {
            // SAFETY: joining threads we created.
            unsafe { libc::pthread_join(t, std::ptr::null_mut()) };
        }
        for pid in self.children.drain(..) {
            // SAFETY: reaping our own children.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        }
        for p in self.pages.drain(..) {
            // SAFETY: a page this batch mapped, drained from its list.
            unsafe { crate::mmap::unmap(p as *mut u8, self.page) };
        }
        self.fds.clear();
        for name in self.paths.drain(..) {
            // SAFETY: name is NUL-terminated; a file this batch created.
            unsafe { libc::unlink(name.as_ptr()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn census_counts_only_one_page_anonymous_rw_mappings() {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
        let line =
            |start: u64, len: u64, rest: &str| format!("{start:x}-{:x} {rest}\n", start + len);
        let maps = [
            line(0x7f00_0000_0000, page, "rw-p 00000000 00:00 0"),
            line(0x7f00_0000_2000, 2 * page, "rw-p 00000000 00:00 0"),
            line(0x7f00_0001_0000, page, "---p 00000000 00:00 0"),
            line(0x7f00_0002_0000, page, "rw-p 00000000 08:01 1234 /lib/x.so"),
            line(0x7f00_0003_0000, page, "rw-p 00000000 00:00 0 [stack]"),
            "garbage\nffff-0000 rw-p 00000000 00:00 0\n".to_string(),
            line(0x7f00_0004_0000, page, "rw-p 00000000 00:00 0"),
        ]
        .concat();
        assert_eq!(one_page_anon_mappings(&maps), 2);
        let starts: Vec<usize> = one_page_anon_starts(&maps).collect();
        assert_eq!(starts, [0x7f00_0000_0000, 0x7f00_0004_0000]);
    }

    #[test]
    fn still_mapped_counts_only_our_pages() {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let mut b = Batch::create(Kind::MmapAnon, 4, page).unwrap();
        let ours = b.pages().to_vec();
        assert_eq!(still_mapped(&ours), Some(4));
        // Someone else's one-page mapping is not ours, even when the
        // kernel puts it in a hole beside one of ours and merges the two.
        let other = crate::mmap::map_anon(page).unwrap();
        assert_eq!(still_mapped(&ours), Some(4));
        // SAFETY: one of the batch's pages, taken out of its list.
        unsafe { crate::mmap::unmap(b.pages.pop().unwrap() as *mut u8, page) };
        assert_eq!(still_mapped(&ours), Some(3));
        drop(b);
        assert_eq!(still_mapped(&ours), Some(0));
        // SAFETY: the page mapped above, unused since.
        unsafe { crate::mmap::unmap(other, page) };
    }

    #[test]
    fn a_page_counts_when_a_mapping_contains_it() {
        let maps = "1000-3000 rw-p 00000000 00:00 0\n\
                    5000-6000 rw-p 00000000 00:00 0\n\
                    6000-7000 r--p 00000000 00:00 0\n\
                    8000-9000 rw-p 00000000 08:01 12 /lib/x.so\n";
        let ranges = anon_rw_ranges(maps);
        assert_eq!(ranges, [(0x1000, 0x3000), (0x5000, 0x6000)]);
        // Inside a merged two-page mapping, at a start, not past an end,
        // not in a read-only or file mapping, not before the first.
        let pages = [0x1000, 0x2000, 0x5000, 0x3000, 0x6000, 0x8000, 0x0];
        assert_eq!(contained(&ranges, &pages), 3);
    }
}
