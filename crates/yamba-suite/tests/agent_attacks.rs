//! Issue 13's attacks on `yamba serve`, each bounded in count and time, on
//! loopback. Attackers connect from other loopback addresses (127.0.0.2…,
//! all of 127/8 is loopback) than the client with the token (127.0.0.1), as
//! another host would; the original lock-out (16 one-byte
//! connections) comes from the client's own address.
//!
//! - §1 (a slowloris and a connect flood do not keep a client with the
//!   token out: a measurement check, measure_agent_attacks.rs);
//! - §2 failing requests with 1 MiB paths cost a bounded reply and a
//!   bounded log, however many;
//! - §3 the token never crosses the wire, a recorded handshake cannot be
//!   replayed, and wrong guesses from one address are rate-limited;
//! - §5 a FIFO is refused without being opened, and files of a pseudo file
//!   system inside the root (procfs) are refused.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::FromRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use yamba_suite::remote::protocol::{
    hello_payload, nonce, proof, read_header, read_payload, write_frame, Prover, HELLO_LEN,
    OP_AUTH, OP_HELLO, OP_STAT, ST_OK, ST_REFUSED,
};
use yamba_suite::remote::server::{REFUSALS_KEPT, REFUSAL_LINE_MAX};
use yamba_suite::remote::{Agent, AgentError, AgentHandle, Client, ServerConfig};

const TOKEN: &str = "5d2b8f0c7e1a4d3b9f6c2e8a0b4d7f1c3e5a9b2d6f8c0e4a";
const T: Duration = Duration::from_secs(5);

fn agent(root: Option<&Path>, tweak: impl FnOnce(&mut ServerConfig)) -> AgentHandle {
    let mut cfg = ServerConfig {
        listen: "127.0.0.1:0".into(),
        root: root.map(Path::to_path_buf),
        token: TOKEN.into(),
        log_stderr: false,
        ..ServerConfig::default()
    };
    tweak(&mut cfg);
    Agent::bind(cfg).unwrap().spawn().unwrap()
}

/// A TCP connection to `to` from the loopback address `from` (what another
/// host looks like to the agent's per-address limits).
fn connect_from(from: Ipv4Addr, to: SocketAddr) -> io::Result<TcpStream> {
    let addr = |a: SocketAddrV4| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    let SocketAddr::V4(to) = to else {
        panic!("IPv4 only")
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a fresh socket, plain-data addresses of the right length;
    // the descriptor is owned by the TcpStream from here on.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let s = TcpStream::from_raw_fd(fd);
        let local = addr(SocketAddrV4::new(from, 0));
        if libc::bind(fd, (&local as *const libc::sockaddr_in).cast(), len) != 0 {
            return Err(io::Error::last_os_error());
        }
        let remote = addr(to);
        if libc::connect(fd, (&remote as *const libc::sockaddr_in).cast(), len) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(s)
    }
}

/// The handshake by hand with `token`: Ok, or the agent's refusal.
fn raw_auth(s: &mut TcpStream, token: &str) -> Result<(), String> {
    s.set_read_timeout(Some(T)).unwrap();
    let mut scratch = Vec::new();
    let cn = nonce();
    let mut p = Vec::new();
    let frame = |s: &mut TcpStream, p: &mut Vec<u8>| -> Result<(), String> {
        let (st, len) = read_header(s).map_err(|e| e.to_string())?.ok_or("closed")?;
        assert!(len <= 4096, "a {len}-byte answer in the handshake");
        read_payload(s, len, p).map_err(|e| e.to_string())?;
        match st {
            ST_OK => Ok(()),
            _ => Err(String::from_utf8_lossy(p).into_owned()),
        }
    };
    // A refusal may come instead of the HELLO's answer (a locked-out address).
    let _ = write_frame(
        s,
        OP_HELLO,
        &hello_payload(token.as_bytes(), &cn),
        &mut scratch,
    );
    frame(s, &mut p)?;
    let sn: [u8; 32] = p[4..36].try_into().unwrap();
    let mine = proof(token.as_bytes(), Prover::Client, &sn, &cn);
    let _ = write_frame(s, OP_AUTH, &mine, &mut scratch);
    frame(s, &mut p)
}

/// §2. Twenty failing requests with a 1 MiB path: each answer is short,
/// what the log keeps is bounded per line and in lines, and the
/// connection still serves.
#[test]
fn failing_requests_with_huge_paths_cost_little() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok"), b"x").unwrap();
    let a = agent(Some(dir.path()), |_| {});
    let mut c = Client::connect(&a.addr().to_string(), TOKEN, T).unwrap();
    let max = c.max_message() as usize;
    // A megabyte of path, and a path of control characters the log and
    // the answer must escape and cut.
    let huge = "../\u{1b}".repeat((max - 64) / 4);
    let escapes = format!("../{}", "\u{1b}".repeat(3000));
    for i in 0..20 {
        let path = if i % 2 == 0 { &huge } else { &escapes };
        match c.request_raw(OP_STAT, path.as_bytes()) {
            Err(AgentError::Failed(why)) => assert!(why.len() < 1024, "{} bytes", why.len()),
            other => panic!("expected a failure, got {:?}", other.map(|r| r.len())),
        }
    }
    let log = a.refusals();
    assert_eq!(log.len(), 20);
    assert!(log
        .iter()
        .all(|l| l.chars().count() <= REFUSAL_LINE_MAX + 1));
    assert!(
        log.iter().all(|l| !l.contains('\u{1b}')) && log.iter().any(|l| l.contains("\\u{1b}")),
        "escaped: {:?}",
        &log[..2]
    );
    // However many: the newest are kept, the rest only counted.
    for i in 0..(REFUSALS_KEPT + 500) {
        assert!(c.stat(&format!("missing-{i}")).is_err());
    }
    assert_eq!(a.refusals().len(), REFUSALS_KEPT);
    assert_eq!(a.refusal_count(), (REFUSALS_KEPT + 520) as u64);
    assert_eq!(c.stat("ok").unwrap(), 1);
}

/// A proxy between a client and the agent recording both directions.
#[allow(clippy::type_complexity)]
fn recording_proxy(agent: SocketAddr) -> (SocketAddr, mpsc::Receiver<(Vec<u8>, Vec<u8>)>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (client, _) = l.accept().unwrap();
        let server = TcpStream::connect(agent).unwrap();
        let pump = |mut from: TcpStream, mut to: TcpStream| {
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(k @ 1..) = from.read(&mut buf) {
                    seen.extend_from_slice(&buf[..k]);
                    if to.write_all(&buf[..k]).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(std::net::Shutdown::Write);
                seen
            })
        };
        let up = pump(client.try_clone().unwrap(), server.try_clone().unwrap());
        let down = pump(server, client);
        let _ = tx.send((up.join().unwrap(), down.join().unwrap()));
    });
    (addr, rx)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// §3. Everything the client and the agent said to each other, recorded
/// by a proxy, holds no trace of the token; what the client sent, replayed
/// on a new connection, is refused (the agent's nonce is new).
#[test]
fn the_token_never_crosses_the_wire_and_cannot_be_replayed() {
    let a = agent(None, |_| {});
    let (via, recorded) = recording_proxy(a.addr());
    let mut c = Client::connect(&via.to_string(), TOKEN, T).unwrap();
    assert_eq!(c.echo(b"over the proxy").unwrap(), b"over the proxy");
    drop(c);
    let (up, down) = recorded.recv_timeout(T).unwrap();
    assert!(
        up.len() > 5 + HELLO_LEN + 5 + 32,
        "the handshake was recorded"
    );
    for needle in [TOKEN.as_bytes(), &TOKEN.as_bytes()[..12]] {
        assert!(!contains(&up, needle) && !contains(&down, needle));
    }
    // The replay: HELLO and AUTH as recorded.
    let mut s = TcpStream::connect(a.addr()).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s.write_all(&up[..5 + HELLO_LEN + 5 + 32]).unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    // The agent's fresh HELLO answer, then the refusal.
    assert_eq!(answer[0], ST_OK);
    let refusal = &answer[5 + 36..];
    assert_eq!(refusal[0], ST_REFUSED);
    assert!(contains(refusal, b"wrong token"), "{answer:?}");
    // A first-version client, which sent the token in clear, is told why.
    let mut old = TcpStream::connect(a.addr()).unwrap();
    let mut scratch = Vec::new();
    write_frame(&mut old, OP_HELLO, b"YMB1not-the-token", &mut scratch).unwrap();
    old.set_read_timeout(Some(T)).unwrap();
    let mut b = Vec::new();
    let _ = old.read_to_end(&mut b);
    assert!(
        contains(&b, b"same yamba version on both ends"),
        "{}",
        String::from_utf8_lossy(&b)
    );
}

/// §3. Guessing from one address: after a burst of 8 wrong tokens, every
/// further try from that address is turned away at once, without a proof
/// being checked, while a client with the token at another address is
/// served as ever.
#[test]
fn wrong_guesses_are_rate_limited_per_address() {
    let a = agent(None, |_| {});
    let guesser = Ipv4Addr::new(127, 0, 0, 5);
    let mut reasons = Vec::new();
    let t0 = Instant::now();
    for i in 0..14 {
        let mut s = connect_from(guesser, a.addr()).unwrap();
        reasons.push(raw_auth(&mut s, &format!("guess-{i}")).unwrap_err());
    }
    let wrong = reasons.iter().filter(|r| r.contains("wrong token")).count();
    let locked = reasons
        .iter()
        .filter(|r| r.contains("too many failed authentications from 127.0.0.5"))
        .count();
    // The allowance comes back at 1 per second: on a slow machine a guess
    // more may have been let through.
    let secs = t0.elapsed().as_secs_f64();
    assert!(
        wrong >= 8 && wrong as f64 <= 8.0 + secs.ceil(),
        "{wrong} in {secs:.2} s: {reasons:?}"
    );
    assert_eq!(wrong + locked, 14, "{reasons:?}");
    // Issue 27: the lock-out never applies to a client that holds the
    // token (its HELLO carries the identifier the token gives), so a
    // guesser on the same host cannot lock the real client out — from
    // the guesser's own address either.
    let mut s = connect_from(guesser, a.addr()).unwrap();
    raw_auth(&mut s, TOKEN).unwrap();
    let mut s = connect_from(Ipv4Addr::new(127, 0, 0, 6), a.addr()).unwrap();
    raw_auth(&mut s, TOKEN).unwrap();
    let mut c = Client::connect(&a.addr().to_string(), TOKEN, T).unwrap();
    assert_eq!(c.echo(b"ok").unwrap(), b"ok");
}

/// §5. A FIFO inside the root is looked at, not opened: a writer blocked
/// opening it stays blocked (an open for reading would have released it).
#[test]
fn a_fifo_is_refused_without_being_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("p");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let (tx, opened) = mpsc::channel();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let f = std::fs::OpenOptions::new().write(true).open(&fifo);
            let _ = tx.send(f.is_ok());
        })
    };
    let a = agent(Some(dir.path()), |_| {});
    let mut c = Client::connect(&a.addr().to_string(), TOKEN, T).unwrap();
    for _ in 0..3 {
        let why = c.stat("p").unwrap_err().to_string();
        assert!(why.contains("not a regular file"), "{why}");
        let why = c.read("p", 0, 10).unwrap_err().to_string();
        assert!(why.contains("not a regular file"), "{why}");
    }
    let released = opened.recv_timeout(Duration::from_millis(300)).is_ok();
    // Release the writer ourselves, whatever happened.
    let _reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    writer.join().unwrap();
    assert!(!released, "the agent opened the FIFO");
}

/// §5. procfs inside the root — here the root is this process's own
/// /proc/PID, as a bind mount of /proc would put it — serves nothing: not
/// the environment, not the status.
#[test]
fn pseudo_file_systems_inside_the_root_are_refused() {
    let a = agent(Some(Path::new("/proc/self")), |_| {});
    let mut c = Client::connect(&a.addr().to_string(), TOKEN, T).unwrap();
    for f in ["environ", "status", "cmdline"] {
        let why = c.read(f, 0, 4096).unwrap_err().to_string();
        assert!(why.contains("pseudo file system (proc)"), "{f}: {why}");
    }
    let why = c.stat("environ").unwrap_err().to_string();
    assert!(why.contains("pseudo file system (proc)"), "{why}");
}
