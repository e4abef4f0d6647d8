//! The headline primitives: lmbench's summary rows (system call, signal,
//! fork, exec, context switch, round trips, page fault, latency per cache
//! level, bandwidth) and the yamba results that measure them. The report's
//! key numbers and the history's fleet view read the same list.

/// A headline row: its name in words, and the results that measure it,
/// the preferred first (older files have the later ids).
pub struct Headline {
    pub name: &'static str,
    pub ids: &'static [&'static str],
}

const fn row(name: &'static str, ids: &'static [&'static str]) -> Headline {
    Headline { name, ids }
}

/// lmbench's summary rows, in its order, with the yamba results that fill
/// them (the same choice as [`crate::lmbench::COLUMNS`]).
pub const HEADLINES: &[Headline] = &[
    row(
        "null system call (getppid)",
        &["cpu.syscall.getppid.libc", "cpu.syscall.getppid"],
    ),
    row(
        "read of 1 byte from /dev/zero",
        &["cpu.syscall.read_devzero.libc", "cpu.syscall.read_devzero"],
    ),
    row("signal handler, to oneself", &["signal.self"]),
    row("fork + exit + wait", &["proc.fork.light"]),
    row("fork + exec", &["proc.fork_exec"]),
    row("sh -c", &["proc.shell"]),
    row(
        "context switch, 2 processes",
        &["ipc.ctxsw.sweep.0k", "ipc.ctxsw.pipe"],
    ),
    row("pipe round trip", &["ipc.rtt.pipe.same_cpu"]),
    row("UNIX socket round trip", &["ipc.rtt.unix_stream.same_cpu"]),
    row("TCP round trip, loopback", &["net.tcp.rtt"]),
    row("page fault, cached file", &["mem.pagefault.cached"]),
    row("L1 hit", &["mem.latency.L1"]),
    row("L2 hit", &["mem.latency.L2"]),
    row("L3 hit", &["mem.latency.L3"]),
    row("memory, random access", &["mem.latency.memory"]),
    row("memory read bandwidth", &["mem.bandwidth.read"]),
    row("memory copy bandwidth (libc)", &["mem.bandwidth.bcopy"]),
    row("file reread, cached", &["fs.read.seq.cached"]),
];
