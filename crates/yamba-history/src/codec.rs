//! How stored JSON is packed (zstd) and how a stored file is recognised
//! when it comes again (a 64-bit FNV-1a digest of what is stored).

/// zstd level for stored runs: the observations' digits are most of a
/// run, and they compress about as well at 6 as at 19, many times faster.
pub const LEVEL: i32 = 6;

pub fn pack(bytes: &[u8]) -> Result<Vec<u8>, String> {
    zstd::bulk::compress(bytes, LEVEL).map_err(|e| format!("cannot compress: {e}"))
}

/// Unpacks what [`pack`] packed, as UTF-8 text.
/// At most the results-file size limit ([`yamba_results::Limits`]) is
/// decompressed: a damaged or hostile store is no zstd bomb.
pub fn unpack_text(bytes: &[u8]) -> Result<String, String> {
    use std::io::Read;
    let max = yamba_results::Limits::from_env()?.max_bytes;
    let dec =
        zstd::stream::read::Decoder::new(bytes).map_err(|e| format!("cannot decompress: {e}"))?;
    let mut raw = Vec::new();
    dec.take(max + 1)
        .read_to_end(&mut raw)
        .map_err(|e| format!("cannot decompress: {e}"))?;
    if raw.len() as u64 > max {
        return Err(yamba_results::LimitExceeded::Bytes(max).to_string());
    }
    String::from_utf8(raw).map_err(|e| format!("not UTF-8: {e}"))
}

/// FNV-1a, 64 bits: enough to tell whether a file was stored before.
pub struct Fnv(u64);

impl Fnv {
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Fnv::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_the_published_vectors() {
        let h = |s: &str| {
            let mut f = Fnv::new();
            f.update(s.as_bytes());
            f.hex()
        };
        assert_eq!(h(""), "cbf29ce484222325");
        assert_eq!(h("a"), "af63dc4c8601ec8c");
        assert_eq!(h("foobar"), "85944171f73967e8");
    }

    #[test]
    fn packing_round_trips() {
        let text = "{\"observations\":[81.43672839123456,81.5]}".repeat(100);
        let packed = pack(text.as_bytes()).unwrap();
        assert!(packed.len() < text.len() / 10);
        assert_eq!(unpack_text(&packed).unwrap(), text);
        assert!(unpack_text(b"not zstd").is_err());
    }
}
