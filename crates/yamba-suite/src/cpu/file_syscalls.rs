//! P = a cheap system call on a file, through libc's wrapper as a program
//! makes it (lmbench's lat_syscall write, fstat, open):
//!
//! - `cpu.syscall.write_devnull`: write(2) of 1 byte to /dev/null.
//! - `cpu.syscall.fstat`: fstat(2) of an open regular file.
//! - `cpu.syscall.open`: open(2) + close(2) of a regular file four path
//!   components deep — as deep as lmbench's /usr/include/linux/types.h —
//!   looked up from a descriptor of the scratch directory (openat), so the
//!   path walk is the same wherever the scratch directory lives.
//!
//! `--set cpu.syscall.path=FILE` opens and fstats FILE instead (an
//! absolute path is walked from the root), e.g. the file a peer used.

use std::ffi::CString;
use std::os::fd::AsRawFd;
use yamba_core::{Benchmark, Cold, Ctx, Kind, Setting, Unit};

/// `--set cpu.syscall.path`: the file `cpu.syscall.fstat` and `.open` use.
pub const PATH: Setting = Setting {
    key: "cpu.syscall.path",
    kind: Kind::Text,
    default: "a 1000-byte file 4 components deep in the scratch directory",
    help: "the regular file fstat and open use (an absolute path is walked from the root)",
    aliases: &[],
};

pub static WRITE_DEVNULL: Benchmark = Benchmark {
    id: "cpu.syscall.write_devnull",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "cheap real system call: write(2) of 1 byte to /dev/null, through libc",
    cold: Cold::Measured,
    adapter: "posix",
    run: run_write,
    ..Benchmark::TEMPLATE
};

pub static FSTAT: Benchmark = Benchmark {
    id: "cpu.syscall.fstat",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "fstat(2) of an open regular file, through libc",
    cold: Cold::Measured,
    adapter: "posix",
    settings: &[PATH],
    run: run_fstat,
    ..Benchmark::TEMPLATE
};

pub static OPEN: Benchmark = Benchmark {
    id: "cpu.syscall.open",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "open(2) + close(2) of a regular file 4 path components deep, through libc",
    cold: Cold::Measured,
    adapter: "posix",
    settings: &[PATH],
    run: run_open,
    ..Benchmark::TEMPLATE
};

/// Size of the file fstat and open use, so fstat can be checked.
const FILE_BYTES: usize = 1000;

/// The file to open: a directory descriptor and a path from it (AT_FDCWD
/// and the setting's path when given), and its expected size.
struct Target {
    dir: Option<std::fs::File>,
    path: CString,
    shown: String,
    size: i64,
    components: usize,
}

impl Target {
    fn dirfd(&self) -> i32 {
        self.dir.as_ref().map_or(libc::AT_FDCWD, |d| d.as_raw_fd())
    }
}

fn target(ctx: &Ctx) -> Result<Target, String> {
    if let Some(p) = ctx.text(PATH.key)? {
        let meta = std::fs::metadata(p).map_err(|e| format!("--set cpu.syscall.path={p}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("--set cpu.syscall.path={p}: not a regular file"));
        }
        return Ok(Target {
            dir: None,
            path: CString::new(p).map_err(|_| format!("bad path {p:?}"))?,
            shown: p.to_string(),
            size: meta.len() as i64,
            components: std::path::Path::new(p).components().count(),
        });
    }
    let rel = "usr/include/linux/types.h";
    let root = ctx.scratch_dir().join("syscall-root");
    let file = root.join(rel);
    std::fs::create_dir_all(file.parent().unwrap())
        .map_err(|e| format!("cannot create {}: {e}", file.display()))?;
    std::fs::write(&file, vec![b'x'; FILE_BYTES])
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let dir =
        std::fs::File::open(&root).map_err(|e| format!("cannot open {}: {e}", root.display()))?;
    Ok(Target {
        dir: Some(dir),
        path: CString::new(rel).unwrap(),
        shown: format!(
            "{}/{rel} (opened as {rel} from a descriptor of {})",
            root.display(),
            root.display()
        ),
        size: FILE_BYTES as i64,
        components: 4,
    })
}

fn describe(r: &mut yamba_core::BenchResult, t: &Target) {
    r.param("file", &t.shown)
        .param("path_components", t.components)
        .param("file_bytes", t.size);
}

fn run_write(ctx: &mut Ctx) -> Result<(), String> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .map_err(|e| format!("cannot open /dev/null: {e}"))?;
    let fd = file.as_raw_fd();
    // SAFETY: st is a valid buffer for the kernel to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; st is valid.
    let is_null = unsafe { libc::fstat(fd, &mut st) } == 0
        && st.st_mode & libc::S_IFMT == libc::S_IFCHR
        && libc::major(st.st_rdev) == 1
        && libc::minor(st.st_rdev) == 3;
    let byte = [7u8; 1];
    let (mut calls, mut short) = (0u64, 0u64);
    let m = ctx.measure(|| {
        calls += 1;
        // SAFETY: writing one byte from a valid one-byte buffer.
        if unsafe { libc::write(fd, byte.as_ptr().cast(), 1) } != 1 {
            short += 1;
        }
    });
    let mut r = ctx.measured_result(None, m);
    r.param("device", "/dev/null");
    r.add_evidence(
        "the descriptor is the null device (character device 1:3)",
        "char 1:3",
        format!(
            "mode {:o}, device {}:{}",
            st.st_mode & libc::S_IFMT,
            libc::major(st.st_rdev),
            libc::minor(st.st_rdev)
        ),
        is_null,
    );
    r.add_evidence(
        "every write returned exactly one byte",
        format!("1 byte × {calls} writes"),
        format!("{short} short or failed"),
        short == 0 && calls > 0,
    );
    ctx.push(r);
    Ok(())
}

fn run_fstat(ctx: &mut Ctx) -> Result<(), String> {
    let t = target(ctx)?;
    // SAFETY: the path is NUL-terminated; the descriptor is closed below.
    let fd = unsafe { libc::openat(t.dirfd(), t.path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!(
            "cannot open {}: {}",
            t.shown,
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: st is a valid buffer for the kernel to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let (mut calls, mut bad) = (0u64, 0u64);
    let size = t.size;
    let m = ctx.measure(|| {
        calls += 1;
        // SAFETY: fd is open; st is valid.
        let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
        // off_t is 32 bits wide on 32-bit Linux, 64 elsewhere.
        #[allow(clippy::useless_conversion)]
        let seen = i64::from(st.st_size);
        if !ok || seen != size {
            bad += 1;
        }
    });
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(fd) };
    let mut r = ctx.measured_result(None, m);
    describe(&mut r, &t);
    r.add_evidence(
        "every fstat succeeded and saw the file's known size",
        format!("size {size} from all {calls} calls"),
        format!("{bad} failed or wrong"),
        bad == 0 && calls > 0,
    );
    ctx.push(r);
    Ok(())
}

fn run_open(ctx: &mut Ctx) -> Result<(), String> {
    let t = target(ctx)?;
    let dirfd = t.dirfd();
    let path = t.path.clone();
    let (mut calls, mut bad) = (0u64, 0u64);
    let mut first_fd = None;
    let m = ctx.measure(|| {
        calls += 1;
        // SAFETY: path is NUL-terminated; the descriptor is closed at once.
        let fd = unsafe { libc::openat(dirfd, path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        // SAFETY: closing the descriptor just opened, once.
        if fd < 0 || unsafe { libc::close(fd) } != 0 || *first_fd.get_or_insert(fd) != fd {
            bad += 1;
        }
    });
    let mut r = ctx.measured_result(None, m);
    describe(&mut r, &t);
    r.add_evidence(
        "every open succeeded and its close freed the descriptor (the same lowest fd each time)",
        format!("fd {first_fd:?} from all {calls} opens"),
        format!("{bad} failed or leaked"),
        bad == 0 && calls > 0,
    );
    ctx.push(r);
    Ok(())
}
