//! Element ids (and the `#fragment`s that point at them) of a safe
//! alphabet, whatever name they are made from: a chart's clip path here,
//! and every id of the HTML report (yamba-report's `html::safe` re-exports
//! [`id`], so a page's ids all come from this one function).

/// Characters an id (and so a `#fragment`) may hold as they are.
fn safe_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@')
}

/// `prefix` and `name` as an id of the safe alphabet: a name already of
/// it is kept as it is (readable, stable); any other has its other
/// characters replaced by `-` and a digest of the whole name appended, so
/// two names never share an id.
pub fn id(prefix: &str, name: &str) -> String {
    let clean: String = name
        .chars()
        .take(80)
        .map(|c| if safe_char(c) { c } else { '-' })
        .collect();
    if clean == name && !name.is_empty() {
        return format!("{prefix}{clean}");
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{prefix}{clean}-{:08x}", h as u32 ^ (h >> 32) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_safe_stable_and_distinct() {
        assert_eq!(id("area-", "cpu"), "area-cpu");
        assert_eq!(id("fig-", "hist-cpu.base@hot"), "fig-hist-cpu.base@hot");
        let a = id("area-", "cpu\"><script>");
        let b = id("area-", "cpu'><script>");
        assert_ne!(a, b);
        for s in [&a, &b, &id("x", ""), &id("x", "é ü\u{0}")] {
            assert!(s.chars().all(safe_char), "{s}");
        }
    }
}
