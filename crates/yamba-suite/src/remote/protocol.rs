//! Frames, operation codes and the small helpers both ends share.
//! See the module documentation of [`super`] for the protocol itself.

use std::io::{self, Read, Write};

/// First bytes of a HELLO payload: protocol name and version.
pub const MAGIC: &[u8; 4] = b"YMB1";
/// Bytes in a frame header: op or status (1) and payload length (4).
pub const HEADER: usize = 5;
/// Default port of `yamba serve`.
pub const DEFAULT_PORT: u16 = 7077;
/// Default bound on a frame's payload.
pub const DEFAULT_MAX_MESSAGE: u32 = 1 << 20;
/// Longest SINK or SOURCE stream, so one request cannot occupy the agent forever.
pub const MAX_STREAM: u64 = 1 << 34;

pub const OP_HELLO: u8 = 1;
pub const OP_ECHO: u8 = 2;
pub const OP_SINK: u8 = 3;
pub const OP_SOURCE: u8 = 4;
pub const OP_STAT: u8 = 5;
pub const OP_READ: u8 = 6;

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
    let len = u32::try_from(payload.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame payload over 4 GiB"))?;
    scratch.clear();
    scratch.push(code);
    scratch.extend_from_slice(&len.to_le_bytes());
    scratch.extend_from_slice(payload);
    w.write_all(scratch)
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
    Ok(Some((h[0], u32::from_le_bytes([h[1], h[2], h[3], h[4]]))))
}

/// Reads exactly `len` payload bytes into `buf` (resized).
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
/// never on where they first differ (so a token cannot be guessed byte by byte).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let mut diff = (a.len() ^ b.len()) as u64;
    for i in 0..n {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= u64::from(std::hint::black_box(x ^ y));
    }
    diff == 0
}

/// A fresh random token: 128 bits from the operating system's generator, in hex.
pub fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
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
    fn tokens_are_random_hex() {
        let a = random_token().unwrap();
        let b = random_token().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
