//! The agent protocol fuzzed both ways, each for a fixed number of cases
//! from a fixed seed (yamba_testkit::fuzz_plan, printed) (issue 13):
//! random and mutated frames at the agent — before the handshake and after
//! it — and random and mutated replies at the client from a peer that
//! completes the handshake. Neither side may panic, hang past its timeout
//! or allocate what a length field claims; the agent serves a well-behaved
//! client afterwards.

use rand::{Rng, SeedableRng};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;
use yamba_suite::remote::protocol::{
    hello_payload, nonce, proof, read_header, read_payload, write_frame, Prover, MAGIC, OP_AUTH,
    OP_HELLO, ST_OK,
};
use yamba_suite::remote::{Agent, Client, ServerConfig};

const TOKEN: &str = "c1e5a9d3f7b2e6a0c4d8f2b6e0a4c8d2f6b0e4a8c2d6f0b4";

fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// A frame: mostly well-formed with odd fields, sometimes raw noise.
fn random_frame(r: &mut impl Rng) -> Vec<u8> {
    let op: u8 = if r.gen_bool(0.8) {
        r.gen_range(0..9)
    } else {
        r.gen()
    };
    let payload_len = match r.gen_range(0..4) {
        0 => 0,
        1 => r.gen_range(0..16),
        2 => r.gen_range(0..300),
        _ => r.gen_range(0..5000),
    };
    let mut payload: Vec<u8> = (0..payload_len).map(|_| r.gen()).collect();
    if r.gen_bool(0.3) && payload.len() >= 12 {
        // A READ or stream header with a plausible path.
        payload.truncate(12);
        payload.extend_from_slice(b"f.dat");
    }
    let claimed: u32 = match r.gen_range(0..6) {
        0 => r.gen(),
        1 => u32::MAX,
        _ => payload.len() as u32,
    };
    let mut f = vec![op];
    f.extend_from_slice(&claimed.to_le_bytes());
    f.extend_from_slice(&payload);
    f
}

/// The client's handshake by hand (so frames after it are ours to choose).
fn authenticate(s: &mut TcpStream) {
    let mut scratch = Vec::new();
    let mut p = Vec::new();
    let cn = nonce();
    write_frame(
        s,
        OP_HELLO,
        &hello_payload(TOKEN.as_bytes(), &cn),
        &mut scratch,
    )
    .unwrap();
    let (_, len) = read_header(s).unwrap().unwrap();
    read_payload(s, len, &mut p).unwrap();
    let sn: [u8; 32] = p[4..36].try_into().unwrap();
    write_frame(
        s,
        OP_AUTH,
        &proof(TOKEN.as_bytes(), Prover::Client, &sn, &cn),
        &mut scratch,
    )
    .unwrap();
    let (st, len) = read_header(s).unwrap().unwrap();
    assert_eq!(st, ST_OK);
    read_payload(s, len, &mut p).unwrap();
}

#[test]
fn the_agent_takes_random_frames_before_and_after_the_handshake() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.dat"), vec![1u8; 10_000]).unwrap();
    let a = Agent::bind(ServerConfig {
        listen: "127.0.0.1:0".into(),
        root: Some(dir.path().to_path_buf()),
        token: TOKEN.into(),
        log_stderr: false,
        auth_timeout: Duration::from_millis(500),
        idle_timeout: Duration::from_millis(500),
        max_message: 64 << 10,
        ..ServerConfig::default()
    })
    .unwrap()
    .spawn()
    .unwrap();
    // ~0.15 s a connection (50 ms read timeouts).
    let (cases, seed) = yamba_testkit::fuzz_plan(20, 21);
    let mut r = rng(seed);
    let mut connections = 0;
    let mut sink = vec![0u8; 1 << 16];
    while connections < cases {
        let mut s = TcpStream::connect(a.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
        if r.gen_bool(0.5) {
            authenticate(&mut s);
        }
        for _ in 0..r.gen_range(1..6) {
            if s.write_all(&random_frame(&mut r)).is_err() {
                break;
            }
            // Take what comes back (a SOURCE may stream a lot), briefly.
            let _ = s.read(&mut sink);
        }
        connections += 1;
    }
    println!("{connections} fuzzed connections");
    // Still serving, and not holding the fuzzed connections.
    let mut c = Client::connect(&a.addr().to_string(), TOKEN, Duration::from_secs(5)).unwrap();
    assert_eq!(c.stat("f.dat").unwrap(), 10_000);
}

#[test]
fn the_client_takes_random_replies() {
    // ~0.3–2 s a try (the client's and the peer's timeouts).
    let (cases, seed) = yamba_testkit::fuzz_plan(8, 22);
    let mut r = rng(seed);
    let mut tries = 0;
    while tries < cases {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let seed: u64 = r.gen();
        let full_handshake = r.gen_bool(0.7);
        let peer = std::thread::spawn(move || {
            let mut r = rng(seed);
            let Ok((mut s, _)) = l.accept() else { return };
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            if full_handshake {
                let mut p = Vec::new();
                let Ok(Some((_, len))) = read_header(&mut s) else {
                    return;
                };
                if len > 4096 || read_payload(&mut s, len, &mut p).is_err() {
                    return;
                }
                let cn: [u8; 32] = p[4..36].try_into().unwrap();
                let sn = nonce();
                let mut scratch = Vec::new();
                let _ = write_frame(&mut s, ST_OK, &[&MAGIC[..], &sn].concat(), &mut scratch);
                let _ = read_header(&mut s);
                let _ = s.read(&mut [0u8; 32]);
                let mut reply = r.gen_range(64u32..1 << 20).to_le_bytes().to_vec();
                reply.extend_from_slice(&proof(TOKEN.as_bytes(), Prover::Agent, &sn, &cn));
                let _ = write_frame(&mut s, ST_OK, &reply, &mut scratch);
            }
            for _ in 0..r.gen_range(1..5) {
                let mut b = [0u8; 4096];
                let _ = s.read(&mut b);
                let _ = s.write_all(&random_frame(&mut r));
            }
        });
        if let Ok(mut c) = Client::connect(&addr.to_string(), TOKEN, Duration::from_millis(300)) {
            let mut buf = vec![0u8; 4096];
            let _ = c.echo(b"0123456789");
            let _ = c.stat("f.dat");
            let _ = c.read("f.dat", 0, 100).map(|b| b.len());
            let _ = c.source(1000, &mut buf);
            let _ = c.sink(1000, &[0u8; 100]);
        }
        peer.join().unwrap();
        tries += 1;
    }
    println!("{tries} fuzzed agents");
}
