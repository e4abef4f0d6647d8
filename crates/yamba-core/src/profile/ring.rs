//! The sampler on Linux: perf_event_open(2) and its ring buffers, one per
//! CPU, drained while the profiled child runs.
use super::{parse_maps, Sample, Samples};
use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use crate::perf_sys::{Attr, FLAG_DISABLED, FLAG_EXCLUDE_HV, FLAG_EXCLUDE_KERNEL, FLAG_INHERIT};

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
const PERF_SAMPLE_IP: u64 = 1;
const PERF_SAMPLE_TID: u64 = 2;
const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_THROTTLE: u32 = 5;
const PERF_RECORD_SAMPLE: u32 = 9;
const MISC_CPUMODE_MASK: u16 = 7;
const MISC_KERNEL: u16 = 1;
const IOC_ENABLE: u64 = 0x2400;
const IOC_DISABLE: u64 = 0x2401;
/// Data pages per CPU ring buffer (a power of two).
const DATA_PAGES: usize = 64;

struct Ring {
    fd: i32,
    base: *mut u8,
    len: usize,
    page: usize,
}

impl Ring {
    fn open(pid: i32, cpu: i32, period_ns: u64, kernel: bool) -> Result<Ring, std::io::Error> {
        let attr = Attr {
            type_: PERF_TYPE_SOFTWARE,
            config: PERF_COUNT_SW_CPU_CLOCK,
            sample_period: period_ns,
            sample_type: PERF_SAMPLE_IP | PERF_SAMPLE_TID,
            flags: FLAG_DISABLED
                | FLAG_INHERIT
                | FLAG_EXCLUDE_HV
                | if kernel { 0 } else { FLAG_EXCLUDE_KERNEL },
            ..Attr::default()
        };
        let fd = crate::perf_sys::open(attr, pid, cpu)?;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = page * (1 + DATA_PAGES);
        // SAFETY: mapping the event's ring buffer, as perf_event_open(2) describes.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            unsafe { libc::close(fd) };
            return Err(e);
        }
        Ok(Ring {
            fd,
            base: base.cast(),
            len,
            page,
        })
    }

    fn ioctl(&self, req: u64) {
        // SAFETY: enable/disable ioctls on our own perf fd.
        unsafe { libc::ioctl(self.fd, req as _, 0) };
    }

    /// Moves every complete record out of the ring buffer.
    fn drain(&self, out: &mut Samples) {
        let data_size = self.page * DATA_PAGES;
        // SAFETY: the metadata page holds data_head at 1024 and data_tail at 1032.
        let head_p = unsafe { self.base.add(1024) } as *const u64;
        let tail_p = unsafe { self.base.add(1032) } as *mut u64;
        let head = unsafe { std::ptr::read_volatile(head_p) };
        fence(Ordering::Acquire);
        let mut tail = unsafe { std::ptr::read_volatile(tail_p) };
        // SAFETY: the data area follows the metadata page.
        let data = unsafe { std::slice::from_raw_parts(self.base.add(self.page), data_size) };
        let byte = |i: u64| data[(i % data_size as u64) as usize];
        let read = |at: u64, n: usize| -> Vec<u8> { (0..n as u64).map(|k| byte(at + k)).collect() };
        while tail + 8 <= head {
            let h = read(tail, 8);
            let ty = u32::from_le_bytes(h[0..4].try_into().unwrap());
            let misc = u16::from_le_bytes(h[4..6].try_into().unwrap());
            let size = u16::from_le_bytes(h[6..8].try_into().unwrap()) as u64;
            if size < 8 || tail + size > head {
                break;
            }
            let body = read(tail + 8, (size - 8) as usize);
            let u64_at = |o: usize| {
                body.get(o..o + 8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            };
            match ty {
                PERF_RECORD_SAMPLE => {
                    if let Some(ip) = u64_at(0) {
                        out.samples.push(Sample {
                            ip,
                            kernel: misc & MISC_CPUMODE_MASK == MISC_KERNEL,
                        });
                    }
                }
                PERF_RECORD_LOST => out.lost += u64_at(8).unwrap_or(0),
                PERF_RECORD_THROTTLE => out.throttled += 1,
                _ => {}
            }
            tail += size;
        }
        fence(Ordering::Release);
        // SAFETY: telling the kernel how far we have read.
        unsafe { std::ptr::write_volatile(tail_p, tail) };
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping and closing what open() created.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
            libc::close(self.fd);
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
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as i32;
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
    cpus: i32,
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
        unsafe { libc::close(go[1]) };
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
    unsafe { libc::close(go[0]) };
    let release = |byte: bool| {
        if byte {
            // SAFETY: writing one byte from a valid buffer.
            unsafe { libc::write(go[1], b"g".as_ptr().cast(), 1) };
        }
        unsafe { libc::close(go[1]) };
    };
    let opened = open_all(pid, period_ns);
    let (rings, kernel) = match opened {
        Ok(x) => x,
        Err(e) => {
            release(false);
            reap(pid, None);
            return Err(e);
        }
    };
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map(|t| parse_maps(&t))
        .unwrap_or_default();
    let mut out = Samples {
        samples: Vec::new(),
        period_ns,
        lost: 0,
        throttled: 0,
        kernel,
        maps,
        status: 0,
        child_cpu_ns: 0,
    };
    for r in &rings {
        r.ioctl(IOC_ENABLE);
    }
    release(true);
    let started = Instant::now();
    let status = loop {
        for r in &rings {
            r.drain(&mut out);
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
    for r in &rings {
        r.ioctl(IOC_DISABLE);
        r.drain(&mut out);
    }
    out.status = status.0;
    out.child_cpu_ns = status.1;
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
