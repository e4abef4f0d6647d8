//! Linux specifics shared by the workers and the supervisor: errno names,
//! the census of what a process holds (fds with what they point to, its
//! mappings, its threads and children — yamba-os's `space` census where it
//! has one), processes of a process group, and machine-wide memory.

use std::collections::BTreeMap;
use yamba_os::sched::{sched_times, SchedTimes};
use yamba_os::space::{census, kernel, refresh_counters, Kernel};
use yamba_os::Kind;

/// The calling thread's errno.
#[inline]
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The symbolic name of an errno value (the ones the error tests and the
/// workers can meet), else `errno N`.
pub fn errno_name(e: i32) -> String {
    let name = match e {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::E2BIG => "E2BIG",
        libc::EBADF => "EBADF",
        libc::ECHILD => "ECHILD",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ENOTTY => "ENOTTY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EPIPE => "EPIPE",
        libc::ERANGE => "ERANGE",
        libc::EDEADLK => "EDEADLK",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOSYS => "ENOSYS",
        libc::ELOOP => "ELOOP",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::ENOTSOCK => "ENOTSOCK",
        libc::EPROTONOSUPPORT => "EPROTONOSUPPORT",
        libc::ESOCKTNOSUPPORT => "ESOCKTNOSUPPORT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::ETIMEDOUT => "ETIMEDOUT",
        _ => return format!("errno {e}"),
    };
    name.to_string()
}

/// The name of a signal number, for crash reports.
pub fn signal_name(sig: i32) -> String {
    let rt = libc::SIGRTMIN();
    match sig {
        s if s >= rt && s <= libc::SIGRTMAX() => format!("SIGRTMIN+{}", s - rt),
        libc::SIGTRAP => "SIGTRAP".into(),
        libc::SIGXFSZ => "SIGXFSZ".into(),
        libc::SIGXCPU => "SIGXCPU".into(),
        libc::SIGSYS => "SIGSYS".into(),
        libc::SIGUSR1 => "SIGUSR1".into(),
        libc::SIGUSR2 => "SIGUSR2".into(),
        libc::SIGALRM => "SIGALRM".into(),
        libc::SIGCHLD => "SIGCHLD".into(),
        _ => yamba_core::isolate::signal_name(sig).to_string(),
    }
}

pub fn getpid() -> i32 {
    // SAFETY: no preconditions.
    unsafe { libc::getpid() }
}

pub fn gettid() -> i32 {
    // SAFETY: no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// This process's open fds and what each points to (`pipe:[123]`,
/// `anon_inode:[eventfd]`, a path). The directory fd used to list them is
/// left out.
pub fn fd_table() -> BTreeMap<i32, String> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return out;
    };
    let own = format!("/proc/{}/fd", getpid());
    for e in dir.flatten() {
        let Some(fd) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        match std::fs::read_link(e.path()) {
            Ok(target) => {
                let t = target.to_string_lossy().into_owned();
                if t != own {
                    out.insert(fd, t);
                }
            }
            // Gone between listing and reading: the listing's own fd.
            Err(_) => continue,
        }
    }
    out
}

/// What kind of primitive an fd's link names.
pub fn fd_kind(link: &str) -> &'static str {
    if link.starts_with("pipe:") {
        "pipe"
    } else if link.starts_with("socket:") {
        "socket"
    } else if link.contains("[eventfd]") {
        "eventfd"
    } else if link.contains("[eventpoll]") {
        "epoll"
    } else if link.contains("[timerfd]") {
        "timerfd"
    } else if link.contains("[signalfd]") {
        "signalfd"
    } else if link.starts_with('/') {
        "file"
    } else {
        "other"
    }
}

/// Lines of /proc/self/maps.
pub fn maps() -> Vec<String> {
    std::fs::read_to_string("/proc/self/maps")
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The address ranges mapped, adjacent mappings merged whatever their
/// permissions: an allocator arena that moves its read-write/PROT_NONE
/// boundary as it grows and shrinks covers the same range throughout.
/// The heap and the stack, which grow on their own, are left out.
pub fn coverage(maps: &[String]) -> Vec<(u64, u64)> {
    let mut r: Vec<(u64, u64)> = maps
        .iter()
        .filter(|l| !volatile_mapping(l))
        .filter_map(|l| range(l))
        .collect();
    r.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(r.len());
    for (a, b) in r {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Lines of `maps` whose range is not wholly inside `covered`.
pub fn outside(maps: &[String], covered: &[(u64, u64)]) -> Vec<String> {
    maps.iter()
        .filter(|l| !volatile_mapping(l))
        .filter(|l| range(l).is_some_and(|(a, b)| !covered.iter().any(|&(x, y)| x <= a && b <= y)))
        .cloned()
        .collect()
}

fn range(line: &str) -> Option<(u64, u64)> {
    let (a, b) = line.split_whitespace().next()?.split_once('-')?;
    Some((
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    ))
}

/// Heap and stack lines move as the allocator and the stack grow; they are
/// not objects anyone created.
fn volatile_mapping(line: &str) -> bool {
    line.ends_with("[heap]") || line.ends_with("[stack]")
}

/// Threads of this process (the space census).
pub fn threads() -> u64 {
    census(Kind::Thread).unwrap_or(0)
}

/// Children of the calling thread, zombies included (the space census).
pub fn children() -> u64 {
    census(Kind::Process).unwrap_or(0)
}

/// One process as /proc/PID/stat shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// R, S, D, Z, T, …
    pub state: char,
}

/// Every process whose process group is in `groups` (or whose session is
/// `session`, when given).
pub fn processes(groups: &[i32], session: Option<i32>) -> Vec<ProcInfo> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(proc_stat)
        .filter(|p| groups.contains(&p.pgrp) || session == Some(p.session))
        .collect()
}

/// /proc/PID/stat: the fields after the parenthesised command name.
pub fn proc_stat(pid: i32) -> Option<ProcInfo> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = text.rsplit_once(") ")?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcInfo {
        pid,
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        session: f.get(3)?.parse().ok()?,
    })
}

/// What a process's main thread was doing, from /proc: enough to tell a
/// worker stuck on its own from one the machine held up.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskWait {
    /// R, S, D, T, Z, … (/proc/PID/stat).
    pub state: char,
    /// The kernel function it sleeps in (/proc/PID/wchan), when asleep
    /// and the kernel says.
    pub wchan: Option<String>,
    /// Time on a CPU and time runnable but waiting for one (None
    /// without the kernel's scheduling statistics).
    pub sched: Option<SchedTimes>,
}

/// [`TaskWait`] of process `pid` (None once it is gone).
pub fn task_wait(pid: i32) -> Option<TaskWait> {
    let state = proc_stat(pid)?.state;
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan"))
        .ok()
        .map(|w| w.trim().to_string())
        .filter(|w| !w.is_empty() && w != "0");
    Some(TaskWait {
        state,
        wchan,
        sched: sched_times(Some(pid)),
    })
}

impl TaskWait {
    /// In words: its state now, and, given an earlier reading and the time
    /// since it, how much of that time it ran and waited for a CPU.
    pub fn explain(&self, earlier: Option<(&TaskWait, std::time::Duration)>) -> String {
        let wchan = self
            .wchan
            .as_deref()
            .map(|w| format!(" in {w}"))
            .unwrap_or_default();
        let mut s = match self.state {
            'R' => "running or waiting for a CPU".to_string(),
            'S' => format!("asleep{wchan}"),
            'D' => format!("in uninterruptible sleep{wchan} (I/O or a kernel lock)"),
            'T' | 't' => "stopped by a signal".to_string(),
            'Z' => "exited, not yet reaped".to_string(),
            c => format!("state {c}{wchan}"),
        };
        if let Some((before, span)) = earlier {
            if let (Some(then), Some(now)) = (before.sched, self.sched) {
                let d = now.since(then);
                let (ran, waited) = (d.ran_ns as f64, d.waited_ns as f64);
                let span_ns = span.as_nanos() as f64;
                s.push_str(&format!(
                    "; over the last {:.1} s it ran {:.3} s and waited {:.3} s for a CPU",
                    span_ns / 1e9,
                    ran / 1e9,
                    waited / 1e9
                ));
                if waited > span_ns / 2.0 {
                    s.push_str(": the machine kept it from a CPU");
                }
            }
        }
        s
    }
}

/// Memory the machine could give a new program without swapping
/// (MemAvailable of /proc/meminfo), in bytes.
pub fn mem_available() -> Option<u64> {
    meminfo_field("MemAvailable:")
}

pub fn mem_total() -> Option<u64> {
    meminfo_field("MemTotal:")
}

fn meminfo_field(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// Machine-wide memory, with what live processes account for it beside it,
/// so that other processes coming and going (a compiler starting on a
/// shared machine) can be taken out of a comparison with a baseline.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct MemReading {
    /// Unreclaimable kernel memory (see [`kernel_unreclaimable`]).
    pub kernel: f64,
    pub kernel_stack: f64,
    pub reclaimable: f64,
    /// MemAvailable.
    pub available: f64,
    /// MemTotal: not a constant in a virtual machine, whose balloon
    /// driver gives memory back to the host and takes it again.
    #[serde(default)]
    pub total: f64,
    /// Σ RssAnon of every process.
    pub anon: f64,
    /// Σ VmPTE (page tables) of every process.
    pub process_page_tables: f64,
    /// Σ threads of every process (kernel threads included).
    pub threads: f64,
}

impl MemReading {
    /// Kernel memory not held by a live process's page tables or kernel
    /// stacks: what is left when every process of the run is gone, whatever
    /// others started meanwhile.
    pub fn kernel_net(&self, stack_per_thread: f64) -> f64 {
        self.kernel - self.process_page_tables - self.threads * stack_per_thread
    }

    /// Memory in use that no live process holds: MemTotal minus
    /// MemAvailable minus what live processes hold (anonymous memory, page
    /// tables, kernel stacks). Steady while others allocate and free, and
    /// while a balloon driver changes MemTotal (a VM on a shared host
    /// shrinks by hundreds of MiB within a minute); it grows with what
    /// outlives its process (shared memory, kernel objects).
    pub fn unowned(&self, stack_per_thread: f64) -> f64 {
        self.total
            - self.available
            - self.anon
            - self.process_page_tables
            - self.threads * stack_per_thread
    }

    /// Kernel stack per task (KernelStack over all tasks, idle ones included).
    pub fn stack_per_thread(&self) -> f64 {
        // SAFETY: no preconditions.
        let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as f64;
        self.kernel_stack / (self.threads + cpus)
    }
}

/// Σ RssAnon, Σ VmPTE and Σ Threads over /proc/*/status, in bytes and tasks.
fn process_memory() -> (f64, f64, f64) {
    let (mut anon, mut pte, mut threads) = (0.0, 0.0, 0.0);
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return (0.0, 0.0, 0.0);
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(t) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let kib = |key: &str| -> f64 {
            t.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        anon += kib("RssAnon:") * 1024.0;
        pte += kib("VmPTE:") * 1024.0;
        threads += kib("Threads:");
    }
    (anon, pte, threads)
}

/// A reading of machine memory and of every process, for a baseline: taken
/// again (up to 10 times) while /proc/meminfo moved during the scan of the
/// processes (a process started or ended meanwhile).
pub fn read_memory() -> Option<MemReading> {
    let mut last = None;
    for _ in 0..10 {
        let (r, steady) = read_memory_once(true)?;
        if steady {
            return Some(r);
        }
        last = Some(r);
    }
    last
}

/// One reading, and whether /proc/meminfo held still around the scan of
/// the processes. `refresh` folds the CPUs' pending counter deltas into
/// /proc/meminfo first (/proc/sys/vm/stat_refresh, root only): exact to the
/// page, but it waits for a kernel worker on every CPU, and during a stress
/// that wait was seen to last 10 s (the supervisor in D state in
/// `__flush_work`), which stopped a 10 s run at 17 s with a hole in its
/// timeline. The timeline's samples therefore read without it — off by at
/// most the counters' per-CPU thresholds, a few MiB — and take one reading
/// each, where [`read_memory`]'s retries would run ten rounds while the
/// stress moves memory.
pub fn read_memory_once(refresh: bool) -> Option<(MemReading, bool)> {
    if refresh {
        refresh_counters();
    }
    let k1 = kernel()?;
    let a1 = mem_available()? as f64;
    let t1 = mem_total()? as f64;
    let (anon, pte, threads) = process_memory();
    if refresh {
        refresh_counters();
    }
    let k2 = kernel()?;
    let a2 = mem_available()? as f64;
    let t2 = mem_total()? as f64;
    let r = MemReading {
        kernel: (kernel_unreclaimable(&k1) + kernel_unreclaimable(&k2)) / 2.0,
        kernel_stack: (k1.kernel_stack + k2.kernel_stack) / 2.0,
        reclaimable: (k1.s_reclaimable + k2.s_reclaimable) / 2.0,
        available: (a1 + a2) / 2.0,
        total: (t1 + t2) / 2.0,
        anon,
        process_page_tables: pte,
        threads,
    };
    let steady = (a1 - a2).abs() < 4.0 * 1048576.0
        && t1 == t2
        && (kernel_unreclaimable(&k1) - kernel_unreclaimable(&k2)).abs() < 1048576.0;
    Some((r, steady))
}

/// Kernel memory that does not shrink on its own under no pressure —
/// unreclaimable slab, kernel stacks, page tables (the `space` area's
/// accounting without its reclaimable slab, which holds caches such as
/// dentries of deleted files that the kernel keeps until it needs the room).
pub fn kernel_unreclaimable(k: &Kernel) -> f64 {
    k.s_unreclaim + k.kernel_stack + k.page_tables
}

/// Highest pid the kernel hands out: a pid above it names no process.
pub fn pid_max() -> i64 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4_194_304)
}

pub fn page_size() -> usize {
    // SAFETY: no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// Writes all of `bytes` to `fd` (retrying short writes and EINTR).
pub fn write_all(fd: i32, bytes: &[u8]) -> bool {
    let mut off = 0;
    while off < bytes.len() {
        // SAFETY: writing from a valid buffer.
        let n = unsafe { libc::write(fd, bytes[off..].as_ptr().cast(), bytes.len() - off) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return false;
        }
        off += n as usize;
    }
    true
}

/// Sets a signal's disposition to a handler (with `mask` blocked while it
/// runs), SIG_DFL or SIG_IGN.
pub fn set_handler(sig: i32, handler: usize, mask: &[i32]) {
    // SAFETY: sa is fully initialised; handlers passed in are async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler;
        libc::sigemptyset(&mut sa.sa_mask);
        for &m in mask {
            libc::sigaddset(&mut sa.sa_mask, m);
        }
        sa.sa_flags = libc::SA_RESTART;
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// What a fork child of the supervisor does first: lead a process group of
/// its own (so one killpg ends it and all it started), die with the
/// thread that forked it (PR_SET_PDEATHSIG), restore default dispositions
/// the parent may have changed (a test harness, Rust's SIGSEGV handler),
/// and keep only fds 0-2 and `report`, moved to fd 3.
///
/// # Safety
/// Call only in a freshly forked child.
pub unsafe fn become_child(parent: i32, report: i32) {
    libc::setpgid(0, 0);
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if libc::getppid() != parent {
        libc::_exit(70);
    }
    for sig in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGABRT,
        libc::SIGCHLD,
    ] {
        libc::signal(sig, libc::SIG_DFL);
    }
    libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    // Unblock everything the forking thread may have blocked.
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    // Nothing of the parent's (its other children's pipes above all) stays
    // open here: a worker holding another's pipe would hide that one's EOF.
    if report != REPORT_FD {
        libc::dup2(report, REPORT_FD);
    }
    let _ = libc::syscall(
        libc::SYS_close_range,
        (REPORT_FD + 1) as u32,
        u32::MAX,
        0u32,
    );
}

/// Where a supervised child writes its report.
pub const REPORT_FD: i32 = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn reading(state: char, sched_ns: Option<(u64, u64)>) -> TaskWait {
        TaskWait {
            state,
            wchan: None,
            sched: sched_ns.map(|(ran_ns, waited_ns)| SchedTimes { ran_ns, waited_ns }),
        }
    }

    /// Ground truth: a child stopped by SIGSTOP reads as stopped, one
    /// sleeping in nanosleep as asleep; a reaped one is gone.
    #[test]
    fn task_wait_reads_a_stopped_and_a_sleeping_child() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let state = |want: char| {
            (0..500)
                .map(|_| {
                    std::thread::sleep(Duration::from_millis(2));
                    task_wait(pid).unwrap()
                })
                .find(|w| w.state == want)
        };
        let asleep = state('S').expect("sleep(1) never read as asleep");
        assert!(asleep.explain(None).starts_with("asleep"), "{asleep:?}");
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let stopped = state('T').expect("a stopped child never read as stopped");
        assert_eq!(stopped.explain(None), "stopped by a signal");
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(task_wait(pid), None);
    }

    /// Over a window, the time run and waited comes from the two readings'
    /// differences, and a process that waited for a CPU most of it is said
    /// to have been kept from one; one that slept is not.
    #[test]
    fn explain_tells_a_starved_process_from_a_sleeping_one() {
        let window = Duration::from_secs(5);
        let before = reading('R', Some((1_000_000_000, 2_000_000_000)));
        let starved = reading('R', Some((1_010_000_000, 6_000_000_000)));
        assert_eq!(
            starved.explain(Some((&before, window))),
            "running or waiting for a CPU; over the last 5.0 s it ran 0.010 s and waited 4.000 s for a CPU: the machine kept it from a CPU"
        );
        let slept = TaskWait {
            wchan: Some("pipe_read".into()),
            ..reading('S', Some((1_000_100_000, 2_000_000_000)))
        };
        assert_eq!(
            slept.explain(Some((&before, window))),
            "asleep in pipe_read; over the last 5.0 s it ran 0.000 s and waited 0.000 s for a CPU"
        );
        let d = TaskWait {
            wchan: Some("folio_wait_bit_common".into()),
            ..reading('D', None)
        };
        assert_eq!(
            d.explain(Some((&before, window))),
            "in uninterruptible sleep in folio_wait_bit_common (I/O or a kernel lock)"
        );
    }
}
