//! Frames, operation codes, the handshake's proofs and the small helpers
//! both ends share. See the module documentation of [`super`] for the
//! protocol itself.

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use std::io::{self, Read, Write};

/// First bytes of a HELLO payload and of its reply: protocol name and version.
pub const MAGIC: &[u8; 4] = b"YMB3";
/// The protocol version [`MAGIC`] names.
pub const VERSION: u32 = 3;
/// The first version's HELLO magic: recognised only to tell an old client
/// to upgrade (its HELLO carried the token in clear).
pub const MAGIC_V1: &[u8; 4] = b"YMB1";
/// The second version's (frames after the handshake not authenticated):
/// recognised only to tell an old client to upgrade.
pub const MAGIC_V2: &[u8; 4] = b"YMB2";
/// Bytes of a HELLO payload: magic, client nonce, client identifier.
pub const HELLO_LEN: usize = 4 + NONCE + super::session::CLIENT_ID;
/// Bytes in a frame header: op or status (1) and payload length (4).
pub const HEADER: usize = 5;
/// Bytes of each side's nonce, and of an HMAC-SHA256 proof.
pub const NONCE: usize = 32;
pub const PROOF: usize = 32;
/// Default port of `yamba serve`.
pub const DEFAULT_PORT: u16 = 7077;
/// Default bound on a frame's payload.
pub const DEFAULT_MAX_MESSAGE: u32 = 1 << 20;
/// Smallest `max_message` an agent may announce: room for any reply the
/// protocol defines besides READ and ECHO data.
pub const MIN_MAX_MESSAGE: u32 = 64;
/// Largest `max_message` either end accepts, whatever is announced: the
/// most one reply can make a client allocate.
pub const MAX_MESSAGE_CEILING: u32 = 64 << 20;
/// Longest frame either side sends before the handshake is done (HELLO,
/// its reply, AUTH, refusals).
pub const HANDSHAKE_MAX: u32 = 4096;
/// Longest reason a REFUSED or ERROR frame carries.
pub const REASON_MAX: usize = 512;
/// Longest SINK or SOURCE stream, so one request cannot occupy the agent forever.
pub const MAX_STREAM: u64 = 1 << 34;

pub const OP_HELLO: u8 = 1;
pub const OP_ECHO: u8 = 2;
pub const OP_SINK: u8 = 3;
pub const OP_SOURCE: u8 = 4;
pub const OP_STAT: u8 = 5;
pub const OP_READ: u8 = 6;
pub const OP_AUTH: u8 = 7;

pub const ST_OK: u8 = 0;
pub const ST_REFUSED: u8 = 1;
pub const ST_ERROR: u8 = 2;

/// Writes one frame with a single `write_all` (header and payload together,
/// so a small frame is one segment).
pub fn write_frame(
    w: &mut impl Write,
    code: u8,
    payload: &[u8],
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    encode_frame(code, payload, scratch)?;
    w.write_all(scratch)
}

/// One frame's bytes, in `out` (cleared first).
pub fn encode_frame(code: u8, payload: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame payload over 4 GiB"))?;
    out.clear();
    out.push(code);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(payload);
    Ok(())
}

/// Reads a frame header: (op or status, payload length). `Ok(None)` on a
/// clean end of stream before the first byte.
pub fn read_header(r: &mut impl Read) -> io::Result<Option<(u8, u32)>> {
    let mut h = [0u8; HEADER];
    let mut got = 0;
    while got < HEADER {
        match r.read(&mut h[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some(parse_header(&h)))
}

/// A header's (op or status, payload length).
pub fn parse_header(h: &[u8; HEADER]) -> (u8, u32) {
    (h[0], u32::from_le_bytes([h[1], h[2], h[3], h[4]]))
}

/// Reads exactly `len` payload bytes into `buf` (resized). Callers bound
/// `len` first: this allocates what it is told.
pub fn read_payload(r: &mut impl Read, len: u32, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.resize(len as usize, 0);
    r.read_exact(buf)
}

/// The byte at offset `i` of a SOURCE stream.
#[inline]
pub fn pattern_byte(i: u64) -> u8 {
    (i % 251) as u8
}

/// Fills `buf` with the SOURCE pattern starting at stream offset `at`.
pub fn fill_pattern(buf: &mut [u8], at: u64) {
    for (k, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(at + k as u64);
    }
}

/// Compares two byte strings in time that depends only on their lengths,
/// never on where they first differ (so a secret cannot be guessed byte by byte).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// A HELLO's payload: magic, the client's nonce, and the identifier of a
/// client holding `token` ([`super::session::client_id`]).
pub fn hello_payload(token: &[u8], client_nonce: &[u8; NONCE]) -> Vec<u8> {
    let mut p = MAGIC.to_vec();
    p.extend_from_slice(client_nonce);
    p.extend_from_slice(&super::session::client_id(token));
    p
}

/// A fresh nonce from the operating system's generator.
pub fn nonce() -> [u8; NONCE] {
    let mut n = [0u8; NONCE];
    rand::rngs::OsRng.fill_bytes(&mut n);
    n
}

/// Who proves knowledge of the token: the two proofs differ, so one side's
/// proof can never be replayed as the other's.
#[derive(Clone, Copy)]
pub enum Prover {
    Client,
    Agent,
}

/// HMAC-SHA256, keyed by the token, of both nonces (the prover's peer's
/// first): what a side sends to show it knows the token without sending it.
pub fn proof(
    token: &[u8],
    who: Prover,
    server_nonce: &[u8; NONCE],
    client_nonce: &[u8; NONCE],
) -> [u8; PROOF] {
    let mut mac = Hmac::<Sha256>::new_from_slice(token).expect("HMAC takes a key of any length");
    match who {
        Prover::Client => {
            mac.update(b"yamba-v2 client proof");
            mac.update(server_nonce);
            mac.update(client_nonce);
        }
        Prover::Agent => {
            mac.update(b"yamba-v2 agent proof");
            mac.update(client_nonce);
            mac.update(server_nonce);
        }
    }
    mac.finalize().into_bytes().into()
}

/// Whether `got` is the proof `who` should have sent (constant time).
pub fn proof_ok(
    token: &[u8],
    who: Prover,
    server_nonce: &[u8; NONCE],
    client_nonce: &[u8; NONCE],
    got: &[u8],
) -> bool {
    constant_time_eq(&proof(token, who, server_nonce, client_nonce), got)
}

/// A fresh random token: 256 bits from the operating system's generator, in hex.
pub fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Fewest bits of guessing a token given by hand must take.
pub const MIN_TOKEN_BITS: f64 = 128.0;

/// An upper estimate of the bits of guessing `token` takes: log2 of the
/// alphabet its character classes span (digits, lower case, upper case,
/// other printable) per character — no more than its distinct characters
/// allow — times its length, counted as its distinct pairs of adjacent
/// characters so that a repeated pattern (`abab…`, `0123…0123…`) counts
/// once. A generated token (64 hex digits) has about 300; `s3cret` 31.
pub fn token_bits(token: &str) -> f64 {
    let chars: Vec<char> = token.chars().collect();
    let mut classes = [false; 5];
    for &c in &chars {
        let k = if c.is_ascii_digit() {
            0
        } else if c.is_ascii_lowercase() {
            1
        } else if c.is_ascii_uppercase() {
            2
        } else if c.is_ascii_graphic() {
            3
        } else {
            4
        };
        classes[k] = true;
    }
    let sizes = [10.0, 26.0, 26.0, 32.0, 128.0];
    let alphabet: f64 = classes
        .iter()
        .zip(sizes)
        .filter(|(used, _)| **used)
        .map(|(_, n)| n)
        .sum();
    let mut distinct = chars.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let mut pairs: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    pairs.sort_unstable();
    pairs.dedup();
    let per_char = alphabet
        .max(1.0)
        .log2()
        .min((distinct.len() as f64 * 2.0).max(1.0).log2());
    let length = (pairs.len() + 1).min(chars.len()) as f64;
    length * per_char
}

/// Refuses a token a person chose that is too weak to stand guessing.
pub fn check_token_strength(token: &str) -> Result<(), String> {
    if token.is_empty() {
        return Err("the token is empty".into());
    }
    let bits = token_bits(token);
    if bits < MIN_TOKEN_BITS {
        return Err(format!(
            "the token is too weak: about {bits:.0} bits, at least {MIN_TOKEN_BITS:.0} needed \
             (e.g. `openssl rand -hex 32`; omit it and yamba serve makes one)"
        ));
    }
    Ok(())
}

/// Text received from a peer, made safe to print and bounded: control
/// characters escaped, at most `max` characters, an ellipsis when cut.
pub fn printable(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i >= max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

pub fn u64_at(p: &[u8], at: usize) -> Option<u64> {
    p.get(at..at + 8)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap()))
}

pub fn u32_at(p: &[u8], at: usize) -> Option<u32> {
    p.get(at..at + 4)
        .map(|s| u32::from_le_bytes(s.try_into().unwrap()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let mut wire = Vec::new();
        let mut s = Vec::new();
        write_frame(&mut wire, OP_ECHO, b"hello", &mut s).unwrap();
        let mut r = &wire[..];
        assert_eq!(read_header(&mut r).unwrap(), Some((OP_ECHO, 5)));
        let mut p = Vec::new();
        read_payload(&mut r, 5, &mut p).unwrap();
        assert_eq!(p, b"hello");
        assert_eq!(read_header(&mut r).unwrap(), None);
        let mut cut = &wire[..3];
        assert!(read_header(&mut cut).is_err());
    }

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn proofs_bind_the_token_both_nonces_and_the_side() {
        let (s, c) = ([1u8; NONCE], [2u8; NONCE]);
        let p = proof(b"tok", Prover::Client, &s, &c);
        assert!(proof_ok(b"tok", Prover::Client, &s, &c, &p));
        assert!(!proof_ok(b"tok", Prover::Agent, &s, &c, &p));
        assert!(!proof_ok(b"tol", Prover::Client, &s, &c, &p));
        assert!(!proof_ok(b"tok", Prover::Client, &c, &s, &p));
        assert!(!proof_ok(b"tok", Prover::Client, &s, &c, &p[..31]));
        // RFC 4231 test case 2: the crate computes HMAC-SHA256 itself.
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        let hex: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn tokens_are_random_hex_and_weak_ones_are_refused() {
        let a = random_token().unwrap();
        let b = random_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        check_token_strength(&a).unwrap();
        check_token_strength("3f9c1e77a0b24d6e8f1a2b3c4d5e6f70").unwrap();
        for weak in [
            "",
            "s3cret",
            "correct-horse-battery",
            "0123456789012345678901234567890123456789",
            "Password1Password1Password1Password1",
            &"a".repeat(200),
            &"ab".repeat(100),
        ] {
            assert!(check_token_strength(weak).is_err(), "{weak} accepted");
        }
    }

    #[test]
    fn printable_escapes_and_bounds() {
        assert_eq!(printable(b"SSH-2.0-x\r\n", 40), "SSH-2.0-x\\r\\n");
        assert_eq!(printable(&[b'a'; 100], 5), "aaaaa…");
        assert_eq!(printable(&[0xff, b'a'], 5), "\u{fffd}a");
    }
}
