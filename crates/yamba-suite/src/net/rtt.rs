//! P = one round trip of a small message: write it, the peer echoes it,
//! read the echo. Each round trip is timed alone (BASE subtracted), so the
//! observations are the distribution of single round trips. Every message
//! carries a sequence number and the echo must match it byte for byte.

use super::{adapter, label, peer, Target, AGENT_TIMEOUT, MSG_BYTES, PEER_CPU};
use crate::remote::Client;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use yamba_core::{Benchmark, Cold, Ctx, Unit};

pub static TCP_RTT: Benchmark = Benchmark {
    id: "net.tcp.rtt",
    area: "net",
    unit: Unit::Nanoseconds,
    description: "TCP round trip of a small message (default 64 B; --set net.msg_bytes=N)",
    adapter: adapter::NAME,
    run: run_tcp_rtt,
    settings: &[MSG_BYTES, PEER_CPU],
    cold: Cold::Measured,
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

pub static UDP_RTT: Benchmark = Benchmark {
    id: "net.udp.rtt",
    area: "net",
    unit: Unit::Nanoseconds,
    description: "UDP round trip of a small datagram (default 64 B), loopback",
    adapter: adapter::NAME,
    requires: |_, c| match c.remote {
        Some(_) => Err("the agent speaks TCP only: UDP round trip is measured on loopback".into()),
        None => Ok(()),
    },
    run: run_udp_rtt,
    settings: &[MSG_BYTES, PEER_CPU],
    cold: Cold::Measured,
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

/// Untimed round trips before measuring: connection warm, peer awake.
const WARMUP_TRIPS: u64 = 100;

fn message(ctx: &Ctx) -> Result<Vec<u8>, String> {
    let size = ctx.bytes(MSG_BYTES.key)?.unwrap_or(64);
    Ok((0..size).map(|i| (i * 7 + 3) as u8).collect())
}

/// How the trips went: matched replies, mismatched ones, the first error.
#[derive(Default)]
struct Trips {
    matched: u64,
    mismatched: u64,
    error: Option<String>,
}

/// Warms up, then times single round trips with `trip(seq)` (true: the
/// reply matched), and pushes the result.
fn measure_trips(
    ctx: &mut Ctx,
    target: &Target,
    size: usize,
    mut trip: impl FnMut(u64) -> Result<bool, String>,
) -> Result<(), String> {
    for seq in 0..WARMUP_TRIPS {
        if !trip(u64::MAX - seq)? {
            return Err("warm-up reply did not match its request".into());
        }
    }
    let mut t = Trips::default();
    let mut seq = 0u64;
    let m = ctx.measure_single(
        || {},
        || {
            seq += 1;
            match trip(seq) {
                Ok(true) => t.matched += 1,
                Ok(false) => t.mismatched += 1,
                Err(e) => {
                    t.error.get_or_insert(e);
                }
            }
        },
    );
    if let Some(e) = t.error {
        return Err(format!("round trip failed: {e}"));
    }
    let n = m.observations.len() as u64 + 1;
    let mut r = ctx.measured_result(None, m);
    label(ctx, &mut r, target);
    r.param("message_bytes", size);
    r.add_evidence(
        "every reply matched its request (sequence number and bytes)",
        format!("{n} of {n}"),
        format!("{} of {n}", t.matched),
        t.mismatched == 0 && t.matched == n,
    );
    ctx.push(r);
    Ok(())
}

fn stamp(buf: &mut [u8], seq: u64) {
    buf[..8].copy_from_slice(&seq.to_le_bytes());
}

fn run_tcp_rtt(ctx: &mut Ctx) -> Result<(), String> {
    let target = Target::of(ctx.config())?;
    let mut req = message(ctx)?;
    let size = req.len();
    match &target {
        Target::Local => {
            let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            let peer = peer::spawn(peer::cpu(ctx)?, move || tcp_echo_peer(listener, size))?;
            let mut s = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
            s.set_nodelay(true).map_err(|e| e.to_string())?;
            s.set_read_timeout(Some(AGENT_TIMEOUT))
                .map_err(|e| e.to_string())?;
            let mut rep = vec![0u8; size];
            let res = measure_trips(ctx, &target, size, |seq| {
                stamp(&mut req, seq);
                s.write_all(&req).map_err(|e| e.to_string())?;
                s.read_exact(&mut rep).map_err(|e| e.to_string())?;
                Ok(rep == req)
            });
            drop(s);
            let _ = peer.join();
            res
        }
        Target::Remote { addr, token } => {
            let mut c = Client::connect(addr, token, AGENT_TIMEOUT).map_err(|e| e.to_string())?;
            measure_trips(ctx, &target, size, |seq| {
                stamp(&mut req, seq);
                let rep = c.echo(&req).map_err(|e| e.to_string())?;
                Ok(rep == &req[..])
            })
        }
    }
}

/// Echoes fixed-size messages until the client closes.
fn tcp_echo_peer(listener: TcpListener, size: usize) {
    let Ok((mut s, _)) = listener.accept() else {
        return;
    };
    let _ = s.set_nodelay(true);
    let _ = s.set_read_timeout(Some(AGENT_TIMEOUT));
    let mut buf = vec![0u8; size];
    while s.read_exact(&mut buf).is_ok() {
        if s.write_all(&buf).is_err() {
            return;
        }
    }
}

fn run_udp_rtt(ctx: &mut Ctx) -> Result<(), String> {
    let target = Target::Local;
    let mut req = message(ctx)?;
    let size = req.len();
    let server = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    let addr = server.local_addr().map_err(|e| e.to_string())?;
    let peer = peer::spawn(peer::cpu(ctx)?, move || udp_echo_peer(server))?;
    let s = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    s.connect(addr).map_err(|e| format!("connect: {e}"))?;
    // Loopback does not drop datagrams unless its buffers overflow; a lost
    // one shows as this timeout and fails the run rather than skew it.
    s.set_read_timeout(Some(std::time::Duration::from_secs(1)))
        .map_err(|e| e.to_string())?;
    let mut rep = vec![0u8; size + 1];
    let res = measure_trips(ctx, &target, size, |seq| {
        stamp(&mut req, seq);
        s.send(&req).map_err(|e| e.to_string())?;
        let k = s
            .recv(&mut rep)
            .map_err(|e| format!("datagram lost or late: {e}"))?;
        Ok(k == size && rep[..k] == req[..])
    });
    let _ = s.send(&[]);
    let _ = peer.join();
    res
}

/// Echoes datagrams to their sender until an empty one arrives.
fn udp_echo_peer(s: UdpSocket) {
    let _ = s.set_read_timeout(Some(AGENT_TIMEOUT));
    let mut buf = vec![0u8; 65_536];
    while let Ok((k, from)) = s.recv_from(&mut buf) {
        if k == 0 || s.send_to(&buf[..k], from).is_err() {
            return;
        }
    }
}
