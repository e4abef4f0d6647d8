//! Making strings from a results file safe in the page, per context.
//!
//! A results file is data from anywhere: every string of it is escaped
//! for where it goes. Text and quoted attribute values go through
//! [`yamba_plot::svg::escape`] (`& < > " '` as entities, control
//! characters dropped); ids and the URL fragments that point at them are
//! [`id`]s (yamba-plot's, which its charts' clip paths are too), of a
//! safe alphabet only; the page carries no inline event handler, no URL
//! but `#fragment`s, and its one script and one style element are static
//! (no data from a file is ever put inside them), each allowed by its hash
//! in a strict Content-Security-Policy ([`csp`]).

use sha2::{Digest, Sha256};

pub use yamba_plot::ids::id;

/// Base64 of `bytes` (RFC 4648, with padding), for CSP hashes.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `'sha256-…'` of an inline element's exact text, as CSP names it.
fn hash(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The page's policy: nothing may load or run but the one script and the
/// one style whose texts are given (by hash), images only as `data:`;
/// no base URL, no form, no plug-in.
pub fn csp(script: &str, style: &str) -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'; object-src 'none'",
        hash(script),
        hash(style)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_hashes_match_known_values() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        // The hash CSP documents for `alert('Hello, world.');`.
        assert_eq!(
            hash("alert('Hello, world.');"),
            "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='"
        );
    }
}
