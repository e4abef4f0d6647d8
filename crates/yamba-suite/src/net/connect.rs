//! P = setting up and tearing down a TCP connection.
//!
//! Loopback: connect; the peer accepts and closes at once; the client reads
//! the end of stream and closes — so each observation is connect + accept +
//! close, seen from the client. Against an agent, a connection is not
//! usable before HELLO, so P is connect + HELLO/OK + close.

use super::{adapter, label, peer, Target, AGENT_TIMEOUT};
use crate::remote::client::resolve;
use crate::remote::Client;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use yamba_core::cold::Evictor;
use yamba_core::harness::measure_single;
use yamba_core::{Benchmark, Cold, Ctx, Mode, Unit};

pub static TCP_CONNECT: Benchmark = Benchmark {
    id: "net.tcp.connect",
    area: "net",
    unit: Unit::Nanoseconds,
    description: "TCP connection setup and teardown (connect + accept + close)",
    adapter: adapter::NAME,
    run: run_connect,
    settings: &[super::PEER_CPU],
    cold: Cold::Measured,
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

/// Each connection leaves a socket in TIME_WAIT for a minute: bound the
/// count so a long run cannot exhaust the ephemeral ports.
const MAX_CONNECTIONS: usize = 10_000;

fn run_connect(ctx: &mut Ctx) -> Result<(), String> {
    let target = Target::of(ctx.config())?;
    let mut plan = ctx.plan();
    plan.max_observations = plan.max_observations.min(MAX_CONNECTIONS);
    let clock = ctx.clock().clone();
    let base = ctx.base_ns();
    let mut failures = 0u64;
    let mut first_error: Option<String> = None;
    let mut attempts = 0u64;
    // Sockets in TIME_WAIT before the loopback connections (see
    // add_time_wait_note); None against an agent, whose table is remote.
    let mut tw_before = None;
    // Cold: each connection after the client's caches were evicted and
    // its branch history disturbed.
    let mut evictor = (ctx.mode == Mode::Cold).then(|| Evictor::new(ctx.machine()));
    let (m, accepted, what) = match &target {
        Target::Local => {
            let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            let stop = Arc::new(AtomicBool::new(false));
            let accepted = Arc::new(AtomicU64::new(0));
            let (st, ac) = (stop.clone(), accepted.clone());
            tw_before = adapter::tcp_time_wait();
            let peer = peer::spawn(peer::cpu(ctx)?, move || {
                for s in listener.incoming() {
                    if st.load(Ordering::SeqCst) {
                        return;
                    }
                    if s.is_ok() {
                        ac.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })?;
            let m = measure_single(
                &clock,
                base,
                &plan,
                evictor.as_mut(),
                || {},
                || {
                    attempts += 1;
                    let r = TcpStream::connect(addr).and_then(|mut s| {
                        let mut b = [0u8; 1];
                        match s.read(&mut b)? {
                            0 => Ok(()),
                            _ => Err(std::io::Error::other("peer sent data instead of closing")),
                        }
                    });
                    if let Err(e) = r {
                        failures += 1;
                        first_error.get_or_insert(e.to_string());
                    }
                },
            );
            stop.store(true, Ordering::SeqCst);
            let _ = TcpStream::connect(addr);
            let _ = peer.join();
            // The wake-up connection is not counted: stop is seen first.
            let accepted = accepted.load(Ordering::SeqCst);
            (
                m,
                accepted,
                "connect + accept + close (peer closes first, client reads end of stream)",
            )
        }
        Target::Remote { addr, token } => {
            let to = resolve(addr).map_err(|e| e.to_string())?;
            let m = measure_single(
                &clock,
                base,
                &plan,
                evictor.as_mut(),
                || {},
                || {
                    attempts += 1;
                    if let Err(e) = Client::connect_to(&to, token, AGENT_TIMEOUT) {
                        failures += 1;
                        first_error.get_or_insert(e.to_string());
                    }
                },
            );
            let ok = attempts - failures;
            (m, ok, "connect + HELLO/OK round trip + close")
        }
    };
    if let Some(e) = first_error {
        return Err(format!(
            "{failures} of {attempts} connections failed, first: {e}"
        ));
    }
    let mut r = ctx.measured_result(None, m);
    label(ctx, &mut r, &target);
    r.param("operation", what);
    r.add_evidence(
        "every connection was set up and accepted",
        format!("{attempts}"),
        format!("{accepted}"),
        accepted == attempts,
    );
    if tw_before.is_some() {
        super::add_time_wait_note(&mut r, tw_before, adapter::tcp_time_wait());
    }
    super::warn_syn_retries(&mut r);
    ctx.push(r);
    Ok(())
}
