//! Runs a benchmark in a child process, so that a crash or a hang becomes a
//! "failed" result with its reason and the suite goes on.
//!
//! The child is either a fresh executable (`run_in_exec`: the `yamba`
//! binary re-run as `yamba __bench`, handed the session's calibrated clock
//! and BASE on its standard input, so every benchmark starts from the same
//! small process whatever ran before it) or a fork of this process
//! (`run_in_child`: for library callers such as tests). Either way the child
//! leads its own process group, so everything it starts can be killed with
//! it, dies with this process even when it is killed with SIGKILL (see
//! [`crate::lifeline`]), and sends its results back as length-prefixed JSON.
//!
//! Both halves of the `__bench` protocol are here: [`run_bench_in_exec`]
//! (the parent) and [`serve_bench`] (the child, which the `yamba __bench`
//! subcommand only calls).

use crate::bench::{Benchmark, Session, SessionState};
use std::io::Read;
use std::os::fd::FromRawFd;
use std::path::Path;
use std::time::{Duration, Instant};
use yamba_results::results::{BenchResult, Mode};

/// The hidden subcommand of the `yamba` binary that runs one benchmark
/// for a parent: `EXE __bench ID MODE SCRATCH`, the session on stdin.
pub const BENCH_SUBCOMMAND: &str = "__bench";

/// What the kernel accounted to the child.
#[derive(Debug, Clone, Default)]
pub struct ChildUsage {
    pub wall: Duration,
    pub user_s: f64,
    pub system_s: f64,
    pub max_rss_kib: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

/// How the child ended.
#[derive(Debug)]
pub enum ChildOutcome {
    Finished(Vec<BenchResult>),
    /// Crashed, hung, interrupted or sent nothing usable; the reason says which.
    Failed(String),
}

/// Runs `work` in a forked child and waits at most `timeout` for it.
pub fn run_in_child<F>(timeout: Duration, work: F) -> (ChildOutcome, ChildUsage)
where
    F: FnOnce() -> Vec<BenchResult>,
{
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid 2-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return (
            ChildOutcome::Failed(format!(
                "cannot create a pipe: {}",
                std::io::Error::last_os_error()
            )),
            ChildUsage::default(),
        );
    }
    // The child starts as a copy of this process, and some benchmarks
    // (fork above all) cost more the more memory they inherit: hand back
    // what the allocator keeps of freed memory first, so a benchmark's cost
    // does not grow with the results collected before it.
    release_free_memory();
    let started = Instant::now();
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child only runs the benchmark, writes to the pipe and _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing the two pipe ends this function opened.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        return (
            ChildOutcome::Failed(format!("fork failed: {}", std::io::Error::last_os_error())),
            ChildUsage::default(),
        );
    }
    if pid == 0 {
        crate::lifeline::close_inherited();
        if crate::lifeline::die_with_parent(parent).is_err() {
            // SAFETY: the parent is gone; leave without running anything.
            unsafe { libc::_exit(1) };
        }
        child(fds[1], work);
    }
    // SAFETY: closing our copy of the write end; setpgid on our own child.
    unsafe {
        libc::close(fds[1]);
        libc::setpgid(pid, pid);
    }
    crate::lifeline::watch_group(pid);
    // SAFETY: fds[0] is an open fd we own from here on.
    let mut reader = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    let done = collect(&mut reader, fds[0], pid, started, timeout);
    crate::lifeline::forget_group(pid);
    done
}

/// Reads the child's framed results (up to the timeout or Ctrl-C), kills
/// its process group — at once if it is late, and in any case afterwards,
/// so nothing the benchmark started outlives it — and reaps it.
fn collect(
    reader: &mut impl Read,
    fd: i32,
    pid: i32,
    started: Instant,
    timeout: Duration,
) -> (ChildOutcome, ChildUsage) {
    let (bytes, cut_short) = read_until(reader, fd, started, timeout);
    if cut_short.is_some() {
        // SAFETY: killing the child's own process group.
        unsafe { libc::killpg(pid, libc::SIGKILL) };
    }
    let (status, usage) = reap(pid, started);
    // SAFETY: as above; anything the benchmark left behind dies with it.
    unsafe { libc::killpg(pid, libc::SIGKILL) };
    let outcome = match cut_short {
        Some(why) => ChildOutcome::Failed(why),
        None => decode(status, &bytes),
    };
    (outcome, usage)
}

fn child<F: FnOnce() -> Vec<BenchResult>>(fd: i32, work: F) -> ! {
    // SAFETY: we are the only thread in the child; these calls are plain syscalls.
    unsafe {
        libc::setpgid(0, 0);
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let results = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    let code = match results {
        Ok(results) => {
            let json = frame(&results);
            let mut off = 0;
            while off < json.len() {
                // SAFETY: writing from a valid buffer to our pipe end.
                let n = unsafe { libc::write(fd, json[off..].as_ptr().cast(), json.len() - off) };
                if n <= 0 {
                    break;
                }
                off += n as usize;
            }
            0
        }
        Err(_) => 101,
    };
    // SAFETY: _exit skips atexit handlers and destructors inherited from the parent.
    unsafe { libc::_exit(code) }
}

/// Results as the parent reads them: length-prefixed JSON, so the parent
/// need not wait for EOF (a process the benchmark forked may still hold the
/// pipe open).
pub fn frame(results: &[BenchResult]) -> Vec<u8> {
    let body = serde_json::to_vec(results).unwrap_or_default();
    let mut out = (body.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

/// Runs `exe args` in a process group of its own, `input` on its standard
/// input; it must write its results with [`frame`] to its standard output
/// and exit. Waits at most `timeout`.
pub fn run_in_exec(
    timeout: Duration,
    exe: &std::path::Path,
    args: &[String],
    input: Vec<u8>,
) -> (ChildOutcome, ChildUsage) {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .process_group(0);
    // SAFETY: die_with_parent only makes two system calls (async-signal-safe).
    unsafe {
        cmd.pre_exec(move || crate::lifeline::die_with_parent(parent));
    }
    let spawned = cmd.spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return (
                ChildOutcome::Failed(format!("cannot start {}: {e}", exe.display())),
                ChildUsage::default(),
            )
        }
    };
    let pid = child.id() as i32;
    crate::lifeline::watch_group(pid);
    // The session can exceed a pipe's buffer: feed it while reading.
    let mut stdin = child.stdin.take().expect("piped stdin");
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().expect("piped stdout");
    let fd = stdout.as_raw_fd();
    let done = collect(&mut stdout, fd, pid, started, timeout);
    crate::lifeline::forget_group(pid);
    let _ = feeder.join();
    done
}

/// The parent's half of `__bench`: runs `bench` in `mode` in a fresh
/// `exe __bench ID MODE SCRATCH`, handing it the session (calibrated clock,
/// BASE, machine, config) on its standard input.
pub fn run_bench_in_exec(
    session: &Session,
    exe: &Path,
    bench: &Benchmark,
    mode: Mode,
    scratch: &Path,
    timeout: Duration,
) -> (ChildOutcome, ChildUsage) {
    let args = vec![
        BENCH_SUBCOMMAND.to_string(),
        bench.id.to_string(),
        mode.as_str().to_string(),
        scratch.to_string_lossy().into_owned(),
    ];
    let state = serde_json::to_vec(&session.state()).unwrap_or_default();
    run_in_exec(timeout, exe, &args, state)
}

/// The child's half of `__bench`: reads the session from standard input,
/// runs benchmark `id` (found with `find`) in `mode`, and writes its results
/// framed to standard output. Anything the benchmark prints goes to
/// standard error instead, so it cannot corrupt them. Returns the exit
/// status: 0, or 101 when the benchmark panicked.
pub fn serve_bench(
    id: &str,
    mode: &str,
    scratch: &Path,
    find: impl Fn(&str) -> Option<&'static Benchmark>,
) -> Result<i32, String> {
    use std::io::Write;
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| format!("__bench: cannot read the session: {e}"))?;
    let state: SessionState = serde_json::from_slice(&input)
        .map_err(|e| format!("__bench: unreadable session on stdin: {e}"))?;
    let copy = state.copy;
    let session = Session::from_state(state);
    let mode = match mode {
        "hot" => Mode::Hot,
        "cold" => Mode::Cold,
        m => return Err(format!("__bench: unknown mode '{m}'")),
    };
    let bench = find(id).ok_or_else(|| format!("__bench: unknown benchmark '{id}'"))?;
    // SAFETY: dup and dup2 on this process's own standard descriptors;
    // the duplicate of stdout is owned by `out` below.
    let results_fd = unsafe {
        let fd = libc::dup(1);
        libc::dup2(2, 1);
        fd
    };
    if results_fd < 0 {
        return Err(format!(
            "__bench: cannot keep stdout: {}",
            std::io::Error::last_os_error()
        ));
    }
    if let Some(role) = copy {
        // SAFETY: results_fd is the valid duplicate made above, owned here only.
        let out = unsafe { std::fs::File::from_raw_fd(results_fd) };
        crate::copies::serve_copy(&session, role, bench, mode, scratch, out);
    }
    let results =
        std::panic::catch_unwind(|| crate::runner::run_here(&session, bench, mode, scratch));
    let Ok(results) = results else {
        return Ok(101);
    };
    // SAFETY: results_fd is the valid duplicate made above, owned here only.
    let mut out = unsafe { std::fs::File::from_raw_fd(results_fd) };
    out.write_all(&frame(&results))
        .map_err(|e| format!("__bench: cannot send the results: {e}"))?;
    Ok(0)
}

/// Reads the pipe to EOF; stops early on timeout or Ctrl-C.
fn read_until(
    reader: &mut impl Read,
    fd: i32,
    started: Instant,
    timeout: Duration,
) -> (Vec<u8>, Option<String>) {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        if crate::interrupt::interrupted() {
            return (bytes, Some("interrupted".into()));
        }
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            return (
                bytes,
                Some(format!(
                    "timed out after {:.0} s (hung?)",
                    timeout.as_secs_f64()
                )),
            );
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let wait_ms = left.as_millis().min(200) as i32;
        // SAFETY: pfd is a valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, wait_ms.max(1)) };
        if r <= 0 {
            continue;
        }
        match reader.read(&mut buf) {
            Ok(0) => return (bytes, None),
            Ok(n) => {
                bytes.extend_from_slice(&buf[..n]);
                if framed_len(&bytes).is_some_and(|len| bytes.len() >= 8 + len) {
                    return (bytes, None);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return (bytes, Some(format!("reading the child's results: {e}"))),
        }
    }
}

fn reap(pid: i32, started: Instant) -> (i32, ChildUsage) {
    let (status, usage) = wait_child(pid).unwrap_or_default();
    (
        status,
        ChildUsage {
            wall: started.elapsed(),
            ..usage
        },
    )
}

/// Waits for child `pid` (through EINTR) and takes the kernel's accounting
/// of it and its descendants (wait4): the raw wait status and the usage,
/// its `wall` left zero for the caller to fill.
pub(crate) fn wait_child(pid: i32) -> std::io::Result<(i32, ChildUsage)> {
    wait_child_flags(pid, 0)?.ok_or_else(|| std::io::Error::other("wait4 returned no child"))
}

/// [`wait_child`] with wait4's `flags`: with WNOHANG, None while the child
/// still runs.
pub(crate) fn wait_child_flags(pid: i32, flags: i32) -> std::io::Result<Option<(i32, ChildUsage)>> {
    let mut status = 0;
    // SAFETY: rusage is plain data; all zeros is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and ru are valid for wait4 to fill; pid is our child.
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if r == pid {
            break;
        }
        if r == 0 {
            return Ok(None);
        }
        let err = std::io::Error::last_os_error();
        if r < 0 && err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Some((
        status,
        ChildUsage {
            wall: Duration::ZERO,
            user_s: tv(ru.ru_utime),
            system_s: tv(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss as u64,
            voluntary_switches: ru.ru_nvcsw as u64,
            involuntary_switches: ru.ru_nivcsw as u64,
        },
    )))
}

/// One timed run of a whole command (`yamba stone`).
#[derive(Debug, Clone)]
pub struct TimedCommand {
    /// Clock ticks from just before the spawn to the reaped exit.
    pub ticks: u64,
    /// The same interval in ns, by the calibrated clock.
    pub clock_ns: f64,
    /// The same interval in ns, by CLOCK_MONOTONIC (the wall clock).
    pub wall_ns: f64,
    /// The kernel's accounting of the command and its descendants.
    pub usage: ChildUsage,
    pub status: std::process::ExitStatus,
    /// Killed at the timeout of [`time_command_limited`].
    pub timed_out: bool,
}

/// Runs `cmd` once and times it: `clock` and the wall clock from just
/// before the spawn to the exit, CPU times and peak memory from wait4.
pub fn time_command(
    clock: &crate::Clock,
    cmd: &mut std::process::Command,
) -> std::io::Result<TimedCommand> {
    time_command_limited(clock, cmd, None)
}

/// [`time_command`] with the command in a process group of its own: at
/// its exit, whatever it left running in the group (background children)
/// is killed before it is reaped, and after `timeout` the whole group is
/// killed ([`TimedCommand::timed_out`]). The group is on the run's
/// lifeline meanwhile, so killing `yamba` kills it too.
pub fn time_command_limited(
    clock: &crate::Clock,
    cmd: &mut std::process::Command,
    timeout: Option<Duration>,
) -> std::io::Result<TimedCommand> {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::sync::{Arc, Condvar, Mutex};
    cmd.process_group(0);
    let w0 = crate::clock::monotonic_ns();
    let started = Instant::now();
    let t0 = clock.start();
    let child = cmd.spawn()?;
    let pid = child.id() as i32;
    crate::lifeline::watch_group(pid);
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let fired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = timeout.map(|limit| {
        let (done, fired) = (done.clone(), fired.clone());
        std::thread::spawn(move || {
            let (m, c) = &*done;
            let g = m.lock().unwrap_or_else(|e| e.into_inner());
            let (g, _) = c
                .wait_timeout_while(g, limit, |d| !*d)
                .unwrap_or_else(|e| e.into_inner());
            if !*g {
                fired.store(true, std::sync::atomic::Ordering::SeqCst);
                // SAFETY: the group of a child not yet reaped (its leader
                // is at worst a zombie): ours to signal.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
        })
    });
    let exited = wait_exit(pid);
    let t1 = clock.stop();
    let w1 = crate::clock::monotonic_ns();
    let wall = started.elapsed();
    {
        let (m, c) = &*done;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
        c.notify_all();
    }
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    // What the command left behind in its group goes with it; the leader
    // is still unreaped, so the group is still this command's.
    // SAFETY: as above.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let waited = wait_child(pid);
    crate::lifeline::forget_group(pid);
    // Already reaped: dropping the handle neither waits nor kills.
    drop(child);
    exited?;
    let (status, usage) = waited?;
    let ticks = t1.wrapping_sub(t0);
    let status = std::process::ExitStatus::from_raw(status);
    Ok(TimedCommand {
        ticks,
        clock_ns: clock.ticks_to_ns(ticks),
        wall_ns: w1.saturating_sub(w0) as f64,
        usage: ChildUsage { wall, ..usage },
        timed_out: fired.load(std::sync::atomic::Ordering::SeqCst)
            && status.signal() == Some(libc::SIGKILL),
        status,
    })
}

/// Waits for `pid` to exit without reaping it (waitid WNOWAIT), so that
/// its process group cannot be reused while its leftovers are killed.
fn wait_exit(pid: i32) -> std::io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: our own child; `info` is ours.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

pub(crate) fn decode(status: i32, bytes: &[u8]) -> ChildOutcome {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        return ChildOutcome::Failed(format!(
            "crashed: killed by signal {sig} ({})",
            signal_name(sig)
        ));
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    if code == 101 {
        return ChildOutcome::Failed("panicked (see stderr)".into());
    }
    if code != 0 {
        return ChildOutcome::Failed(format!("exited with status {code}"));
    }
    let Some(len) = framed_len(bytes).filter(|&l| bytes.len() >= 8 + l) else {
        return ChildOutcome::Failed("ended without sending its results".into());
    };
    match serde_json::from_slice::<Vec<BenchResult>>(&bytes[8..8 + len]) {
        Ok(r) => ChildOutcome::Finished(r),
        Err(e) => ChildOutcome::Failed(format!("sent unreadable results: {e}")),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn release_free_memory() {
    // SAFETY: malloc_trim has no preconditions.
    unsafe { libc::malloc_trim(0) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn release_free_memory() {}

pub(crate) fn framed_len(bytes: &[u8]) -> Option<usize> {
    let head: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(head) as usize)
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGABRT => "SIGABRT",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGPIPE => "SIGPIPE",
        _ => "signal",
    }
}
