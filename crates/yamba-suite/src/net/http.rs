//! P = one HTTP/1.0 GET of a file, seen from the client (lmbench's
//! lat_http against its lmhttp server): socket + connect, the request
//! written, the whole response read until the server closes, close.
//!
//! The server is a peer thread (another CPU by default, as the area's
//! other servers): it accepts, reads the request, opens the named file in
//! the scratch directory, writes a status line and headers
//! (Content-Length among them) and the file's bytes, read and written 64
//! KiB at a time, and closes. The headers go out in one write with the
//! body's first bytes, as a server that cares does: written alone (as
//! lmhttp does), the head is a segment of its own, one more for the
//! client to be woken for.
//!
//! `net.http.get.<size>`: one result per file size (`--set
//! net.http.sizes=1k,64k,1m` by default); the files hold seeded random
//! bytes, written before the clock starts and read once so they are
//! cached.
//!
//! Evidence (gating): every timed response's status line said 200, its
//! Content-Length was the file's size and the bytes received were the
//! headers plus that many; every 16th request, an untimed one between
//! timed ones, the body was compared byte for byte with the file; and
//! the server served as many requests as the client sent.
//!
//! Hot only: a cold run would evict the client's caches, not the server
//! thread's on its own CPU, and each request is a fresh connection
//! anyway.

use super::{adapter, local_only, peer, PEER_CPU};
use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Kind, Setting, Unit};

pub static HTTP_GET: Benchmark = Benchmark {
    id: "net.http.get",
    area: "net",
    unit: Unit::Nanoseconds,
    description: "HTTP/1.0 GET of a file from a local server thread: connect, request, whole response, close (lmbench's lat_http); .1k, .64k, .1m",
    adapter: adapter::NAME,
    requires: local_only,
    settings: &[SIZES, PEER_CPU],
    run: run_http,
    cold: Cold::NotMeaningful(
        "a request is served by a thread on its own CPU, whose caches the client's eviction does not reach; net.tcp.connect_close is the cold connection",
    ),
    one_copy_only: Some(crate::shared::one_copy_only::PEER_ELSEWHERE),
    ..Benchmark::TEMPLATE
};

/// The file sizes a run may ask for.
pub const SIZE_NAMES: [&str; 10] = [
    "0k", "1k", "4k", "16k", "64k", "256k", "512k", "1m", "2m", "4m",
];

/// `--set net.http.sizes`: the files' sizes, one result each.
pub const SIZES: Setting = Setting {
    key: "net.http.sizes",
    kind: Kind::List(&SIZE_NAMES),
    default: "1k,64k,1m",
    help: "sizes of the files GET fetches, one result each",
    aliases: &[],
};

const DEFAULT_SIZES: [&str; 3] = ["1k", "64k", "1m"];

/// Bytes in a size's name (`64k`, `1m`).
pub fn size_bytes(name: &str) -> Option<u64> {
    let (n, unit) = name.split_at(name.len().checked_sub(1)?);
    let n: u64 = n.parse().ok()?;
    match unit {
        "k" => Some(n << 10),
        "m" => Some(n << 20),
        _ => None,
    }
}

/// Bytes per read and write, on both sides (lmbench's XFERSIZE).
const CHUNK: usize = 64 * 1024;

/// Every connection leaves a socket in TIME_WAIT for a minute: bound the
/// requests per size so a run cannot exhaust the ephemeral ports.
const MAX_REQUESTS: usize = 600;

/// Every this many timed requests, an untimed one compares the body.
const COMPARE_EVERY: u64 = 16;

/// What a response's head said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    pub content_length: Option<u64>,
    /// Bytes of the status line and headers, the blank line included.
    pub len: usize,
}

/// The head of an HTTP/1.x response at the start of `bytes`: None until
/// the blank line that ends it has arrived (or if the status line is not
/// `HTTP/1.x NNN …`). Only what the checks need: the status and
/// Content-Length.
pub fn parse_head(bytes: &[u8]) -> Option<Head> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let text = std::str::from_utf8(&bytes[..end]).ok()?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next()?;
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next()?;
    if !version.starts_with("HTTP/1.") {
        return None;
    }
    let status = parts.next()?.parse().ok()?;
    let content_length = lines.find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse().ok())?
    });
    Some(Head {
        status,
        content_length,
        len: end,
    })
}

/// The file named by a request's first line (`GET /NAME HTTP/1.0`), if
/// it is a plain name: no directories, nothing hidden.
pub fn requested_name(request: &[u8]) -> Option<&str> {
    let line = std::str::from_utf8(request).ok()?.lines().next()?;
    let rest = line.strip_prefix("GET /")?;
    let name = rest.split(' ').next()?;
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    plain.then_some(name)
}

/// Serves one connection: reads the request, writes the named file in
/// `dir` with its head (404 if there is none). Returns the body bytes
/// written with a 200.
pub fn serve_one(s: &mut TcpStream, dir: &Path, buf: &mut [u8]) -> Result<u64, String> {
    let mut req = [0u8; 1024];
    let mut got = 0;
    while !req[..got].windows(4).any(|w| w == b"\r\n\r\n") {
        if got == req.len() {
            return Err("request longer than 1 KiB".into());
        }
        match s.read(&mut req[got..]) {
            Ok(0) => return Err("client closed before a whole request".into()),
            Ok(n) => got += n,
            Err(e) => return Err(format!("read request: {e}")),
        }
    }
    let file = requested_name(&req[..got]).and_then(|n| std::fs::File::open(dir.join(n)).ok());
    let Some(mut file) = file else {
        let _ = s.write_all(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        return Err("no such file".into());
    };
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let head = format!(
        "HTTP/1.0 200 OK\r\nServer: yamba\r\nContent-Type: application/octet-stream\r\nContent-Length: {size}\r\n\r\n"
    );
    buf[..head.len()].copy_from_slice(head.as_bytes());
    let mut fill = head.len();
    let mut sent = 0u64;
    loop {
        let n = file.read(&mut buf[fill..]).map_err(|e| e.to_string())?;
        if n == 0 && fill == 0 {
            return Ok(sent);
        }
        s.write_all(&buf[..fill + n])
            .map_err(|e| format!("write: {e}"))?;
        sent += n as u64;
        fill = 0;
        if n == 0 {
            return Ok(sent);
        }
    }
}

/// What the client saw of one response.
#[derive(Debug, Clone, Copy)]
pub struct Response {
    pub head: Option<Head>,
    /// Every byte received, head included.
    pub total: u64,
}

/// One GET: connect, write `request`, read until the server closes
/// (into `buf`, `CHUNK` at a time), close. With `body`, the body's bytes
/// are kept there too (untimed requests only).
pub fn get(
    to: SocketAddr,
    request: &[u8],
    buf: &mut [u8],
    mut body: Option<&mut Vec<u8>>,
) -> std::io::Result<Response> {
    let mut s = TcpStream::connect(to)?;
    s.write_all(request)?;
    let mut head_bytes = [0u8; 512];
    let mut head_got = 0;
    let mut head = None;
    let mut total = 0u64;
    loop {
        let n = s.read(buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        let mut body_from = 0;
        if head.is_none() {
            let take = n.min(head_bytes.len() - head_got);
            head_bytes[head_got..head_got + take].copy_from_slice(&buf[..take]);
            let before = head_got;
            head_got += take;
            head = parse_head(&head_bytes[..head_got]);
            body_from = match head {
                Some(h) => h.len - before,
                None => n,
            };
        }
        if let Some(b) = body.as_deref_mut() {
            b.extend_from_slice(&buf[body_from..n]);
        }
    }
    Ok(Response { head, total })
}

/// What one size's requests did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub sent: u64,
    pub timed: u64,
    /// Timed responses whose status, Content-Length or byte count was wrong.
    pub bad: u64,
    pub first_bad: Option<String>,
    pub compared: u64,
    pub compared_equal: u64,
}

impl Outcome {
    /// Checks one response to a file of `size` bytes.
    fn judge(&mut self, r: std::io::Result<Response>, size: u64) {
        let why = match r {
            Err(e) => Some(e.to_string()),
            Ok(Response { head: None, total }) => Some(format!("no HTTP head in {total} bytes")),
            Ok(Response {
                head: Some(h),
                total,
            }) => {
                (h.status != 200 || h.content_length != Some(size) || total != h.len as u64 + size)
                    .then(|| {
                        format!(
                        "status {}, Content-Length {:?}, {total} bytes for a {}-byte head + {size}",
                        h.status, h.content_length, h.len
                    )
                    })
            }
        };
        if let Some(w) = why {
            self.bad += 1;
            self.first_bad.get_or_insert(w);
        }
    }
}

/// The server thread: serves connections from `listener` until `stop`,
/// counting the requests answered in full with a 200.
fn serve(listener: TcpListener, dir: PathBuf, stop: &AtomicBool, served: &AtomicU64) {
    let mut buf = vec![0u8; CHUNK];
    for s in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if let Ok(mut s) = s {
            if serve_one(&mut s, &dir, &mut buf).is_ok() {
                served.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

/// Writes a file of `size` seeded random bytes; returns its contents.
fn make_file(path: &Path, size: u64, seed: u64) -> Result<Vec<u8>, String> {
    use rand::RngCore;
    let mut data = vec![0u8; size as usize];
    crate::shared::rng(seed).fill_bytes(&mut data);
    std::fs::write(path, &data).map_err(|e| format!("write {}: {e}", path.display()))?;
    Ok(data)
}

fn run_http(ctx: &mut Ctx) -> Result<(), String> {
    let names = ctx
        .list(SIZES.key)?
        .unwrap_or_else(|| DEFAULT_SIZES.to_vec());
    let dir = ctx.scratch_dir().join("http");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let size = size_bytes(name).ok_or_else(|| format!("bad size {name}"))?;
        let data = make_file(&dir.join(format!("f{name}")), size, 0x4854_5450 + i as u64)?;
        files.push((*name, size, data));
    }
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let (st, sv) = (stop.clone(), served.clone());
    let server_dir = dir.clone();
    let server = peer::spawn(peer::cpu(ctx)?, move || {
        serve(listener, server_dir, &st, &sv)
    })?;

    let mut plan = ctx.plan();
    plan.max_observations = plan.max_observations.min(MAX_REQUESTS);
    let mut results = Vec::new();
    let mut sent = 0u64;
    for (name, size, data) in &files {
        let request = format!("GET /f{name} HTTP/1.0\r\n\r\n").into_bytes();
        let o = RefCell::new(Outcome::default());
        let mut buf = vec![0u8; CHUNK];
        let mut compare_buf = vec![0u8; CHUNK];
        let mut body = Vec::with_capacity(*size as usize);
        let m = yamba_core::harness::measure_single(
            ctx.clock(),
            ctx.base_ns(),
            &plan,
            None,
            || {
                let mut o = o.borrow_mut();
                if o.timed % COMPARE_EVERY != 0 {
                    return;
                }
                body.clear();
                o.sent += 1;
                o.compared += 1;
                if let Ok(r) = get(addr, &request, &mut compare_buf, Some(&mut body)) {
                    let full = r.head.is_some_and(|h| h.status == 200);
                    o.compared_equal += u64::from(full && body == *data);
                }
            },
            || {
                let r = get(addr, &request, &mut buf, None);
                let mut o = o.borrow_mut();
                o.sent += 1;
                o.timed += 1;
                o.judge(r, *size);
            },
        );
        let o = o.into_inner();
        sent += o.sent;
        let mut r = ctx.measured_result(Some(name), m);
        super::label(ctx, &mut r, &super::Target::Local);
        r.description = format!("HTTP/1.0 GET of a {name} file ({size} bytes) from a local server thread: connect, request, whole response, close");
        r.param("file_bytes", *size)
            .param(
                "operation",
                "socket + connect + GET written + response read to end of stream + close",
            )
            .param(
                "server",
                "peer thread: accept, read request, open + read the file, head and body written 64 KiB at a time, close",
            );
        add_response_evidence(&mut r, &o, *size);
        super::warn_syn_retries(&mut r);
        results.push(r);
    }
    let n_served = stop_server(addr, sent, &served, &stop, server);
    for mut r in results {
        r.add_evidence(
            "the server served every request sent (a 200 and the whole file)",
            format!("{sent} served"),
            format!("{n_served} served"),
            n_served == sent && sent > 0,
        );
        ctx.push(r);
    }
    Ok(())
}

fn add_response_evidence(r: &mut BenchResult, o: &Outcome, size: u64) {
    r.add_evidence(
        "every response was whole: status 200, Content-Length the file's size, bytes received = head + body",
        format!("{} of {} ({size}-byte body)", o.timed, o.timed),
        match &o.first_bad {
            None => format!("{} of {}", o.timed - o.bad, o.timed),
            Some(w) => format!("{} of {} (first wrong: {w})", o.timed - o.bad, o.timed),
        },
        o.bad == 0 && o.timed > 0,
    );
    r.add_evidence(
        format!("the body was the file's bytes (compared in full, an untimed request every {COMPARE_EVERY})"),
        format!("{} of {}", o.compared, o.compared),
        format!("{} of {}", o.compared_equal, o.compared),
        o.compared > 0 && o.compared_equal == o.compared,
    );
}

/// Waits (at most 5 s) until the server has served `sent` requests, then
/// stops it with one more connection to wake its accept. Returns how
/// many it served.
fn stop_server(
    to: SocketAddr,
    sent: u64,
    served: &AtomicU64,
    stop: &AtomicBool,
    server: std::thread::JoinHandle<()>,
) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    while served.load(Ordering::SeqCst) < sent && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let n = served.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    let _ = TcpStream::connect(to);
    let _ = server.join();
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_read_once_whole() {
        let r = b"HTTP/1.0 200 OK\r\nServer: x\r\ncontent-length:  42 \r\n\r\nbody";
        let h = parse_head(r).unwrap();
        assert_eq!(
            h,
            Head {
                status: 200,
                content_length: Some(42),
                len: r.len() - 4
            }
        );
        // Not yet whole, not HTTP, no length, a bad status.
        assert_eq!(
            parse_head(b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n"),
            None
        );
        assert_eq!(parse_head(b"SMTP/1.0 200 OK\r\n\r\n"), None);
        assert_eq!(
            parse_head(b"HTTP/1.1 404 Not Found\r\n\r\n").map(|h| (h.status, h.content_length)),
            Some((404, None))
        );
        assert_eq!(parse_head(b"HTTP/1.0 OK\r\n\r\n"), None);
    }

    #[test]
    fn only_plain_names_are_served() {
        assert_eq!(requested_name(b"GET /f1k HTTP/1.0\r\n\r\n"), Some("f1k"));
        assert_eq!(requested_name(b"GET /../etc/passwd HTTP/1.0\r\n\r\n"), None);
        assert_eq!(requested_name(b"GET /a/b HTTP/1.0\r\n\r\n"), None);
        assert_eq!(requested_name(b"POST /f1k HTTP/1.0\r\n\r\n"), None);
        assert_eq!(requested_name(b"GET / HTTP/1.0\r\n\r\n"), None);
    }

    #[test]
    fn sizes_are_named_in_kib_and_mib() {
        assert_eq!(size_bytes("0k"), Some(0));
        assert_eq!(size_bytes("64k"), Some(65_536));
        assert_eq!(size_bytes("2m"), Some(2 << 20));
        assert_eq!(size_bytes("2g"), None);
        for n in SIZE_NAMES {
            assert!(size_bytes(n).is_some(), "{n}");
        }
    }

    /// Ground truth: a file of known bytes, served and fetched whole, for
    /// sizes around the 64 KiB chunk and its head; a missing file is a 404.
    #[test]
    fn a_served_file_arrives_whole() {
        let dir = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, served) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
        );
        let (st, sv, d) = (stop.clone(), served.clone(), dir.path().to_path_buf());
        let server = std::thread::spawn(move || serve(listener, d, &st, &sv));
        let mut buf = vec![0u8; CHUNK];
        let sizes = [
            0u64,
            1,
            1000,
            CHUNK as u64 - 100,
            CHUNK as u64,
            3 * CHUNK as u64 + 7,
        ];
        for (i, &size) in sizes.iter().enumerate() {
            let data = make_file(&dir.path().join(format!("f{i}")), size, i as u64).unwrap();
            let req = format!("GET /f{i} HTTP/1.0\r\n\r\n");
            let mut body = Vec::new();
            let r = get(addr, req.as_bytes(), &mut buf, Some(&mut body)).unwrap();
            let h = r.head.unwrap();
            assert_eq!((h.status, h.content_length), (200, Some(size)));
            assert_eq!(r.total, h.len as u64 + size);
            assert!(body == data, "size {size}");
            let mut o = Outcome::default();
            o.judge(Ok(r), size);
            o.judge(Ok(r), size + 1);
            assert_eq!(o.bad, 1, "a wrong size is caught");
        }
        let r = get(addr, b"GET /nothing HTTP/1.0\r\n\r\n", &mut buf, None).unwrap();
        assert_eq!(r.head.unwrap().status, 404);
        assert_eq!(
            stop_server(addr, sizes.len() as u64, &served, &stop, server),
            sizes.len() as u64,
            "the 404 is not counted as served"
        );
    }
}
