//! The agent's client side, used by the `net` and `fs.remote` benchmarks.

use super::protocol::*;
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// What went wrong talking to an agent.
#[derive(Debug)]
pub enum AgentError {
    /// The transport failed (or timed out).
    Io(io::Error),
    /// The agent refused and closed the connection (wrong token, limits…).
    Refused(String),
    /// The agent could not do this request; the connection is still usable.
    Failed(String),
    /// The agent answered something this client does not understand.
    Protocol(String),
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::Io(e) => write!(f, "agent connection failed: {e}"),
            AgentError::Refused(r) => write!(f, "agent refused: {r}"),
            AgentError::Failed(r) => write!(f, "agent request failed: {r}"),
            AgentError::Protocol(r) => write!(f, "agent protocol error: {r}"),
        }
    }
}

impl std::error::Error for AgentError {}

impl From<io::Error> for AgentError {
    fn from(e: io::Error) -> Self {
        AgentError::Io(e)
    }
}

/// The first address `addr` (HOST:PORT) resolves to.
pub fn resolve(addr: &str) -> Result<SocketAddr, AgentError> {
    addr.to_socket_addrs()
        .map_err(|e| AgentError::Protocol(format!("bad agent address {addr:?}: {e}")))?
        .next()
        .ok_or_else(|| AgentError::Protocol(format!("agent address {addr:?} resolves to nothing")))
}

/// An authenticated connection to an agent.
pub struct Client {
    rd: BufReader<TcpStream>,
    wr: TcpStream,
    max_message: u32,
    scratch: Vec<u8>,
    reply: Vec<u8>,
}

impl Client {
    /// Connects and says HELLO; a wrong token or a full agent is an
    /// [`AgentError::Refused`] with the agent's reason, never a hang
    /// (every read and write is bounded by `timeout`).
    pub fn connect(addr: &str, token: &str, timeout: Duration) -> Result<Client, AgentError> {
        Self::connect_to(&resolve(addr)?, token, timeout)
    }

    /// [`Client::connect`] to an address already resolved (so a benchmark
    /// of connection setup does not time name resolution).
    pub fn connect_to(
        target: &SocketAddr,
        token: &str,
        timeout: Duration,
    ) -> Result<Client, AgentError> {
        let s = TcpStream::connect_timeout(target, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        s.set_nodelay(true)?;
        let mut c = Client {
            wr: s.try_clone()?,
            rd: BufReader::with_capacity(256 * 1024, s),
            max_message: 0,
            scratch: Vec::new(),
            reply: Vec::new(),
        };
        let mut hello = MAGIC.to_vec();
        hello.extend_from_slice(token.as_bytes());
        // A refusal may arrive while (or instead of) the HELLO being written.
        let sent = write_frame(&mut c.wr, OP_HELLO, &hello, &mut c.scratch);
        let answer = c.answer();
        match (sent, answer) {
            (_, Ok(())) => {}
            (_, Err(AgentError::Refused(r))) => return Err(AgentError::Refused(r)),
            (Err(e), _) => return Err(AgentError::Io(e)),
            (Ok(()), Err(e)) => return Err(e),
        }
        c.max_message =
            u32_at(&c.reply, 0).ok_or_else(|| AgentError::Protocol("short HELLO reply".into()))?;
        Ok(c)
    }

    /// The agent's bound on a frame's payload.
    pub fn max_message(&self) -> u32 {
        self.max_message
    }

    /// Reads a reply into `self.reply`; REFUSED and ERROR become errors.
    fn answer(&mut self) -> Result<(), AgentError> {
        let (status, len) = read_header(&mut self.rd)?
            .ok_or_else(|| AgentError::Io(io::ErrorKind::UnexpectedEof.into()))?;
        read_payload(&mut self.rd, len, &mut self.reply)?;
        let text = || String::from_utf8_lossy(&self.reply).into_owned();
        match status {
            ST_OK => Ok(()),
            ST_REFUSED => Err(AgentError::Refused(text())),
            ST_ERROR => Err(AgentError::Failed(text())),
            s => Err(AgentError::Protocol(format!("unknown status {s}"))),
        }
    }

    /// Sends a raw frame (tests use it to send what a good client never would).
    pub fn request_raw(&mut self, op: u8, payload: &[u8]) -> Result<&[u8], AgentError> {
        write_frame(&mut self.wr, op, payload, &mut self.scratch)?;
        self.answer()?;
        Ok(&self.reply)
    }

    /// One round trip: `data` there and back. Returns the reply.
    pub fn echo(&mut self, data: &[u8]) -> Result<&[u8], AgentError> {
        self.request_raw(OP_ECHO, data)
    }

    /// Sends `n` bytes (repeating `chunk`); returns the count the agent received.
    pub fn sink(&mut self, n: u64, chunk: &[u8]) -> Result<u64, AgentError> {
        assert!(!chunk.is_empty());
        write_frame(&mut self.wr, OP_SINK, &n.to_le_bytes(), &mut self.scratch)?;
        let mut left = n;
        while left > 0 {
            let k = left.min(chunk.len() as u64) as usize;
            self.wr.write_all(&chunk[..k])?;
            left -= k as u64;
        }
        self.answer()?;
        u64_at(&self.reply, 0).ok_or_else(|| AgentError::Protocol("short SINK reply".into()))
    }

    /// Receives `n` bytes into `buf` (reused). Returns (bytes received,
    /// sampled bytes that broke the pattern). One byte in 4096 is checked
    /// so checking does not limit the bandwidth measured.
    pub fn source(&mut self, n: u64, buf: &mut [u8]) -> Result<(u64, u64), AgentError> {
        self.request_raw(OP_SOURCE, &n.to_le_bytes())?;
        let announced = u64_at(&self.reply, 0).unwrap_or(u64::MAX);
        if announced != n {
            return Err(AgentError::Protocol(format!(
                "SOURCE announced {announced} bytes, asked {n}"
            )));
        }
        let (mut got, mut bad) = (0u64, 0u64);
        while got < n {
            let want = (n - got).min(buf.len() as u64) as usize;
            let k = match self.rd.read(&mut buf[..want]) {
                Ok(0) => break,
                Ok(k) => k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            let first = (got + 4095) & !4095;
            let mut at = first;
            while at < got + k as u64 {
                bad += u64::from(buf[(at - got) as usize] != pattern_byte(at));
                at += 4096;
            }
            got += k as u64;
        }
        Ok((got, bad))
    }

    /// Size of a file the agent serves.
    pub fn stat(&mut self, path: &str) -> Result<u64, AgentError> {
        self.request_raw(OP_STAT, path.as_bytes())?;
        u64_at(&self.reply, 0).ok_or_else(|| AgentError::Protocol("short STAT reply".into()))
    }

    /// Reads up to `len` bytes at `offset` of a served file; short only at its end.
    pub fn read(&mut self, path: &str, offset: u64, len: u32) -> Result<&[u8], AgentError> {
        let mut p = Vec::with_capacity(12 + path.len());
        p.extend_from_slice(&offset.to_le_bytes());
        p.extend_from_slice(&len.to_le_bytes());
        p.extend_from_slice(path.as_bytes());
        self.request_raw(OP_READ, &p)
    }
}
