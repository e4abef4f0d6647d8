//! P = one select(2) or poll(2) over N descriptors that are all ready,
//! with a zero timeout (lmbench's lat_select): the kernel looks at every
//! descriptor on every call, so the cost grows with N.
//!
//! - `cpu.syscall.select.file.N`, `cpu.syscall.poll.file.N`: N descriptors
//!   of one regular file opened read-only, asked for writability as
//!   lmbench asks (a regular file is always ready);
//! - `cpu.syscall.select.tcp.N`, `cpu.syscall.poll.tcp.N`: N connected
//!   loopback TCP sockets, their server ends held open, as lmbench's
//!   server holds them.
//!
//! N is 10, 100 and 250; lmbench's summary reports 100 (its "100fd selct"
//! and "slct TCP" columns). 500, lmbench's largest, is left out: 500
//! sockets and their server ends in one process pass select's FD_SETSIZE.
//!
//! Evidence (gating): every call reported all N descriptors ready.
//! Informational (a parameter of each result): the cost per descriptor,
//! the slope from 10 to 250. select's cost is a line in N (8.7 ns per
//! file descriptor, 56.5 per TCP socket on an AMD EPYC guest); poll's
//! bends: the kernel keeps the first 30 or so pollfds on its stack and
//! allocates for more, so from 10 to 100 it costs 11.6 ns per file
//! descriptor and from 100 to 250 7.0.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Measured, Unit};

pub static SELECT: Benchmark = Benchmark {
    id: "cpu.syscall.select",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "select(2) over N ready descriptors (N = 10, 100, 250; regular files and loopback TCP sockets), zero timeout (lmbench's lat_select)",
    adapter: "posix",
    run: run_select,
    cold: Cold::Measured,
    ..Benchmark::TEMPLATE
};

pub static POLL: Benchmark = Benchmark {
    id: "cpu.syscall.poll",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "poll(2) over N ready descriptors (N = 10, 100, 250; regular files and loopback TCP sockets), zero timeout",
    adapter: "posix",
    run: run_poll,
    cold: Cold::Measured,
    ..Benchmark::TEMPLATE
};

/// The descriptor counts measured.
pub const SIZES: [usize; 3] = [10, 100, 250];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Call {
    Select,
    Poll,
}

/// N open descriptors of one kind, all ready for writing.
struct Descriptors {
    kind: &'static str,
    what: &'static str,
    /// What keeps the descriptors open (files; client and server sockets).
    _files: Vec<File>,
    _sockets: Vec<TcpStream>,
    fds: Vec<i32>,
}

fn files(ctx: &Ctx, n: usize) -> Result<Descriptors, String> {
    let path = ctx.scratch_dir().join("select.dat");
    std::fs::write(&path, b"x").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let files = (0..n)
        .map(|_| File::open(&path))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot open {} {n} times: {e}", path.display()))?;
    Ok(Descriptors {
        kind: "file",
        what: "descriptors of one regular file, opened read-only, asked for writability",
        fds: files.iter().map(|f| f.as_raw_fd()).collect(),
        _files: files,
        _sockets: Vec::new(),
    })
}

fn sockets(n: usize) -> Result<Descriptors, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let mut clients = Vec::with_capacity(n);
    let mut servers = Vec::with_capacity(n);
    // One at a time: the listen backlog never holds more than one.
    for _ in 0..n {
        clients.push(TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?);
        servers.push(listener.accept().map_err(|e| format!("accept: {e}"))?.0);
    }
    let fds = clients.iter().map(|s| s.as_raw_fd()).collect();
    clients.extend(servers);
    Ok(Descriptors {
        kind: "tcp",
        what: "connected loopback TCP sockets (their server ends held open), asked for writability",
        fds,
        _files: Vec::new(),
        _sockets: clients,
    })
}

/// Times `call` over `d`'s descriptors; the count of calls and of calls
/// that did not report every descriptor ready.
fn measure(ctx: &mut Ctx, call: Call, d: &Descriptors) -> Result<(Measured, u64, u64), String> {
    let n = d.fds.len();
    let (mut calls, mut short) = (0u64, 0u64);
    let m = match call {
        Call::Select => {
            let top = d.fds.iter().copied().max().unwrap_or(0);
            if top >= libc::FD_SETSIZE as i32 {
                return Err(format!(
                    "descriptor {top} is past select's FD_SETSIZE ({})",
                    libc::FD_SETSIZE
                ));
            }
            // SAFETY: an all-zero fd_set is the empty set.
            let mut set: libc::fd_set = unsafe { std::mem::zeroed() };
            for &fd in &d.fds {
                // SAFETY: 0 <= fd < FD_SETSIZE (checked above).
                unsafe { libc::FD_SET(fd, &mut set) };
            }
            ctx.measure(|| {
                calls += 1;
                let mut ready = set;
                let mut none = libc::timeval {
                    tv_sec: 0,
                    tv_usec: 0,
                };
                // SAFETY: ready and none are valid for the call; the other
                // sets are null (not asked for).
                let got = unsafe {
                    libc::select(
                        top + 1,
                        std::ptr::null_mut(),
                        &mut ready,
                        std::ptr::null_mut(),
                        &mut none,
                    )
                };
                short += u64::from(got != n as i32);
            })
        }
        Call::Poll => {
            let mut fds: Vec<libc::pollfd> = d
                .fds
                .iter()
                .map(|&fd| libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                })
                .collect();
            ctx.measure(|| {
                calls += 1;
                // SAFETY: fds is valid for fds.len() entries.
                let got = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
                short += u64::from(got != n as i32);
            })
        }
    };
    Ok((m, calls, short))
}

fn run(ctx: &mut Ctx, call: Call) -> Result<(), String> {
    let name = match call {
        Call::Select => "select",
        Call::Poll => "poll",
    };
    for kind in ["file", "tcp"] {
        let mut group: Vec<BenchResult> = Vec::new();
        for n in SIZES {
            let d = match kind {
                "file" => files(ctx, n)?,
                _ => sockets(n)?,
            };
            let (m, calls, short) = measure(ctx, call, &d)?;
            let mut r = ctx.measured_result(Some(&format!("{}.{n}", d.kind)), m);
            r.description = format!("{name}(2) over {n} {}, zero timeout", d.what);
            r.param("call", name)
                .param("descriptors", n)
                .param("kind", d.kind);
            r.add_evidence(
                "every call reported all the descriptors ready",
                format!("{n} ready × {calls} calls"),
                format!("{short} calls reported fewer"),
                short == 0 && calls > 0,
            );
            group.push(r);
        }
        // The cost per descriptor: the slope between the smallest and the
        // largest N.
        let (first, last) = (&group[0], &group[group.len() - 1]);
        if let (Some(a), Some(b)) = (first.median(), last.median()) {
            let per = (b - a) / (SIZES[SIZES.len() - 1] - SIZES[0]) as f64;
            for r in &mut group {
                r.param("ns_per_descriptor", (per * 1000.0).round() / 1000.0);
            }
        }
        for r in group {
            ctx.push(r);
        }
    }
    Ok(())
}

fn run_select(ctx: &mut Ctx) -> Result<(), String> {
    run(ctx, Call::Select)
}

fn run_poll(ctx: &mut Ctx) -> Result<(), String> {
    run(ctx, Call::Poll)
}
