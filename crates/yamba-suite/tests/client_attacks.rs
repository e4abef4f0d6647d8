//! Issue 13 §6: the client (`yamba run --remote`) against hostile or
//! mistaken peers on loopback — random bytes, an SSH or HTTP server, lengths
//! of 4 GiB, a zero message limit, silence, an agent that does not know the
//! token, replies longer than asked. Each ends in a clear error within the
//! timeout, and none makes the client allocate what the peer announces
//! (this test binary's peak RSS stays small; before, 64 random bytes cost
//! 3.2 GB and 4 GiB lengths aborted).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};
use yamba_suite::remote::protocol::{
    nonce, proof, read_header, read_payload, write_frame, Prover, HELLO_LEN, MAGIC, OP_AUTH,
    OP_HELLO, ST_OK,
};
use yamba_suite::remote::session::{From, Handshake, Session, TAG};
use yamba_suite::remote::{AgentError, Client};

const TOKEN: &str = "0f4e9a7c2b6d1e8f3a5c7e9b0d2f4a6c8e1b3d5f7a9c0e2b";
const T: Duration = Duration::from_secs(2);

/// A peer on loopback that handles one connection with `act`.
fn peer(act: impl FnOnce(TcpStream) + Send + 'static) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Ok((s, _)) = l.accept() {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            act(s)
        }
    });
    addr
}

/// The agent's half of the handshake, knowing `token`, announcing `max`:
/// the agent's end of the session.
fn handshake(s: &mut TcpStream, token: &str, max: u32) -> Session {
    let mut p = Vec::new();
    let (op, len) = read_header(s).unwrap().unwrap();
    assert_eq!((op, len), (OP_HELLO, HELLO_LEN as u32));
    read_payload(s, len, &mut p).unwrap();
    let cn: [u8; 32] = p[4..36].try_into().unwrap();
    let id: [u8; 16] = p[36..].try_into().unwrap();
    let sn = nonce();
    let mut scratch = Vec::new();
    write_frame(s, ST_OK, &[&MAGIC[..], &sn].concat(), &mut scratch).unwrap();
    let (op, len) = read_header(s).unwrap().unwrap();
    assert_eq!((op, len), (OP_AUTH, 32));
    read_payload(s, len, &mut p).unwrap();
    let mut reply = max.to_le_bytes().to_vec();
    reply.extend_from_slice(&proof(token.as_bytes(), Prover::Agent, &sn, &cn));
    write_frame(s, ST_OK, &reply, &mut scratch).unwrap();
    Session::new(
        token.as_bytes(),
        &Handshake {
            server_nonce: sn,
            client_nonce: cn,
            client_id: id,
            max_message: max,
        },
        From::Agent,
    )
}

/// Connects with a 2 s timeout; the error and how long it took.
fn connect_err(addr: SocketAddr) -> (AgentError, Duration) {
    let t0 = Instant::now();
    let e = Client::connect(&addr.to_string(), TOKEN, T)
        .err()
        .expect("connected to a hostile peer");
    (e, t0.elapsed())
}

/// Peak resident memory of this test process so far.
fn peak_rss_mb() -> f64 {
    // SAFETY: rusage is plain data getrusage fills.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the rusage we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    u.ru_maxrss as f64 / 1024.0
}

/// Deterministic bytes (xorshift).
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn random_bytes_are_not_an_agent_and_cost_nothing() {
    for seed in 0..40 {
        let bytes = noise(seed, 64);
        let addr = peer(move |mut s| {
            let _ = s.write_all(&bytes);
            std::thread::sleep(Duration::from_secs(3));
        });
        let (e, took) = connect_err(addr);
        assert!(matches!(e, AgentError::NotAgent { .. }), "seed {seed}: {e}");
        assert!(took < Duration::from_millis(1500), "seed {seed}: {took:?}");
    }
    let peak = peak_rss_mb();
    println!("client peak RSS {peak:.0} MB");
    assert!(peak < 256.0, "peak RSS {peak:.0} MB");
}

#[test]
fn other_servers_are_named_at_once() {
    for (banner, shown) in [
        (
            &b"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n"[..],
            "SSH-2.0-OpenSSH",
        ),
        (
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 400",
        ),
        (b"220 smtp.example ESMTP\r\n", "220 smtp"),
    ] {
        let addr = peer(move |mut s| {
            let _ = s.write_all(banner);
            std::thread::sleep(Duration::from_secs(3));
        });
        let (e, took) = connect_err(addr);
        let text = e.to_string();
        assert!(
            text.contains(&format!("{addr} is not a yamba agent")) && text.contains(shown),
            "{text}"
        );
        assert!(took < Duration::from_millis(1500), "{took:?}");
    }
}

#[test]
fn four_gib_lengths_are_refused_before_allocating() {
    // In the handshake.
    let addr = peer(|mut s| {
        let _ = s.write_all(&[ST_OK, 0xff, 0xff, 0xff, 0xff, 1, 2, 3]);
        std::thread::sleep(Duration::from_secs(3));
    });
    let (e, took) = connect_err(addr);
    assert!(matches!(e, AgentError::NotAgent { .. }), "{e}");
    assert!(took < Duration::from_millis(1500));
    // After it, from a peer that knows the token.
    let addr = peer(|mut s| {
        handshake(&mut s, TOKEN, 1 << 20);
        let _ = read_header(&mut s);
        let _ = s.write_all(&[ST_OK, 0xff, 0xff, 0xff, 0xff]);
        std::thread::sleep(Duration::from_secs(3));
    });
    let mut c = Client::connect(&addr.to_string(), TOKEN, T).unwrap();
    let e = c.echo(b"x").unwrap_err().to_string();
    assert!(e.contains("exceeds the limit of 1048576"), "{e}");
    let peak = peak_rss_mb();
    assert!(peak < 256.0, "peak RSS {peak:.0} MB");
}

#[test]
fn a_zero_message_limit_is_an_error_not_a_panic() {
    for max in [0, 1, 63, u32::MAX] {
        let addr = peer(move |mut s| {
            handshake(&mut s, TOKEN, max);
            std::thread::sleep(Duration::from_secs(1));
        });
        let (e, _) = connect_err(addr);
        assert!(
            e.to_string()
                .contains(&format!("announced a message limit of {max} bytes")),
            "{e}"
        );
    }
}

#[test]
fn silence_is_named_as_such() {
    let addr = peer(|mut s| {
        let mut b = [0u8; 64];
        let _ = s.read(&mut b);
        std::thread::sleep(Duration::from_secs(5));
    });
    let (e, took) = connect_err(addr);
    assert_eq!(
        e.to_string(),
        format!("no answer from the agent at {addr} within 2 s")
    );
    assert!(took < Duration::from_secs(4), "{took:?}");
}

#[test]
fn an_agent_that_does_not_know_the_token_is_caught() {
    let addr = peer(|mut s| {
        handshake(&mut s, "some other token entirely", 1 << 20);
        std::thread::sleep(Duration::from_secs(1));
    });
    let (e, _) = connect_err(addr);
    assert!(e.to_string().contains("does not know the token"), "{e}");
}

#[test]
fn replies_longer_than_asked_are_refused() {
    let addr = peer(|mut s| {
        let mut session = handshake(&mut s, TOKEN, 1 << 20);
        let mut p = Vec::new();
        let mut scratch = Vec::new();
        // An echo of 11 answered with 12 bytes, a READ of 10 with 100
        // (each request's tag read too; each answer tagged: the agent
        // knows the token, it just answers wrong).
        for answer in [12, 100] {
            let Ok(Some((_, len))) = read_header(&mut s) else {
                return;
            };
            read_payload(&mut s, len + TAG as u32, &mut p).unwrap();
            session
                .seal(ST_OK, &vec![0u8; answer], &mut scratch)
                .unwrap();
            s.write_all(&scratch).unwrap();
        }
        std::thread::sleep(Duration::from_secs(1));
    });
    let mut c = Client::connect(&addr.to_string(), TOKEN, T).unwrap();
    let e = c.echo(&[0u8; 11]).unwrap_err().to_string();
    assert!(e.contains("ECHO of 11 bytes came back as 12"), "{e}");
    let e = c.read("f", 0, 10).unwrap_err().to_string();
    assert!(e.contains("READ of 10 bytes answered with 100"), "{e}");
}
