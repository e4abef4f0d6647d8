//! P = moving bytes through a pipe: a peer process writes 64 KiB chunks
//! as fast as the pipe takes them, and the benchmark reads them in 64 KiB
//! reads (lmbench's bw_pipe). One observation times the receipt of a
//! whole transfer (8 MiB; 2 MiB quick) and gives GB/s, GB = 10^9 bytes.
//! Same CPU: every 64 KiB (the pipe's default capacity) costs a switch to
//! the writer and back. Across CPUs: the two copy at once.
//!
//! Evidence (gating): the bytes arrived intact and in order — the writer
//! sends one 64 KiB pattern over and over, and the last read of every
//! observation is compared (untimed) with the pattern at its offset in
//! the stream — and both processes stayed on their CPUs.

use super::adapter;
use super::peer::{add_cpu_evidence, CpuShare, Peer, PeerStats, Shared};
use super::rtt::Placement;
use std::sync::atomic::Ordering;
use std::time::Instant;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Status, Unit};

pub static PIPE_BW: Benchmark = Benchmark {
    id: "ipc.bw.pipe",
    area: "ipc",
    unit: Unit::GigabytesPerSecond,
    description: "pipe bandwidth: a peer process writes 64 KiB chunks, the benchmark reads them (same CPU and across CPUs); GB = 10^9 bytes",
    adapter: adapter::NAME,
    run: run_pipe_bw,
    cold: Cold::NotMeaningful(
        "a bandwidth over many 64 KiB chunks: a rate, with no single operation to time after an eviction",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

/// Bytes per write and per read (lmbench's XFERSIZE).
pub const CHUNK: usize = 64 * 1024;

/// The writer's chunk: 8-byte words numbered from 0.
fn pattern() -> Vec<u8> {
    (0..CHUNK as u64 / 8)
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

fn run_pipe_bw(ctx: &mut Ctx) -> Result<(), String> {
    // Bytes per observation: an amount (more of the same stream).
    let bytes = ctx.scaled(2 << 20);
    for placement in [Placement::SameCpu, Placement::CrossCpu] {
        let r = match measure(ctx, placement, bytes) {
            Ok(r) => r,
            Err(why) => {
                let mut r = ctx.result(Some(placement.name()));
                r.status = Status::Skipped;
                r.reason = Some(why);
                r
            }
        };
        ctx.push(r);
    }
    Ok(())
}

/// What one placement's transfers saw.
pub struct Transfer {
    /// GB/s per observation.
    pub gbps: Vec<f64>,
    /// ns per observation.
    pub ns: Vec<f64>,
    /// Observations whose last read did not match the pattern or came up
    /// short, and reads that failed.
    pub corrupt: u64,
    pub failed: u64,
    pub checked: u64,
    /// sched_getcpu samples of the reader off its CPU, of samples taken.
    pub reader_wrong: (u64, u64),
    pub started: Instant,
}

/// A writer process pinned to `cpu`, writing the pattern into a pipe
/// until killed; returns the pipe's read end and the peer.
pub fn spawn_writer(cpu: usize, stats: &PeerStats) -> Result<(i32, Peer), String> {
    let (r, w) = adapter::pipe()?;
    let chunk = pattern();
    let peer = Peer::spawn(cpu, stats, || {
        adapter::close(r);
        let mut n = 0u64;
        loop {
            let mut done = 0;
            while done < CHUNK {
                // SAFETY: chunk is valid for CHUNK bytes.
                let k = unsafe { libc::write(w, chunk[done..].as_ptr().cast(), CHUNK - done) };
                if k <= 0 {
                    stats.errors.fetch_add(1, Ordering::Relaxed);
                    adapter::exit_now(3);
                }
                done += k as usize;
            }
            n += 1;
            stats.served.store(n, Ordering::Relaxed);
            stats.sample_cpu(n, cpu);
        }
    });
    adapter::close(w);
    match peer {
        Ok(p) => Ok((r, p)),
        Err(e) => {
            adapter::close(r);
            Err(e)
        }
    }
}

/// Reads `bytes` per observation from pipe `r` (fed by [`spawn_writer`])
/// after 3 untimed transfers, for `min_observations` observations and
/// then until `budget` is spent. `cpu` is where the reader is pinned.
pub fn read_transfers(
    clock: &yamba_core::Clock,
    r: i32,
    cpu: usize,
    bytes: usize,
    min_observations: usize,
    budget: std::time::Duration,
) -> Transfer {
    let chunk = pattern();
    let mut buf = vec![0u8; CHUNK];
    let mut offset = 0usize; // bytes read so far, mod CHUNK
    let mut t = Transfer {
        gbps: Vec::new(),
        ns: Vec::new(),
        corrupt: 0,
        failed: 0,
        checked: 0,
        reader_wrong: (0, 0),
        started: Instant::now(),
    };
    let mut one = |t: &mut Transfer, timed: bool| {
        let mut got = 0usize;
        let mut last = (0usize, 0usize); // (stream offset mod CHUNK, length) of the last read
        let t0 = clock.start();
        while got < bytes {
            let want = (bytes - got).min(CHUNK);
            // SAFETY: buf is valid for CHUNK ≥ want bytes.
            let k = unsafe { libc::read(r, buf.as_mut_ptr().cast(), want) };
            if k <= 0 {
                t.failed += 1;
                break;
            }
            last = (offset, k as usize);
            offset = (offset + k as usize) % CHUNK;
            got += k as usize;
        }
        let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0));
        // Untimed: the last read holds the pattern from its stream offset.
        let (off, len) = last;
        let intact = (0..len).all(|i| buf[i] == chunk[(off + i) % CHUNK]);
        if timed {
            t.checked += 1;
            if !intact || got < bytes {
                t.corrupt += 1;
            }
            t.ns.push(ns);
            t.gbps.push(bytes as f64 / ns);
            t.reader_wrong.1 += 1;
            if yamba_core::affinity::current_cpu() != Some(cpu) {
                t.reader_wrong.0 += 1;
            }
        }
    };
    for _ in 0..3 {
        one(&mut t, false);
    }
    t.started = Instant::now();
    while t.ns.len() < min_observations || (t.started.elapsed() < budget && t.ns.len() < 100_000) {
        one(&mut t, true);
        if t.failed > 0 {
            break;
        }
    }
    t
}

fn measure(ctx: &mut Ctx, placement: Placement, bytes: usize) -> Result<BenchResult, String> {
    let cpus = placement.cpus(ctx)?;
    let stats = Shared::<PeerStats>::new_zeroed()?;
    let min_obs = ctx.scaled(10);
    let (rfd, peer) = spawn_writer(cpus.1, &stats)?;
    let share = CpuShare::start(&peer, cpus.1);
    let t = read_transfers(ctx.clock(), rfd, cpus.0, bytes, min_obs, ctx.plan().budget);
    let peer_use = share.finish();
    // Read what the writer reported before closing the read end: its next
    // write then fails (EPIPE), which is the end, not an error.
    let written = stats.served.load(Ordering::Relaxed);
    let (pw, ps) = stats.wrong();
    let errors = stats.errors.load(Ordering::Relaxed);
    drop(peer);
    adapter::close(rfd);
    let (me_wrong, me_samples) = t.reader_wrong;

    let mut r = ctx.result(Some(placement.name()));
    r.description = format!(
        "pipe bandwidth, 64 KiB writes and reads, writer {}",
        match placement {
            Placement::SameCpu => "on the reader's CPU",
            Placement::CrossCpu => "on another CPU",
        }
    );
    r.set_observations(t.gbps.clone());
    r.method = Some(ctx.direct_method(1, t.started, "budget spent"));
    r.param("placement", placement.name())
        .param("reader_cpu", cpus.0)
        .param("writer_cpu", cpus.1)
        .param("chunk_bytes", CHUNK)
        .param("bytes_per_observation", bytes)
        .param("gb", "10^9 bytes")
        .param("chunks_written", written);
    r.add_evidence(
        "the bytes arrived intact and in order (the last read of each observation matched the writer's pattern at its stream offset)",
        format!("{} observations of {bytes} bytes, 0 corrupt or short", t.checked),
        format!("{} corrupt or short, {} reads failed, {errors} writer errors", t.corrupt, t.failed),
        t.corrupt == 0 && t.failed == 0 && errors == 0 && t.checked > 0,
    );
    r.add_evidence(
        "reader and writer stayed on their pinned CPUs (sched_getcpu sampled)",
        format!("reader on {}, writer on {}", cpus.0, cpus.1),
        format!("reader {me_wrong}/{me_samples}, writer {pw}/{ps} samples elsewhere"),
        me_wrong == 0 && pw == 0 && ps > 0,
    );
    if placement == Placement::CrossCpu {
        let mean = t.ns.iter().sum::<f64>() / t.ns.len().max(1) as f64;
        add_cpu_evidence(&mut r, cpus.1, peer_use, t.ns.len() as u64, mean);
    }
    Ok(r)
}
