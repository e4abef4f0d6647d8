//! P = moving bytes through one or several streams.
//!
//! Each observation is one repetition: every stream moves its share of the
//! bytes at once, each from a worker thread, and the repetition ends when
//! the last receiver has confirmed the count it got. Bandwidth = all bytes
//! / time from the start of the first write to the last confirmation.
//! The repetition size is doubled (untimed) until one lasts long enough to
//! read well, unless `--set net.bytes=SIZE` fixes it.
//!
//! Loopback: senders run on the benchmark's CPU, receivers (peer threads)
//! on another. Against an agent: SINK measures toward it, SOURCE from it.

use super::{adapter, label, peer, Target, AGENT_TIMEOUT, BYTES, PEER_CPU, STREAMS};
use crate::remote::Client;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Instant;
use yamba_core::{Benchmark, Cold, Ctx, Unit};
use yamba_stats::Summary;

pub static TCP_BW_1: Benchmark = Benchmark {
    id: "net.tcp.bandwidth.1",
    area: "net",
    unit: Unit::GigabytesPerSecond,
    description: "TCP bandwidth, one stream",
    adapter: adapter::NAME,
    run: |ctx| run_tcp(ctx, 1),
    settings: &[BYTES, PEER_CPU],
    cold: Cold::NotMeaningful(
        "a bandwidth over a stream of megabytes: a rate, with no single operation to time after an eviction",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

pub static TCP_BW_N: Benchmark = Benchmark {
    id: "net.tcp.bandwidth.n",
    area: "net",
    unit: Unit::GigabytesPerSecond,
    description: "TCP bandwidth, several streams at once (default 4; --set net.streams=N)",
    adapter: adapter::NAME,
    run: run_tcp_n,
    settings: &[BYTES, STREAMS, PEER_CPU],
    cold: Cold::NotMeaningful(
        "a bandwidth over streams of megabytes: a rate, with no single operation to time after an eviction",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

pub static UNIX_BW: Benchmark = Benchmark {
    id: "net.unix.bandwidth",
    area: "net",
    unit: Unit::GigabytesPerSecond,
    description: "UNIX-domain stream socket bandwidth, one stream",
    adapter: adapter::NAME,
    requires: super::local_only,
    run: run_unix,
    settings: &[BYTES, PEER_CPU],
    cold: Cold::NotMeaningful(
        "a bandwidth over a stream of megabytes: a rate, with no single operation to time after an eviction",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

/// Bytes per write.
const CHUNK: usize = 128 * 1024;

/// What a receiver confirmed for one transfer.
#[derive(Debug, Default, Clone, Copy)]
struct Confirmed {
    bytes: u64,
    /// Sampled bytes that broke the expected pattern (SOURCE only).
    bad: u64,
}

/// One stream's transfer of n bytes, run by its worker thread.
type Transfer = Box<dyn FnMut(u64) -> Result<Confirmed, String> + Send>;

/// Worker threads, one per stream, started together for each repetition.
struct Workers {
    cmds: Vec<Sender<u64>>,
    done: Receiver<Result<Confirmed, String>>,
    handles: Vec<JoinHandle<()>>,
}

impl Workers {
    fn start(transfers: Vec<Transfer>, cpu: Option<usize>) -> Result<Workers, String> {
        let (done_tx, done) = channel();
        let mut cmds = Vec::new();
        let mut handles = Vec::new();
        for mut t in transfers {
            let (tx, rx) = channel::<u64>();
            let out = done_tx.clone();
            handles.push(peer::spawn(cpu, move || {
                while let Ok(n) = rx.recv() {
                    if out.send(t(n)).is_err() {
                        return;
                    }
                }
            })?);
            cmds.push(tx);
        }
        Ok(Workers {
            cmds,
            done,
            handles,
        })
    }

    /// One repetition, `n` bytes per stream: (elapsed ns, total confirmed).
    fn rep(&self, ctx: &Ctx, n: u64) -> Result<(f64, Confirmed), String> {
        let clock = ctx.clock();
        let t0 = clock.start();
        for c in &self.cmds {
            c.send(n).map_err(|_| "a stream worker died".to_string())?;
        }
        let mut total = Confirmed::default();
        for _ in &self.cmds {
            let c = self
                .done
                .recv()
                .map_err(|_| "a stream worker died".to_string())??;
            total.bytes += c.bytes;
            total.bad += c.bad;
        }
        let t1 = clock.stop();
        Ok((clock.ticks_to_ns(t1.wrapping_sub(t0)), total))
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.cmds.clear();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// Observations and totals of a series of repetitions.
struct Run {
    gbps: Vec<f64>,
    per_stream: u64,
    sent: u64,
    confirmed: Confirmed,
    stopped: String,
    started: Instant,
}

/// Sizes the repetitions, then repeats until the budget is spent or the
/// median is known to the plan's precision.
fn repeat(ctx: &Ctx, w: &Workers, streams: u64) -> Result<Run, String> {
    let fixed = ctx.bytes(BYTES.key)?;
    // A repetition's length and count are amounts (more of the same
    // stream): a quick pass's, at this block's effort.
    let min_rep_ns = 20e6 * ctx.effort();
    let mut per_stream = fixed.map(|b| (b / streams).max(1)).unwrap_or(256 * 1024);
    // The first repetition pays for waking threads and growing windows:
    // sizing on it would make every repetition too short.
    w.rep(ctx, per_stream)?;
    loop {
        let (ns, c) = w.rep(ctx, per_stream)?;
        if c.bytes != per_stream * streams {
            return Err(format!(
                "warm-up: receivers confirmed {} of {} bytes",
                c.bytes,
                per_stream * streams
            ));
        }
        if fixed.is_some() || ns >= min_rep_ns || per_stream >= 1 << 30 {
            break;
        }
        per_stream *= 2;
    }
    let plan = ctx.plan();
    let min_reps = ctx.scaled(3);
    let started = Instant::now();
    let mut run = Run {
        gbps: Vec::new(),
        per_stream,
        sent: 0,
        confirmed: Confirmed::default(),
        stopped: String::new(),
        started,
    };
    loop {
        let (ns, c) = w.rep(ctx, per_stream)?;
        run.sent += per_stream * streams;
        run.confirmed.bytes += c.bytes;
        run.confirmed.bad += c.bad;
        run.gbps.push((per_stream * streams) as f64 / ns);
        let k = run.gbps.len();
        let spent = started.elapsed();
        if k >= min_reps {
            let p = Summary::of(&run.gbps).and_then(|s| s.median_relative_precision());
            if p.is_some_and(|p| p <= plan.target_precision) {
                run.stopped = "precision reached".into();
                break;
            }
            if spent >= plan.budget {
                run.stopped = "budget spent".into();
                break;
            }
        }
        // A slow link: stop at three repetitions past four budgets.
        if k >= 3 && spent >= plan.budget * 4 {
            run.stopped = "time limit (slow link)".into();
            break;
        }
    }
    Ok(run)
}

/// Pushes a run's result with its evidence.
fn push(
    ctx: &mut Ctx,
    suffix: Option<&str>,
    target: &Target,
    streams: u64,
    direction: &str,
    run: Run,
) {
    let mut r = ctx.result(suffix);
    r.set_observations(run.gbps);
    r.method = Some(super::direct_method(ctx, run.started, &run.stopped));
    label(ctx, &mut r, target);
    r.param("streams", streams);
    r.param("direction", direction);
    r.param("bytes_per_stream_per_repetition", run.per_stream);
    r.param("write_bytes", CHUNK);
    r.add_evidence(
        "bytes the receivers confirmed == bytes sent",
        run.sent.to_string(),
        run.confirmed.bytes.to_string(),
        run.sent == run.confirmed.bytes,
    );
    if direction.contains("from agent") {
        r.add_evidence(
            "sampled bytes (1 in 4096) matched the agent's pattern",
            "0 mismatches",
            format!("{} mismatches", run.confirmed.bad),
            run.confirmed.bad == 0,
        );
    }
    ctx.push(r);
}

/// Sender side of the loopback mini-protocol: `n: u64`, n bytes, then the
/// receiver's count `u64` back.
fn stream_sender<S: Read + Write + Send + 'static>(mut s: S) -> Transfer {
    let chunk = vec![0xA5u8; CHUNK];
    Box::new(move |n| {
        let io = |e: std::io::Error| e.to_string();
        s.write_all(&n.to_le_bytes()).map_err(io)?;
        let mut left = n;
        while left > 0 {
            let k = left.min(CHUNK as u64) as usize;
            s.write_all(&chunk[..k]).map_err(io)?;
            left -= k as u64;
        }
        let mut ack = [0u8; 8];
        s.read_exact(&mut ack).map_err(io)?;
        Ok(Confirmed {
            bytes: u64::from_le_bytes(ack),
            bad: 0,
        })
    })
}

/// Receiver side: counts what arrives and confirms the count.
fn stream_receiver<S: Read + Write>(mut s: S) {
    let mut buf = vec![0u8; CHUNK];
    let mut hdr = [0u8; 8];
    while s.read_exact(&mut hdr).is_ok() {
        let n = u64::from_le_bytes(hdr);
        let mut got = 0u64;
        while got < n {
            let want = (n - got).min(CHUNK as u64) as usize;
            match s.read(&mut buf[..want]) {
                Ok(0) | Err(_) => return,
                Ok(k) => got += k as u64,
            }
        }
        if s.write_all(&got.to_le_bytes()).is_err() {
            return;
        }
    }
}

/// Loopback: `pairs` of (sender end, receiver end), receivers on the peer CPU.
fn run_local<S: Read + Write + Send + 'static>(
    ctx: &mut Ctx,
    pairs: Vec<(S, S)>,
    direction: &str,
) -> Result<(), String> {
    let streams = pairs.len() as u64;
    let mut receivers = Vec::new();
    let mut transfers = Vec::new();
    for (tx, rx) in pairs {
        receivers.push(peer::spawn(peer::cpu(ctx)?, move || stream_receiver(rx))?);
        transfers.push(stream_sender(tx));
    }
    let workers = Workers::start(transfers, ctx.cpu())?;
    let run = repeat(ctx, &workers, streams);
    drop(workers);
    for r in receivers {
        let _ = r.join();
    }
    push(ctx, None, &Target::Local, streams, direction, run?);
    Ok(())
}

fn tcp_pairs(n: usize) -> Result<Vec<(TcpStream, TcpStream)>, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    (0..n)
        .map(|_| {
            let c = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
            let (s, _) = listener.accept().map_err(|e| format!("accept: {e}"))?;
            for x in [&c, &s] {
                x.set_read_timeout(Some(AGENT_TIMEOUT))
                    .map_err(|e| e.to_string())?;
            }
            Ok((c, s))
        })
        .collect()
}

fn run_tcp(ctx: &mut Ctx, streams: usize) -> Result<(), String> {
    match Target::of(ctx.config())? {
        Target::Local => run_local(ctx, tcp_pairs(streams)?, "to peer"),
        Target::Remote { addr, token } => {
            let target = Target::Remote {
                addr: addr.clone(),
                token: token.clone(),
            };
            for (suffix, to_agent) in [("to_agent", true), ("from_agent", false)] {
                let transfers = (0..streams)
                    .map(|_| agent_transfer(&addr, &token, to_agent))
                    .collect::<Result<Vec<_>, _>>()?;
                let workers = Workers::start(transfers, ctx.cpu())?;
                let run = repeat(ctx, &workers, streams as u64)?;
                drop(workers);
                let dir = if to_agent {
                    "to agent (SINK)"
                } else {
                    "from agent (SOURCE)"
                };
                push(ctx, Some(suffix), &target, streams as u64, dir, run);
            }
            Ok(())
        }
    }
}

fn agent_transfer(addr: &str, token: &str, to_agent: bool) -> Result<Transfer, String> {
    let mut c = Client::connect(addr, token, AGENT_TIMEOUT).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; CHUNK];
    if to_agent {
        Ok(Box::new(move |n| {
            let bytes = c.sink(n, &buf).map_err(|e| e.to_string())?;
            Ok(Confirmed { bytes, bad: 0 })
        }))
    } else {
        Ok(Box::new(move |n| {
            let (bytes, bad) = c.source(n, &mut buf).map_err(|e| e.to_string())?;
            Ok(Confirmed { bytes, bad })
        }))
    }
}

fn run_tcp_n(ctx: &mut Ctx) -> Result<(), String> {
    let n = ctx.integer(STREAMS.key)?.unwrap_or(4) as usize;
    run_tcp(ctx, n)
}

fn run_unix(ctx: &mut Ctx) -> Result<(), String> {
    let (a, b) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    for x in [&a, &b] {
        x.set_read_timeout(Some(AGENT_TIMEOUT))
            .map_err(|e| e.to_string())?;
    }
    run_local(ctx, vec![(a, b)], "to peer")
}
