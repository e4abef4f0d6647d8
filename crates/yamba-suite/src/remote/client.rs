//! The agent's client side, used by the `net` and `fs.remote` benchmarks.
//!
//! The client trusts the agent no more than the agent trusts it: every
//! length is checked against the limit negotiated (and a hard ceiling)
//! before anything is allocated, a peer that does not open with the
//! protocol's magic is named as not an agent at once, and the agent must
//! prove it knows the token too.

use super::protocol::*;
use super::session::{self, Handshake, Session, TAG};
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// What went wrong talking to an agent.
#[derive(Debug)]
pub enum AgentError {
    /// The transport failed.
    Io(io::Error),
    /// Nothing came back from `peer` within `secs`.
    NoAnswer { peer: String, secs: f64 },
    /// `peer` does not speak the protocol; what it sent first, printable.
    NotAgent { peer: String, first: String },
    /// The agent refused and closed the connection (wrong token, limits…).
    Refused(String),
    /// The agent could not do this request; the connection is still usable.
    Failed(String),
    /// The agent answered something this client does not accept.
    Protocol(String),
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::Io(e) => write!(f, "agent connection failed: {e}"),
            AgentError::NoAnswer { peer, secs } => {
                write!(f, "no answer from the agent at {peer} within {secs:.0} s")
            }
            AgentError::NotAgent { peer, first } => {
                write!(f, "{peer} is not a yamba agent (it answered \"{first}\")")
            }
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
    timeout: Duration,
    /// The agent's address as the caller named it, for messages.
    peer: String,
    scratch: Vec<u8>,
    reply: Vec<u8>,
    /// The authenticated channel, once the handshake is done: every frame
    /// after it is tagged and checked (see [`super::session`]).
    session: Option<Session>,
}

impl Client {
    /// Connects and runs the handshake; a wrong token or a full agent is an
    /// [`AgentError::Refused`] with the agent's reason, a peer that is not
    /// an agent an [`AgentError::NotAgent`], never a hang (every read and
    /// write is bounded by `timeout`). Errors name `addr`.
    pub fn connect(addr: &str, token: &str, timeout: Duration) -> Result<Client, AgentError> {
        Self::connect_named(&resolve(addr)?, addr, token, timeout)
    }

    /// [`Client::connect`] to an address already resolved (so a benchmark
    /// of connection setup does not time name resolution).
    pub fn connect_to(
        target: &SocketAddr,
        token: &str,
        timeout: Duration,
    ) -> Result<Client, AgentError> {
        Self::connect_named(target, &target.to_string(), token, timeout)
    }

    fn connect_named(
        target: &SocketAddr,
        name: &str,
        token: &str,
        timeout: Duration,
    ) -> Result<Client, AgentError> {
        let s = TcpStream::connect_timeout(target, timeout).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => AgentError::Io(io::Error::new(
                e.kind(),
                format!(
                    "cannot connect to {name} within {:.0} s",
                    timeout.as_secs_f64()
                ),
            )),
            _ => AgentError::Io(io::Error::new(e.kind(), format!("{name}: {e}"))),
        })?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        s.set_nodelay(true)?;
        let mut c = Client {
            wr: s.try_clone()?,
            rd: BufReader::with_capacity(256 * 1024, s),
            max_message: HANDSHAKE_MAX,
            timeout,
            peer: name.to_string(),
            scratch: Vec::new(),
            reply: Vec::new(),
            session: None,
        };
        let client_nonce = nonce();
        let hello = hello_payload(token.as_bytes(), &client_nonce);
        // A refusal may arrive while (or instead of) the HELLO being written.
        let sent = write_frame(&mut c.wr, OP_HELLO, &hello, &mut c.scratch);
        match (sent, c.first_answer()) {
            (_, Ok(())) => {}
            (_, Err(AgentError::Refused(r))) if r.contains("bad HELLO") => {
                return Err(AgentError::Refused(format!(
                    "{r} — the agent speaks another protocol than {VERSION}: run the same yamba version on both ends"
                )))
            }
            (_, Err(e @ (AgentError::Refused(_) | AgentError::NotAgent { .. }))) => {
                return Err(e)
            }
            (Err(e), _) => return Err(c.io_error(e)),
            (Ok(()), Err(e)) => return Err(e),
        }
        if c.reply.len() != 4 + NONCE || &c.reply[..4] != MAGIC {
            return Err(c.not_agent(&c.reply.clone()));
        }
        let server_nonce: [u8; NONCE] = c.reply[4..].try_into().unwrap();
        let token = token.as_bytes();
        let mine = proof(token, Prover::Client, &server_nonce, &client_nonce);
        write_frame(&mut c.wr, OP_AUTH, &mine, &mut c.scratch).map_err(|e| c.io_error(e))?;
        c.answer()?;
        let max = u32_at(&c.reply, 0).filter(|_| c.reply.len() == 4 + PROOF);
        let Some(max) = max else {
            return Err(AgentError::Protocol(format!(
                "AUTH reply of {} bytes, expected {}",
                c.reply.len(),
                4 + PROOF
            )));
        };
        if !proof_ok(
            token,
            Prover::Agent,
            &server_nonce,
            &client_nonce,
            &c.reply[4..],
        ) {
            return Err(AgentError::Protocol(
                "the agent's proof is wrong: it does not know the token (not the agent you meant?)"
                    .into(),
            ));
        }
        if !(MIN_MAX_MESSAGE..=MAX_MESSAGE_CEILING).contains(&max) {
            return Err(AgentError::Protocol(format!(
                "the agent announced a message limit of {max} bytes; a client accepts {MIN_MAX_MESSAGE} to {MAX_MESSAGE_CEILING}"
            )));
        }
        c.max_message = max;
        c.session = Some(Session::new(
            token,
            &Handshake {
                server_nonce,
                client_nonce,
                client_id: session::client_id(token),
                max_message: max,
            },
            session::From::Client,
        ));
        Ok(c)
    }

    /// Sends one frame: tagged once the handshake is done.
    fn send(&mut self, code: u8, payload: &[u8]) -> Result<(), AgentError> {
        let r = match &mut self.session {
            Some(s) => s
                .seal(code, payload, &mut self.scratch)
                .and_then(|()| self.wr.write_all(&self.scratch)),
            None => write_frame(&mut self.wr, code, payload, &mut self.scratch),
        };
        r.map_err(|e| self.io_error(e))
    }

    /// The agent's bound on a frame's payload.
    pub fn max_message(&self) -> u32 {
        self.max_message
    }

    /// The agent's first answer: a peer that does not answer with a frame
    /// of a known status and a handshake-sized length is not an agent (an
    /// SSH or HTTP banner, random bytes).
    fn first_answer(&mut self) -> Result<(), AgentError> {
        let mut h = [0u8; HEADER];
        let mut got = 0;
        while got < HEADER {
            match self.rd.read(&mut h[got..]) {
                Ok(0) if got == 0 => {
                    return Err(AgentError::Io(io::ErrorKind::UnexpectedEof.into()))
                }
                Ok(0) => return Err(self.not_agent(&h[..got])),
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e)),
            }
        }
        let (status, len) = parse_header(&h);
        if status > ST_ERROR || len > HANDSHAKE_MAX {
            // What else it sent with it, to name it: what is already
            // buffered, never waited for.
            let mut first = h.to_vec();
            let more = self.rd.buffer();
            first.extend_from_slice(&more[..more.len().min(35)]);
            return Err(self.not_agent(&first));
        }
        self.payload(status, len)
    }

    /// Reads a reply into `self.reply`; REFUSED and ERROR become errors.
    /// A length over the negotiated limit is refused before anything is
    /// allocated.
    fn answer(&mut self) -> Result<(), AgentError> {
        let (status, len) = read_header(&mut self.rd)
            .map_err(|e| self.io_error(e))?
            .ok_or_else(|| AgentError::Io(io::ErrorKind::UnexpectedEof.into()))?;
        if status > ST_ERROR {
            return Err(AgentError::Protocol(format!("unknown status {status}")));
        }
        if len > self.max_message {
            return Err(AgentError::Protocol(format!(
                "reply of {len} bytes exceeds the limit of {}",
                self.max_message
            )));
        }
        self.payload(status, len)
    }

    fn payload(&mut self, status: u8, len: u32) -> Result<(), AgentError> {
        read_payload(&mut self.rd, len, &mut self.reply).map_err(|e| self.io_error(e))?;
        if self.session.is_some() {
            let mut tag = [0u8; TAG];
            self.rd.read_exact(&mut tag).map_err(|e| self.io_error(e))?;
            let ok = self
                .session
                .as_mut()
                .is_some_and(|s| s.open(status, &self.reply, &tag));
            if !ok {
                return Err(AgentError::Protocol(
                    "a reply failed authentication (changed, replayed or injected on the way): connection abandoned"
                        .into(),
                ));
            }
        }
        let text = || printable(&self.reply, REASON_MAX);
        match status {
            ST_OK => Ok(()),
            ST_REFUSED => Err(AgentError::Refused(text())),
            ST_ERROR => Err(AgentError::Failed(text())),
            s => Err(AgentError::Protocol(format!("unknown status {s}"))),
        }
    }

    /// Sends a raw frame (tests use it to send what a good client never would).
    pub fn request_raw(&mut self, op: u8, payload: &[u8]) -> Result<&[u8], AgentError> {
        self.send(op, payload)?;
        self.answer()?;
        Ok(&self.reply)
    }

    /// One round trip: `data` there and back. Returns the reply, which
    /// must be as long as `data`.
    pub fn echo(&mut self, data: &[u8]) -> Result<&[u8], AgentError> {
        let n = data.len();
        let r = self.request_raw(OP_ECHO, data)?;
        if r.len() != n {
            return Err(AgentError::Protocol(format!(
                "ECHO of {n} bytes came back as {}",
                r.len()
            )));
        }
        Ok(r)
    }

    /// Sends `n` bytes (repeating `chunk`); returns the count the agent received.
    pub fn sink(&mut self, n: u64, chunk: &[u8]) -> Result<u64, AgentError> {
        assert!(!chunk.is_empty());
        self.send(OP_SINK, &n.to_le_bytes())?;
        let mut left = n;
        while left > 0 {
            let k = left.min(chunk.len() as u64) as usize;
            if let Err(e) = self.wr.write_all(&chunk[..k]) {
                return Err(self.io_error(e));
            }
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
                Err(e) => return Err(self.io_error(e)),
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

    /// Reads up to `len` bytes at `offset` of a served file; short only at
    /// its end. A reply longer than asked is a protocol error.
    pub fn read(&mut self, path: &str, offset: u64, len: u32) -> Result<&[u8], AgentError> {
        let mut p = Vec::with_capacity(12 + path.len());
        p.extend_from_slice(&offset.to_le_bytes());
        p.extend_from_slice(&len.to_le_bytes());
        p.extend_from_slice(path.as_bytes());
        let r = self.request_raw(OP_READ, &p)?;
        if r.len() > len as usize {
            return Err(AgentError::Protocol(format!(
                "READ of {len} bytes answered with {}",
                r.len()
            )));
        }
        Ok(r)
    }
}

impl Client {
    /// A transport error: a timeout is the agent's silence.
    fn io_error(&self, e: io::Error) -> AgentError {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => AgentError::NoAnswer {
                peer: self.peer.clone(),
                secs: self.timeout.as_secs_f64(),
            },
            _ => AgentError::Io(e),
        }
    }

    fn not_agent(&self, first: &[u8]) -> AgentError {
        AgentError::NotAgent {
            peer: self.peer.clone(),
            first: printable(first, 40),
        }
    }
}
