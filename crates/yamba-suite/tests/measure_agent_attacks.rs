//! Issue 13's §1 on `yamba serve`, on loopback: a slowloris and a connect
//! flood do not keep a client with the token out. Attackers connect from
//! other loopback addresses (127.0.0.2, 127.0.0.3) than the client
//! (127.0.0.1), as another host would; the original lock-out (16
//! one-byte connections) comes from the client's own address. A
//! measurement check (docs/testing.md): how long the client waits is a
//! time on a shared machine.

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::FromRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use yamba_suite::remote::protocol::OP_HELLO;
use yamba_suite::remote::{raise_fd_limit, Agent, AgentHandle, Client, ServerConfig};
use yamba_testkit::{alone, check, Accept};

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

/// The attacks together, running until the check is done: 16 one-byte
/// connections from the client's own address (which filled every slot
/// before), a slowloris from 127.0.0.2 (one byte per connection, up to 300
/// held) and a flood of connects from 127.0.0.3 (500 held at once, then
/// renewed). The tries start once 500 attack connections were made (the
/// attack ran). Each attempt is one try of a client with the token:
/// connect, authenticate, read a 64 KiB file (intact). Rule: the median
/// try takes at most 1 s. The agent logged the slowloris's refusals.
#[test]
fn slowloris_and_flood_do_not_lock_out_a_client_with_the_token() {
    let _alone = alone();
    raise_fd_limit();
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..65_536u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.path().join("f.dat"), &data).unwrap();
    let a = agent(Some(dir.path()), |_| {});
    let to = a.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let attempts = Arc::new(AtomicUsize::new(0));

    let same_address: Vec<TcpStream> = (0..16)
        .map(|_| {
            let mut s = TcpStream::connect(to).unwrap();
            s.write_all(&[OP_HELLO]).unwrap();
            s
        })
        .collect();
    let slowloris = {
        let (stop, attempts) = (stop.clone(), attempts.clone());
        std::thread::spawn(move || {
            let mut held = std::collections::VecDeque::new();
            while !stop.load(Ordering::Relaxed) {
                if let Ok(mut s) = connect_from(Ipv4Addr::new(127, 0, 0, 2), to) {
                    let _ = s.write_all(&[OP_HELLO]);
                    held.push_back(s);
                    attempts.fetch_add(1, Ordering::Relaxed);
                }
                if held.len() > 300 {
                    held.pop_front();
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let flood = {
        let (stop, attempts) = (stop.clone(), attempts.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let batch: Vec<TcpStream> = (0..500)
                    .filter_map(|_| connect_from(Ipv4Addr::new(127, 0, 0, 3), to).ok())
                    .collect();
                attempts.fetch_add(batch.len(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(300));
                drop(batch);
            }
        })
    };
    let waited = Instant::now();
    while attempts.load(Ordering::Relaxed) < 500 {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the attack made {} connections in 60 s",
            attempts.load(Ordering::Relaxed)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let verdict = check!(
        "seconds for a client with the token to read 64 KiB",
        Accept::at_most(1.0)
    )
    .decide(|| {
        let t0 = Instant::now();
        let mut c = Client::connect(&to.to_string(), TOKEN, T).unwrap();
        assert_eq!(c.read("f.dat", 0, 65_536).unwrap(), &data[..]);
        let took = t0.elapsed().as_secs_f64();
        drop(c);
        std::thread::sleep(Duration::from_millis(200));
        took
    });
    stop.store(true, Ordering::Relaxed);
    slowloris.join().unwrap();
    flood.join().unwrap();
    drop(same_address);
    println!("{} attack connections", attempts.load(Ordering::Relaxed));
    verdict.unless_failed();
    let log = a.refusals();
    assert!(
        log.iter()
            .any(|l| l.contains("too many unauthenticated connections from 127.0.0.2")),
        "{:?}",
        &log[..log.len().min(5)]
    );
}
