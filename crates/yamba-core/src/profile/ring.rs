//! The sampler on Linux: a software cpu-clock event per CPU on the child
//! (perf_event_open through the `perf-event2` crate) and its ring buffers,
//! drained while the profiled child runs; the child records its placed
//! copies of code in a ledger shared with the sampler.

use super::{credit_syscall_returns, merge_maps, name_placed_copies, parse_maps, Sample, Samples};
use crate::placement::ledger::Ledger;
use perf_event::events::Software;
use perf_event::{Builder, Clock, SampleFlag, Sampler};
use std::time::{Duration, Instant};

const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_THROTTLE: u32 = 5;
const PERF_RECORD_SAMPLE: u32 = 9;
const MISC_CPUMODE_MASK: u16 = 7;
const MISC_KERNEL: u16 = 1;
/// Bytes of each CPU's ring buffer (a power of two).
const RING_BYTES: usize = 64 * 4096;
/// How often the child's memory map is read again while it runs (it
/// changes when the work maps a library or execs a program).
const MAPS_EVERY: Duration = Duration::from_millis(50);
/// Placed copies the profiled child can record (`placement::ledger`): a
/// block places up to 64 copies of a loop and 64 of its dummy, and a
/// profile of a few seconds runs some hundreds of blocks.
const LEDGER_ENTRIES: usize = 1 << 16;

struct Ring {
    sampler: Sampler,
}

impl Ring {
    fn open(pid: i32, cpu: usize, period_ns: u64, kernel: bool) -> std::io::Result<Ring> {
        let counter = Builder::new(Software::CPU_CLOCK)
            .observe_pid(pid)
            .one_cpu(cpu)
            .inherit(true)
            .exclude_kernel(!kernel)
            .exclude_hv(true)
            .sample_period(period_ns)
            .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::TIME)
            // The clock the placement ledger's entries are written on.
            .clockid(Clock::MONOTONIC)
            .enabled(false)
            .build()?;
        Ok(Ring {
            sampler: counter.sampled(RING_BYTES)?,
        })
    }

    fn enable(&mut self) {
        let _ = self.sampler.enable();
    }

    fn disable(&mut self) {
        let _ = self.sampler.disable();
    }

    /// Moves every complete record out of the ring buffer.
    fn drain(&mut self, out: &mut Samples) {
        while let Some(record) = self.sampler.next_record() {
            let body = record.to_contiguous();
            let u64_at = |o: usize| {
                body.get(o..o + 8)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_le_bytes)
            };
            match record.ty() {
                // IP, then pid and tid (4 bytes each), then TIME.
                PERF_RECORD_SAMPLE => {
                    if let (Some(ip), Some(time)) = (u64_at(0), u64_at(16)) {
                        out.samples.push(Sample::at_time(
                            ip,
                            record.misc() & MISC_CPUMODE_MASK == MISC_KERNEL,
                            time,
                        ));
                    }
                }
                PERF_RECORD_LOST => out.lost += u64_at(8).unwrap_or(0),
                PERF_RECORD_THROTTLE => out.throttled += 1,
                _ => {}
            }
        }
    }
}

fn paranoid() -> String {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// One ring per online CPU for `pid`; with kernel samples when allowed.
fn open_all(pid: i32, period_ns: u64) -> Result<(Vec<Ring>, Result<(), String>), String> {
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
    let mut kernel: Result<(), String> = Ok(());
    let mut rings = Vec::new();
    for cpu in 0..cpus {
        let r = match Ring::open(pid, cpu, period_ns, kernel.is_ok()) {
            Err(e)
                if kernel.is_ok()
                    && matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) =>
            {
                kernel = Err(format!(
                    "kernel samples not permitted (perf_event_paranoid = {}; needs ≤ 1, or root/CAP_PERFMON)",
                    paranoid()
                ));
                rings.clear();
                return open_user_only(pid, period_ns, cpus, kernel);
            }
            r => r,
        };
        match r {
            Ok(ring) => rings.push(ring),
            // A CPU that is offline cannot be sampled; the others can.
            Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {}
            Err(e) => return Err(why_not(e)),
        }
    }
    Ok((rings, kernel))
}

fn open_user_only(
    pid: i32,
    period_ns: u64,
    cpus: usize,
    kernel: Result<(), String>,
) -> Result<(Vec<Ring>, Result<(), String>), String> {
    let mut rings = Vec::new();
    for cpu in 0..cpus {
        match Ring::open(pid, cpu, period_ns, false) {
            Ok(r) => rings.push(r),
            Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {}
            Err(e) => return Err(why_not(e)),
        }
    }
    Ok((rings, kernel))
}

fn why_not(e: std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => "perf_event_open is not available (kernel built without CONFIG_PERF_EVENTS?)".into(),
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "perf_event_open not permitted (perf_event_paranoid = {}, or a seccomp filter / container forbids it): {e}",
            paranoid()
        ),
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) => {
            format!("the cpu-clock software event is not supported here: {e}")
        }
        _ => format!("perf_event_open failed: {e}"),
    }
}

pub fn profile_child<F: FnOnce() -> i32>(
    period_ns: u64,
    timeout: Duration,
    work: F,
) -> Result<Samples, String> {
    let ledger = Ledger::new(LEDGER_ENTRIES)
        .map_err(|e| format!("shared memory for the placement ledger: {e}"))?;
    let mut go = [0i32; 2];
    // SAFETY: go is a valid 2-element array.
    if unsafe { libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the child only waits for the go byte, runs `work` and _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: the child closes its copy of the pipe's write end.
        unsafe { libc::close(go[1]) };
        ledger.record_here();
        let mut b = [0u8; 1];
        // SAFETY: reading one byte into a valid buffer.
        let n = unsafe { libc::read(go[0], b.as_mut_ptr().cast(), 1) };
        let code = if n == 1 {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or(101)
        } else {
            111 // the parent gave up before starting us
        };
        // SAFETY: leave without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: the parent closes its copy of the pipe's read end.
    unsafe { libc::close(go[0]) };
    let release = |byte: bool| {
        if byte {
            // SAFETY: writing one byte from a valid buffer.
            unsafe { libc::write(go[1], b"g".as_ptr().cast(), 1) };
        }
        // SAFETY: closing the write end this function opened, once.
        unsafe { libc::close(go[1]) };
    };
    let opened = open_all(pid, period_ns);
    let (mut rings, kernel) = match opened {
        Ok(x) => x,
        Err(e) => {
            release(false);
            reap(pid, None);
            return Err(e);
        }
    };
    let read_maps = || {
        std::fs::read_to_string(format!("/proc/{pid}/maps"))
            .map(|t| parse_maps(&t))
            .unwrap_or_default()
    };
    let mut out = Samples {
        samples: Vec::new(),
        period_ns,
        lost: 0,
        throttled: 0,
        kernel,
        maps: read_maps(),
        copies_unrecorded: 0,
        status: 0,
        child_cpu_ns: 0,
    };
    for r in &mut rings {
        r.enable();
    }
    release(true);
    let started = Instant::now();
    let mut maps_read = Instant::now();
    let status = loop {
        for r in &mut rings {
            r.drain(&mut out);
        }
        if maps_read.elapsed() >= MAPS_EVERY {
            merge_maps(&mut out.maps, read_maps());
            maps_read = Instant::now();
        }
        if let Some(st) = reap(pid, Some(libc::WNOHANG)) {
            break st;
        }
        if started.elapsed() > timeout {
            // SAFETY: killing our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            reap(pid, None);
            return Err(format!(
                "the profiled work took longer than {:.0} s",
                timeout.as_secs_f64()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    for r in &mut rings {
        r.disable();
        r.drain(&mut out);
    }
    out.status = status.0;
    out.child_cpu_ns = status.1;
    let copies = ledger.recorded();
    out.copies_unrecorded = copies.unrecorded;
    name_placed_copies(&mut out.samples, &copies);
    credit_syscall_returns(&mut out);
    Ok(out)
}

/// wait4; Some((status, CPU ns)) once the child is gone.
fn reap(pid: i32, flags: Option<i32>) -> Option<(i32, u64)> {
    let mut st = 0;
    // SAFETY: a zeroed rusage is valid for wait4 to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::wait4(pid, &mut st, flags.unwrap_or(0), &mut ru) };
        if r == pid {
            let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
            return Some((st, ns(ru.ru_utime) + ns(ru.ru_stime)));
        }
        if r == 0 {
            return None;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Some((st, 0));
        }
    }
}
