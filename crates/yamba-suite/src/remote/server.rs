//! The agent's server side: one thread (the gate) accepting connections
//! and running every handshake at once without blocking, and one thread per
//! authenticated connection.
//!
//! Nobody holds anything at the gate for long without the token: a
//! handshake must finish within `auth_timeout`; handshakes in progress are
//! bounded per address and in all, the oldest of an address giving way to
//! its newest; refusals are written without waiting and closed in the
//! background; addresses that keep failing authentication are turned away
//! at once for a while. Only an authenticated client takes one of the
//! `max_connections` serving slots — the reserved path — so none of this
//! can lock a client with the token out from another address.

use super::conn::Conn;
use super::protocol::*;
use super::session::{self, Handshake, Session, CLIENT_ID};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use yamba_core::Clock;

/// How the agent is set up. `Default` is the safe configuration: loopback,
/// no files served, small limits.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on, e.g. `127.0.0.1:7077` (port 0: any free port).
    pub listen: String,
    /// Directory whose regular files may be read; `None` serves no files.
    pub root: Option<PathBuf>,
    /// The shared secret every client must prove it knows (it never
    /// crosses the wire).
    pub token: String,
    /// Authenticated connections served at once; more are refused.
    pub max_connections: usize,
    /// Handshakes in progress at once, from all addresses.
    pub max_pending: usize,
    /// Handshakes in progress at once from one address (IPv4, or an IPv6 /64).
    pub max_pending_per_address: usize,
    /// Largest frame payload accepted, in bytes.
    pub max_message: u32,
    /// An authenticated connection silent this long is closed.
    pub idle_timeout: Duration,
    /// The whole handshake (HELLO to AUTH) must arrive within this.
    pub auth_timeout: Duration,
    /// Test only: microseconds spun on the calibrated clock before each reply.
    pub test_delay_us: u64,
    /// Serve at SCHED_FIFO priority (needs root or CAP_SYS_NICE), so a busy
    /// machine does not add its scheduling delays to the replies.
    pub realtime: bool,
    /// Print refusals on stderr (they are also kept for [`AgentHandle::refusals`]).
    pub log_stderr: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: format!("127.0.0.1:{DEFAULT_PORT}"),
            root: None,
            token: String::new(),
            max_connections: 16,
            max_pending: 1024,
            max_pending_per_address: 64,
            max_message: DEFAULT_MAX_MESSAGE,
            idle_timeout: Duration::from_secs(60),
            auth_timeout: Duration::from_secs(3),
            test_delay_us: 0,
            realtime: false,
            log_stderr: true,
        }
    }
}

/// Failed authentications an address may make at once before it must wait…
pub const FAILED_AUTH_BURST: f64 = 8.0;
/// …and how fast its allowance comes back, per second.
pub const FAILED_AUTH_PER_S: f64 = 1.0;
/// Refusals kept for [`AgentHandle::refusals`] (the newest).
pub const REFUSALS_KEPT: usize = 1000;
/// Longest refusal line kept or logged, in characters.
pub const REFUSAL_LINE_MAX: usize = 300;

/// State shared by the gate and the connections.
pub(super) struct Shared {
    pub(super) cfg: ServerConfig,
    /// The root's descriptor, opened once: every request is resolved
    /// beneath it (see [`super::paths`]).
    pub(super) root_dir: Option<std::fs::File>,
    /// The identifier a client holding the token sends in its HELLO.
    client_id: [u8; CLIENT_ID],
    active: AtomicUsize,
    pending: AtomicUsize,
    stop: AtomicBool,
    refusals: Mutex<VecDeque<String>>,
    refusal_count: AtomicU64,
    log: Option<mpsc::SyncSender<String>>,
    log_dropped: Arc<AtomicU64>,
    clock: Option<Clock>,
}

impl Shared {
    /// Records a refusal: kept (the newest [`REFUSALS_KEPT`], each bounded)
    /// and logged on stderr by a thread of its own, so a flood of refusals
    /// never waits on a slow stderr (lines that do not fit are counted).
    pub(super) fn refuse_log(&self, peer: SocketAddr, reason: &str) {
        let line = printable(
            format!("refused {peer}: {reason}").as_bytes(),
            REFUSAL_LINE_MAX,
        );
        self.refusal_count.fetch_add(1, Ordering::Relaxed);
        if let Some(log) = &self.log {
            if log.try_send(line.clone()).is_err() {
                self.log_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        let mut r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
        if r.len() >= REFUSALS_KEPT {
            r.pop_front();
        }
        r.push_back(line);
    }

    pub(super) fn delay(&self) {
        if let Some(c) = &self.clock {
            c.spin_ns(self.cfg.test_delay_us as f64 * 1000.0);
        }
    }
}

/// A bound agent, not yet serving.
pub struct Agent {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Agent {
    /// Validates the configuration, canonicalizes the root and binds.
    pub fn bind(mut cfg: ServerConfig) -> Result<Agent, String> {
        if cfg.token.is_empty() {
            return Err("the agent needs a token".into());
        }
        if cfg.max_connections == 0 || cfg.max_pending == 0 || cfg.max_pending_per_address == 0 {
            return Err("connection limits must be at least 1".into());
        }
        if !(MIN_MAX_MESSAGE..=MAX_MESSAGE_CEILING).contains(&cfg.max_message) {
            return Err(format!(
                "max-message must be between {MIN_MAX_MESSAGE} bytes and {} MiB",
                MAX_MESSAGE_CEILING >> 20
            ));
        }
        for (what, d) in [
            ("idle timeout", cfg.idle_timeout),
            ("auth timeout", cfg.auth_timeout),
        ] {
            if d.is_zero() || d > MAX_TIMEOUT {
                return Err(format!(
                    "{what} must be between 0 and {} s",
                    MAX_TIMEOUT.as_secs()
                ));
            }
        }
        // Every pending handshake holds a descriptor: leave room for the
        // serving connections, files and the rest.
        let room = fd_limit().saturating_sub(64 + 2 * cfg.max_connections as u64) as usize;
        cfg.max_pending = cfg.max_pending.min(room.max(1));
        cfg.max_pending_per_address = cfg.max_pending_per_address.min(cfg.max_pending);
        let root = match &cfg.root {
            Some(r) => {
                let c = r
                    .canonicalize()
                    .map_err(|e| format!("root {}: {e}", r.display()))?;
                if !c.is_dir() {
                    return Err(format!("root {} is not a directory", r.display()));
                }
                Some(c)
            }
            None => None,
        };
        let root_dir = match &root {
            Some(r) => Some(super::paths::open_root(r)?),
            None => None,
        };
        let listener = TcpListener::bind(&cfg.listen)
            .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
        // A deep queue of connections not yet accepted: a flood of connects
        // must not make the kernel drop a client's SYN (a 1 s retry).
        // SAFETY: listen on our own listening socket only changes its backlog.
        unsafe { libc::listen(listener.as_raw_fd(), 4096) };
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
        let clock = (cfg.test_delay_us > 0).then(|| Clock::detect(50));
        let log_dropped = Arc::new(AtomicU64::new(0));
        let log = cfg.log_stderr.then(|| start_logger(log_dropped.clone()));
        Ok(Agent {
            listener,
            shared: Arc::new(Shared {
                client_id: session::client_id(cfg.token.as_bytes()),
                cfg,
                root_dir,
                active: AtomicUsize::new(0),
                pending: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
                refusals: Mutex::new(VecDeque::new()),
                refusal_count: AtomicU64::new(0),
                log,
                log_dropped,
                clock,
            }),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The configuration in force (limits lowered to what the process's
    /// descriptor limit allows).
    pub fn config(&self) -> &ServerConfig {
        &self.shared.cfg
    }

    /// Serves until stopped (for the command line: forever).
    pub fn serve(self) {
        if self.shared.cfg.realtime {
            // Connection threads inherit the policy of this thread.
            if let Err(e) = yamba_core::affinity::set_realtime() {
                eprintln!("yamba serve: not real-time: {e}");
            }
        }
        Gate::new(&self.listener, &self.shared).run();
    }

    /// Serves from a thread of its own; stopped when the handle is dropped.
    pub fn spawn(self) -> io::Result<AgentHandle> {
        self.spawn_on(None)
    }

    /// Like [`Agent::spawn`], the serving threads pinned to `cpu` (a local
    /// agent as a benchmark's peer).
    pub fn spawn_on(self, cpu: Option<usize>) -> io::Result<AgentHandle> {
        let addr = self.local_addr()?;
        let shared = self.shared.clone();
        let thread = std::thread::Builder::new()
            .name("yamba-agent".into())
            .spawn(move || {
                // Connection threads inherit this thread's affinity.
                if let Some(c) = cpu {
                    let _ = yamba_core::affinity::pin_current_thread(c);
                }
                self.serve()
            })?;
        Ok(AgentHandle {
            addr,
            shared,
            thread: Some(thread),
        })
    }
}

/// Longest idle or authentication timeout accepted (a day): longer ones
/// are surely mistakes, and deadlines stay far from overflowing.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// The soft limit on open descriptors.
// rlim_t is unsigned on Linux, signed on the BSDs.
#[allow(clippy::unnecessary_cast)]
fn fd_limit() -> u64 {
    // SAFETY: rlimit is plain data for getrlimit to fill.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: getrlimit fills the rlimit we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return 1024;
    }
    r.rlim_cur as u64
}

/// Raises this process's soft limit on open descriptors to its hard limit
/// (for `yamba serve`: each pending handshake holds one). Returns the limit.
pub fn raise_fd_limit() -> u64 {
    // SAFETY: as in fd_limit; setrlimit only raises the soft limit to the hard one.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max.min(1 << 20);
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
    fd_limit()
}

/// Prints log lines on stderr from a thread of its own.
fn start_logger(dropped: Arc<AtomicU64>) -> mpsc::SyncSender<String> {
    let (tx, rx) = mpsc::sync_channel::<String>(1024);
    let _ = std::thread::Builder::new()
        .name("yamba-agent-log".into())
        .spawn(move || {
            let mut err = io::stderr();
            for line in rx {
                let lost = dropped.swap(0, Ordering::Relaxed);
                if lost > 0 {
                    let _ = writeln!(
                        err,
                        "yamba serve: {lost} refusal lines not shown (too many at once)"
                    );
                }
                let _ = writeln!(err, "yamba serve: {line}");
            }
        });
    tx
}

/// A running agent in this process.
pub struct AgentHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AgentHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The newest refusals (at most [`REFUSALS_KEPT`]), as logged.
    pub fn refusals(&self) -> Vec<String> {
        self.shared
            .refusals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Refusals since the start, kept or not.
    pub fn refusal_count(&self) -> u64 {
        self.shared.refusal_count.load(Ordering::Relaxed)
    }

    /// Authenticated connections being served now.
    pub fn active(&self) -> usize {
        self.shared.active.load(Ordering::SeqCst)
    }

    /// Handshakes in progress now.
    pub fn pending(&self) -> usize {
        self.shared.pending.load(Ordering::SeqCst)
    }
}

impl Drop for AgentHandle {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the gate.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Where limits are counted: an IPv4 address, an IPv6 /64 (what one host
/// usually holds), or this host (all of 127.0.0.0/8 and ::1: every local
/// user connects from there, so spreading over loopback addresses buys
/// nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Source {
    V4(u32),
    V6(u64),
    Loopback,
}

impl Source {
    fn of(peer: &SocketAddr) -> Source {
        let v4 = |a: std::net::Ipv4Addr| {
            if a.is_loopback() {
                Source::Loopback
            } else {
                Source::V4(a.into())
            }
        };
        match peer.ip() {
            IpAddr::V4(a) => v4(a),
            IpAddr::V6(a) if a.is_loopback() => Source::Loopback,
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(m) => v4(m),
                None => Source::V6((u128::from(a) >> 64) as u64),
            },
        }
    }
}

/// What a handshake waits for next.
enum Step {
    /// HELLO: magic and the client's nonce.
    Hello,
    /// AUTH: the client's proof over both nonces.
    Auth {
        server_nonce: [u8; NONCE],
        client_nonce: [u8; NONCE],
        client_id: [u8; CLIENT_ID],
    },
}

/// A handshake in progress: non-blocking, read a frame at a time and never
/// past it.
struct Pending {
    stream: TcpStream,
    peer: SocketAddr,
    source: Source,
    since: Instant,
    /// Bytes of the current frame so far (header, then payload).
    buf: Vec<u8>,
    step: Step,
    /// Its HELLO carries the identifier of a client holding the token
    /// (seen, or peeked at before it was read): the limits a flood or a
    /// guesser can exhaust never close it.
    known: bool,
}

/// A refused connection: its reason written, its sending side shut, what
/// the peer still sends drained briefly so the close is not a reset that
/// loses the reason.
struct Closing {
    stream: TcpStream,
    until: Instant,
    drained: usize,
}

/// How long a refused connection is drained before it is closed.
const LINGER: Duration = Duration::from_millis(200);
/// Most refused connections draining at once; beyond, the oldest is closed.
const MAX_CLOSING: usize = 1024;
/// Connections accepted per turn of the loop before the handshakes are
/// looked at again.
const ACCEPTS_PER_TURN: usize = 256;

/// An address's allowance of failed authentications (a token bucket).
struct Allowance {
    left: f64,
    at: Instant,
}

/// The accepting side: every handshake, none of which may block it.
struct Gate<'a> {
    listener: &'a TcpListener,
    sh: &'a Arc<Shared>,
    pending: Vec<Pending>,
    per_source: HashMap<Source, usize>,
    closing: VecDeque<Closing>,
    allowance: HashMap<Source, Allowance>,
    frame: Vec<u8>,
}

/// What to do with a handshake after reading from it.
enum Next {
    Wait,
    Refuse(String),
    /// Authenticated: serve it, with its session.
    Serve(Box<Session>),
    /// The peer left or broke the transport: close quietly.
    Drop,
}

impl<'a> Gate<'a> {
    fn new(listener: &'a TcpListener, sh: &'a Arc<Shared>) -> Gate<'a> {
        Gate {
            listener,
            sh,
            pending: Vec::new(),
            per_source: HashMap::new(),
            closing: VecDeque::new(),
            allowance: HashMap::new(),
            frame: Vec::new(),
        }
    }

    fn run(&mut self) {
        let mut fds: Vec<libc::pollfd> = Vec::new();
        loop {
            if self.sh.stop.load(Ordering::SeqCst) {
                return;
            }
            let now = Instant::now();
            let next_deadline = self
                .pending
                .iter()
                .map(|p| p.since + self.sh.cfg.auth_timeout)
                .chain(self.closing.iter().map(|c| c.until))
                .min();
            let wait = next_deadline
                .map(|d| d.saturating_duration_since(now))
                .unwrap_or(Duration::from_millis(200))
                .min(Duration::from_millis(200));
            fds.clear();
            let poll_in = |fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            fds.push(poll_in(self.listener.as_raw_fd()));
            fds.extend(self.pending.iter().map(|p| poll_in(p.stream.as_raw_fd())));
            fds.extend(self.closing.iter().map(|c| poll_in(c.stream.as_raw_fd())));
            let ms = (wait.as_micros().div_ceil(1000) as i32).max(1);
            // SAFETY: fds is a valid array of pollfd of the length given.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    std::thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
            let np = self.pending.len();
            let ready_pending: Vec<bool> = fds[1..1 + np].iter().map(|f| f.revents != 0).collect();
            let ready_closing: Vec<bool> = fds[1 + np..].iter().map(|f| f.revents != 0).collect();
            self.drain_closing(&ready_closing);
            self.advance_pending(&ready_pending);
            self.expire(Instant::now());
            if fds[0].revents != 0 {
                self.accept_some();
            }
            self.sh.pending.store(self.pending.len(), Ordering::SeqCst);
        }
    }

    /// Accepts what is queued (up to a turn's worth).
    fn accept_some(&mut self) {
        for _ in 0..ACCEPTS_PER_TURN {
            match self.listener.accept() {
                Ok((stream, peer)) => self.admit(stream, peer),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Out of descriptors: the oldest handshake gives way.
                    if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                        if let Some(i) = self.oldest(None) {
                            let p = self.remove(i);
                            self.refuse(p.stream, p.peer, "the agent is out of descriptors");
                            continue;
                        }
                    }
                    if self.sh.cfg.log_stderr {
                        eprintln!("yamba serve: accept failed: {e}");
                    }
                    return;
                }
            }
        }
    }

    /// A new connection: its handshake begins. When the limits are
    /// reached, the oldest handshake of its address (or of the busiest
    /// address) gives way — never one whose HELLO carries the identifier
    /// of a client holding the token.
    fn admit(&mut self, stream: TcpStream, peer: SocketAddr) {
        let source = Source::of(&peer);
        if stream.set_nonblocking(true).is_err() {
            return;
        }
        let _ = stream.set_nodelay(true);
        let known = self.peek_known(&stream);
        let sh: &Arc<Shared> = self.sh;
        let cfg = &sh.cfg;
        if self.per_source.get(&source).copied().unwrap_or(0) >= cfg.max_pending_per_address {
            match self.victim(Some(source)) {
                Some(i) => {
                    let p = self.remove(i);
                    let why = format!(
                        "too many unauthenticated connections from {} (limit {}): the oldest is closed",
                        p.peer.ip(),
                        cfg.max_pending_per_address
                    );
                    self.refuse(p.stream, p.peer, &why);
                }
                // Every one of them is a client with the identifier.
                None if !known => {
                    let why = format!(
                        "too many unauthenticated connections from {} (limit {})",
                        peer.ip(),
                        cfg.max_pending_per_address
                    );
                    self.refuse(stream, peer, &why);
                    return;
                }
                None => {}
            }
        }
        if self.pending.len() >= cfg.max_pending {
            let busiest = self
                .per_source
                .iter()
                .max_by_key(|(_, n)| **n)
                .map(|(s, _)| *s);
            if let Some(i) = self.victim(busiest).or_else(|| self.victim(None)) {
                let p = self.remove(i);
                let why = format!(
                    "too many unauthenticated connections (limit {}): the oldest of the busiest address is closed",
                    cfg.max_pending
                );
                self.refuse(p.stream, p.peer, &why);
            } else if !known {
                let why = format!(
                    "too many unauthenticated connections (limit {})",
                    cfg.max_pending
                );
                self.refuse(stream, peer, &why);
                return;
            }
        }
        *self.per_source.entry(source).or_insert(0) += 1;
        self.pending.push(Pending {
            stream,
            peer,
            source,
            since: Instant::now(),
            buf: Vec::with_capacity(HEADER + HELLO_LEN),
            step: Step::Hello,
            known,
        });
    }

    /// Whether what `stream` has sent so far (looked at, not consumed) is
    /// a HELLO carrying the identifier of a client holding the token.
    fn peek_known(&self, stream: &TcpStream) -> bool {
        let mut b = [0u8; HEADER + HELLO_LEN];
        match stream.peek(&mut b) {
            Ok(n) if n == b.len() => {
                let (op, len) = parse_header(b[..HEADER].try_into().unwrap());
                op == OP_HELLO
                    && len as usize == HELLO_LEN
                    && &b[HEADER..HEADER + 4] == MAGIC
                    && constant_time_eq(&b[HEADER + 4 + NONCE..], &self.sh.client_id)
            }
            _ => false,
        }
    }

    /// The handshake to close when limits are reached: the oldest of
    /// `source` (or of all) that has not shown the client identifier,
    /// each candidate looked at once more (its HELLO may have arrived
    /// since it was accepted). None when all are known clients.
    fn victim(&mut self, source: Option<Source>) -> Option<usize> {
        let mut order: Vec<usize> = (0..self.pending.len())
            .filter(|&i| {
                let p = &self.pending[i];
                !p.known && source.is_none_or(|s| p.source == s)
            })
            .collect();
        order.sort_by_key(|&i| self.pending[i].since);
        for i in order {
            let p = &self.pending[i];
            if p.buf.is_empty() && matches!(p.step, Step::Hello) && self.peek_known(&p.stream) {
                self.pending[i].known = true;
                continue;
            }
            return Some(i);
        }
        None
    }

    /// The index of the oldest handshake (of `source`, if given).
    fn oldest(&self, source: Option<Source>) -> Option<usize> {
        self.pending
            .iter()
            .enumerate()
            .filter(|(_, p)| source.is_none_or(|s| p.source == s))
            .min_by_key(|(_, p)| p.since)
            .map(|(i, _)| i)
    }

    fn remove(&mut self, i: usize) -> Pending {
        let p = self.pending.swap_remove(i);
        if let Some(n) = self.per_source.get_mut(&p.source) {
            *n -= 1;
            if *n == 0 {
                self.per_source.remove(&p.source);
            }
        }
        p
    }

    /// Reads from every handshake that has something, and acts on it.
    fn advance_pending(&mut self, ready: &[bool]) {
        // Back to front, so that removing one does not move those not yet seen.
        for i in (0..ready.len()).rev() {
            if !ready[i] {
                continue;
            }
            match self.step(i) {
                Next::Wait => {}
                Next::Drop => {
                    self.remove(i);
                }
                Next::Refuse(why) => {
                    let p = self.remove(i);
                    self.refuse(p.stream, p.peer, &why);
                }
                Next::Serve(session) => {
                    let p = self.remove(i);
                    self.serve(p.stream, p.peer, *session);
                }
            }
        }
    }

    /// Reads what handshake `i` has sent, up to the end of its current frame.
    fn step(&mut self, i: usize) -> Next {
        let p = &mut self.pending[i];
        loop {
            let need = match p.buf.len() {
                n if n < HEADER => HEADER,
                _ => {
                    let (op, len) = parse_header(p.buf[..HEADER].try_into().unwrap());
                    let limit = match (&p.step, op) {
                        (Step::Hello, OP_HELLO) => HANDSHAKE_MAX,
                        (Step::Auth { .. }, OP_AUTH) => PROOF as u32,
                        (Step::Hello, op) => {
                            return Next::Refuse(format!("operation {op} before HELLO"))
                        }
                        (Step::Auth { .. }, op) => {
                            return Next::Refuse(format!("operation {op} before AUTH"))
                        }
                    };
                    if len > limit {
                        return Next::Refuse(format!(
                            "message of {len} bytes exceeds the limit of {limit}"
                        ));
                    }
                    HEADER + len as usize
                }
            };
            if p.buf.len() == need {
                break;
            }
            let have = p.buf.len();
            p.buf.resize(need, 0);
            match p.stream.read(&mut p.buf[have..]) {
                Ok(0) => return Next::Drop,
                Ok(k) => p.buf.truncate(have + k),
                Err(e) => {
                    p.buf.truncate(have);
                    return match e.kind() {
                        io::ErrorKind::WouldBlock => Next::Wait,
                        io::ErrorKind::Interrupted => continue,
                        _ => Next::Drop,
                    };
                }
            }
        }
        let payload = std::mem::take(&mut p.buf).split_off(HEADER);
        match p.step {
            Step::Hello => self.hello(i, &payload),
            Step::Auth {
                server_nonce,
                client_nonce,
                client_id,
            } => self.auth(i, &payload, &server_nonce, &client_nonce, &client_id),
        }
    }

    fn hello(&mut self, i: usize, payload: &[u8]) -> Next {
        if payload.len() >= 4 && &payload[..4] == MAGIC_V1 {
            return Next::Refuse(format!(
                "this client speaks yamba protocol 1 (token in clear text); this agent speaks {VERSION}: use the same yamba version on both ends"
            ));
        }
        if payload.len() >= 4 && &payload[..4] == MAGIC_V2 {
            return Next::Refuse(format!(
                "this client speaks yamba protocol 2 (frames not authenticated); this agent speaks {VERSION}: use the same yamba version on both ends"
            ));
        }
        if payload.len() != HELLO_LEN || &payload[..4] != MAGIC {
            return Next::Refuse("not a yamba client (bad HELLO)".into());
        }
        let client_nonce: [u8; NONCE] = payload[4..4 + NONCE].try_into().unwrap();
        let client_id: [u8; CLIENT_ID] = payload[4 + NONCE..].try_into().unwrap();
        let known = constant_time_eq(&client_id, &self.sh.client_id);
        self.pending[i].known = known;
        // An address that keeps failing is turned away — unless it says
        // it holds the token (which it then has to prove): a guesser on
        // the same host cannot lock the real client out.
        if !known {
            let source = self.pending[i].source;
            if let Some(wait) = self.locked_out(source) {
                return Next::Refuse(format!(
                    "too many failed authentications from {}: try again in {:.0} s",
                    self.pending[i].peer.ip(),
                    wait.as_secs_f64().ceil()
                ));
            }
        }
        let server_nonce = nonce();
        let mut reply = MAGIC.to_vec();
        reply.extend_from_slice(&server_nonce);
        let p = &mut self.pending[i];
        p.step = Step::Auth {
            server_nonce,
            client_nonce,
            client_id,
        };
        match send_now(&p.stream, ST_OK, &reply, &mut self.frame) {
            true => Next::Wait,
            false => Next::Drop,
        }
    }

    fn auth(
        &mut self,
        i: usize,
        proof_got: &[u8],
        server_nonce: &[u8; NONCE],
        client_nonce: &[u8; NONCE],
        client_id: &[u8; CLIENT_ID],
    ) -> Next {
        let token = self.sh.cfg.token.as_bytes();
        if !proof_ok(token, Prover::Client, server_nonce, client_nonce, proof_got) {
            let source = self.pending[i].source;
            self.spend_allowance(source);
            return Next::Refuse("wrong token".into());
        }
        if self.sh.active.load(Ordering::SeqCst) >= self.sh.cfg.max_connections {
            return Next::Refuse(format!(
                "too many connections (limit {})",
                self.sh.cfg.max_connections
            ));
        }
        self.sh.delay();
        let mut reply = self.sh.cfg.max_message.to_le_bytes().to_vec();
        reply.extend_from_slice(&proof(token, Prover::Agent, server_nonce, client_nonce));
        // The slot is taken before the client can know it is in, so that
        // the count a client sees after connecting includes it.
        self.sh.active.fetch_add(1, Ordering::SeqCst);
        let session = Session::new(
            token,
            &Handshake {
                server_nonce: *server_nonce,
                client_nonce: *client_nonce,
                client_id: *client_id,
                max_message: self.sh.cfg.max_message,
            },
            session::From::Agent,
        );
        match send_now(&self.pending[i].stream, ST_OK, &reply, &mut self.frame) {
            true => Next::Serve(Box::new(session)),
            false => {
                self.sh.active.fetch_sub(1, Ordering::SeqCst);
                Next::Drop
            }
        }
    }

    /// Hands an authenticated connection, its slot already taken, to a
    /// thread of its own.
    fn serve(&mut self, stream: TcpStream, peer: SocketAddr, session: Session) {
        if stream.set_nonblocking(false).is_err() {
            self.sh.active.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        let sh = self.sh.clone();
        let spawned = std::thread::Builder::new()
            .name("yamba-agent-conn".into())
            .spawn(move || {
                let _slot = Slot(&sh.active);
                if let Ok(mut conn) = Conn::new(stream, peer, &sh, session) {
                    conn.serve();
                }
            });
        if spawned.is_err() {
            self.sh.active.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Handshakes past their deadline are refused.
    fn expire(&mut self, now: Instant) {
        let limit = self.sh.cfg.auth_timeout;
        let mut i = 0;
        while i < self.pending.len() {
            if now.duration_since(self.pending[i].since) >= limit {
                let p = self.remove(i);
                let why = format!("no authentication within {:.1} s", limit.as_secs_f64());
                self.refuse(p.stream, p.peer, &why);
            } else {
                i += 1;
            }
        }
    }

    /// Logs a refusal, tells the peer (without waiting) and closes in the
    /// background.
    fn refuse(&mut self, stream: TcpStream, peer: SocketAddr, why: &str) {
        self.sh.refuse_log(peer, why);
        let _ = stream.set_nonblocking(true);
        send_now(
            &stream,
            ST_REFUSED,
            bounded(why).as_bytes(),
            &mut self.frame,
        );
        let _ = stream.shutdown(Shutdown::Write);
        if self.closing.len() >= MAX_CLOSING {
            self.closing.pop_front();
        }
        self.closing.push_back(Closing {
            stream,
            until: Instant::now() + LINGER,
            drained: 0,
        });
    }

    /// Drains refused connections that have something, and closes those
    /// done or past their time.
    fn drain_closing(&mut self, ready: &[bool]) {
        let now = Instant::now();
        let mut sink = [0u8; 4096];
        let mut keep = VecDeque::with_capacity(self.closing.len());
        for (mut c, r) in self.closing.drain(..).zip(ready.iter().copied()) {
            let mut done = now >= c.until;
            if r && !done {
                loop {
                    match c.stream.read(&mut sink) {
                        Ok(0) => {
                            done = true;
                            break;
                        }
                        Ok(k) => {
                            c.drained += k;
                            if c.drained > 64 * 1024 {
                                done = true;
                                break;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => {
                            done = true;
                            break;
                        }
                    }
                }
            }
            if !done {
                keep.push_back(c);
            }
        }
        self.closing = keep;
    }

    /// Whether `source` must wait before trying again, and how long.
    fn locked_out(&mut self, source: Source) -> Option<Duration> {
        let a = self.allowance.get_mut(&source)?;
        refill(a);
        if a.left >= 1.0 {
            if a.left >= FAILED_AUTH_BURST {
                self.allowance.remove(&source);
            }
            return None;
        }
        Some(Duration::from_secs_f64((1.0 - a.left) / FAILED_AUTH_PER_S))
    }

    fn spend_allowance(&mut self, source: Source) {
        if self.allowance.len() > 65_536 {
            // Forget addresses whose allowance is whole again.
            self.allowance.retain(|_, a| {
                refill(a);
                a.left < FAILED_AUTH_BURST
            });
        }
        let a = self.allowance.entry(source).or_insert(Allowance {
            left: FAILED_AUTH_BURST,
            at: Instant::now(),
        });
        refill(a);
        a.left -= 1.0;
    }
}

fn refill(a: &mut Allowance) {
    let now = Instant::now();
    a.left = (a.left + now.duration_since(a.at).as_secs_f64() * FAILED_AUTH_PER_S)
        .min(FAILED_AUTH_BURST);
    a.at = now;
}

/// A reason cut to what a REFUSED or ERROR frame carries.
pub(super) fn bounded(why: &str) -> String {
    printable(why.as_bytes(), REASON_MAX)
}

/// Writes a small frame on a non-blocking socket if it fits in the send
/// buffer at once (a fresh socket's always does); false if it did not go.
fn send_now(mut s: &TcpStream, code: u8, payload: &[u8], frame: &mut Vec<u8>) -> bool {
    if encode_frame(code, payload, frame).is_err() {
        return false;
    }
    matches!(s.write(frame), Ok(n) if n == frame.len())
}

/// A connection's place in the count, given back however its thread ends.
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
