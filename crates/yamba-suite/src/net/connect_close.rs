//! P = socket + connect + close of a TCP connection, seen from the client
//! only (lmbench's lat_connect): the client does not wait for the server
//! to accept, so this is the handshake and the teardown the client pays
//! for; `net.tcp.connect` also waits for the server's accept and close.
//!
//! `net.tcp.connect_close`: a listening peer thread accepts and closes.
//! Evidence (gating): every connect returned success, the peer name of
//! every 16th connection was the server's (getpeername), and the server
//! accepted as many connections as were made.
//!
//! `net.unix.connect_close`: the same over an AF_UNIX stream socket bound
//! to a path in the scratch directory (lmbench's lat_unix_connect): the
//! socket, connect and close, a peer thread accepting and closing; the
//! same evidence (the peer's name is the socket's path).
//!
//! `net.tcp.connect_refused_naive`: lmbench's loop as it runs when no
//! server is listening (`lat_connect` without `lat_connect -s` first): it
//! does not look at connect's result, so it times a refused connection —
//! a reset, no handshake — and reports it as the connection cost. Here
//! the port is held by a socket that is bound but not listening; the
//! same checks fail, and the result is withheld, kept only to show what
//! such a figure measures.

use super::{adapter, local_only, peer, PEER_CPU};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use yamba_core::cold::Evictor;
use yamba_core::harness::measure_single;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Mode, Unit};

pub static CONNECT_CLOSE: Benchmark = Benchmark {
    id: "net.tcp.connect_close",
    area: "net",
    unit: Unit::Nanoseconds,
    description: "TCP socket + connect + close seen from the client (lmbench's lat_connect), each connection checked to be made",
    adapter: adapter::NAME,
    requires: local_only,
    settings: &[PEER_CPU],
    run: run_connect_close,
    cold: Cold::Measured,
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

pub static UNIX_CONNECT_CLOSE: Benchmark = Benchmark {
    id: "net.unix.connect_close",
    area: "net",
    unit: Unit::Nanoseconds,
    description: "AF_UNIX stream socket + connect + close to a path, seen from the client (lmbench's lat_unix_connect), each connection checked to be made",
    adapter: adapter::NAME,
    requires: local_only,
    settings: &[PEER_CPU],
    run: run_unix_connect_close,
    cold: Cold::Measured,
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

pub static REFUSED_NAIVE: Benchmark = Benchmark {
    id: "net.tcp.connect_refused_naive",
    area: "net",
    unit: Unit::Nanoseconds,
    description: "lmbench's lat_connect with no server listening (a refused connect timed as a connection) — a counter-example, withheld because no connection is made",
    adapter: adapter::NAME,
    requires: local_only,
    run: run_refused,
    cold: Cold::NotMeaningful(
        "a counter-example (lat_connect with no server), withheld because no connection is made: nothing to make cold",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

/// Each connection leaves a socket in TIME_WAIT for a minute: bound the
/// count so a run cannot exhaust the ephemeral ports.
const MAX_CONNECTIONS: usize = 5_000;

/// What the timed connections did.
#[derive(Debug, Default)]
struct Outcome {
    attempts: u64,
    made: u64,
    /// getpeername samples taken, and how many named the server.
    peer_samples: u64,
    peer_ok: u64,
    first_error: Option<String>,
    refused: u64,
}

/// Where the client connects: a TCP address, or a UNIX socket's path.
enum Endpoint {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl Endpoint {
    /// socket + connect (the socket closes when the result is dropped):
    /// with `name_peer`, whether the connected socket's peer is the server.
    fn connect(&self, name_peer: bool) -> std::io::Result<Option<bool>> {
        match self {
            Endpoint::Tcp(addr) => {
                let s = TcpStream::connect(addr)?;
                Ok(name_peer.then(|| s.peer_addr().ok() == Some(*addr)))
            }
            Endpoint::Unix(path) => {
                let s = UnixStream::connect(path)?;
                Ok(name_peer.then(|| {
                    s.peer_addr()
                        .ok()
                        .and_then(|a| a.as_pathname().map(Path::to_path_buf))
                        .as_ref()
                        == Some(path)
                }))
            }
        }
    }
}

/// Times socket + connect + close to `to`, one at a time (cold: each
/// after the client's caches were evicted and its branch history
/// disturbed).
fn time_connects(ctx: &Ctx, to: &Endpoint) -> (yamba_core::Measured, Outcome) {
    let mut plan = ctx.plan();
    plan.max_observations = plan.max_observations.min(MAX_CONNECTIONS);
    let mut o = Outcome::default();
    let mut evictor = (ctx.mode == Mode::Cold).then(|| Evictor::new(ctx.machine()));
    let m = measure_single(
        ctx.clock(),
        ctx.base_ns(),
        &plan,
        evictor.as_mut(),
        || {},
        || {
            o.attempts += 1;
            match to.connect(o.attempts % 16 == 1) {
                Ok(peer_named) => {
                    o.made += 1;
                    if let Some(ok) = peer_named {
                        o.peer_samples += 1;
                        o.peer_ok += u64::from(ok);
                    }
                }
                Err(e) => {
                    if e.kind() == std::io::ErrorKind::ConnectionRefused {
                        o.refused += 1;
                    }
                    o.first_error.get_or_insert(e.to_string());
                }
            }
        },
    );
    (m, o)
}

/// The server: accepts connections and closes them at once until `stop`,
/// counting what it accepted.
fn accept_and_close<S>(
    incoming: impl Iterator<Item = std::io::Result<S>>,
    stop: &AtomicBool,
    accepted: &AtomicU64,
) {
    for s in incoming {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if s.is_ok() {
            accepted.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Times connections to `to` against a server thread on `cpu` that runs
/// `serve` (given its stop flag and accepted count), then stops it: the
/// result labelled as both benchmarks label it, what the client saw, and
/// how many the server accepted.
fn against_server(
    ctx: &Ctx,
    cpu: Option<usize>,
    to: &Endpoint,
    serve: impl FnOnce(&AtomicBool, &AtomicU64) + Send + 'static,
) -> Result<(BenchResult, Outcome, u64), String> {
    let stop = Arc::new(AtomicBool::new(false));
    let accepted = Arc::new(AtomicU64::new(0));
    let (st, ac) = (stop.clone(), accepted.clone());
    let server = peer::spawn(cpu, move || serve(&st, &ac))?;
    let (m, o) = time_connects(ctx, to);
    let n_accepted = stop_server(to, o.made, &accepted, &stop, server);
    let mut r = ctx.measured_result(None, m);
    super::label(ctx, &mut r, &super::Target::Local);
    r.param(
        "operation",
        "socket + connect + close (the client does not wait for the server)",
    )
    .param("server", "peer thread: accept + close");
    Ok((r, o, n_accepted))
}

/// The server may still be accepting the last connections: waits for it
/// (at most 5 s), then stops it with one more connection to wake its
/// accept. Returns how many it accepted.
fn stop_server(
    to: &Endpoint,
    made: u64,
    accepted: &AtomicU64,
    stop: &AtomicBool,
    server: std::thread::JoinHandle<()>,
) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    while accepted.load(Ordering::SeqCst) < made && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let n = accepted.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    let _ = to.connect(false);
    let _ = server.join();
    n
}

fn add_made_evidence(r: &mut BenchResult, o: &Outcome, accepted: Option<u64>) {
    r.add_evidence(
        "every connection was really made: connect returned success",
        format!("{} of {}", o.attempts, o.attempts),
        match &o.first_error {
            None => format!("{} of {}", o.made, o.attempts),
            Some(e) => format!(
                "{} of {} ({} refused; first error: {e})",
                o.made, o.attempts, o.refused
            ),
        },
        o.made == o.attempts && o.attempts > 0,
    );
    r.add_evidence(
        "the connected socket's peer was the server (getpeername, every 16th connection)",
        format!(
            "{} of {} samples",
            o.peer_samples.max(1),
            o.peer_samples.max(1)
        ),
        format!("{} of {} samples", o.peer_ok, o.peer_samples),
        o.peer_samples > 0 && o.peer_ok == o.peer_samples,
    );
    r.add_evidence(
        "the server accepted every connection made",
        format!("{} accepted", o.attempts),
        match accepted {
            Some(a) => format!("{a} accepted"),
            None => "no server listening".into(),
        },
        accepted == Some(o.attempts),
    );
}

fn run_connect_close(ctx: &mut Ctx) -> Result<(), String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let cpu = peer::cpu(ctx)?;
    let tw_before = adapter::tcp_time_wait();
    let (mut r, o, n_accepted) = against_server(ctx, cpu, &Endpoint::Tcp(addr), move |st, ac| {
        accept_and_close(listener.incoming(), st, ac)
    })?;
    add_made_evidence(&mut r, &o, Some(n_accepted));
    super::add_time_wait_note(&mut r, tw_before, adapter::tcp_time_wait());
    super::warn_syn_retries(&mut r);
    ctx.push(r);
    Ok(())
}

/// sockaddr_un holds 108 bytes, its terminating NUL included.
const SUN_PATH_MAX: usize = 107;

/// Where the UNIX socket is bound: in the run's scratch directory, the
/// name the process's, so two runs sharing a scratch directory do not
/// meet. A scratch path too long for an AF_UNIX address (a deep
/// `--scratch`) binds in a private directory of the system's temporary
/// directory instead, as lmbench binds /tmp/af_unix; the result says so.
struct SocketPlace {
    path: PathBuf,
    /// The private directory when the scratch path was too long (removed
    /// with it).
    _short: Option<tempfile::TempDir>,
    /// Why the scratch directory was not used, if it was not.
    moved: Option<String>,
}

fn unix_place(ctx: &Ctx) -> Result<SocketPlace, String> {
    let name = format!("yamba-connect-{}.sock", std::process::id());
    let path = ctx.scratch_dir().join(&name);
    let len = path.as_os_str().len();
    if len <= SUN_PATH_MAX {
        return Ok(SocketPlace {
            path,
            _short: None,
            moved: None,
        });
    }
    let dir = tempfile::Builder::new()
        .prefix("yamba-")
        .tempdir()
        .map_err(|e| format!("a private directory for the socket: {e}"))?;
    let short = dir.path().join(&name);
    if short.as_os_str().len() > SUN_PATH_MAX {
        return Err(format!(
            "the socket's path {} is {len} bytes, and its fallback {} is {}: an AF_UNIX address holds at most {SUN_PATH_MAX}; give a shorter --scratch directory or TMPDIR",
            path.display(),
            short.display(),
            short.as_os_str().len()
        ));
    }
    Ok(SocketPlace {
        moved: Some(format!(
            "bound at {} ({} bytes): the scratch directory's path {} is {len} bytes, and an AF_UNIX address holds at most {SUN_PATH_MAX}",
            short.display(),
            short.as_os_str().len(),
            path.display()
        )),
        path: short,
        _short: Some(dir),
    })
}

/// Removes the socket's name when the benchmark ends, however it ends.
struct Unlink(PathBuf);

impl Drop for Unlink {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn run_unix_connect_close(ctx: &mut Ctx) -> Result<(), String> {
    let place = unix_place(ctx)?;
    let path = place.path.clone();
    let cpu = peer::cpu(ctx)?;
    let _ = std::fs::remove_file(&path);
    let listener =
        UnixListener::bind(&path).map_err(|e| format!("bind {}: {e}", path.display()))?;
    let _unlink = Unlink(path.clone());
    let (mut r, o, n_accepted) =
        against_server(ctx, cpu, &Endpoint::Unix(path.clone()), move |st, ac| {
            accept_and_close(listener.incoming(), st, ac)
        })?;
    r.param(
        "endpoint",
        match place.moved {
            None => "AF_UNIX stream socket bound to a path in the scratch directory",
            Some(_) => "AF_UNIX stream socket bound to a path in a private directory of the system's temporary directory",
        },
    )
    .param("socket_path", path.display().to_string());
    r.add_note_evidence(
        "the socket was bound in the scratch directory",
        format!("its path at most {SUN_PATH_MAX} bytes there"),
        place.moved.as_deref().unwrap_or("it was"),
        place.moved.is_none(),
    );
    add_made_evidence(&mut r, &o, Some(n_accepted));
    ctx.push(r);
    Ok(())
}

/// A loopback port with a socket bound to it that does not listen: a
/// connection to it is refused, and nobody else can listen there while
/// the socket is open.
struct DeadPort {
    fd: i32,
    addr: SocketAddr,
}

impl DeadPort {
    fn new() -> Result<DeadPort, String> {
        // SAFETY: plain socket calls on a descriptor we own; sin and len
        // are valid for the kernel to read and fill.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return Err(format!("socket: {}", std::io::Error::last_os_error()));
            }
            let mut sin: libc::sockaddr_in = std::mem::zeroed();
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            if libc::bind(fd, (&sin as *const libc::sockaddr_in).cast(), len) != 0
                || libc::getsockname(fd, (&mut sin as *mut libc::sockaddr_in).cast(), &mut len) != 0
            {
                let e = std::io::Error::last_os_error();
                libc::close(fd);
                return Err(format!("bind 127.0.0.1:0: {e}"));
            }
            let port = u16::from_be(sin.sin_port);
            Ok(DeadPort {
                fd,
                addr: SocketAddr::from(([127, 0, 0, 1], port)),
            })
        }
    }
}

impl Drop for DeadPort {
    fn drop(&mut self) {
        // SAFETY: closing our own descriptor.
        unsafe { libc::close(self.fd) };
    }
}

fn run_refused(ctx: &mut Ctx) -> Result<(), String> {
    let port = DeadPort::new()?;
    let (m, o) = time_connects(ctx, &Endpoint::Tcp(port.addr));
    let mut r = ctx.measured_result(None, m);
    r.param(
        "operation",
        "socket + connect + close, connect's result ignored (lmbench's lat_connect loop)",
    )
    .param(
        "server",
        format!("none: {} is bound but not listening", port.addr),
    )
    .param("refused", o.refused);
    add_made_evidence(&mut r, &o, None);
    ctx.push(r);
    Ok(())
}
