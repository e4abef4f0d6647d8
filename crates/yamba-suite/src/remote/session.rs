//! The authenticated channel after the handshake: a session key derived
//! from the token and both nonces, and an HMAC-SHA256 tag on every frame,
//! over its direction, its sequence number, its header and its payload.
//!
//! A relay that passed the handshake through knows neither the token nor
//! the key, so it cannot add a frame of its own (its tag would be wrong),
//! change one, replay one (the sequence number moved on) or swap two; each
//! end closes the connection at the first frame that fails. The bulk bytes
//! of a SINK or SOURCE stream, which carry no information (a known pattern
//! one way, discarded bytes the other), are not tagged; the frames that
//! announce and acknowledge them are.

use super::protocol::{encode_frame, NONCE};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes of a frame's tag (a full HMAC-SHA256).
pub const TAG: usize = 32;

/// Which end a frame comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum From {
    Client,
    Agent,
}

impl From {
    fn label(self) -> &'static [u8] {
        match self {
            From::Client => b"yamba-v3 frame client->agent",
            From::Agent => b"yamba-v3 frame agent->client",
        }
    }
}

/// One end of an authenticated connection: the key and the next sequence
/// number each way.
pub struct Session {
    mac: Hmac<Sha256>,
    me: From,
    sent: u64,
    received: u64,
}

impl Session {
    /// The session of a connection whose handshake exchanged these nonces
    /// under `token`, as seen by `me`.
    pub fn new(token: &[u8], h: &Handshake, me: From) -> Session {
        let key = session_key(token, h);
        Session {
            mac: Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes a key of any length"),
            me,
            sent: 0,
            received: 0,
        }
    }

    fn tag(&self, from: From, seq: u64, code: u8, payload: &[u8]) -> [u8; TAG] {
        let mut m = self.mac.clone();
        m.update(from.label());
        m.update(&seq.to_le_bytes());
        m.update(&[code]);
        m.update(&(payload.len() as u64).to_le_bytes());
        m.update(payload);
        m.finalize().into_bytes().into()
    }

    /// A frame to send, with its tag, in `out` (cleared first).
    pub fn seal(&mut self, code: u8, payload: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
        encode_frame(code, payload, out)?;
        let t = self.tag(self.me, self.sent, code, payload);
        self.sent += 1;
        out.extend_from_slice(&t);
        Ok(())
    }

    /// Checks a received frame's tag (in time independent of where it
    /// differs); the sequence moves on only when it holds.
    pub fn open(&mut self, code: u8, payload: &[u8], tag: &[u8]) -> bool {
        let peer = match self.me {
            From::Client => From::Agent,
            From::Agent => From::Client,
        };
        let want = self.tag(peer, self.received, code, payload);
        let ok = super::protocol::constant_time_eq(&want, tag);
        if ok {
            self.received += 1;
        }
        ok
    }
}

/// What the handshake exchanged, as each end saw it: both nonces, the
/// client identifier of the HELLO and the message limit of the AUTH
/// reply. A relay that changed any of them leaves the two ends with
/// different keys, and the first frame fails.
#[derive(Clone, Copy)]
pub struct Handshake {
    pub server_nonce: [u8; NONCE],
    pub client_nonce: [u8; NONCE],
    pub client_id: [u8; CLIENT_ID],
    pub max_message: u32,
}

/// HMAC-SHA256(token, label ‖ agent nonce ‖ client nonce ‖ client id ‖
/// message limit): the key both ends derive once both proofs are made; it
/// never crosses the wire.
pub fn session_key(token: &[u8], h: &Handshake) -> [u8; 32] {
    let mut m = Hmac::<Sha256>::new_from_slice(token).expect("HMAC takes a key of any length");
    m.update(b"yamba-v3 session key");
    m.update(&h.server_nonce);
    m.update(&h.client_nonce);
    m.update(&h.client_id);
    m.update(&h.max_message.to_le_bytes());
    m.finalize().into_bytes().into()
}

/// Bytes of the client identifier a HELLO carries.
pub const CLIENT_ID: usize = 16;

/// The identifier every client holding `token` sends in its HELLO:
/// HMAC(token, label), cut to 16 bytes. It proves nothing by itself (a
/// party that saw it on the wire can repeat it), but one who never saw it
/// cannot make it, so the agent's limits on failed authentications and
/// unauthenticated connections, which an attacker on the same host can
/// exhaust, never apply to a handshake that carries it.
pub fn client_id(token: &[u8]) -> [u8; CLIENT_ID] {
    let mut m = Hmac::<Sha256>::new_from_slice(token).expect("HMAC takes a key of any length");
    m.update(b"yamba-v3 client id");
    let full = m.finalize().into_bytes();
    full[..CLIENT_ID].try_into().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_bound_to_key_direction_and_sequence() {
        let h = Handshake {
            server_nonce: [1u8; NONCE],
            client_nonce: [2u8; NONCE],
            client_id: client_id(b"tok"),
            max_message: 1 << 20,
        };
        let mut client = Session::new(b"tok", &h, From::Client);
        let mut agent = Session::new(b"tok", &h, From::Agent);
        let mut wire = Vec::new();
        client.seal(5, b"path", &mut wire).unwrap();
        let tag = &wire[wire.len() - TAG..];
        // A replay, a frame of the other direction, a changed payload, a
        // wrong key: all refused; the right one once.
        assert!(!agent.open(5, b"patH", tag));
        assert!(!agent.open(6, b"path", tag));
        assert!(agent.open(5, b"path", tag));
        assert!(!agent.open(5, b"path", tag), "replayed");
        let mut back = Vec::new();
        agent.seal(0, b"ok", &mut back).unwrap();
        assert!(
            !agent.open(0, b"ok", &back[back.len() - TAG..]),
            "reflected"
        );
        assert!(client.open(0, b"ok", &back[back.len() - TAG..]));
        let mut other = Session::new(b"tol", &h, From::Agent);
        let changed = Handshake {
            max_message: 64,
            ..h
        };
        assert_ne!(session_key(b"tok", &h), session_key(b"tok", &changed));
        let mut w2 = Vec::new();
        client.seal(5, b"x", &mut w2).unwrap();
        assert!(!other.open(5, b"x", &w2[w2.len() - TAG..]));
        assert_ne!(client_id(b"tok"), client_id(b"tol"));
    }
}
