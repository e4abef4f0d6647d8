//! Remote file read (the Plan 9 study's §3.12): the time to bring a file
//! another machine serves into memory, whole and by blocks.
//!
//! With `--remote HOST:PORT` (and the token) the file is one the agent serves
//! (`--set fs.remote.file=PATH`, relative to the agent's root; default
//! `yamba-remote.dat`). Without, the benchmark starts an agent itself on
//! loopback, in a thread pinned to another CPU, over a scratch file of known
//! content — so the number is real, and every byte can be checked. Either
//! way the result's `endpoint` param says which.

use crate::remote::protocol::random_token;
use crate::remote::{Agent, AgentHandle, Client, ServerConfig, Target, AGENT_TIMEOUT};
use crate::shared::peer::{self, PEER_CPU};
use rand::Rng;
use std::time::Instant;
use yamba_core::{Benchmark, Cold, Ctx, Kind, Series, Setting, Unit};
use yamba_stats::Summary;

/// `--set fs.remote.file`: the file read from a remote agent.
pub const FILE: Setting = Setting {
    key: "fs.remote.file",
    kind: Kind::Text,
    default: "yamba-remote.dat",
    help: "with --remote: the file to read, relative to the agent's root",
    aliases: &[],
};

/// `--set fs.remote.size`: the local agent's file.
pub const SIZE: Setting = Setting {
    key: "fs.remote.size",
    kind: Kind::Bytes {
        min: 4096,
        max: 1 << 34,
    },
    default: "16 MiB (4 MiB with --quick)",
    help: "without --remote: size of the file the loopback agent serves",
    aliases: &[],
};

pub static REMOTE_READ: Benchmark = Benchmark {
    id: "fs.remote.read",
    area: "fs",
    unit: Unit::GigabytesPerSecond,
    description: "remote file read: a whole file from a yamba agent, sequentially (loopback agent unless --remote)",
    adapter: crate::remote::NAME,
    run: run_whole,
    settings: &[FILE, SIZE, PEER_CPU],
    cold: Cold::NotMeaningful(
        "the file is served by an agent process, whose caches (remote, or on its own CPU) the client's eviction does not reach",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

pub static REMOTE_BLOCK: Benchmark = Benchmark {
    id: "fs.remote.block",
    area: "fs",
    unit: Unit::Nanoseconds,
    description:
        "remote file read by blocks: one 16 KiB block at a random offset, from a yamba agent",
    adapter: crate::remote::NAME,
    run: run_block,
    settings: &[FILE, SIZE, PEER_CPU],
    cold: Cold::NotMeaningful(
        "the file is served by an agent process, whose caches (remote, or on its own CPU) the client's eviction does not reach",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

/// The block size of random reads: the study read 16 KB at a time.
const BLOCK: u32 = 16 * 1024;
const DEFAULT_REMOTE_FILE: &str = "yamba-remote.dat";
const LOCAL_FILE: &str = "remote-read.dat";
/// A whole-file pass stops here: a huge remote file would not fit in
/// memory, nor a pass in the time budget.
const MAX_PASS: u64 = 256 << 20;

/// The content of the local scratch file at offset `i`: varies within
/// and across pages, so a misplaced block does not pass for the right one.
fn content_byte(i: u64) -> u8 {
    ((i % 251) as u8) ^ ((i >> 12) as u8).wrapping_mul(29)
}

/// The agent and file a run reads.
struct Endpoint {
    client: Client,
    path: String,
    size: u64,
    /// Bytes a whole-file pass reads: the size, up to [`MAX_PASS`].
    span: u64,
    /// Where, for the params.
    label: String,
    /// The content, where known (the local scratch file): what each pass
    /// is compared with.
    content: Option<Vec<u8>>,
    /// Keeps a local agent alive for the run.
    _agent: Option<AgentHandle>,
}

fn endpoint(ctx: &Ctx) -> Result<Endpoint, String> {
    match Target::of(ctx.config())? {
        Target::Remote { addr, token } => {
            let path = ctx
                .text(FILE.key)?
                .unwrap_or(DEFAULT_REMOTE_FILE)
                .to_string();
            let mut client =
                Client::connect(&addr, &token, AGENT_TIMEOUT).map_err(|e| e.to_string())?;
            let size = client.stat(&path).map_err(|e| {
                format!("{e} (name a file inside the agent's root with --set fs.remote.file=PATH)")
            })?;
            if size == 0 {
                return Err(format!("remote file {path:?} is empty"));
            }
            Ok(Endpoint {
                client,
                path,
                size,
                span: size.min(MAX_PASS),
                label: format!("agent at {addr}"),
                content: None,
                _agent: None,
            })
        }
        Target::Local => local_endpoint(ctx),
    }
}

/// Writes the scratch file and starts an agent over it on loopback.
fn local_endpoint(ctx: &Ctx) -> Result<Endpoint, String> {
    let default = if ctx.quick() { 4 << 20 } else { 16 << 20 };
    let size = ctx.bytes(SIZE.key)?.unwrap_or(default);
    // The file's content (kept: each pass is compared with it), then a
    // pass's buffer (up to MAX_PASS).
    crate::shared::memory::check_fits(SIZE.key, &size.to_string(), size, 2)?;
    let root = ctx.scratch_dir().join("agent-root");
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    let data: Vec<u8> = (0..size).map(content_byte).collect();
    std::fs::write(root.join(LOCAL_FILE), &data).map_err(|e| format!("scratch file: {e}"))?;
    let token = random_token().map_err(|e| format!("token: {e}"))?;
    let agent = Agent::bind(ServerConfig {
        listen: "127.0.0.1:0".into(),
        root: Some(root),
        token: token.clone(),
        log_stderr: false,
        ..ServerConfig::default()
    })?;
    let addr = agent.local_addr().map_err(|e| e.to_string())?;
    let handle = agent.spawn_on(peer::cpu(ctx)?).map_err(|e| e.to_string())?;
    let mut client =
        Client::connect(&addr.to_string(), &token, AGENT_TIMEOUT).map_err(|e| e.to_string())?;
    let stat = client.stat(LOCAL_FILE).map_err(|e| e.to_string())?;
    if stat != size {
        return Err(format!(
            "local agent reports {stat} bytes for a {size}-byte file"
        ));
    }
    Ok(Endpoint {
        client,
        path: LOCAL_FILE.into(),
        size,
        span: size.min(MAX_PASS),
        label: format!(
            "local agent at {addr} ({}); file in its page cache (just written)",
            peer::placement(ctx)
        ),
        content: Some(data),
        _agent: Some(handle),
    })
}

/// One sequential pass in requests of `req` bytes: (ns, bytes, FNV-1a hash
/// of the content, bytes that differ from the known content).
fn pass(
    ctx: &Ctx,
    ep: &mut Endpoint,
    req: u32,
    buf: &mut Vec<u8>,
) -> Result<(f64, u64, u64, u64), String> {
    buf.clear();
    let clock = ctx.clock();
    let t0 = clock.start();
    let mut off = 0u64;
    while off < ep.span {
        let got = ep
            .client
            .read(
                &ep.path,
                off,
                req.min((ep.span - off).min(u64::from(u32::MAX)) as u32),
            )
            .map_err(|e| e.to_string())?;
        if got.is_empty() {
            break;
        }
        buf.extend_from_slice(got);
        off += got.len() as u64;
    }
    let ns = clock.ticks_to_ns(clock.stop().wrapping_sub(t0));
    let hash = buf.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    // Every byte checked: one comparison with the content written (the
    // bytes are counted only when it fails).
    let wrong = match &ep.content {
        Some(c) if buf[..] != c[..buf.len()] => {
            buf.iter().zip(c).filter(|(b, c)| b != c).count() as u64
        }
        _ => 0,
    };
    Ok((ns, off, hash, wrong))
}

fn run_whole(ctx: &mut Ctx) -> Result<(), String> {
    let mut ep = endpoint(ctx)?;
    let req = ep.client.max_message().min(1 << 20);
    let mut buf = Vec::with_capacity(ep.span as usize);
    pass(ctx, &mut ep, req, &mut buf)?; // warm-up: the file in the agent's cache
    let plan = ctx.plan();
    let min_passes = ctx.scaled(3);
    let started = Instant::now();
    let (mut obs, mut hashes) = (Vec::new(), Vec::new());
    let (mut short, mut wrong) = (0u64, 0u64);
    let stopped = loop {
        let (ns, bytes, hash, bad) = pass(ctx, &mut ep, req, &mut buf)?;
        obs.push(bytes as f64 / ns);
        hashes.push(hash);
        short += u64::from(bytes != ep.span);
        wrong += bad;
        let k = obs.len();
        let precise = Summary::of(&obs)
            .and_then(|s| s.median_relative_precision())
            .is_some_and(|p| p <= plan.target_precision);
        let spent = started.elapsed();
        if k >= min_passes && precise {
            break "precision reached";
        }
        if k >= min_passes && spent >= plan.budget {
            break "budget spent";
        }
        if k >= 3 && spent >= plan.budget * 4 {
            break "time limit (slow link)";
        }
    };
    let method = ctx.direct_method(1, started, stopped);
    // Bandwidth by request size: one pass each, in the blocks that
    // measure the curve.
    let mut points = Vec::new();
    let sizes: &[u32] = if ctx.measures_curve() {
        &[4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20]
    } else {
        &[]
    };
    for &size in sizes {
        if size > ep.client.max_message() {
            continue;
        }
        let (ns, bytes, hash, bad) = pass(ctx, &mut ep, size, &mut buf)?;
        short += u64::from(bytes != ep.span);
        wrong += bad;
        hashes.push(hash);
        points.push([size as f64, bytes as f64 / ns]);
    }
    let passes = hashes.len();
    let same = hashes.iter().all(|&h| h == hashes[0]);
    let mut r = ctx.result(None);
    r.set_observations(obs);
    r.method = Some(method);
    r.param("endpoint", ep.label.clone());
    r.param("file", ep.path.clone());
    r.param("file_bytes", ep.size);
    r.param("bytes_per_pass", ep.span);
    r.param("request_bytes", req);
    r.add_evidence(
        "every pass received the whole file (at most its first 256 MiB; size from STAT)",
        format!("{passes} passes of {} bytes", ep.span),
        format!("{short} short passes"),
        short == 0,
    );
    r.add_evidence(
        "every pass received the same content (FNV-1a hash)",
        "one hash",
        format!(
            "{:016x}{}",
            hashes[0],
            if same { "" } else { " and others" }
        ),
        same,
    );
    if ep.content.is_some() {
        r.add_evidence(
            "content equals the file written (every byte checked)",
            "0 wrong bytes",
            format!("{wrong} wrong bytes"),
            wrong == 0,
        );
    }
    r.series = Some(Series {
        x_label: "request size".into(),
        x_unit: "B".into(),
        y_label: "bandwidth".into(),
        y_unit: "GB/s".into(),
        log_x: true,
        log_y: false,
        points,
    });
    ctx.push(r);
    Ok(())
}

fn run_block(ctx: &mut Ctx) -> Result<(), String> {
    let mut ep = endpoint(ctx)?;
    // The client accepts no limit under 64 bytes; never a zero block.
    let block = BLOCK.min(ep.client.max_message()).max(1);
    let blocks = (ep.size / u64::from(block)).max(1);
    let mut rng = crate::shared::process_rng();
    // Set by the untimed setup, read by the timed read.
    let offset = std::cell::Cell::new(0u64);
    let (mut reads, mut short, mut wrong) = (0u64, 0u64, 0u64);
    let mut error: Option<String> = None;
    let want = u64::from(block).min(ep.size) as usize;
    let known = ep.content.is_some();
    let path = ep.path.clone();
    let client = &mut ep.client;
    let m = ctx.measure_single(
        || offset.set(rng.gen_range(0..blocks) * u64::from(block)),
        || match client.read(&path, offset.get(), block) {
            Ok(got) => {
                let offset = offset.get();
                reads += 1;
                short += u64::from(got.len() != want);
                // Ends of the block only: checking all of it would be timed too.
                if known && !got.is_empty() {
                    let last = got.len() - 1;
                    let ok = got[0] == content_byte(offset)
                        && got[last] == content_byte(offset + last as u64);
                    wrong += u64::from(!ok);
                }
            }
            Err(e) => {
                error.get_or_insert(e.to_string());
            }
        },
    );
    if let Some(e) = error {
        return Err(format!("block read failed: {e}"));
    }
    let mut r = ctx.measured_result(None, m);
    r.param("endpoint", ep.label.clone());
    r.param("file", ep.path.clone());
    r.param("file_bytes", ep.size);
    r.param("block_bytes", block);
    r.param("offsets", "uniformly random, block-aligned");
    r.add_evidence(
        "every read returned a whole block",
        format!("{reads} blocks of {want} bytes"),
        format!("{short} short"),
        short == 0,
    );
    if known {
        r.add_evidence(
            "each block's first and last bytes are the file's at that offset",
            "0 misplaced blocks",
            format!("{wrong} misplaced"),
            wrong == 0,
        );
    }
    ctx.push(r);
    Ok(())
}
