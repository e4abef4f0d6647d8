//! Statistical profiling of a benchmark: where does the time go, kernel
//! and user, while it runs (the seed's kprof table, for Linux).
//!
//! The work runs in a forked child that waits until the parent has attached
//! a software `cpu-clock` sampling event to it (perf_event_open: it works
//! where hardware counters are missing, as in most VMs), one event per CPU
//! with `inherit` so threads and processes the benchmark starts are sampled
//! too (the kernel refuses ring buffers on inherited per-task events). The
//! parent drains the ring buffers until the child exits, then resolves each
//! sampled instruction pointer: kernel addresses through /proc/kallsyms,
//! user addresses through the child's /proc/PID/maps and the mapped file's
//! symbol table (`nm`, with its program headers read here to undo the load
//! bias). Kernel samples need perf_event_paranoid ≤ 1 or CAP_PERFMON/root;
//! without them the profile is user-only and says so.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// One sampled instruction pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub ip: u64,
    pub kernel: bool,
}

/// What the sampler collected.
#[derive(Debug, Clone)]
pub struct Samples {
    pub samples: Vec<Sample>,
    /// Sampling period, ns of CPU time per sample.
    pub period_ns: u64,
    /// Samples the kernel dropped (ring buffer full).
    pub lost: u64,
    /// Times the kernel throttled the sampling rate.
    pub throttled: u64,
    /// Kernel addresses were sampled (else: why not).
    pub kernel: Result<(), String>,
    /// The child's memory map, read while it ran.
    pub maps: Vec<Mapping>,
    /// The child's wait status.
    pub status: i32,
    /// CPU time the kernel accounted to the child (user + system, wait4):
    /// what the samples should add up to.
    pub child_cpu_ns: u64,
}

/// A file-backed executable mapping from /proc/PID/maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    pub path: PathBuf,
}

/// Parses /proc/PID/maps text: executable, file-backed mappings only.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let range = f.next()?;
            let perms = f.next()?;
            let offset = u64::from_str_radix(f.next()?, 16).ok()?;
            let _dev = f.next()?;
            let _inode = f.next()?;
            let path = f.collect::<Vec<_>>().join(" ");
            // Files, and the kernel's [vdso]: executable mappings with a name.
            if !perms.contains('x') || path.is_empty() {
                return None;
            }
            let (s, e) = range.split_once('-')?;
            Some(Mapping {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                offset,
                path: PathBuf::from(path),
            })
        })
        .collect()
}

/// Runs `work` in a forked child sampled every `period_ns` of CPU time;
/// returns the samples when the child has exited. `work`'s return value is
/// the child's exit status. Err says why sampling is impossible here.
pub fn profile_child<F: FnOnce() -> i32>(
    period_ns: u64,
    timeout: Duration,
    work: F,
) -> Result<Samples, String> {
    adapter::profile_child(period_ns, timeout, work)
}

/// A symbol table: sorted start addresses and names.
#[derive(Debug, Default, Clone)]
pub struct SymbolTable {
    syms: Vec<(u64, String)>,
}

impl SymbolTable {
    pub fn from_pairs(mut syms: Vec<(u64, String)>) -> SymbolTable {
        syms.sort_by_key(|s| s.0);
        SymbolTable { syms }
    }

    /// The symbol whose range holds `addr` (the last one starting at or before it).
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.0 <= addr);
        (i > 0).then(|| self.syms[i - 1].1.as_str())
    }

    pub fn len(&self) -> usize {
        self.syms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
}

/// Text symbols of /proc/kallsyms text (`addr type name [module]`); Err
/// when the addresses are hidden (kptr_restrict, or not privileged).
pub fn parse_kallsyms(text: &str) -> Result<SymbolTable, String> {
    let mut syms = Vec::new();
    let mut zero = 0usize;
    for l in text.lines() {
        let mut f = l.split_whitespace();
        let (Some(a), Some(t), Some(name)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if !matches!(t, "T" | "t" | "W" | "w") || name.starts_with("__pfx_") {
            continue;
        }
        let Ok(addr) = u64::from_str_radix(a, 16) else {
            continue;
        };
        if addr == 0 {
            zero += 1;
            continue;
        }
        let name = match f.next() {
            Some(m) => format!("{name} {m}"),
            None => name.to_string(),
        };
        syms.push((addr, name));
    }
    if syms.is_empty() {
        return Err(if zero > 0 {
            "kernel symbol addresses are hidden (/proc/sys/kernel/kptr_restrict)".into()
        } else {
            "no text symbols in /proc/kallsyms".into()
        });
    }
    Ok(SymbolTable::from_pairs(syms))
}

/// Function symbols of an ELF file, by `nm` (demangled), at their link-time
/// addresses; plus the (file offset → address) shift of its loadable segments.
struct ElfSymbols {
    table: SymbolTable,
    /// (p_offset, p_vaddr, p_filesz) of PT_LOAD segments.
    segments: Vec<(u64, u64, u64)>,
}

impl ElfSymbols {
    fn load(path: &std::path::Path) -> Result<ElfSymbols, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let segments = elf_load_segments(&bytes)
            .ok_or_else(|| format!("{}: not a 64-bit ELF file", path.display()))?;
        let mut syms = Vec::new();
        for args in [
            &["--defined-only", "-C"][..],
            &["--defined-only", "-C", "-D"][..],
        ] {
            let out = std::process::Command::new("nm")
                .args(args)
                .arg(path)
                .output()
                .map_err(|e| format!("cannot run nm (binutils): {e}"))?;
            for l in String::from_utf8_lossy(&out.stdout).lines() {
                let (Some(a), Some(rest)) = (l.get(..16), l.get(17..)) else {
                    continue;
                };
                let Some((t, name)) = rest.split_once(' ') else {
                    continue;
                };
                if !matches!(t, "T" | "t" | "W" | "w" | "i") {
                    continue;
                }
                // Dynamic symbols carry versions: read@@GLIBC_2.2.5.
                let name = name.split('@').next().unwrap_or(name);
                if let Ok(addr) = u64::from_str_radix(a, 16) {
                    syms.push((addr, name.to_string()));
                }
            }
            if !syms.is_empty() {
                break; // the full table was there; -D only for stripped libraries
            }
        }
        Ok(ElfSymbols {
            table: SymbolTable::from_pairs(syms),
            segments,
        })
    }

    fn lookup_file_offset(&self, off: u64) -> Option<&str> {
        let (p_off, p_vaddr, _) = self
            .segments
            .iter()
            .find(|(o, _, sz)| off >= *o && off < o + sz)
            .copied()?;
        self.table.lookup(off - p_off + p_vaddr)
    }
}

/// PT_LOAD program headers of a little-endian ELF64 image.
fn elf_load_segments(b: &[u8]) -> Option<Vec<(u64, u64, u64)>> {
    if b.get(..4)? != b"\x7fELF" || *b.get(4)? != 2 || *b.get(5)? != 1 {
        return None;
    }
    let u16_at = |o: usize| Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
    let phoff = u64_at(0x20)? as usize;
    let phentsize = u16_at(0x36)? as usize;
    let phnum = u16_at(0x38)? as usize;
    let mut segs = Vec::new();
    for i in 0..phnum {
        let p = phoff + i * phentsize;
        if u32_at(p)? == 1 {
            segs.push((u64_at(p + 8)?, u64_at(p + 16)?, u64_at(p + 32)?));
        }
    }
    Some(segs)
}

/// Resolves sampled addresses to `symbol` (kernel) or `symbol [file]` (user).
pub struct Symbolizer {
    kernel: Result<SymbolTable, String>,
    maps: Vec<Mapping>,
    files: HashMap<PathBuf, Result<ElfSymbols, String>>,
}

impl Symbolizer {
    pub fn new(maps: Vec<Mapping>) -> Symbolizer {
        let kernel = std::fs::read_to_string("/proc/kallsyms")
            .map_err(|e| format!("cannot read /proc/kallsyms: {e}"))
            .and_then(|t| parse_kallsyms(&t));
        Symbolizer {
            kernel,
            maps,
            files: HashMap::new(),
        }
    }

    /// Why kernel addresses cannot be named, if they cannot.
    pub fn kernel_problem(&self) -> Option<&str> {
        self.kernel.as_ref().err().map(String::as_str)
    }

    pub fn resolve(&mut self, s: Sample) -> String {
        if s.kernel {
            return match &self.kernel {
                Ok(t) => t.lookup(s.ip).map(|n| format!("{n} [kernel]")),
                Err(_) => None,
            }
            .unwrap_or_else(|| format!("{:#x} [kernel]", s.ip));
        }
        let Some(m) = self
            .maps
            .iter()
            .find(|m| s.ip >= m.start && s.ip < m.end)
            .cloned()
        else {
            return format!("{:#x} [unmapped]", s.ip);
        };
        if !m.path.starts_with("/") {
            return m.path.display().to_string(); // [vdso]: no file to read
        }
        let file = m
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let elf = self
            .files
            .entry(m.path.clone())
            .or_insert_with(|| ElfSymbols::load(&m.path));
        let off = s.ip - m.start + m.offset;
        match elf.as_ref().ok().and_then(|e| e.lookup_file_offset(off)) {
            Some(name) => format!("{name} [{file}]"),
            None => format!("{file}+{off:#x}"),
        }
    }
}

/// One line of the profile table.
#[derive(Debug, Clone, PartialEq)]
pub struct Hot {
    pub symbol: String,
    pub samples: u64,
    pub percent: f64,
}

/// Samples per symbol, most first (ties by name).
pub fn hot_symbols(samples: &Samples, sym: &mut Symbolizer) -> Vec<Hot> {
    let mut counts: HashMap<String, u64> = HashMap::new();
    for &s in &samples.samples {
        *counts.entry(sym.resolve(s)).or_default() += 1;
    }
    let total = samples.samples.len().max(1) as f64;
    let mut v: Vec<Hot> = counts
        .into_iter()
        .map(|(symbol, n)| Hot {
            symbol,
            samples: n,
            percent: 100.0 * n as f64 / total,
        })
        .collect();
    v.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then_with(|| a.symbol.cmp(&b.symbol))
    });
    v
}

/// The kprof-style table: a totals line, then `ms % sym` for the top `n`.
pub fn render(samples: &Samples, hot: &[Hot], n: usize) -> String {
    let total = samples.samples.len();
    let kernel = samples.samples.iter().filter(|s| s.kernel).count();
    let ms = |k: u64| k as f64 * samples.period_ns as f64 / 1e6;
    let mut out = format!(
        "total: {total} samples ({:.0} ms of CPU, one per {} µs)      in kernel: {kernel} ({:.1}%)      user: {} ({:.1}%)\n",
        ms(total as u64),
        samples.period_ns / 1000,
        100.0 * kernel as f64 / total.max(1) as f64,
        total - kernel,
        100.0 * (total - kernel) as f64 / total.max(1) as f64,
    );
    if samples.lost > 0 || samples.throttled > 0 {
        out.push_str(&format!(
            "lost: {} samples, throttled {} times (shares are of the samples kept)\n",
            samples.lost, samples.throttled
        ));
    }
    if samples.child_cpu_ns > 0 {
        out.push_str(&format!(
            "the kernel accounted {:.0} ms of CPU to the profiled process; the samples cover {:.0}% of it\n",
            samples.child_cpu_ns as f64 / 1e6,
            100.0 * ms(total as u64) * 1e6 / samples.child_cpu_ns as f64
        ));
    }
    if let Err(why) = &samples.kernel {
        out.push_str(&format!("user space only: {why}\n"));
    }
    out.push_str("ms        %      sym\n");
    for h in hot.iter().take(n) {
        out.push_str(&format!(
            "{:<9.1} {:<6.1} {}\n",
            ms(h.samples),
            h.percent,
            h.symbol
        ));
    }
    out
}

#[cfg(target_os = "linux")]
mod adapter {
    //! perf_event_open(2) and its ring buffer, on Linux.
    use super::{parse_maps, Sample, Samples};
    use std::sync::atomic::{fence, Ordering};
    use std::time::{Duration, Instant};

    use crate::perf_sys::{
        Attr, FLAG_DISABLED, FLAG_EXCLUDE_HV, FLAG_EXCLUDE_KERNEL, FLAG_INHERIT,
    };

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
            let read =
                |at: u64, n: usize| -> Vec<u8> { (0..n as u64).map(|k| byte(at + k)).collect() };
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
                let ns =
                    |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
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
}

#[cfg(not(target_os = "linux"))]
mod adapter {
    use super::Samples;
    use std::time::Duration;

    pub fn profile_child<F: FnOnce() -> i32>(_: u64, _: Duration, _: F) -> Result<Samples, String> {
        Err("sampling is implemented with Linux perf_event_open only".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Runs `work` for about `seconds`, in batches.
    fn for_about<F: FnMut()>(seconds: f64, mut work: F) {
        let t0 = Instant::now();
        while t0.elapsed().as_secs_f64() < seconds {
            for _ in 0..1000 {
                work();
            }
        }
    }

    #[test]
    fn parses_maps_and_kallsyms() {
        let maps = parse_maps(
            "55d0a0000000-55d0a0100000 r--p 00000000 fd:01 123 /usr/bin/yamba\n\
             55d0a0100000-55d0a0400000 r-xp 00100000 fd:01 123 /usr/bin/yamba\n\
             7f0000000000-7f0000001000 r-xp 00000000 00:00 0 [vdso]\n",
        );
        assert_eq!(maps.len(), 2);
        assert_eq!(maps[1].path, PathBuf::from("[vdso]"));
        assert_eq!(maps[0].offset, 0x100000);
        assert_eq!(maps[0].path, PathBuf::from("/usr/bin/yamba"));
        let k = parse_kallsyms(
            "ffffffff81000000 T _text\nffffffff816bb810 T __pfx_ksys_read\nffffffff816bb820 T ksys_read\n\
             ffffffff816bb910 T __x64_sys_read\nffffffffc0000000 t modfn\t[kvm]\nffffffff82000000 D data\n",
        )
        .unwrap();
        assert_eq!(k.lookup(0xffffffff816bb830), Some("ksys_read"));
        assert_eq!(
            k.lookup(0xffffffff816bb815),
            Some("_text"),
            "padding prefixes are skipped"
        );
        assert_eq!(k.lookup(0xffffffffc0000010), Some("modfn [kvm]"));
        assert_eq!(k.lookup(0x10), None);
        assert!(parse_kallsyms("0000000000000000 T _text\n")
            .unwrap_err()
            .contains("kptr_restrict"));
    }

    #[inline(never)]
    fn yamba_profile_known_spin() {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_millis(300) {
            for i in 0..1000u64 {
                std::hint::black_box(i);
            }
        }
    }

    /// Ground truth: work whose time is in known places, kernel and user.
    #[test]
    fn samples_land_in_the_known_kernel_and_user_functions() {
        let period = 100_000;
        let read = profile_child(period, Duration::from_secs(30), || {
            let f = std::fs::File::open("/dev/zero").unwrap();
            let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
            let mut b = [1u8; 1];
            // SAFETY: 1-byte reads into a valid buffer.
            for_about(0.3, || unsafe {
                libc::read(fd, b.as_mut_ptr().cast(), 1);
            });
            0
        });
        let samples = match read {
            Ok(s) => s,
            Err(why) => {
                eprintln!("SKIPPED: cannot sample here: {why}");
                return;
            }
        };
        assert_eq!(samples.status, 0);
        let mut sym = Symbolizer::new(samples.maps.clone());
        let hot = hot_symbols(&samples, &mut sym);
        eprintln!("{}", render(&samples, &hot, 12));
        // One sample per 100 µs of CPU: the samples add up to the CPU time
        // the kernel accounted to the child (however busy the machine is).
        assert!(
            samples.samples.len() > 100,
            "{} samples",
            samples.samples.len()
        );
        let covered = samples.samples.len() as f64 * period as f64 / samples.child_cpu_ns as f64;
        assert!(
            (0.6..1.4).contains(&covered),
            "samples cover {covered:.2} of the child's CPU time"
        );
        match (&samples.kernel, sym.kernel_problem()) {
            (Ok(()), None) => {
                let kernel_share = samples.samples.iter().filter(|s| s.kernel).count() as f64
                    / samples.samples.len() as f64;
                assert!(
                    kernel_share > 0.5,
                    "a read loop spends most time in the kernel: {kernel_share}"
                );
                let read_path = [
                    "read_zero",
                    "ksys_read",
                    "vfs_read",
                    "__x64_sys_read",
                    "entry_SYSCALL_64",
                    "do_syscall_64",
                ];
                let top: Vec<&str> = hot.iter().take(5).map(|h| h.symbol.as_str()).collect();
                assert!(
                    top.iter()
                        .any(|s| read_path.iter().any(|r| s.starts_with(&format!("{r} ")))),
                    "top symbols {top:?}"
                );
            }
            (k, s) => eprintln!("kernel part not checked: {k:?} {s:?}"),
        }

        let spin = profile_child(period, Duration::from_secs(30), || {
            yamba_profile_known_spin();
            0
        })
        .unwrap();
        let mut sym = Symbolizer::new(spin.maps.clone());
        let hot = hot_symbols(&spin, &mut sym);
        eprintln!("{}", render(&spin, &hot, 5));
        assert!(
            hot[0].symbol.contains("yamba_profile_known_spin") && hot[0].percent > 50.0,
            "user symbols resolve: {:?}",
            &hot[..hot.len().min(3)]
        );
    }
}
