//! The error-test table: for each primitive, system calls with one
//! argument wrong in a documented way (or all right, where success is what
//! the documentation promises), and the error codes the documentation
//! allows for it. Each entry cites the man page's words in `doc`. Where
//! Linux returns a code more specific than POSIX names, both are allowed
//! and the comment says why. Only one argument is wrong at a time: the
//! documentation does not say which error wins when several apply.
//!
//! Nothing here reaches beyond this process: sockets are AF_UNIX (or a
//! family no kernel has, refused before anything is created), signals go
//! to this process (or to a pid above pid_max, which names no process),
//! paths stay in the scratch directory, memory calls touch the process's
//! own arena.

use super::gen::{ignored_sig, Call, Gen};
use libc::*;

/// One entry of the table.
pub struct Case {
    pub primitive: &'static str,
    pub name: &'static str,
    /// Error codes the documentation allows; empty: the call must succeed.
    pub expect: &'static [i32],
    /// The documentation's words for it.
    pub doc: &'static str,
    pub build: fn(&mut Gen) -> Call,
}

fn call(name: &'static str, nr: c_long, args: Vec<super::gen::Arg>) -> Call {
    Call { name, nr, args }
}

const SS: i64 = 8; // sizeof(sigset_t) as the kernel takes it

/// A kernel sigset (8 bytes) holding `sigs`, in the read-write area.
fn sigset(g: &mut Gen, name: &'static str, sigs: &[i32]) -> super::gen::Arg {
    let mut set = 0u64;
    for &s in sigs {
        set |= 1 << (s - 1);
    }
    g.value(name, set, "sigset")
}

fn timespec(g: &mut Gen, name: &'static str, sec: i64, nsec: i64, what: &str) -> super::gen::Arg {
    g.value(name, [sec, nsec], what)
}

/// An nsec value outside [0, 1e9).
fn bad_nsec(g: &mut Gen) -> i64 {
    if g.rng_bool() {
        1_000_000_000 + g.rng_range(0, 1 << 30)
    } else {
        -g.rng_range(1, 1 << 30)
    }
}

impl Gen<'_> {
    fn rng_bool(&mut self) -> bool {
        use rand::Rng as _;
        self.rng.gen_bool(0.5)
    }
    fn rng_range(&mut self, lo: i64, hi: i64) -> i64 {
        use rand::Rng as _;
        self.rng.gen_range(lo..hi)
    }
}

pub static CASES: &[Case] = &[
    // ---------------------------------------------------------------- fd
    Case {
        primitive: "fd",
        name: "close.bad_fd",
        expect: &[EBADF],
        doc: "close(2): EBADF fd isn't a valid open file descriptor",
        build: |g| {
            let fd = g.closed_fd("fd");
            call("close", SYS_close, vec![fd])
        },
    },
    Case {
        primitive: "fd",
        name: "dup3.bad_oldfd",
        expect: &[EBADF],
        doc: "dup(2): EBADF oldfd isn't an open file descriptor",
        build: |g| {
            let old = g.closed_fd("oldfd");
            let new = g.int("newfd", 500);
            g.close_returned_on_success();
            call("dup3", SYS_dup3, vec![old, new, g.int("flags", 0)])
        },
    },
    Case {
        primitive: "fd",
        name: "dup3.same_fd",
        expect: &[EINVAL],
        doc: "dup(2): EINVAL (dup3()) oldfd was equal to newfd",
        build: |g| {
            let (r, _) = g.pipe(0);
            call("dup3", SYS_dup3, vec![g.fd("oldfd", r, "pipe read end"), g.fd("newfd", r, "the same fd"), g.int("flags", 0)])
        },
    },
    Case {
        primitive: "fd",
        name: "dup3.bad_flags",
        expect: &[EINVAL],
        doc: "dup(2): EINVAL (dup3()) flags contain an invalid value",
        build: |g| {
            let (r, _) = g.pipe(0);
            let flags = g.bad_bits("flags", O_CLOEXEC as u64, 0xffff_ffff);
            g.close_returned_on_success();
            call("dup3", SYS_dup3, vec![g.fd("oldfd", r, "pipe read end"), g.int("newfd", 501), flags])
        },
    },
    Case {
        primitive: "fd",
        name: "dup3.negative_newfd",
        expect: &[EBADF],
        doc: "dup(2): EBADF newfd is out of the allowed range for file descriptors",
        build: |g| {
            let (r, _) = g.pipe(0);
            let n = -g.rng_range(1, i32::MAX as i64);
            call("dup3", SYS_dup3, vec![g.fd("oldfd", r, "pipe read end"), g.named("newfd", n as i32 as u32 as i64, "<negative fd>"), g.int("flags", 0)])
        },
    },
    Case {
        primitive: "fd",
        name: "fcntl.bad_cmd",
        expect: &[EINVAL],
        doc: "fcntl(2): EINVAL The value specified in cmd is not recognized by this kernel",
        build: |g| {
            let (r, _) = g.pipe(0);
            let cmd = g.rng_range(5000, 1 << 20);
            call("fcntl", SYS_fcntl, vec![g.fd("fd", r, "pipe read end"), g.int("cmd", cmd), g.int("arg", 0)])
        },
    },
    Case {
        primitive: "fd",
        name: "fcntl.bad_fd",
        expect: &[EBADF],
        doc: "fcntl(2): EBADF fd is not an open file descriptor",
        build: |g| {
            let fd = g.closed_fd("fd");
            call("fcntl", SYS_fcntl, vec![fd, g.named("cmd", F_GETFD as i64, "F_GETFD"), g.int("arg", 0)])
        },
    },
    Case {
        primitive: "fd",
        name: "fcntl.dupfd_beyond_limit",
        expect: &[EINVAL],
        doc: "fcntl(2): EINVAL cmd is F_DUPFD and arg is negative or is greater than the maximum allowable value",
        build: |g| {
            let (r, _) = g.pipe(0);
            let arg = if g.rng_bool() {
                g.env.nofile as i64 + g.rng_range(0, 1 << 20)
            } else {
                -g.rng_range(1, 1 << 30)
            };
            g.close_returned_on_success();
            call("fcntl", SYS_fcntl, vec![g.fd("fd", r, "pipe read end"), g.named("cmd", F_DUPFD as i64, "F_DUPFD"), g.int("arg", arg)])
        },
    },
    // -------------------------------------------------------------- pipe
    Case {
        primitive: "pipe",
        name: "pipe2.ok",
        expect: &[],
        doc: "pipe(2): On success, zero is returned",
        build: |g| {
            let buf = g.buf("pipefd", 8, &[]);
            let flags = g.some_bits("flags", (O_CLOEXEC | O_NONBLOCK | O_DIRECT) as u64);
            g.close_fds_at_on_success(buf.raw, 2);
            call("pipe2", SYS_pipe2, vec![buf, flags])
        },
    },
    Case {
        primitive: "pipe",
        name: "pipe2.bad_pointer",
        expect: &[EFAULT],
        doc: "pipe(2): EFAULT pipefd is not valid",
        build: |g| {
            let p = g.unwritable_ptr("pipefd");
            call("pipe2", SYS_pipe2, vec![p, g.int("flags", 0)])
        },
    },
    Case {
        primitive: "pipe",
        name: "pipe2.bad_flags",
        expect: &[EINVAL],
        doc: "pipe(2): EINVAL (pipe2()) Invalid value in flags",
        build: |g| {
            let buf = g.buf("pipefd", 8, &[]);
            // O_NOTIFICATION_PIPE (= O_EXCL) counts as valid: it depends on CONFIG_WATCH_QUEUE.
            let valid = (O_CLOEXEC | O_NONBLOCK | O_DIRECT | O_EXCL) as u64;
            let flags = g.bad_bits("flags", valid, 0xffff_ffff);
            g.close_fds_at_on_success(buf.raw, 2);
            call("pipe2", SYS_pipe2, vec![buf, flags])
        },
    },
    Case {
        primitive: "pipe",
        name: "read.write_end",
        expect: &[EBADF],
        doc: "read(2): EBADF fd is not a valid file descriptor or is not open for reading",
        build: |g| {
            let (_, w) = g.pipe(0);
            let b = g.buf("buf", 64, &[]);
            call("read", SYS_read, vec![g.fd("fd", w, "pipe write end"), b, g.int("count", 64)])
        },
    },
    Case {
        primitive: "pipe",
        name: "write.read_end",
        expect: &[EBADF],
        doc: "write(2): EBADF fd is not a valid file descriptor or is not open for writing",
        build: |g| {
            let (r, _) = g.pipe(0);
            let b = g.buf("buf", 64, b"x");
            call("write", SYS_write, vec![g.fd("fd", r, "pipe read end"), b, g.int("count", 1)])
        },
    },
    Case {
        primitive: "pipe",
        name: "read.bad_buffer",
        expect: &[EFAULT],
        doc: "read(2): EFAULT buf is outside your accessible address space",
        build: |g| {
            let n = g.rng_range(1, 65) as usize;
            let (r, _) = g.pipe(n);
            let b = g.unwritable_ptr("buf");
            call("read", SYS_read, vec![g.fd("fd", r, "pipe read end with data"), b, g.int("count", n as i64)])
        },
    },
    Case {
        primitive: "pipe",
        name: "write.bad_buffer",
        expect: &[EFAULT],
        doc: "write(2): EFAULT buf is outside your accessible address space",
        build: |g| {
            let (_, w) = g.pipe(0);
            let b = g.bad_ptr("buf");
            let n = g.rng_range(1, 4097);
            call("write", SYS_write, vec![g.fd("fd", w, "pipe write end"), b, g.int("count", n)])
        },
    },
    Case {
        primitive: "pipe",
        name: "read.huge_count",
        // Linux checks buf..buf+count lies in user space first (EFAULT);
        // POSIX leaves counts above SSIZE_MAX to the implementation.
        expect: &[EFAULT, EINVAL],
        doc: "read(2): EFAULT buf is outside your accessible address space; count > SSIZE_MAX is implementation-defined",
        build: |g| {
            let (r, _) = g.pipe(8);
            let b = g.buf("buf", 64, &[]);
            let n = g.huge("count");
            call("read", SYS_read, vec![g.fd("fd", r, "pipe read end with data"), b, n])
        },
    },
    Case {
        primitive: "pipe",
        name: "write.no_reader",
        expect: &[EPIPE],
        doc: "write(2): EPIPE fd is connected to a pipe whose reading end is closed (SIGPIPE ignored)",
        build: |g| {
            let (r, w) = g.pipe(0);
            // SAFETY: closing the read end this call's setup made (its cleanup close then fails harmlessly).
            unsafe { libc::close(r) };
            let b = g.buf("buf", 8, b"x");
            call("write", SYS_write, vec![g.fd("fd", w, "pipe write end, reader closed"), b, g.int("count", 1)])
        },
    },
    Case {
        primitive: "pipe",
        name: "read.empty_nonblocking",
        expect: &[EAGAIN],
        doc: "read(2): EAGAIN The file descriptor fd refers to a file other than a socket and has been marked nonblocking, and the read would block",
        build: |g| {
            let (r, _) = g.pipe(0);
            let b = g.buf("buf", 64, &[]);
            call("read", SYS_read, vec![g.fd("fd", r, "empty non-blocking pipe read end"), b, g.int("count", 64)])
        },
    },
    Case {
        primitive: "pipe",
        name: "lseek.pipe",
        expect: &[ESPIPE],
        doc: "lseek(2): ESPIPE fd is associated with a pipe, socket, or FIFO",
        build: |g| {
            let (r, _) = g.pipe(0);
            let off = g.rng_range(0, 1 << 20);
            call("lseek", SYS_lseek, vec![g.fd("fd", r, "pipe read end"), g.int("offset", off), g.named("whence", SEEK_SET as i64, "SEEK_SET")])
        },
    },
    Case {
        primitive: "pipe",
        name: "pread.pipe",
        expect: &[ESPIPE],
        doc: "pread(2): ESPIPE fd is associated with a pipe",
        build: |g| {
            let (r, _) = g.pipe(8);
            let b = g.buf("buf", 64, &[]);
            call("pread64", SYS_pread64, vec![g.fd("fd", r, "pipe read end with data"), b, g.int("count", 8), g.int("offset", 0)])
        },
    },
    // ------------------------------------------------------- socketpair
    Case {
        primitive: "socketpair",
        name: "socketpair.ok",
        expect: &[],
        doc: "socketpair(2): On success, zero is returned",
        build: |g| {
            let ty = g.pick(&[SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET]);
            let flags = g.some_bits("", (SOCK_CLOEXEC | SOCK_NONBLOCK) as u64).raw as i32;
            let sv = g.buf("sv", 8, &[]);
            g.close_fds_at_on_success(sv.raw, 2);
            call("socketpair", SYS_socketpair, vec![g.named("domain", AF_UNIX as i64, "AF_UNIX"), g.hex("type", (ty | flags) as u64), g.int("protocol", 0), sv])
        },
    },
    Case {
        primitive: "socketpair",
        name: "socketpair.bad_pointer",
        expect: &[EFAULT],
        doc: "socketpair(2): EFAULT The address sv does not specify a valid part of the process address space",
        build: |g| {
            let sv = g.unwritable_ptr("sv");
            call("socketpair", SYS_socketpair, vec![g.named("domain", AF_UNIX as i64, "AF_UNIX"), g.named("type", SOCK_STREAM as i64, "SOCK_STREAM"), g.int("protocol", 0), sv])
        },
    },
    Case {
        primitive: "socketpair",
        name: "socketpair.no_such_family",
        expect: &[EAFNOSUPPORT],
        doc: "socketpair(2): EAFNOSUPPORT The specified address family is not supported on this machine",
        build: |g| {
            // Above AF_MAX (46 today): refused before any module is looked for.
            let fam = if g.rng_bool() { g.rng_range(64, 1 << 16) } else { -g.rng_range(1, 1 << 16) };
            let sv = g.buf("sv", 8, &[]);
            g.close_fds_at_on_success(sv.raw, 2);
            call("socketpair", SYS_socketpair, vec![g.named("domain", fam, "<no such family>"), g.named("type", SOCK_STREAM as i64, "SOCK_STREAM"), g.int("protocol", 0), sv])
        },
    },
    Case {
        primitive: "socketpair",
        name: "socketpair.bad_type_flags",
        expect: &[EINVAL],
        doc: "socket(2): EINVAL Invalid flags in type",
        build: |g| {
            let valid = (0xf | SOCK_CLOEXEC | SOCK_NONBLOCK) as u64;
            let bad = g.bad_bits("type", valid, 0x7fff_ffff);
            let ty = bad.raw | SOCK_STREAM as u64;
            let sv = g.buf("sv", 8, &[]);
            g.close_fds_at_on_success(sv.raw, 2);
            call("socketpair", SYS_socketpair, vec![g.named("domain", AF_UNIX as i64, "AF_UNIX"), g.hex("type", ty), g.int("protocol", 0), sv])
        },
    },
    Case {
        primitive: "socketpair",
        name: "socketpair.unsupported_type",
        // AF_UNIX answers ESOCKTNOSUPPORT (socket type not supported);
        // socket(2) names EPROTONOSUPPORT for the same condition.
        expect: &[ESOCKTNOSUPPORT, EPROTONOSUPPORT],
        doc: "socket(2): EPROTONOSUPPORT The protocol type or the specified protocol is not supported within this domain",
        build: |g| {
            let ty = g.pick(&[4i64, 6, 7, 8, 9, 10]);
            let sv = g.buf("sv", 8, &[]);
            g.close_fds_at_on_success(sv.raw, 2);
            call("socketpair", SYS_socketpair, vec![g.named("domain", AF_UNIX as i64, "AF_UNIX"), g.int("type", ty), g.int("protocol", 0), sv])
        },
    },
    Case {
        primitive: "socketpair",
        name: "socketpair.type_out_of_range",
        expect: &[EINVAL],
        doc: "socket(2): EINVAL Unknown protocol, or protocol family not available (type ≥ SOCK_MAX)",
        build: |g| {
            let ty = g.rng_range(11, 16);
            let sv = g.buf("sv", 8, &[]);
            g.close_fds_at_on_success(sv.raw, 2);
            call("socketpair", SYS_socketpair, vec![g.named("domain", AF_UNIX as i64, "AF_UNIX"), g.int("type", ty), g.int("protocol", 0), sv])
        },
    },
    Case {
        primitive: "socketpair",
        name: "socketpair.bad_protocol",
        expect: &[EPROTONOSUPPORT],
        doc: "socketpair(2): EPROTONOSUPPORT The specified protocol is not supported on this machine",
        build: |g| {
            let proto = g.rng_range(2, 1 << 16);
            let sv = g.buf("sv", 8, &[]);
            g.close_fds_at_on_success(sv.raw, 2);
            call("socketpair", SYS_socketpair, vec![g.named("domain", AF_UNIX as i64, "AF_UNIX"), g.named("type", SOCK_STREAM as i64, "SOCK_STREAM"), g.int("protocol", proto), sv])
        },
    },
    Case {
        primitive: "socketpair",
        name: "recvfrom.bad_buffer",
        expect: &[EFAULT],
        doc: "recv(2): EFAULT The receive buffer pointer(s) point outside the process's address space",
        build: |g| {
            let n = g.rng_range(1, 65) as usize;
            let (_, b) = g.socketpair(n);
            let p = g.unwritable_ptr("buf");
            call("recvfrom", SYS_recvfrom, vec![g.fd("sockfd", b, "socket with data"), p, g.int("len", n as i64), g.named("flags", MSG_DONTWAIT as i64, "MSG_DONTWAIT"), g.int("src_addr", 0), g.int("addrlen", 0)])
        },
    },
    Case {
        primitive: "socketpair",
        name: "sendto.bad_buffer",
        expect: &[EFAULT],
        doc: "send(2): EFAULT An invalid user space address was specified for an argument",
        build: |g| {
            let (a, _) = g.socketpair(0);
            let p = g.bad_ptr("buf");
            let n = g.rng_range(1, 4097);
            call("sendto", SYS_sendto, vec![g.fd("sockfd", a, "socket"), p, g.int("len", n), g.named("flags", MSG_DONTWAIT as i64, "MSG_DONTWAIT"), g.int("dest_addr", 0), g.int("addrlen", 0)])
        },
    },
    Case {
        primitive: "socketpair",
        name: "recvfrom.empty_nonblocking",
        expect: &[EAGAIN],
        doc: "recv(2): EAGAIN The socket is marked nonblocking and the receive operation would block",
        build: |g| {
            let (a, _) = g.socketpair(0);
            let b = g.buf("buf", 64, &[]);
            call("recvfrom", SYS_recvfrom, vec![g.fd("sockfd", a, "empty non-blocking socket"), b, g.int("len", 64), g.int("flags", 0), g.int("src_addr", 0), g.int("addrlen", 0)])
        },
    },
    Case {
        primitive: "socketpair",
        name: "sendto.not_a_socket",
        expect: &[ENOTSOCK],
        doc: "send(2): ENOTSOCK The file descriptor sockfd does not refer to a socket",
        build: |g| {
            let (_, w) = g.pipe(0);
            let b = g.buf("buf", 8, b"x");
            call("sendto", SYS_sendto, vec![g.fd("sockfd", w, "pipe write end"), b, g.int("len", 1), g.int("flags", 0), g.int("dest_addr", 0), g.int("addrlen", 0)])
        },
    },
    Case {
        primitive: "socketpair",
        name: "shutdown.bad_how",
        expect: &[EINVAL],
        doc: "shutdown(2): EINVAL An invalid value was specified in how",
        build: |g| {
            let (a, _) = g.socketpair(0);
            let how = if g.rng_bool() { g.rng_range(3, 1 << 20) } else { -g.rng_range(1, 1 << 20) };
            call("shutdown", SYS_shutdown, vec![g.fd("sockfd", a, "socket"), g.int("how", how)])
        },
    },
    // ----------------------------------------------------------- eventfd
    Case {
        primitive: "eventfd",
        name: "eventfd2.ok",
        expect: &[],
        doc: "eventfd(2): On success, eventfd() returns a new eventfd file descriptor",
        build: |g| {
            let init = g.rng_range(0, 1 << 32);
            let flags = g.some_bits("flags", (EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE) as u64);
            g.close_returned_on_success();
            call("eventfd2", SYS_eventfd2, vec![g.int("initval", init), flags])
        },
    },
    Case {
        primitive: "eventfd",
        name: "eventfd2.bad_flags",
        expect: &[EINVAL],
        doc: "eventfd(2): EINVAL An unsupported value was specified in flags",
        build: |g| {
            let flags = g.bad_bits("flags", (EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE) as u64, 0xffff_ffff);
            g.close_returned_on_success();
            call("eventfd2", SYS_eventfd2, vec![g.int("initval", 0), flags])
        },
    },
    Case {
        primitive: "eventfd",
        name: "read.short_buffer",
        expect: &[EINVAL],
        doc: "eventfd(2): read(2) fails with the error EINVAL if the size of the supplied buffer is less than 8 bytes",
        build: |g| {
            let fd = g.eventfd(3);
            let b = g.buf("buf", 8, &[]);
            let n = g.rng_range(1, 8);
            call("read", SYS_read, vec![g.fd("fd", fd, "eventfd holding 3"), b, g.int("count", n)])
        },
    },
    Case {
        primitive: "eventfd",
        name: "write.short_buffer",
        expect: &[EINVAL],
        doc: "eventfd(2): write(2) fails with the error EINVAL if the size of the supplied buffer is less than 8 bytes",
        build: |g| {
            let fd = g.eventfd(0);
            let b = g.buf("buf", 8, &1u64.to_ne_bytes());
            let n = g.rng_range(1, 8);
            call("write", SYS_write, vec![g.fd("fd", fd, "eventfd"), b, g.int("count", n)])
        },
    },
    Case {
        primitive: "eventfd",
        name: "write.max_value",
        expect: &[EINVAL],
        doc: "eventfd(2): write(2) fails with EINVAL if an attempt is made to write the value 0xffffffffffffffff",
        build: |g| {
            let fd = g.eventfd(0);
            let b = g.buf("buf", 8, &u64::MAX.to_ne_bytes());
            call("write", SYS_write, vec![g.fd("fd", fd, "eventfd"), b, g.int("count", 8)])
        },
    },
    Case {
        primitive: "eventfd",
        name: "read.bad_buffer",
        expect: &[EFAULT],
        doc: "read(2): EFAULT buf is outside your accessible address space",
        build: |g| {
            let fd = g.eventfd(5);
            let p = g.unwritable_ptr("buf");
            call("read", SYS_read, vec![g.fd("fd", fd, "eventfd holding 5"), p, g.int("count", 8)])
        },
    },
    Case {
        primitive: "eventfd",
        name: "write.bad_buffer",
        expect: &[EFAULT],
        doc: "write(2): EFAULT buf is outside your accessible address space",
        build: |g| {
            let fd = g.eventfd(0);
            let p = g.bad_ptr("buf");
            call("write", SYS_write, vec![g.fd("fd", fd, "eventfd"), p, g.int("count", 8)])
        },
    },
    Case {
        primitive: "eventfd",
        name: "read.zero_nonblocking",
        expect: &[EAGAIN],
        doc: "eventfd(2): if the counter is zero and the file descriptor is nonblocking, read(2) fails with EAGAIN",
        build: |g| {
            let fd = g.eventfd(0);
            let b = g.buf("buf", 8, &[]);
            call("read", SYS_read, vec![g.fd("fd", fd, "non-blocking eventfd holding 0"), b, g.int("count", 8)])
        },
    },
    // ------------------------------------------------------------- epoll
    Case {
        primitive: "epoll",
        name: "epoll_create1.bad_flags",
        expect: &[EINVAL],
        doc: "epoll_create(2): EINVAL (epoll_create1()) Invalid value specified in flags",
        build: |g| {
            let flags = g.bad_bits("flags", EPOLL_CLOEXEC as u64, 0xffff_ffff);
            g.close_returned_on_success();
            call("epoll_create1", SYS_epoll_create1, vec![flags])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_ctl.not_epoll",
        expect: &[EINVAL],
        doc: "epoll_ctl(2): EINVAL epfd is not an epoll file descriptor",
        build: |g| {
            let not = g.eventfd(0);
            let (r, _) = g.pipe(0);
            let ev = g.value("event", [EPOLLIN as u32, 0, 0, 0], "epoll_event EPOLLIN");
            call("epoll_ctl", SYS_epoll_ctl, vec![g.fd("epfd", not, "eventfd"), g.named("op", EPOLL_CTL_ADD as i64, "EPOLL_CTL_ADD"), g.fd("fd", r, "pipe read end"), ev])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_ctl.bad_op",
        expect: &[EINVAL],
        doc: "epoll_ctl(2): EINVAL The requested operation op is not supported by this interface",
        build: |g| {
            let ep = g.epoll();
            let (r, _) = g.pipe(0);
            let op = if g.rng_bool() { g.rng_range(4, 1 << 20) } else { -g.rng_range(0, 1 << 20) };
            let ev = g.value("event", [EPOLLIN as u32, 0, 0, 0], "epoll_event EPOLLIN");
            call("epoll_ctl", SYS_epoll_ctl, vec![g.fd("epfd", ep, "epoll"), g.int("op", op), g.fd("fd", r, "pipe read end"), ev])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_ctl.itself",
        expect: &[EINVAL],
        doc: "epoll_ctl(2): EINVAL fd is the same as epfd",
        build: |g| {
            let ep = g.epoll();
            let ev = g.value("event", [EPOLLIN as u32, 0, 0, 0], "epoll_event EPOLLIN");
            call("epoll_ctl", SYS_epoll_ctl, vec![g.fd("epfd", ep, "epoll"), g.named("op", EPOLL_CTL_ADD as i64, "EPOLL_CTL_ADD"), g.fd("fd", ep, "the same epoll"), ev])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_ctl.regular_file",
        expect: &[EPERM],
        doc: "epoll_ctl(2): EPERM The target file fd does not support epoll (e.g. a regular file)",
        build: |g| {
            let ep = g.epoll();
            let (f, _) = g.file(16, O_RDONLY);
            let ev = g.value("event", [EPOLLIN as u32, 0, 0, 0], "epoll_event EPOLLIN");
            call("epoll_ctl", SYS_epoll_ctl, vec![g.fd("epfd", ep, "epoll"), g.named("op", EPOLL_CTL_ADD as i64, "EPOLL_CTL_ADD"), g.fd("fd", f, "regular file"), ev])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_ctl.not_registered",
        expect: &[ENOENT],
        doc: "epoll_ctl(2): ENOENT op was EPOLL_CTL_MOD or EPOLL_CTL_DEL, and fd is not registered with this epoll instance",
        build: |g| {
            let ep = g.epoll();
            let (r, _) = g.pipe(0);
            let (op, name) = g.pick(&[(EPOLL_CTL_MOD, "EPOLL_CTL_MOD"), (EPOLL_CTL_DEL, "EPOLL_CTL_DEL")]);
            let ev = g.value("event", [EPOLLIN as u32, 0, 0, 0], "epoll_event EPOLLIN");
            call("epoll_ctl", SYS_epoll_ctl, vec![g.fd("epfd", ep, "epoll"), g.named("op", op as i64, name), g.fd("fd", r, "unregistered pipe"), ev])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_ctl.twice",
        expect: &[EEXIST],
        doc: "epoll_ctl(2): EEXIST op was EPOLL_CTL_ADD, and the supplied file descriptor fd is already registered",
        build: |g| {
            let ep = g.epoll();
            let (r, _) = g.pipe(0);
            g.watch(ep, r);
            let ev = g.value("event", [EPOLLIN as u32, 0, 0, 0], "epoll_event EPOLLIN");
            call("epoll_ctl", SYS_epoll_ctl, vec![g.fd("epfd", ep, "epoll"), g.named("op", EPOLL_CTL_ADD as i64, "EPOLL_CTL_ADD"), g.fd("fd", r, "registered pipe"), ev])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_ctl.bad_event",
        expect: &[EFAULT],
        doc: "epoll_ctl(2): EFAULT (documented under epoll_wait) / copy of event from an invalid address",
        build: |g| {
            let ep = g.epoll();
            let (r, _) = g.pipe(0);
            let ev = g.bad_ptr("event");
            call("epoll_ctl", SYS_epoll_ctl, vec![g.fd("epfd", ep, "epoll"), g.named("op", EPOLL_CTL_ADD as i64, "EPOLL_CTL_ADD"), g.fd("fd", r, "pipe read end"), ev])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_ctl.bad_epfd",
        expect: &[EBADF],
        doc: "epoll_ctl(2): EBADF epfd or fd is not a valid file descriptor",
        build: |g| {
            let ep = g.closed_fd("epfd");
            let (r, _) = g.pipe(0);
            let ev = g.value("event", [EPOLLIN as u32, 0, 0, 0], "epoll_event EPOLLIN");
            call("epoll_ctl", SYS_epoll_ctl, vec![ep, g.named("op", EPOLL_CTL_ADD as i64, "EPOLL_CTL_ADD"), g.fd("fd", r, "pipe read end"), ev])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_pwait.bad_maxevents",
        expect: &[EINVAL],
        doc: "epoll_wait(2): EINVAL maxevents is less than or equal to zero",
        build: |g| {
            let ep = g.epoll();
            let b = g.buf("events", 256, &[]);
            let m = -g.rng_range(0, 1 << 30);
            call("epoll_pwait", SYS_epoll_pwait, vec![g.fd("epfd", ep, "epoll"), b, g.int("maxevents", m), g.int("timeout", 0), g.int("sigmask", 0), g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_pwait.not_epoll",
        expect: &[EINVAL],
        doc: "epoll_wait(2): EINVAL epfd is not an epoll file descriptor",
        build: |g| {
            let (r, _) = g.pipe(0);
            let b = g.buf("events", 256, &[]);
            call("epoll_pwait", SYS_epoll_pwait, vec![g.fd("epfd", r, "pipe read end"), b, g.int("maxevents", 8), g.int("timeout", 0), g.int("sigmask", 0), g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "epoll",
        name: "epoll_pwait.bad_events",
        expect: &[EFAULT],
        doc: "epoll_wait(2): EFAULT The memory area pointed to by events is not accessible with write permissions",
        build: |g| {
            let ep = g.epoll();
            // A ready fd, so that the kernel has an event to copy out.
            let fd = g.eventfd(1);
            g.watch(ep, fd);
            let p = g.unwritable_ptr("events");
            call("epoll_pwait", SYS_epoll_pwait, vec![g.fd("epfd", ep, "epoll with a ready eventfd"), p, g.int("maxevents", 8), g.int("timeout", 0), g.int("sigmask", 0), g.int("sigsetsize", SS)])
        },
    },
    // ----------------------------------------------------------- timerfd
    Case {
        primitive: "timerfd",
        name: "timerfd_create.bad_clock",
        expect: &[EINVAL],
        doc: "timerfd_create(2): EINVAL The clockid is not valid",
        build: |g| {
            let c = if g.rng_bool() { g.rng_range(16, 1 << 16) } else { -g.rng_range(1, 1 << 16) };
            g.close_returned_on_success();
            call("timerfd_create", SYS_timerfd_create, vec![g.int("clockid", c), g.int("flags", 0)])
        },
    },
    Case {
        primitive: "timerfd",
        name: "timerfd_create.bad_flags",
        expect: &[EINVAL],
        doc: "timerfd_create(2): EINVAL flags is invalid",
        build: |g| {
            let flags = g.bad_bits("flags", (TFD_CLOEXEC | TFD_NONBLOCK) as u64, 0xffff_ffff);
            g.close_returned_on_success();
            call("timerfd_create", SYS_timerfd_create, vec![g.named("clockid", CLOCK_MONOTONIC as i64, "CLOCK_MONOTONIC"), flags])
        },
    },
    Case {
        primitive: "timerfd",
        name: "timerfd_settime.bad_flags",
        expect: &[EINVAL],
        doc: "timerfd_create(2): EINVAL (timerfd_settime) flags is invalid",
        build: |g| {
            let fd = g.timerfd();
            let flags = g.bad_bits("flags", 3, 0xffff_ffff); // TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET
            let t = g.value("new_value", [0i64, 0, 1, 0], "itimerspec 1 s");
            call("timerfd_settime", SYS_timerfd_settime, vec![g.fd("fd", fd, "timerfd"), flags, t, g.int("old_value", 0)])
        },
    },
    Case {
        primitive: "timerfd",
        name: "timerfd_settime.bad_nsec",
        expect: &[EINVAL],
        doc: "timerfd_create(2): EINVAL new_value is not properly initialized (one of the tv_nsec falls outside the range zero to 999,999,999)",
        build: |g| {
            let fd = g.timerfd();
            let ns = bad_nsec(g);
            let t = if g.rng_bool() { [0i64, 0, 1, ns] } else { [0i64, ns, 1, 0] };
            let t = g.value("new_value", t, "itimerspec with tv_nsec out of range");
            call("timerfd_settime", SYS_timerfd_settime, vec![g.fd("fd", fd, "timerfd"), g.int("flags", 0), t, g.int("old_value", 0)])
        },
    },
    Case {
        primitive: "timerfd",
        name: "timerfd_settime.bad_pointer",
        expect: &[EFAULT],
        doc: "timerfd_create(2): EFAULT new_value, old_value, or curr_value is not a valid pointer",
        build: |g| {
            let fd = g.timerfd();
            let p = g.bad_ptr("new_value");
            call("timerfd_settime", SYS_timerfd_settime, vec![g.fd("fd", fd, "timerfd"), g.int("flags", 0), p, g.int("old_value", 0)])
        },
    },
    Case {
        primitive: "timerfd",
        name: "timerfd_settime.not_timerfd",
        expect: &[EINVAL],
        doc: "timerfd_create(2): EINVAL fd is not a valid timerfd file descriptor",
        build: |g| {
            let fd = g.eventfd(0);
            let t = g.value("new_value", [0i64, 0, 1, 0], "itimerspec 1 s");
            call("timerfd_settime", SYS_timerfd_settime, vec![g.fd("fd", fd, "eventfd"), g.int("flags", 0), t, g.int("old_value", 0)])
        },
    },
    Case {
        primitive: "timerfd",
        name: "timerfd_gettime.bad_pointer",
        expect: &[EFAULT],
        doc: "timerfd_create(2): EFAULT new_value, old_value, or curr_value is not a valid pointer",
        build: |g| {
            let fd = g.timerfd();
            let p = g.unwritable_ptr("curr_value");
            call("timerfd_gettime", SYS_timerfd_gettime, vec![g.fd("fd", fd, "timerfd"), p])
        },
    },
    Case {
        primitive: "timerfd",
        name: "read.short_buffer",
        expect: &[EINVAL],
        doc: "timerfd_create(2): read(2) fails with EINVAL if the size of the supplied buffer is less than 8 bytes",
        build: |g| {
            let fd = g.timerfd();
            let b = g.buf("buf", 8, &[]);
            let n = g.rng_range(1, 8);
            call("read", SYS_read, vec![g.fd("fd", fd, "timerfd"), b, g.int("count", n)])
        },
    },
    Case {
        primitive: "timerfd",
        name: "read.unexpired_nonblocking",
        expect: &[EAGAIN],
        doc: "timerfd_create(2): if no timer expirations have occurred and the file descriptor is nonblocking, read fails with EAGAIN",
        build: |g| {
            let fd = g.timerfd();
            let b = g.buf("buf", 8, &[]);
            call("read", SYS_read, vec![g.fd("fd", fd, "disarmed non-blocking timerfd"), b, g.int("count", 8)])
        },
    },
    // ------------------------------------------------------------- mmap
    Case {
        primitive: "mmap-anon",
        name: "mmap.ok",
        expect: &[],
        doc: "mmap(2): On success, mmap() returns a pointer to the mapped area",
        build: |g| {
            let pages = g.rng_range(1, 17);
            let len = pages as usize * g.page();
            g.unmap_returned_on_success(len);
            call("mmap", SYS_mmap, vec![g.int("addr", 0), g.int("length", len as i64), g.named("prot", (PROT_READ | PROT_WRITE) as i64, "PROT_READ|PROT_WRITE"), g.named("flags", (MAP_PRIVATE | MAP_ANONYMOUS) as i64, "MAP_PRIVATE|MAP_ANONYMOUS"), g.int("fd", -1), g.int("offset", 0)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mmap.zero_length",
        expect: &[EINVAL],
        doc: "mmap(2): EINVAL (since Linux 2.6.12) length was 0",
        build: |g| {
            call("mmap", SYS_mmap, vec![g.int("addr", 0), g.int("length", 0), g.named("prot", (PROT_READ | PROT_WRITE) as i64, "PROT_READ|PROT_WRITE"), g.named("flags", (MAP_PRIVATE | MAP_ANONYMOUS) as i64, "MAP_PRIVATE|MAP_ANONYMOUS"), g.int("fd", -1), g.int("offset", 0)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mmap.huge_length",
        expect: &[ENOMEM],
        doc: "mmap(2): ENOMEM No memory is available / the process's maximum number of mappings or address space would be exceeded",
        build: |g| {
            let len = g.huge("length");
            g.unmap_returned_on_success(len.raw as usize);
            call("mmap", SYS_mmap, vec![g.int("addr", 0), len, g.named("prot", (PROT_READ | PROT_WRITE) as i64, "PROT_READ|PROT_WRITE"), g.named("flags", (MAP_PRIVATE | MAP_ANONYMOUS) as i64, "MAP_PRIVATE|MAP_ANONYMOUS"), g.int("fd", -1), g.int("offset", 0)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mmap.no_sharing_type",
        expect: &[EINVAL],
        doc: "mmap(2): EINVAL flags contained none of MAP_PRIVATE, MAP_SHARED, or MAP_SHARED_VALIDATE",
        build: |g| {
            let len = g.page() as i64;
            call("mmap", SYS_mmap, vec![g.int("addr", 0), g.int("length", len), g.named("prot", PROT_READ as i64, "PROT_READ"), g.named("flags", MAP_ANONYMOUS as i64, "MAP_ANONYMOUS"), g.int("fd", -1), g.int("offset", 0)])
        },
    },
    Case {
        primitive: "mmap-file",
        name: "mmap.bad_fd",
        expect: &[EBADF],
        doc: "mmap(2): EBADF fd is not a valid file descriptor (and MAP_ANONYMOUS was not set)",
        build: |g| {
            let len = g.page() as i64;
            let fd = g.closed_fd("fd");
            call("mmap", SYS_mmap, vec![g.int("addr", 0), g.int("length", len), g.named("prot", PROT_READ as i64, "PROT_READ"), g.named("flags", MAP_PRIVATE as i64, "MAP_PRIVATE"), fd, g.int("offset", 0)])
        },
    },
    Case {
        primitive: "mmap-file",
        name: "mmap.unaligned_offset",
        expect: &[EINVAL],
        doc: "mmap(2): EINVAL We don't like addr, length, or offset (e.g., they are too large, or not aligned on a page boundary)",
        build: |g| {
            let len = g.page() as i64;
            let (f, _) = g.file(8192, O_RDWR);
            let off = g.rng_range(1, g.page() as i64);
            call("mmap", SYS_mmap, vec![g.int("addr", 0), g.int("length", len), g.named("prot", PROT_READ as i64, "PROT_READ"), g.named("flags", MAP_SHARED as i64, "MAP_SHARED"), g.fd("fd", f, "regular file"), g.int("offset", off)])
        },
    },
    Case {
        primitive: "mmap-file",
        name: "mmap.shared_write_readonly_fd",
        expect: &[EACCES],
        doc: "mmap(2): EACCES MAP_SHARED was requested and PROT_WRITE is set, but fd is not open in read/write (O_RDWR) mode",
        build: |g| {
            let len = g.page() as i64;
            let (f, _) = g.file(8192, O_RDONLY);
            g.unmap_returned_on_success(len as usize);
            call("mmap", SYS_mmap, vec![g.int("addr", 0), g.int("length", len), g.named("prot", (PROT_READ | PROT_WRITE) as i64, "PROT_READ|PROT_WRITE"), g.named("flags", MAP_SHARED as i64, "MAP_SHARED"), g.fd("fd", f, "file opened O_RDONLY"), g.int("offset", 0)])
        },
    },
    Case {
        primitive: "mmap-file",
        name: "mmap.pipe",
        expect: &[ENODEV],
        doc: "mmap(2): ENODEV The underlying filesystem of the specified file does not support memory mapping",
        build: |g| {
            let len = g.page() as i64;
            let (r, _) = g.pipe(0);
            g.unmap_returned_on_success(len as usize);
            call("mmap", SYS_mmap, vec![g.int("addr", 0), g.int("length", len), g.named("prot", PROT_READ as i64, "PROT_READ"), g.named("flags", MAP_PRIVATE as i64, "MAP_PRIVATE"), g.fd("fd", r, "pipe read end"), g.int("offset", 0)])
        },
    },
    Case {
        primitive: "mmap-file",
        name: "mmap.file_ok",
        expect: &[],
        doc: "mmap(2): On success, mmap() returns a pointer to the mapped area",
        build: |g| {
            let len = g.page() as i64;
            let (f, _) = g.file(8192, O_RDONLY);
            g.unmap_returned_on_success(len as usize);
            call("mmap", SYS_mmap, vec![g.int("addr", 0), g.int("length", len), g.named("prot", PROT_READ as i64, "PROT_READ"), g.named("flags", MAP_PRIVATE as i64, "MAP_PRIVATE"), g.fd("fd", f, "regular file"), g.int("offset", 0)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "munmap.unaligned",
        expect: &[EINVAL],
        doc: "munmap(2): EINVAL We don't like addr, length (e.g. not aligned on a page boundary)",
        build: |g| {
            let a = g.unaligned("addr");
            let len = g.page() as i64;
            call("munmap", SYS_munmap, vec![a, g.int("length", len)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "munmap.zero_length",
        expect: &[EINVAL],
        doc: "munmap(2): EINVAL (since Linux 2.6.12) length was 0",
        build: |g| {
            let a = g.arena_page("addr");
            call("munmap", SYS_munmap, vec![a, g.int("length", 0)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "munmap.nothing_mapped",
        expect: &[],
        doc: "munmap(2): It is not an error if the indicated range does not contain any mapped pages",
        build: |g| {
            let a = g.unmapped_page("addr");
            let len = g.page() as i64;
            call("munmap", SYS_munmap, vec![a, g.int("length", len)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mprotect.unmapped",
        expect: &[ENOMEM],
        doc: "mprotect(2): ENOMEM Addresses in the range [addr, addr+len-1] are invalid for the address space of the process",
        build: |g| {
            let a = g.unmapped_page("addr");
            let len = g.page() as i64;
            call("mprotect", SYS_mprotect, vec![a, g.int("len", len), g.named("prot", PROT_READ as i64, "PROT_READ")])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mprotect.unaligned",
        expect: &[EINVAL],
        doc: "mprotect(2): EINVAL addr is not a valid pointer, or not a multiple of the system page size",
        build: |g| {
            let a = g.unaligned("addr");
            let len = g.page() as i64;
            call("mprotect", SYS_mprotect, vec![a, g.int("len", len), g.named("prot", PROT_READ as i64, "PROT_READ")])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mprotect.bad_prot",
        expect: &[EINVAL],
        doc: "mprotect(2): EINVAL Invalid flags specified in prot",
        build: |g| {
            let a = g.arena_page("addr");
            let len = g.page() as i64;
            // Bits 6–23: no architecture gives them a meaning.
            let prot = g.bad_bits("prot", 0, 0x00ff_ffc0);
            call("mprotect", SYS_mprotect, vec![a, g.int("len", len), prot])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "madvise.bad_advice",
        expect: &[EINVAL],
        doc: "madvise(2): EINVAL advice is not valid",
        build: |g| {
            let a = g.arena_page("addr");
            let len = g.page() as i64;
            // Far above every advice value (the hwpoison ones, 100 and 101, are avoided).
            let adv = g.rng_range(1000, 1 << 20);
            call("madvise", SYS_madvise, vec![a, g.int("length", len), g.int("advice", adv)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "madvise.unaligned",
        expect: &[EINVAL],
        doc: "madvise(2): EINVAL addr is not page-aligned or length is negative",
        build: |g| {
            let a = g.unaligned("addr");
            let len = g.page() as i64;
            call("madvise", SYS_madvise, vec![a, g.int("length", len), g.named("advice", MADV_NORMAL as i64, "MADV_NORMAL")])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "madvise.unmapped",
        expect: &[ENOMEM],
        doc: "madvise(2): ENOMEM Addresses in the specified range are not currently mapped",
        build: |g| {
            let a = g.unmapped_page("addr");
            let len = g.page() as i64;
            call("madvise", SYS_madvise, vec![a, g.int("length", len), g.named("advice", MADV_NORMAL as i64, "MADV_NORMAL")])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mincore.unaligned",
        expect: &[EINVAL],
        doc: "mincore(2): EINVAL addr is not a multiple of the page size",
        build: |g| {
            let a = g.unaligned("addr");
            let len = g.page() as i64;
            let v = g.buf("vec", 16, &[]);
            call("mincore", SYS_mincore, vec![a, g.int("length", len), v])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mincore.bad_vec",
        expect: &[EFAULT],
        doc: "mincore(2): EFAULT vec points to an invalid address",
        build: |g| {
            let a = g.arena_page("addr");
            let len = g.page() as i64;
            let v = g.unwritable_ptr("vec");
            call("mincore", SYS_mincore, vec![a, g.int("length", len), v])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mincore.unmapped",
        expect: &[ENOMEM],
        doc: "mincore(2): ENOMEM addr to addr + length contained unmapped memory",
        build: |g| {
            let a = g.unmapped_page("addr");
            let len = g.page() as i64;
            let v = g.buf("vec", 16, &[]);
            call("mincore", SYS_mincore, vec![a, g.int("length", len), v])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "msync.sync_and_async",
        expect: &[EINVAL],
        doc: "msync(2): EINVAL flags specifies both MS_SYNC and MS_ASYNC",
        build: |g| {
            let a = g.arena_page("addr");
            let len = g.page() as i64;
            call("msync", SYS_msync, vec![a, g.int("length", len), g.named("flags", (MS_SYNC | MS_ASYNC) as i64, "MS_SYNC|MS_ASYNC")])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "msync.bad_flags",
        expect: &[EINVAL],
        doc: "msync(2): EINVAL addr is not a multiple of PAGESIZE; or any bit other than MS_ASYNC | MS_INVALIDATE | MS_SYNC is set in flags",
        build: |g| {
            let a = g.arena_page("addr");
            let len = g.page() as i64;
            let f = g.bad_bits("flags", (MS_ASYNC | MS_INVALIDATE | MS_SYNC) as u64, 0xffff_ffff);
            call("msync", SYS_msync, vec![a, g.int("length", len), f])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "msync.unmapped",
        expect: &[ENOMEM],
        doc: "msync(2): ENOMEM The indicated memory (or part of it) was not mapped",
        build: |g| {
            let a = g.unmapped_page("addr");
            let len = g.page() as i64;
            call("msync", SYS_msync, vec![a, g.int("length", len), g.named("flags", MS_ASYNC as i64, "MS_ASYNC")])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mremap.zero_new_length",
        expect: &[EINVAL],
        doc: "mremap(2): EINVAL new_size was zero",
        build: |g| {
            let a = g.arena_page("old_address");
            let len = g.page() as i64;
            call("mremap", SYS_mremap, vec![a, g.int("old_size", len), g.int("new_size", 0), g.named("flags", MREMAP_MAYMOVE as i64, "MREMAP_MAYMOVE"), g.int("new_address", 0)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mremap.bad_flags",
        expect: &[EINVAL],
        doc: "mremap(2): EINVAL An invalid argument was given. Possible causes are: old_address was not page aligned; a value other than MREMAP_MAYMOVE or MREMAP_FIXED or MREMAP_DONTUNMAP was specified in flags",
        build: |g| {
            let a = g.arena_page("old_address");
            let len = g.page() as i64;
            let f = g.bad_bits("flags", 7, 0xffff_ffff);
            call("mremap", SYS_mremap, vec![a, g.int("old_size", len), g.int("new_size", len), f, g.int("new_address", 0)])
        },
    },
    Case {
        primitive: "mmap-anon",
        name: "mremap.unaligned",
        expect: &[EINVAL],
        doc: "mremap(2): EINVAL old_address was not page aligned",
        build: |g| {
            let a = g.unaligned("old_address");
            let len = g.page() as i64;
            call("mremap", SYS_mremap, vec![a, g.int("old_size", len), g.int("new_size", len), g.int("flags", 0), g.int("new_address", 0)])
        },
    },
    // ----------------------------------------------------------- process
    Case {
        primitive: "process",
        name: "wait4.not_a_child",
        expect: &[ECHILD],
        doc: "wait(2): ECHILD The process specified by pid does not exist or is not a child of the calling process",
        build: |g| {
            let pid = g.env.pid_max + g.rng_range(1, 1 << 20);
            let st = g.buf("wstatus", 8, &[]);
            call("wait4", SYS_wait4, vec![g.named("pid", pid, "<pid above pid_max>"), st, g.named("options", WNOHANG as i64, "WNOHANG"), g.int("rusage", 0)])
        },
    },
    Case {
        primitive: "process",
        name: "wait4.bad_options",
        expect: &[EINVAL],
        doc: "wait(2): EINVAL The options argument was invalid",
        build: |g| {
            let valid = (WNOHANG | WUNTRACED | WCONTINUED) as u64 | 0xe000_0000; // __WNOTHREAD | __WCLONE | __WALL
            let o = g.bad_bits("options", valid, 0xffff_ffff);
            let st = g.buf("wstatus", 8, &[]);
            call("wait4", SYS_wait4, vec![g.int("pid", -1), st, o, g.int("rusage", 0)])
        },
    },
    Case {
        primitive: "process",
        name: "wait4.bad_status",
        expect: &[EFAULT],
        doc: "wait(2): EFAULT wstatus or rusage points outside the process's address space (the child is reaped all the same)",
        build: |g| {
            let pid = g.zombie();
            let st = g.unwritable_nonnull_ptr("wstatus");
            call("wait4", SYS_wait4, vec![g.named("pid", pid as i64, "<exited child>"), st, g.int("options", 0), g.int("rusage", 0)])
        },
    },
    Case {
        primitive: "process",
        name: "wait4.reap_ok",
        expect: &[],
        doc: "wait(2): on success, returns the process ID of the child whose state has changed",
        build: |g| {
            let pid = g.zombie();
            let st = g.buf("wstatus", 8, &[]);
            call("wait4", SYS_wait4, vec![g.named("pid", pid as i64, "<exited child>"), st, g.int("options", 0), g.int("rusage", 0)])
        },
    },
    Case {
        primitive: "process",
        name: "waitid.bad_idtype",
        expect: &[EINVAL],
        doc: "wait(2): EINVAL The options argument was invalid (waitid: idtype is not one of P_ALL, P_PID, P_PGID, P_PIDFD)",
        build: |g| {
            let t = g.rng_range(4, 1 << 16);
            let info = g.buf("infop", 128, &[]);
            call("waitid", SYS_waitid, vec![g.int("idtype", t), g.int("id", 0), info, g.named("options", (WEXITED | WNOHANG) as i64, "WEXITED|WNOHANG"), g.int("rusage", 0)])
        },
    },
    Case {
        primitive: "process",
        name: "waitid.no_event",
        expect: &[EINVAL],
        doc: "wait(2): EINVAL The options argument was invalid (waitid needs WEXITED, WSTOPPED or WCONTINUED)",
        build: |g| {
            let info = g.buf("infop", 128, &[]);
            call("waitid", SYS_waitid, vec![g.named("idtype", P_ALL as i64, "P_ALL"), g.int("id", 0), info, g.named("options", WNOHANG as i64, "WNOHANG"), g.int("rusage", 0)])
        },
    },
    Case {
        primitive: "process",
        name: "kill.bad_signal",
        expect: &[EINVAL],
        doc: "kill(2): EINVAL An invalid signal was specified",
        build: |g| {
            let sig = if g.rng_bool() { g.rng_range(65, 1 << 20) } else { -g.rng_range(1, 1 << 20) };
            let me = crate::sys::getpid() as i64;
            call("kill", SYS_kill, vec![g.named("pid", me, "<own pid>"), g.int("sig", sig)])
        },
    },
    Case {
        primitive: "process",
        name: "kill.no_such_process",
        expect: &[ESRCH],
        doc: "kill(2): ESRCH The target process or process group does not exist",
        build: |g| {
            let pid = g.env.pid_max + g.rng_range(1, 1 << 20);
            call("kill", SYS_kill, vec![g.named("pid", pid, "<pid above pid_max>"), g.int("sig", 0)])
        },
    },
    Case {
        primitive: "process",
        name: "rt_sigqueueinfo.bad_info",
        expect: &[EFAULT],
        doc: "rt_sigqueueinfo(2): EFAULT (info is copied from user space); sigqueue(3): EINVAL sig was invalid",
        build: |g| {
            let me = crate::sys::getpid() as i64;
            let p = g.bad_ptr("info");
            call("rt_sigqueueinfo", SYS_rt_sigqueueinfo, vec![g.named("tgid", me, "<own pid>"), g.named("sig", ignored_sig() as i64, "<ignored RT signal>"), p])
        },
    },
    Case {
        primitive: "process",
        name: "clone3.small_size",
        expect: &[EINVAL],
        doc: "clone(2): EINVAL (clone3) size is smaller than CLONE_ARGS_SIZE_VER0",
        build: |g| {
            if !g.env.has_clone3 {
                g.unavailable = Some("clone3 is not available here (ENOSYS)");
            }
            let args = g.buf("cl_args", 88, &[]);
            let size = g.rng_range(0, 64);
            g.reap_returned_on_success();
            call("clone3", SYS_clone3, vec![args, g.int("size", size)])
        },
    },
    Case {
        primitive: "process",
        name: "clone3.bad_pointer",
        expect: &[EFAULT],
        doc: "clone(2): EFAULT (clone3) cl_args is outside the accessible address space",
        build: |g| {
            if !g.env.has_clone3 {
                g.unavailable = Some("clone3 is not available here (ENOSYS)");
            }
            let p = g.bad_ptr("cl_args");
            g.reap_returned_on_success();
            call("clone3", SYS_clone3, vec![p, g.int("size", 88)])
        },
    },
    Case {
        primitive: "thread",
        name: "clone3.thread_without_sighand",
        expect: &[EINVAL],
        doc: "clone(2): EINVAL CLONE_THREAD was specified in the flags mask, but CLONE_SIGHAND was not",
        build: |g| {
            if !g.env.has_clone3 {
                g.unavailable = Some("clone3 is not available here (ENOSYS)");
            }
            let mut a = [0u64; 11];
            a[0] = CLONE_THREAD as u64;
            let args = g.value("cl_args", a, "clone_args {flags: CLONE_THREAD}");
            g.reap_returned_on_success();
            call("clone3", SYS_clone3, vec![args, g.int("size", 88)])
        },
    },
    // ------------------------------------------------------------ thread
    Case {
        primitive: "thread",
        name: "tgkill.no_such_thread",
        expect: &[ESRCH],
        doc: "tgkill(2): ESRCH No process with the specified thread ID (and thread group ID) exists",
        build: |g| {
            let me = crate::sys::getpid() as i64;
            let tid = g.env.pid_max + g.rng_range(1, 1 << 20);
            call("tgkill", SYS_tgkill, vec![g.named("tgid", me, "<own pid>"), g.named("tid", tid, "<tid above pid_max>"), g.int("sig", 0)])
        },
    },
    Case {
        primitive: "thread",
        name: "tgkill.bad_ids",
        expect: &[EINVAL],
        doc: "tgkill(2): EINVAL An invalid thread ID, thread group ID, or signal was specified",
        build: |g| {
            let bad = -g.rng_range(0, 1 << 20);
            let me = crate::sys::getpid() as i64;
            let (tg, tid) = if g.rng_bool() { (g.int("tgid", bad), g.named("tid", me, "<own tid>")) } else { (g.named("tgid", me, "<own pid>"), g.int("tid", bad)) };
            call("tgkill", SYS_tgkill, vec![tg, tid, g.int("sig", 0)])
        },
    },
    Case {
        primitive: "thread",
        name: "tgkill.bad_signal",
        expect: &[EINVAL],
        doc: "tgkill(2): EINVAL An invalid thread ID, thread group ID, or signal was specified",
        build: |g| {
            let me = crate::sys::getpid() as i64;
            let tid = crate::sys::gettid() as i64;
            let sig = if g.rng_bool() { g.rng_range(65, 1 << 20) } else { -g.rng_range(1, 1 << 20) };
            call("tgkill", SYS_tgkill, vec![g.named("tgid", me, "<own pid>"), g.named("tid", tid, "<own tid>"), g.int("sig", sig)])
        },
    },
    Case {
        primitive: "thread",
        name: "futex.bad_op",
        expect: &[ENOSYS],
        doc: "futex(2): ENOSYS Invalid operation specified in futex_op",
        build: |g| {
            let w = g.buf("uaddr", 8, &[]);
            let op = g.rng_range(64, 128) | FUTEX_PRIVATE_FLAG as i64;
            call("futex", SYS_futex, vec![w, g.int("futex_op", op), g.int("val", 0), g.int("timeout", 0), g.int("uaddr2", 0), g.int("val3", 0)])
        },
    },
    Case {
        primitive: "thread",
        name: "futex.unaligned",
        expect: &[EINVAL],
        doc: "futex(2): EINVAL uaddr was not aligned to a four-byte boundary",
        build: |g| {
            let w = g.buf("uaddr", 8, &[]);
            let off = g.rng_range(1, 4) as u64;
            let w = g.hex("uaddr", w.raw + off);
            call("futex", SYS_futex, vec![w, g.named("futex_op", (FUTEX_WAKE | FUTEX_PRIVATE_FLAG) as i64, "FUTEX_WAKE_PRIVATE"), g.int("val", 1), g.int("timeout", 0), g.int("uaddr2", 0), g.int("val3", 0)])
        },
    },
    Case {
        primitive: "thread",
        name: "futex.bad_address",
        expect: &[EFAULT],
        doc: "futex(2): EFAULT A required pointer argument did not point to a valid user-space address",
        build: |g| {
            let p = g.bad_ptr("uaddr");
            let t = timespec(g, "timeout", 0, 1, "timespec 1 ns");
            call("futex", SYS_futex, vec![p, g.named("futex_op", (FUTEX_WAIT | FUTEX_PRIVATE_FLAG) as i64, "FUTEX_WAIT_PRIVATE"), g.int("val", 0), t, g.int("uaddr2", 0), g.int("val3", 0)])
        },
    },
    Case {
        primitive: "thread",
        name: "futex.value_changed",
        expect: &[EAGAIN],
        doc: "futex(2): EAGAIN (FUTEX_WAIT) The value pointed to by uaddr was not equal to the expected value val",
        build: |g| {
            let v = g.rng_range(0, 1 << 31) as u32;
            let w = g.buf("uaddr", 8, &v.to_ne_bytes());
            let t = timespec(g, "timeout", 0, 1_000_000, "timespec 1 ms");
            call("futex", SYS_futex, vec![w, g.named("futex_op", (FUTEX_WAIT | FUTEX_PRIVATE_FLAG) as i64, "FUTEX_WAIT_PRIVATE"), g.int("val", v.wrapping_add(1) as i64), t, g.int("uaddr2", 0), g.int("val3", 0)])
        },
    },
    Case {
        primitive: "thread",
        name: "futex.bad_timeout",
        expect: &[EINVAL],
        doc: "futex(2): EINVAL The supplied timeout argument was invalid (tv_sec was less than zero, or tv_nsec was not less than 1,000,000,000)",
        build: |g| {
            let v = g.rng_range(0, 1 << 31) as u32;
            let w = g.buf("uaddr", 8, &v.to_ne_bytes());
            let ns = bad_nsec(g);
            let t = timespec(g, "timeout", 0, ns, "timespec with tv_nsec out of range");
            call("futex", SYS_futex, vec![w, g.named("futex_op", (FUTEX_WAIT | FUTEX_PRIVATE_FLAG) as i64, "FUTEX_WAIT_PRIVATE"), g.int("val", v as i64), t, g.int("uaddr2", 0), g.int("val3", 0)])
        },
    },
    Case {
        primitive: "thread",
        name: "set_robust_list.bad_len",
        expect: &[EINVAL],
        doc: "set_robust_list(2): EINVAL The len value does not match the size of structure struct robust_list_head",
        build: |g| {
            let h = g.buf("head", 24, &[]);
            let len = loop {
                let l = g.rng_range(0, 4096);
                if l != 24 {
                    break l;
                }
            };
            call("set_robust_list", SYS_set_robust_list, vec![h, g.int("len", len)])
        },
    },
    // ------------------------------------------------------------ signal
    Case {
        primitive: "signal",
        name: "rt_sigaction.bad_sigsetsize",
        expect: &[EINVAL],
        doc: "rt_sigaction: EINVAL sigsetsize is not the size of the kernel's sigset_t",
        build: |g| {
            let act = g.buf("act", 32, &[]);
            let size = loop {
                let s = g.rng_range(0, 1 << 16);
                if s != SS {
                    break s;
                }
            };
            call("rt_sigaction", SYS_rt_sigaction, vec![g.named("sig", SIGUSR1 as i64, "SIGUSR1"), act, g.int("oact", 0), g.int("sigsetsize", size)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigaction.kill_or_stop",
        expect: &[EINVAL],
        doc: "sigaction(2): EINVAL An attempt was made to change the action for SIGKILL or SIGSTOP",
        build: |g| {
            let (s, n) = g.pick(&[(SIGKILL, "SIGKILL"), (SIGSTOP, "SIGSTOP")]);
            let act = g.buf("act", 32, &[]);
            call("rt_sigaction", SYS_rt_sigaction, vec![g.named("sig", s as i64, n), act, g.int("oact", 0), g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigaction.bad_signal",
        expect: &[EINVAL],
        doc: "sigaction(2): EINVAL An invalid signal was specified",
        build: |g| {
            let sig = g.pick(&[0i64, 65, 1000, -1]);
            let sig = if sig == 1000 { g.rng_range(65, 1 << 20) } else { sig };
            let old = g.buf("oact", 32, &[]);
            call("rt_sigaction", SYS_rt_sigaction, vec![g.int("sig", sig), g.int("act", 0), old, g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigaction.bad_act",
        expect: &[EFAULT],
        doc: "sigaction(2): EFAULT act or oldact points to memory which is not a valid part of the process address space",
        build: |g| {
            let p = g.bad_nonnull_ptr("act");
            call("rt_sigaction", SYS_rt_sigaction, vec![g.named("sig", ignored_sig() as i64, "<ignored RT signal>"), p, g.int("oact", 0), g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigaction.bad_oact",
        expect: &[EFAULT],
        doc: "sigaction(2): EFAULT act or oldact points to memory which is not a valid part of the process address space",
        build: |g| {
            let p = g.unwritable_nonnull_ptr("oact");
            call("rt_sigaction", SYS_rt_sigaction, vec![g.named("sig", SIGUSR1 as i64, "SIGUSR1"), g.int("act", 0), p, g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigprocmask.bad_how",
        expect: &[EINVAL],
        doc: "sigprocmask(2): EINVAL The value specified in how was invalid",
        build: |g| {
            let how = if g.rng_bool() { g.rng_range(3, 1 << 20) } else { -g.rng_range(1, 1 << 20) };
            let set = sigset(g, "set", &[]);
            call("rt_sigprocmask", SYS_rt_sigprocmask, vec![g.int("how", how), set, g.int("oldset", 0), g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigprocmask.bad_set",
        expect: &[EFAULT],
        doc: "sigprocmask(2): EFAULT The set or oldset argument points outside the process's allocated address space",
        build: |g| {
            let p = g.bad_nonnull_ptr("set");
            call("rt_sigprocmask", SYS_rt_sigprocmask, vec![g.named("how", SIG_BLOCK as i64, "SIG_BLOCK"), p, g.int("oldset", 0), g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigprocmask.bad_sigsetsize",
        expect: &[EINVAL],
        doc: "sigprocmask(2): EINVAL (rt_sigprocmask) sigsetsize is not equal to sizeof(kernel_sigset_t)",
        build: |g| {
            let set = sigset(g, "set", &[]);
            let size = loop {
                let s = g.rng_range(0, 1 << 16);
                if s != SS {
                    break s;
                }
            };
            call("rt_sigprocmask", SYS_rt_sigprocmask, vec![g.named("how", SIG_BLOCK as i64, "SIG_BLOCK"), set, g.int("oldset", 0), g.int("sigsetsize", size)])
        },
    },
    Case {
        primitive: "signal",
        name: "sigaltstack.too_small",
        expect: &[ENOMEM],
        doc: "sigaltstack(2): ENOMEM The specified size of the new alternate signal stack ss.ss_size was less than MINSIGSTKSZ",
        build: |g| {
            let sp = g.alloc(1024) as u64;
            let size = g.rng_range(0, 1024) as u64;
            let ss = g.value("ss", [sp, 0, size], "stack_t with ss_size < MINSIGSTKSZ");
            call("sigaltstack", SYS_sigaltstack, vec![ss, g.int("old_ss", 0)])
        },
    },
    Case {
        primitive: "signal",
        name: "sigaltstack.bad_flags",
        expect: &[EINVAL],
        doc: "sigaltstack(2): EINVAL ss is not NULL and the ss_flags field contains an invalid flag",
        build: |g| {
            let sp = g.env.arena as u64;
            let flags = g.rng_range(1, 1 << 28) << 2; // not SS_ONSTACK, SS_DISABLE nor SS_AUTODISARM
            let ss = g.value("ss", [sp, flags as u64, 64 << 10], "stack_t with invalid ss_flags");
            call("sigaltstack", SYS_sigaltstack, vec![ss, g.int("old_ss", 0)])
        },
    },
    Case {
        primitive: "signal",
        name: "sigaltstack.bad_pointer",
        expect: &[EFAULT],
        doc: "sigaltstack(2): EFAULT Either ss or old_ss is not NULL and points to an area outside of the process's address space",
        build: |g| {
            let p = g.bad_nonnull_ptr("ss");
            call("sigaltstack", SYS_sigaltstack, vec![p, g.int("old_ss", 0)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigtimedwait.nothing_pending",
        expect: &[EAGAIN],
        doc: "sigwaitinfo(2): EAGAIN No signal in set became pending within the timeout period specified to sigtimedwait()",
        build: |g| {
            let set = sigset(g, "set", &[ignored_sig() + 1]);
            let t = timespec(g, "timeout", 0, 0, "timespec 0");
            call("rt_sigtimedwait", SYS_rt_sigtimedwait, vec![set, g.int("info", 0), t, g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "signal",
        name: "rt_sigtimedwait.bad_timeout",
        expect: &[EINVAL],
        doc: "sigwaitinfo(2): EINVAL timeout was invalid",
        build: |g| {
            let set = sigset(g, "set", &[ignored_sig() + 1]);
            let ns = bad_nsec(g);
            let t = timespec(g, "timeout", 0, ns, "timespec with tv_nsec out of range");
            call("rt_sigtimedwait", SYS_rt_sigtimedwait, vec![set, g.int("info", 0), t, g.int("sigsetsize", SS)])
        },
    },
    Case {
        primitive: "signal",
        name: "signalfd4.bad_flags",
        expect: &[EINVAL],
        doc: "signalfd(2): EINVAL flags is invalid",
        build: |g| {
            let set = sigset(g, "mask", &[ignored_sig() + 1]);
            let f = g.bad_bits("flags", (SFD_CLOEXEC | SFD_NONBLOCK) as u64, 0xffff_ffff);
            g.close_returned_on_success();
            call("signalfd4", SYS_signalfd4, vec![g.int("fd", -1), set, g.int("sizemask", SS), f])
        },
    },
    Case {
        primitive: "signal",
        name: "signalfd4.bad_sizemask",
        expect: &[EINVAL],
        doc: "signalfd(2): EINVAL (signalfd4) sizemask is not the size of the kernel's sigset",
        build: |g| {
            let set = sigset(g, "mask", &[ignored_sig() + 1]);
            let size = loop {
                let s = g.rng_range(0, 1 << 16);
                if s != SS {
                    break s;
                }
            };
            g.close_returned_on_success();
            call("signalfd4", SYS_signalfd4, vec![g.int("fd", -1), set, g.int("sizemask", size), g.int("flags", 0)])
        },
    },
    Case {
        primitive: "signal",
        name: "signalfd4.not_signalfd",
        expect: &[EINVAL],
        doc: "signalfd(2): EINVAL The fd file descriptor is not a valid signalfd file descriptor",
        build: |g| {
            let fd = g.eventfd(0);
            let set = sigset(g, "mask", &[ignored_sig() + 1]);
            call("signalfd4", SYS_signalfd4, vec![g.fd("fd", fd, "eventfd"), set, g.int("sizemask", SS), g.int("flags", 0)])
        },
    },
    Case {
        primitive: "signal",
        name: "signalfd4.ok",
        expect: &[],
        doc: "signalfd(2): On success, signalfd() returns a signalfd file descriptor",
        build: |g| {
            let set = sigset(g, "mask", &[ignored_sig() + 1]);
            let f = g.some_bits("flags", (SFD_CLOEXEC | SFD_NONBLOCK) as u64);
            g.close_returned_on_success();
            call("signalfd4", SYS_signalfd4, vec![g.int("fd", -1), set, g.int("sizemask", SS), f])
        },
    },
    // -------------------------------------------------------------- file
    Case {
        primitive: "file",
        name: "openat.bad_path_pointer",
        expect: &[EFAULT],
        doc: "open(2): EFAULT pathname points outside your accessible address space",
        build: |g| {
            let p = g.bad_ptr("pathname");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", O_RDONLY as i64, "O_RDONLY"), g.int("mode", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.missing",
        expect: &[ENOENT],
        doc: "open(2): ENOENT O_CREAT is not set and the named file does not exist",
        build: |g| {
            let path = g.fresh_path();
            let p = g.path("pathname", &path, "missing file in scratch");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", O_RDONLY as i64, "O_RDONLY"), g.int("mode", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.exclusive_exists",
        expect: &[EEXIST],
        doc: "open(2): EEXIST pathname already exists and O_CREAT and O_EXCL were used",
        build: |g| {
            let (_, path) = g.file(1, O_RDONLY);
            let p = g.path("pathname", &path, "existing file");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", (O_CREAT | O_EXCL | O_WRONLY) as i64, "O_CREAT|O_EXCL|O_WRONLY"), g.int("mode", 0o600)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.directory_flag_on_file",
        expect: &[ENOTDIR],
        doc: "open(2): ENOTDIR O_DIRECTORY was specified and pathname was not a directory",
        build: |g| {
            let (_, path) = g.file(1, O_RDONLY);
            let p = g.path("pathname", &path, "existing file");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", (O_RDONLY | O_DIRECTORY) as i64, "O_RDONLY|O_DIRECTORY"), g.int("mode", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.long_component",
        expect: &[ENAMETOOLONG],
        doc: "open(2): ENAMETOOLONG pathname was too long (a component longer than NAME_MAX)",
        build: |g| {
            let n = g.rng_range(256, 2000) as usize;
            let path = format!("{}/{}", g.env.scratch, "n".repeat(n));
            let p = g.path("pathname", &path, "component longer than NAME_MAX");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", O_RDONLY as i64, "O_RDONLY"), g.int("mode", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.long_path",
        expect: &[ENAMETOOLONG],
        doc: "open(2): ENAMETOOLONG pathname was too long (PATH_MAX)",
        build: |g| {
            let n = g.rng_range(4096, 8000) as usize;
            let mut path = format!("{}/", g.env.scratch);
            while path.len() < n {
                path.push_str("a/");
            }
            let p = g.path("pathname", &path, "path longer than PATH_MAX");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", O_RDONLY as i64, "O_RDONLY"), g.int("mode", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.bad_dirfd",
        expect: &[EBADF],
        doc: "openat(2): EBADF pathname is relative but dirfd is neither AT_FDCWD nor a valid file descriptor",
        build: |g| {
            let d = g.closed_fd("dirfd");
            let p = g.path("pathname", "relative", "relative path");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![d, p, g.named("flags", O_RDONLY as i64, "O_RDONLY"), g.int("mode", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.dirfd_is_file",
        expect: &[ENOTDIR],
        doc: "openat(2): ENOTDIR pathname is a relative pathname and dirfd is a file descriptor referring to a file other than a directory",
        build: |g| {
            let (f, _) = g.file(1, O_RDONLY);
            let p = g.path("pathname", "relative", "relative path");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.fd("dirfd", f, "regular file"), p, g.named("flags", O_RDONLY as i64, "O_RDONLY"), g.int("mode", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.write_directory",
        expect: &[EISDIR],
        doc: "open(2): EISDIR pathname refers to a directory and the access requested involved writing",
        build: |g| {
            let d = g.fresh_dir();
            let p = g.path("pathname", &d, "directory");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", O_WRONLY as i64, "O_WRONLY"), g.int("mode", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.tmpfile_readonly",
        expect: &[EINVAL],
        doc: "open(2): EINVAL O_TMPFILE was specified in flags, but neither O_WRONLY nor O_RDWR was specified",
        build: |g| {
            let d = g.fresh_dir();
            let p = g.path("pathname", &d, "directory");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", (O_TMPFILE | O_RDONLY) as i64, "O_TMPFILE|O_RDONLY"), g.int("mode", 0o600)])
        },
    },
    Case {
        primitive: "file",
        name: "openat.create_ok",
        expect: &[],
        doc: "open(2): On success, open() returns the new file descriptor",
        build: |g| {
            let path = g.fresh_path();
            let p = g.path("pathname", &path, "new file in scratch");
            g.close_returned_on_success();
            call("openat", SYS_openat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", (O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC) as i64, "O_CREAT|O_EXCL|O_RDWR|O_CLOEXEC"), g.int("mode", 0o600)])
        },
    },
    Case {
        primitive: "file",
        name: "lseek.bad_whence",
        expect: &[EINVAL],
        doc: "lseek(2): EINVAL whence is not valid",
        build: |g| {
            let (f, _) = g.file(16, O_RDONLY);
            let w = if g.rng_bool() { g.rng_range(5, 1 << 20) } else { -g.rng_range(1, 1 << 20) };
            call("lseek", SYS_lseek, vec![g.fd("fd", f, "regular file"), g.int("offset", 0), g.int("whence", w)])
        },
    },
    Case {
        primitive: "file",
        name: "lseek.negative",
        expect: &[EINVAL],
        doc: "lseek(2): EINVAL the resulting file offset would be negative",
        build: |g| {
            let (f, _) = g.file(16, O_RDONLY);
            let off = -g.rng_range(1, 1 << 40);
            call("lseek", SYS_lseek, vec![g.fd("fd", f, "regular file"), g.int("offset", off), g.named("whence", SEEK_SET as i64, "SEEK_SET")])
        },
    },
    Case {
        primitive: "file",
        name: "ftruncate.readonly",
        // ftruncate(2) allows either.
        expect: &[EINVAL, EBADF],
        doc: "truncate(2): EBADF or EINVAL fd is not open for writing",
        build: |g| {
            let (f, _) = g.file(16, O_RDONLY);
            call("ftruncate", SYS_ftruncate, vec![g.fd("fd", f, "file opened O_RDONLY"), g.int("length", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "ftruncate.negative",
        expect: &[EINVAL],
        doc: "truncate(2): EINVAL The argument length is negative",
        build: |g| {
            let (f, _) = g.file(16, O_RDWR);
            let len = -g.rng_range(1, 1 << 40);
            call("ftruncate", SYS_ftruncate, vec![g.fd("fd", f, "regular file"), g.int("length", len)])
        },
    },
    Case {
        primitive: "file",
        name: "ftruncate.pipe",
        expect: &[EINVAL],
        doc: "truncate(2): EINVAL fd does not reference a regular file",
        build: |g| {
            let (_, w) = g.pipe(0);
            call("ftruncate", SYS_ftruncate, vec![g.fd("fd", w, "pipe write end"), g.int("length", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "fstat.bad_fd",
        expect: &[EBADF],
        doc: "stat(2): EBADF fd is not a valid open file descriptor",
        build: |g| {
            let fd = g.closed_fd("fd");
            let b = g.buf("statbuf", 256, &[]);
            call("fstat", SYS_fstat, vec![fd, b])
        },
    },
    Case {
        primitive: "file",
        name: "fstat.bad_buffer",
        expect: &[EFAULT],
        doc: "stat(2): EFAULT Bad address",
        build: |g| {
            let (f, _) = g.file(16, O_RDONLY);
            let p = g.unwritable_ptr("statbuf");
            call("fstat", SYS_fstat, vec![g.fd("fd", f, "regular file"), p])
        },
    },
    Case {
        primitive: "file",
        name: "pread.negative_offset",
        expect: &[EINVAL],
        doc: "pread(2): EINVAL offset is negative",
        build: |g| {
            let (f, _) = g.file(16, O_RDONLY);
            let b = g.buf("buf", 64, &[]);
            let off = -g.rng_range(1, 1 << 40);
            call("pread64", SYS_pread64, vec![g.fd("fd", f, "regular file"), b, g.int("count", 16), g.int("offset", off)])
        },
    },
    Case {
        primitive: "file",
        name: "pwrite.readonly",
        expect: &[EBADF],
        doc: "write(2): EBADF fd is not a valid file descriptor or is not open for writing",
        build: |g| {
            let (f, _) = g.file(16, O_RDONLY);
            let b = g.buf("buf", 16, b"0123456789abcdef");
            call("pwrite64", SYS_pwrite64, vec![g.fd("fd", f, "file opened O_RDONLY"), b, g.int("count", 16), g.int("offset", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "read.directory",
        expect: &[EISDIR],
        doc: "read(2): EISDIR fd refers to a directory",
        build: |g| {
            let d = g.dir_fd();
            let b = g.buf("buf", 64, &[]);
            call("read", SYS_read, vec![g.fd("fd", d, "directory"), b, g.int("count", 64)])
        },
    },
    Case {
        primitive: "file",
        name: "unlinkat.bad_flags",
        expect: &[EINVAL],
        doc: "unlink(2): EINVAL An invalid flag value was specified in flags",
        build: |g| {
            let (_, path) = g.file(1, O_RDONLY);
            let p = g.path("pathname", &path, "existing file");
            let f = g.bad_bits("flags", AT_REMOVEDIR as u64, 0xffff_ffff);
            call("unlinkat", SYS_unlinkat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, f])
        },
    },
    Case {
        primitive: "file",
        name: "unlinkat.missing",
        expect: &[ENOENT],
        doc: "unlink(2): ENOENT A component in pathname does not exist",
        build: |g| {
            let path = g.fresh_path();
            let p = g.path("pathname", &path, "missing file in scratch");
            call("unlinkat", SYS_unlinkat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.int("flags", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "unlinkat.rmdir_on_file",
        expect: &[ENOTDIR],
        doc: "rmdir(2): ENOTDIR pathname, or a component used as a directory in pathname, is not, in fact, a directory",
        build: |g| {
            let (_, path) = g.file(1, O_RDONLY);
            let p = g.path("pathname", &path, "existing file");
            call("unlinkat", SYS_unlinkat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.named("flags", AT_REMOVEDIR as i64, "AT_REMOVEDIR")])
        },
    },
    Case {
        primitive: "file",
        name: "unlinkat.directory",
        // Linux answers EISDIR; POSIX names EPERM.
        expect: &[EISDIR, EPERM],
        doc: "unlink(2): EISDIR pathname refers to a directory (Linux); EPERM (POSIX)",
        build: |g| {
            let d = g.fresh_dir();
            let p = g.path("pathname", &d, "directory");
            call("unlinkat", SYS_unlinkat, vec![g.named("dirfd", AT_FDCWD as i64, "AT_FDCWD"), p, g.int("flags", 0)])
        },
    },
    Case {
        primitive: "file",
        name: "getdents64.not_directory",
        expect: &[ENOTDIR],
        doc: "getdents(2): ENOTDIR File descriptor does not refer to a directory",
        build: |g| {
            let (f, _) = g.file(16, O_RDONLY);
            let b = g.buf("dirp", 4096, &[]);
            call("getdents64", SYS_getdents64, vec![g.fd("fd", f, "regular file"), b, g.int("count", 4096)])
        },
    },
    Case {
        primitive: "file",
        name: "getdents64.small_buffer",
        expect: &[EINVAL],
        doc: "getdents(2): EINVAL Result buffer is too small",
        build: |g| {
            let d = g.dir_fd();
            let b = g.buf("dirp", 64, &[]);
            let n = g.rng_range(1, 19);
            call("getdents64", SYS_getdents64, vec![g.fd("fd", d, "directory"), b, g.int("count", n)])
        },
    },
    Case {
        primitive: "file",
        name: "getdents64.bad_buffer",
        expect: &[EFAULT],
        doc: "getdents(2): EFAULT Argument points outside the calling process's address space",
        build: |g| {
            let d = g.dir_fd();
            let p = g.unwritable_ptr("dirp");
            call("getdents64", SYS_getdents64, vec![g.fd("fd", d, "directory"), p, g.int("count", 4096)])
        },
    },
];

/// Test plants: entries whose expectation is wrong on purpose, or whose
/// call crashes or hangs, selectable only through `Plant`.
pub static PLANT_WRONG_ERRNO: Case = Case {
    primitive: "fd",
    name: "close.bad_fd.PLANTED_WRONG",
    expect: &[EINVAL],
    doc: "test plant: deliberately wrong expectation (close(2) documents EBADF)",
    build: |g| {
        let fd = g.closed_fd("fd");
        call("close", SYS_close, vec![fd])
    },
};

pub static PLANT_CRASH: Case = Case {
    primitive: "signal",
    name: "tgkill.self_segv.PLANTED_CRASH",
    expect: &[EINVAL],
    doc: "test plant: sends itself SIGSEGV (default action): the call never returns",
    build: |g| {
        let me = crate::sys::getpid() as i64;
        let tid = crate::sys::gettid() as i64;
        call(
            "tgkill",
            SYS_tgkill,
            vec![
                g.named("tgid", me, "<own pid>"),
                g.named("tid", tid, "<own tid>"),
                g.named("sig", SIGSEGV as i64, "SIGSEGV"),
            ],
        )
    },
};

pub static PLANT_HANG: Case = Case {
    primitive: "pipe",
    name: "read.empty_blocking.PLANTED_HANG",
    expect: &[EAGAIN],
    doc: "test plant: a blocking read of an empty pipe whose writer stays open: never returns",
    build: |g| {
        let mut p = [-1i32; 2];
        // SAFETY: p is a valid 2-int array (a blocking pipe, closed after the call).
        unsafe { libc::pipe2(p.as_mut_ptr(), O_CLOEXEC) };
        // Not cleaned up: the call never returns, and its process is killed.
        let b = g.buf("buf", 8, &[]);
        let r = g.fd("fd", p[0], "empty blocking pipe read end");
        call("read", SYS_read, vec![r, b, g.int("count", 8)])
    },
};
