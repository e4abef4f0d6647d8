//! The processes of one block of N simultaneous copies, both halves: the
//! parent starts them, waits until every one is pinned and ready, releases
//! them at once (a barrier: the start pipe's end, closed), reads each
//! one's results, and kills them all when the last has sent its own; a
//! copy, once it has measured, runs the benchmark again and again until
//! then (as lmbench's `benchmp` children go on running until every one has
//! reported), so no copy measures on a machine quieter than N copies make it.

use super::{CopyReport, CopyRole};
use crate::bench::{Benchmark, Session, SessionState};
use crate::isolate::{
    decode, frame, framed_len, wait_child, wait_child_flags, ChildOutcome, ChildUsage,
};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use yamba_results::results::{BenchResult, Mode};

/// How one copy's process went, as its parent saw it.
#[derive(Debug)]
pub(crate) struct CopyProcess {
    pub outcome: ChildOutcome,
    pub usage: ChildUsage,
    /// It had exited before the last copy sent its results: the others
    /// measured partly without it.
    pub ended_early: bool,
}

/// A copy's process, started.
struct Started {
    pid: i32,
    out: std::fs::File,
    bytes: Vec<u8>,
    /// Its framed results are in, or its output ended.
    done: bool,
    feeder: Option<std::thread::JoinHandle<()>>,
}

fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid 2-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!(
            "cannot create a pipe: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: both descriptors were just opened and are owned here only.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Runs one block of `cpus.len()` copies of `bench` in `mode`, copy i
/// pinned to `cpus[i]` with scratch folder `scratches[i]`: fresh
/// `__bench` processes when the session has an executable, forks
/// otherwise. Waits at most `timeout` in all.
pub(crate) fn run_together(
    session: &Session,
    bench: &'static Benchmark,
    mode: Mode,
    scratches: &[PathBuf],
    cpus: &[usize],
    timeout: Duration,
) -> Vec<CopyProcess> {
    let failed_all = |why: String| {
        cpus.iter()
            .map(|_| CopyProcess {
                outcome: ChildOutcome::Failed(why.clone()),
                usage: ChildUsage::default(),
                ended_early: false,
            })
            .collect()
    };
    let ((ready_r, ready_w), (start_r, start_w)) = match (pipe(), pipe()) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return failed_all(e),
    };
    crate::isolate::release_free_memory();
    let started = Instant::now();
    let count = cpus.len();
    let mut procs: Vec<Started> = Vec::new();
    let mut cut_short = None;
    for (index, (&cpu, scratch)) in cpus.iter().zip(scratches).enumerate() {
        let role = CopyRole {
            index,
            count,
            ready_fd: ready_w.as_raw_fd(),
            start_fd: start_r.as_raw_fd(),
        };
        let spawned = match &session.bench_exe {
            Some(exe) => spawn_exec(session, exe, bench, mode, scratch, cpu, role),
            None => spawn_fork(session, bench, mode, scratch, cpu, role, &ready_r, &start_w),
        };
        match spawned {
            Ok(p) => {
                crate::lifeline::watch_group(p.pid);
                procs.push(p);
            }
            Err(e) => {
                cut_short = Some(format!("copy {} of {count}: {e}", index + 1));
                break;
            }
        }
    }
    // Only the copies hold these ends now: a copy that dies before it is
    // ready cannot leave the parent waiting on a pipe it keeps open itself.
    drop(ready_w);
    drop(start_r);
    if cut_short.is_none() {
        let ready = wait_ready(&ready_r, count, started, timeout);
        if ready < count {
            cut_short = Some(if crate::interrupt::interrupted() {
                "interrupted".to_string()
            } else {
                format!("only {ready} of {count} copies got ready to start")
            });
        }
    }
    // The barrier: every copy sees the end of the start pipe at once.
    drop(start_w);
    if cut_short.is_none() {
        cut_short = read_results(&mut procs, started, timeout);
    }
    let finished: Vec<CopyProcess> = procs
        .into_iter()
        .map(|p| end(p, started, cut_short.as_deref()))
        .collect();
    if finished.len() < count {
        return failed_all(cut_short.unwrap_or_else(|| "a copy did not start".into()));
    }
    finished
}

/// Counts the copies' "ready" bytes until all `count` are in, the pipe
/// ends (every copy gone or past it), the timeout, or Ctrl-C.
fn wait_ready(ready: &OwnedFd, count: usize, started: Instant, timeout: Duration) -> usize {
    let mut got = 0;
    let mut buf = [0u8; 64];
    while got < count && !crate::interrupt::interrupted() {
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        let mut pfd = libc::pollfd {
            fd: ready.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: pfd is a valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().clamp(1, 200) as i32) };
        if r <= 0 {
            continue;
        }
        // SAFETY: reading into a buffer we own from an open descriptor.
        let n = unsafe { libc::read(ready.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            0 => break,
            n if n > 0 => got += n as usize,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    got
}

/// Reads every copy's framed results as they come; the reason when cut
/// short (timeout, Ctrl-C).
fn read_results(procs: &mut [Started], started: Instant, timeout: Duration) -> Option<String> {
    let mut buf = [0u8; 65536];
    loop {
        let open: Vec<usize> = (0..procs.len()).filter(|&i| !procs[i].done).collect();
        if open.is_empty() {
            return None;
        }
        if crate::interrupt::interrupted() {
            return Some("interrupted".into());
        }
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Some(format!(
                "timed out after {:.0} s (hung?)",
                timeout.as_secs_f64()
            ));
        }
        let mut pfds: Vec<libc::pollfd> = open
            .iter()
            .map(|&i| libc::pollfd {
                fd: procs[i].out.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let wait_ms = left.as_millis().clamp(1, 200) as i32;
        // SAFETY: pfds is a valid array of pollfd of the length given.
        let r = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, wait_ms) };
        if r <= 0 {
            continue;
        }
        for (pfd, &i) in pfds.iter().zip(&open) {
            if pfd.revents == 0 {
                continue;
            }
            let p = &mut procs[i];
            match p.out.read(&mut buf) {
                Ok(0) => p.done = true,
                Ok(n) => {
                    p.bytes.extend_from_slice(&buf[..n]);
                    p.done = complete(&p.bytes);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => p.done = true,
            }
        }
    }
}

fn complete(bytes: &[u8]) -> bool {
    framed_len(bytes).is_some_and(|len| bytes.len() >= 8 + len)
}

/// Ends a copy: notes whether it had already exited, kills its process
/// group (it is still running the benchmark again), reaps it, and reads
/// its outcome — its results when they came whole, else why not.
fn end(p: Started, started: Instant, cut_short: Option<&str>) -> CopyProcess {
    let early = wait_child_flags(p.pid, libc::WNOHANG).ok().flatten();
    let ended_early = early.is_some();
    // SAFETY: the copy's own process group (its leader is ours, unreaped
    // unless it exited on its own above).
    unsafe { libc::killpg(p.pid, libc::SIGKILL) };
    let (status, usage) = match early {
        Some(done) => done,
        None => wait_child(p.pid).unwrap_or_default(),
    };
    crate::lifeline::forget_group(p.pid);
    if let Some(f) = p.feeder {
        let _ = f.join();
    }
    let outcome = if complete(&p.bytes) {
        // Killed by its parent after it had sent them: its results stand.
        decode(0, &p.bytes)
    } else if let Some(why) = cut_short {
        ChildOutcome::Failed(why.to_string())
    } else {
        decode(status, &p.bytes)
    };
    CopyProcess {
        outcome,
        usage: ChildUsage {
            wall: started.elapsed(),
            ..usage
        },
        ended_early,
    }
}

/// A copy as a fresh `EXE __bench …` process, its session (pinned to
/// `cpu`, with its role) on standard input, the role's two descriptors
/// inherited.
fn spawn_exec(
    session: &Session,
    exe: &Path,
    bench: &Benchmark,
    mode: Mode,
    scratch: &Path,
    cpu: usize,
    role: CopyRole,
) -> Result<Started, String> {
    use std::os::unix::process::CommandExt;
    let mut state: SessionState = session.state();
    state.cpu = Some(cpu);
    state.copy = Some(role);
    let input = serde_json::to_vec(&state).map_err(|e| e.to_string())?;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let mut cmd = std::process::Command::new(exe);
    cmd.args([
        crate::isolate::BENCH_SUBCOMMAND,
        bench.id,
        mode.as_str(),
        &scratch.to_string_lossy(),
    ])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .process_group(0);
    let (ready, start) = (role.ready_fd, role.start_fd);
    // SAFETY: die_with_parent makes two system calls and fcntl one each
    // (async-signal-safe); the descriptors are open in the forked child.
    unsafe {
        cmd.pre_exec(move || {
            crate::lifeline::die_with_parent(parent)?;
            for fd in [ready, start] {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.stdout.take().expect("piped stdout");
    let pid = child.id() as i32;
    // Reaped by `end`: dropping the handle neither waits nor kills.
    drop(child);
    Ok(Started {
        pid,
        out: std::fs::File::from(OwnedFd::from(out)),
        bytes: Vec::new(),
        done: false,
        feeder: Some(feeder),
    })
}

/// A copy as a fork of this process (library callers without the `yamba`
/// executable): the same protocol, the session copied with `cpu`.
#[allow(clippy::too_many_arguments)]
fn spawn_fork(
    session: &Session,
    bench: &'static Benchmark,
    mode: Mode,
    scratch: &Path,
    cpu: usize,
    role: CopyRole,
    ready_r: &OwnedFd,
    start_w: &OwnedFd,
) -> Result<Started, String> {
    let (out_r, out_w) = pipe()?;
    let mut mine = session.clone();
    mine.cpu = Some(cpu);
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child only runs the copy's protocol and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork failed: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        crate::lifeline::close_inherited();
        // SAFETY: in the child: its own process group, default signals,
        // and closing its copies of the parent's ends of the barrier (the
        // start pipe must end when the parent closes its end).
        unsafe {
            libc::setpgid(0, 0);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::close(ready_r.as_raw_fd());
            libc::close(start_w.as_raw_fd());
            libc::close(out_r.as_raw_fd());
        }
        if crate::lifeline::die_with_parent(parent).is_err() {
            // SAFETY: the parent is gone; leave without running anything.
            unsafe { libc::_exit(1) };
        }
        let out = std::fs::File::from(out_w);
        serve_copy(&mine, role, bench, mode, scratch, out);
    }
    drop(out_w);
    // SAFETY: setpgid on our own child (it does the same; whichever runs
    // first makes the group before anyone signals it).
    unsafe { libc::setpgid(pid, pid) };
    Ok(Started {
        pid,
        out: std::fs::File::from(out_r),
        bytes: Vec::new(),
        done: false,
        feeder: None,
    })
}

/// A copy's half: pinned to its CPU, it says it is ready, waits for the
/// release, measures as one benchmark process does, sends its results
/// (each with its [`CopyReport`]) through `out`, then runs the benchmark
/// again, its results discarded, until its parent kills it.
pub fn serve_copy(
    session: &Session,
    role: CopyRole,
    bench: &'static Benchmark,
    mode: Mode,
    scratch: &Path,
    mut out: std::fs::File,
) -> ! {
    if let Some(cpu) = session.cpu {
        // Its failure is reported by run_here, which pins again.
        let _ = crate::affinity::pin_current_thread(cpu);
    }
    let mut byte = [b'r'];
    // SAFETY: writing one byte from our buffer, then closing our copy of
    // the ready pipe's end (the parent counts one byte per copy).
    unsafe {
        libc::write(role.ready_fd, byte.as_ptr().cast(), 1);
        libc::close(role.ready_fd);
    }
    loop {
        // SAFETY: reading into our buffer; the parent never writes, so
        // this returns 0 when it closes its end (or fails).
        let n = unsafe { libc::read(role.start_fd, byte.as_mut_ptr().cast(), 1) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break;
    }
    // SAFETY: closing our copy of the start pipe's end.
    unsafe { libc::close(role.start_fd) };
    let started_ns = crate::clock::monotonic_ns();
    let cpu_at_start = crate::affinity::current_cpu();
    let results = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::runner::run_here(session, bench, mode, scratch)
    }));
    let Ok(mut results) = results else {
        // SAFETY: leave at once; the parent reads 101 as a panic.
        unsafe { libc::_exit(101) };
    };
    let report = CopyReport {
        index: role.index,
        cpu: session.cpu,
        cpu_at_start,
        cpu_at_end: crate::affinity::current_cpu(),
        started_ns,
        finished_ns: crate::clock::monotonic_ns(),
    };
    for r in &mut results {
        report.attach(r);
    }
    if out.write_all(&frame(&results)).is_err() {
        // SAFETY: the parent is gone or stopped reading; nothing to do.
        unsafe { libc::_exit(1) };
    }
    keep_busy(session, bench, mode, scratch)
}

/// Where a copy that has measured runs the benchmark again: beside its
/// scratch folder, not inside it, so that what the copies share through
/// their folders' common parent (`testing.locked`'s lock file) is shared
/// by the busy copy too. Inside, the busy copy locked a file of its own,
/// and a copy still measuring ran uncontended: two serialized copies
/// scaled ×1.28 (docs/copies.md).
pub(super) fn again_dir(scratch: &Path) -> PathBuf {
    let mut name = scratch.file_name().unwrap_or_default().to_os_string();
    name.push("-again");
    scratch.with_file_name(name)
}

/// The benchmark again and again, its results dropped, quietly.
fn keep_busy(session: &Session, bench: &'static Benchmark, mode: Mode, scratch: &Path) -> ! {
    std::panic::set_hook(Box::new(|_| {}));
    let dir = again_dir(scratch);
    loop {
        let _ = std::fs::create_dir_all(&dir);
        let t0 = Instant::now();
        let again: std::thread::Result<Vec<BenchResult>> =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                crate::runner::run_here(session, bench, mode, &dir)
            }));
        drop(again);
        let _ = std::fs::remove_dir_all(&dir);
        if t0.elapsed() < Duration::from_millis(1) {
            // A benchmark that fails at once would spin on its error.
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
