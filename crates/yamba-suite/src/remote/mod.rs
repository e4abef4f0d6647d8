//! The remote-measurement agent (`yamba serve`) and its client.
//!
//! The agent lets the `net` and `fs.remote` benchmarks measure against
//! another host. It is deliberately not an open door: it answers only
//! clients that prove they know its token, serves only regular files inside
//! its root (see [`paths`] for what that means), never writes, and bounds
//! message sizes, connections, handshakes and idle time. Every refusal is
//! logged on stderr, one line with the peer and the reason.
//!
//! # Protocol (version 3, TCP, little-endian)
//!
//! Every request is a frame `op: u8, len: u32, payload[len]`; every reply is
//! `status: u8, len: u32, payload[len]`. Status 0 is OK; 1 is REFUSED (a
//! UTF-8 reason of at most 512 characters follows and the agent closes the
//! connection); 2 is ERROR (a bounded reason follows and the connection
//! stays usable). `len` may not exceed the agent's `max_message`; a larger
//! frame is refused. The client checks every reply's length against the
//! same limit, and a hard ceiling, before it allocates anything.
//!
//! The handshake proves knowledge of the token without sending it
//! (HMAC-SHA256 keyed by the token, over both sides' random nonces), both
//! ways, so a client also knows it reached the agent it meant:
//!
//! | op | name   | payload                              | OK reply payload, then                 |
//! |----|--------|--------------------------------------|----------------------------------------|
//! | 1  | HELLO  | `"YMB3"` + client nonce (32 bytes) + client id (16 bytes) | `"YMB3"` + agent nonce (32 bytes) |
//! | 7  | AUTH   | HMAC(token, "yamba-v2 client proof" ‖ agent nonce ‖ client nonce) | `max_message: u32` + HMAC(token, "yamba-v2 agent proof" ‖ client nonce ‖ agent nonce) |
//! | 2  | ECHO   | n bytes                              | the same n bytes                       |
//! | 3  | SINK   | `n: u64`, then n raw bytes follow    | `received: u64` (after the n bytes)    |
//! | 4  | SOURCE | `n: u64`                             | `n: u64`, then n raw pattern bytes     |
//! | 5  | STAT   | relative path (UTF-8)                | `size: u64`                            |
//! | 6  | READ   | `offset: u64, len: u32`, path        | the bytes read (short only at EOF)     |
//!
//! Every frame after the handshake, both ways, carries a 32-byte tag after
//! its payload: HMAC-SHA256 under a session key, over its direction, its
//! sequence number (counted from 0 each way), its op or status and its
//! payload ([`session`]). The key is HMAC(token, label ‖ agent nonce ‖
//! client nonce ‖ client id ‖ max_message): it never crosses the wire, it
//! is new for every connection, and a relay that changed anything in the
//! handshake leaves the two ends with different keys. So a relay between
//! client and agent can neither add a request of its own, nor change,
//! replay, drop or reorder one: the first frame that fails its tag ends the
//! connection ("failed authentication"), on either side. The raw bytes of
//! a SINK or SOURCE stream are not tagged (a known pattern one way,
//! discarded bytes the other; the frames around them are).
//!
//! The client id is HMAC(token, "yamba-v3 client id") cut to 16 bytes: it
//! proves nothing (it is the same on every connection), but it cannot be
//! made without the token or a look at the wire, and the limits a local
//! attacker can exhaust — the lock-out after failed authentications and
//! the eviction of unauthenticated connections — never apply to a HELLO
//! that carries it. docs/threat-model.md says who can reach the agent and
//! what each can do.
//!
//! HELLO and AUTH must come first and arrive whole within the agent's
//! `auth_timeout` (3 s by default): a client dribbling bytes, or saying
//! nothing, cannot hold anything for long without the token. Handshakes
//! run in one thread without blocking, bounded per address (all of
//! loopback counts as one) and in all; only authenticated clients take one
//! of the `max_connections` serving slots; an address that keeps failing
//! authentication is turned away for a while unless it shows the client
//! id (see [`server`]). A version 1 or 2 client is refused with a message
//! saying to use the same version on both ends.
//! A READ longer than `max_message` fails with ERROR. SINK and SOURCE
//! streams are bounded by [`protocol::MAX_STREAM`]. SOURCE bytes follow
//! [`protocol::pattern_byte`] so the client can check what arrived.
//! A test-only option makes the agent spin a known time on the calibrated
//! clock before each reply: the ground truth of the round-trip tests.

mod adapter;
pub mod client;
mod conn;
pub mod paths;
pub mod protocol;
pub mod server;
pub mod session;
pub mod token;

pub use client::{AgentError, Client};
pub use server::{raise_fd_limit, Agent, AgentHandle, ServerConfig};

use std::time::Duration;
use yamba_core::RunConfig;

/// The platform adapter's name, for the benchmarks that talk to an agent.
pub use adapter::NAME;

/// Longest any single read or write may block when talking to an agent.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the other end of a `net` or `fs.remote` benchmark is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A peer thread in this process, over loopback.
    Local,
    /// A `yamba serve` agent.
    Remote { addr: String, token: String },
}

impl Target {
    /// The run's target: `--remote` (which then needs the token) or loopback.
    pub fn of(config: &RunConfig) -> Result<Target, String> {
        match (&config.remote, &config.remote_token) {
            (None, _) => Ok(Target::Local),
            (Some(addr), Some(token)) => Ok(Target::Remote {
                addr: addr.clone(),
                token: token.clone(),
            }),
            (Some(addr), None) => Err(format!(
                "--remote {addr} needs the agent's token: {}=… or --token-file FILE (see yamba serve --help)",
                token::TOKEN_ENV
            )),
        }
    }

    /// How the result's params name the endpoint.
    pub fn label(&self) -> String {
        match self {
            Target::Local => "loopback (peer thread)".into(),
            Target::Remote { addr, .. } => format!("agent at {addr}"),
        }
    }
}
