//! One authenticated connection of the agent (the gate in [`super::server`]
//! ran its handshake): requests until the client leaves, idles too long or
//! breaks a rule.

use super::paths::{open_confined, shown};
use super::protocol::*;
use super::server::{bounded, Shared};
use super::session::{Session, TAG};
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// Sends a REFUSED frame and closes gracefully: stop writing, then drain
/// what the peer already sent (briefly), so the close is a FIN the client
/// can read the reason before, not a reset that loses it.
pub(super) fn refuse(
    mut s: TcpStream,
    reason: &str,
    drain_for: Duration,
    session: Option<&mut Session>,
) {
    let mut scratch = Vec::new();
    let _ = s.set_write_timeout(Some(Duration::from_millis(200)));
    let reason = bounded(reason);
    let framed = match session {
        Some(se) => se.seal(ST_REFUSED, reason.as_bytes(), &mut scratch),
        None => encode_frame(ST_REFUSED, reason.as_bytes(), &mut scratch),
    };
    if framed.is_ok() {
        let _ = s.write_all(&scratch);
    }
    let _ = s.shutdown(Shutdown::Write);
    let end = Instant::now() + drain_for;
    let mut sink = [0u8; 16 * 1024];
    let mut drained = 0usize;
    while Instant::now() < end && drained < (4 << 20) {
        let left = end
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        let _ = s.set_read_timeout(Some(left));
        match s.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(k) => drained += k,
        }
    }
}

/// One client connection.
pub(super) struct Conn<'a> {
    rd: BufReader<TcpStream>,
    wr: TcpStream,
    peer: SocketAddr,
    sh: &'a Shared,
    payload: Vec<u8>,
    out: Vec<u8>,
    scratch: Vec<u8>,
    /// The last file opened, by the path it was requested under.
    open: Option<(String, File)>,
    /// The authenticated channel: every frame is checked, every reply tagged.
    session: Session,
}

/// Why a connection ends.
enum End {
    /// The peer closed, or the transport failed: nothing to say.
    Quiet,
    /// Refused: tell the peer and log it.
    Refuse(String),
}

impl<'a> Conn<'a> {
    pub(super) fn new(
        stream: TcpStream,
        peer: SocketAddr,
        sh: &'a Shared,
        session: Session,
    ) -> io::Result<Conn<'a>> {
        let idle = sh.cfg.idle_timeout;
        stream.set_read_timeout(Some(idle))?;
        stream.set_write_timeout(Some(idle))?;
        stream.set_nodelay(true)?;
        let wr = stream.try_clone()?;
        Ok(Conn {
            rd: BufReader::with_capacity(256 * 1024, stream),
            wr,
            peer,
            sh,
            payload: Vec::new(),
            out: Vec::new(),
            scratch: Vec::new(),
            open: None,
            session,
        })
    }

    pub(super) fn serve(&mut self) {
        match self.session() {
            End::Quiet => {}
            End::Refuse(reason) => {
                self.sh.refuse_log(self.peer, &reason);
                if let Ok(s) = self.wr.try_clone() {
                    refuse(
                        s,
                        &reason,
                        Duration::from_millis(200),
                        Some(&mut self.session),
                    );
                }
            }
        }
    }

    /// Reads the next frame; an idle timeout or oversized frame is a refusal.
    fn next_frame(&mut self) -> Result<Option<u8>, End> {
        let idle = self.sh.cfg.idle_timeout;
        let (op, len) = match read_header(&mut self.rd) {
            Ok(Some(h)) => h,
            Ok(None) => return Ok(None),
            Err(e) => return Err(io_end(e, idle)),
        };
        let max = self.sh.cfg.max_message;
        if len > max {
            return Err(End::Refuse(format!(
                "message of {len} bytes exceeds the limit of {max}"
            )));
        }
        read_payload(&mut self.rd, len, &mut self.payload).map_err(|e| io_end(e, idle))?;
        let mut tag = [0u8; TAG];
        self.rd.read_exact(&mut tag).map_err(|e| io_end(e, idle))?;
        if !self.session.open(op, &self.payload, &tag) {
            return Err(End::Refuse(
                "a frame failed authentication (injected, changed, replayed or reordered on the way): session closed"
                    .into(),
            ));
        }
        Ok(Some(op))
    }

    fn session(&mut self) -> End {
        loop {
            let op = match self.next_frame() {
                Ok(Some(op)) => op,
                Ok(None) => return End::Quiet,
                Err(e) => return e,
            };
            let done = match op {
                OP_ECHO => {
                    self.sh.delay();
                    let p = std::mem::take(&mut self.payload);
                    let r = self.reply(ST_OK, &p);
                    self.payload = p;
                    r
                }
                OP_SINK => self.sink(),
                OP_SOURCE => self.source(),
                OP_STAT => self.stat(),
                OP_READ => self.read(),
                OP_HELLO | OP_AUTH => Err(End::Refuse("second handshake".into())),
                other => Err(End::Refuse(format!("unknown operation {other}"))),
            };
            if let Err(e) = done {
                return e;
            }
        }
    }

    fn reply(&mut self, status: u8, payload: &[u8]) -> Result<(), End> {
        let idle = self.sh.cfg.idle_timeout;
        self.session
            .seal(status, payload, &mut self.scratch)
            .and_then(|()| self.wr.write_all(&self.scratch))
            .map_err(|e| io_end(e, idle))
    }

    fn stream_len(&self) -> Result<u64, End> {
        match u64_at(&self.payload, 0) {
            Some(n) if n <= MAX_STREAM && self.payload.len() == 8 => Ok(n),
            Some(n) if self.payload.len() == 8 => Err(End::Refuse(format!(
                "stream of {n} bytes exceeds the limit of {MAX_STREAM}"
            ))),
            _ => Err(End::Refuse("malformed stream request".into())),
        }
    }

    fn sink(&mut self) -> Result<(), End> {
        let n = self.stream_len()?;
        let mut left = n;
        let mut buf = vec![0u8; 256 * 1024];
        while left > 0 {
            let want = left.min(buf.len() as u64) as usize;
            match self.rd.read(&mut buf[..want]) {
                Ok(0) => return Err(End::Quiet),
                Ok(k) => left -= k as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_end(e, self.sh.cfg.idle_timeout)),
            }
        }
        self.sh.delay();
        self.reply(ST_OK, &n.to_le_bytes())
    }

    fn source(&mut self) -> Result<(), End> {
        let n = self.stream_len()?;
        self.sh.delay();
        self.reply(ST_OK, &n.to_le_bytes())?;
        // 251 is the pattern's period: a buffer of a multiple of it can be
        // sent again and again unchanged.
        let mut buf = vec![0u8; 251 * 1024];
        fill_pattern(&mut buf, 0);
        let mut left = n;
        while left > 0 {
            let k = left.min(buf.len() as u64) as usize;
            self.wr
                .write_all(&buf[..k])
                .map_err(|e| io_end(e, self.sh.cfg.idle_timeout))?;
            left -= k as u64;
        }
        Ok(())
    }

    /// The file named by `path`, reusing the one already open.
    fn file(&mut self, path: &str) -> Result<&File, String> {
        let root = self
            .sh
            .root_dir
            .as_ref()
            .ok_or("this agent serves no files (no --root)")?;
        if self.open.as_ref().map(|(p, _)| p.as_str()) != Some(path) {
            self.open = None;
            let f = open_confined(root, path)?;
            self.open = Some((path.to_string(), f));
        }
        Ok(&self.open.as_ref().unwrap().1)
    }

    /// A failed file request: logged, answered with ERROR (the reason
    /// bounded), connection kept.
    fn file_error(&mut self, why: String) -> Result<(), End> {
        let why = bounded(&why);
        self.sh.refuse_log(self.peer, &why);
        self.sh.delay();
        self.reply(ST_ERROR, why.as_bytes())
    }

    fn stat(&mut self) -> Result<(), End> {
        let path = match std::str::from_utf8(&self.payload) {
            Ok(p) => p.to_string(),
            Err(_) => return self.file_error("path is not UTF-8".into()),
        };
        let size = match self
            .file(&path)
            .and_then(|f| f.metadata().map_err(|e| e.to_string()))
        {
            Ok(m) => m.len(),
            Err(why) => return self.file_error(why),
        };
        self.sh.delay();
        self.reply(ST_OK, &size.to_le_bytes())
    }

    fn read(&mut self) -> Result<(), End> {
        let (offset, len) = match (u64_at(&self.payload, 0), u32_at(&self.payload, 8)) {
            (Some(o), Some(l)) => (o, l),
            _ => return Err(End::Refuse("malformed READ".into())),
        };
        let max = self.sh.cfg.max_message;
        if len > max {
            return self.file_error(format!("READ of {len} bytes exceeds the limit of {max}"));
        }
        if offset
            .checked_add(u64::from(len))
            .is_none_or(|end| end > i64::MAX as u64)
        {
            return self.file_error(format!("READ at offset {offset}: out of range"));
        }
        let path = match std::str::from_utf8(&self.payload[12..]) {
            Ok(p) => p.to_string(),
            Err(_) => return self.file_error("path is not UTF-8".into()),
        };
        let mut out = std::mem::take(&mut self.out);
        out.resize(len as usize, 0);
        let got = match self.file(&path) {
            Ok(f) => {
                read_full_at(f, &mut out, offset).map_err(|e| format!("read {}: {e}", shown(&path)))
            }
            Err(why) => Err(why),
        };
        let r = match got {
            Ok(k) => {
                self.sh.delay();
                self.reply(ST_OK, &out[..k])
            }
            Err(why) => self.file_error(why),
        };
        self.out = out;
        r
    }
}

/// Reads until `buf` is full or the file ends.
fn read_full_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A transport error: an idle timeout is a refusal worth logging, the rest
/// (peer gone) is not.
fn io_end(e: io::Error, idle: Duration) -> End {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            End::Refuse(format!("idle for {:.1} s", idle.as_secs_f64()))
        }
        _ => End::Quiet,
    }
}
