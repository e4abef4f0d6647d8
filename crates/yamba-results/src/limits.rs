//! Reading a results file within limits: a file is data from anywhere (a
//! colleague, a CI artefact, a history store), so what reading it costs is
//! bounded by the file's real content, never by what it claims.
//!
//! - The text is parsed as it streams (serde's typed deserialisation from
//!   a reader: no `serde_json::Value` of the whole document, no copy of
//!   the text), from the file or through the zstd decoder.
//! - At most [`Limits::max_bytes`] bytes of JSON are read (decompressed,
//!   for a `.zst`): a zstd bomb stops there.
//! - Observations (8 bytes each in memory), and every other list item,
//!   map entry and free-form JSON value (`config`, `params`, `extra`) are
//!   counted as they are parsed, against [`Limits::max_observations`] and
//!   [`Limits::max_items`], before each is stored.
//!
//! A file that exceeds a limit is refused with one line naming the limit
//! and the environment variable that raises it (see [`LimitExceeded`]).
//! Lists grow with what is actually parsed (JSON has no length prefix to
//! believe), so memory is linear in the file: measured, about 0.3 bytes
//! per byte of a real run's file, and at worst 4 bytes per byte for
//! observations written as `0,` (crates/yamba-cli/tests/security.rs).

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read};
use std::marker::PhantomData;

/// The environment variable holding [`Limits::max_bytes`] (bytes, or with
/// a K, M or G suffix: powers of 1024).
pub const ENV_SIZE: &str = "YAMBA_MAX_RESULTS_SIZE";
/// The environment variable holding [`Limits::max_observations`].
pub const ENV_OBSERVATIONS: &str = "YAMBA_MAX_OBSERVATIONS";
/// The environment variable holding [`Limits::max_items`].
pub const ENV_ITEMS: &str = "YAMBA_MAX_RESULTS_ITEMS";

/// What reading one results file may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of JSON text (after decompression).
    pub max_bytes: u64,
    /// Observations, over every result and BASE.
    pub max_observations: u64,
    /// List items, map entries and free-form JSON values other than
    /// observations, over the whole file.
    pub max_items: u64,
}

impl Default for Limits {
    /// 2 GiB of text, 64 million observations (a default-suite run holds
    /// about 5 million; `--repeat 5` 25 million), 16 million other items
    /// (a run holds about 100 000).
    fn default() -> Limits {
        Limits {
            max_bytes: 2 << 30,
            max_observations: 64_000_000,
            max_items: 16_000_000,
        }
    }
}

impl Limits {
    /// The defaults, each raised (or lowered) by its environment variable.
    pub fn from_env() -> Result<Limits, String> {
        let mut l = Limits::default();
        for (var, slot) in [
            (ENV_SIZE, &mut l.max_bytes),
            (ENV_OBSERVATIONS, &mut l.max_observations),
            (ENV_ITEMS, &mut l.max_items),
        ] {
            if let Ok(v) = std::env::var(var) {
                *slot = parse_size(&v).ok_or_else(|| {
                    format!("{var}={v}: expected a positive number (K, M, G suffixes allowed)")
                })?;
            }
        }
        Ok(l)
    }
}

/// `123`, `64K`, `256M`, `2G` (powers of 1024; a trailing `B` or `iB` is allowed).
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, mult) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1u64 << 10),
        'm' | 'M' => (&t[..t.len() - 1], 1 << 20),
        'g' | 'G' => (&t[..t.len() - 1], 1 << 30),
        't' | 'T' => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let n: u64 = num.trim().parse().ok()?;
    n.checked_mul(mult).filter(|v| *v > 0)
}

/// Which limit a file exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitExceeded {
    Bytes(u64),
    Observations(u64),
    Items(u64),
}

impl fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitExceeded::Bytes(n) => write!(
                f,
                "refused: more than {} of JSON text (the limit on a results file's size, decompressed; {ENV_SIZE}=SIZE raises it)",
                bytes_text(*n)
            ),
            LimitExceeded::Observations(n) => write!(
                f,
                "refused: more than {n} observations (the limit on a results file's observations; {ENV_OBSERVATIONS}=N raises it)"
            ),
            LimitExceeded::Items(n) => write!(
                f,
                "refused: more than {n} list items and values besides observations (the limit on a results file's items; {ENV_ITEMS}=N raises it)"
            ),
        }
    }
}

fn bytes_text(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// The counts of the parse going on in this thread (one file at a time).
#[derive(Clone, Copy)]
struct Budget {
    limits: Limits,
    observations: u64,
    items: u64,
    exceeded: Option<LimitExceeded>,
}

thread_local! {
    static BUDGET: Cell<Option<Budget>> = const { Cell::new(None) };
}

/// Runs `parse` with counting on in this thread; returns what it returned
/// and the limit it ran into, if any. Outside such a call (a results file
/// read by a test with serde_json directly, a benchmark child's report)
/// nothing is counted.
pub fn counted<T>(limits: Limits, parse: impl FnOnce() -> T) -> (T, Option<LimitExceeded>) {
    let before = BUDGET.with(|b| {
        b.replace(Some(Budget {
            limits,
            observations: 0,
            items: 0,
            exceeded: None,
        }))
    });
    let out = parse();
    let after = BUDGET.with(|b| b.replace(before));
    (out, after.and_then(|b| b.exceeded))
}

/// Notes a limit exceeded (a reader stops at the byte limit).
fn exceed(e: LimitExceeded) {
    BUDGET.with(|b| {
        if let Some(mut x) = b.get() {
            x.exceeded.get_or_insert(e);
            b.set(Some(x));
        }
    });
}

/// Counts `n` observations or items; false (and the limit noted) when
/// that passes a limit.
fn charge(observations: u64, items: u64) -> bool {
    BUDGET.with(|b| {
        let Some(mut x) = b.get() else {
            return true;
        };
        x.observations += observations;
        x.items += items;
        let over = if x.observations > x.limits.max_observations {
            Some(LimitExceeded::Observations(x.limits.max_observations))
        } else if x.items > x.limits.max_items {
            Some(LimitExceeded::Items(x.limits.max_items))
        } else {
            None
        };
        if let Some(e) = over {
            x.exceeded.get_or_insert(e);
        }
        b.set(Some(x));
        over.is_none()
    })
}

fn over<E: serde::de::Error>() -> E {
    let why = BUDGET
        .with(|b| b.get().and_then(|x| x.exceeded))
        .map(|e| e.to_string())
        .unwrap_or_else(|| "a limit was exceeded".into());
    E::custom(why)
}

/// A reader that stops with an error after `max` bytes (noting the limit).
pub struct Capped<R> {
    inner: R,
    left: u64,
    max: u64,
}

impl<R: Read> Capped<R> {
    pub fn new(inner: R, max: u64) -> Capped<R> {
        Capped {
            inner,
            left: max,
            max,
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One byte more tells a file of exactly `max` bytes from a longer one.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => {
                    exceed(LimitExceeded::Bytes(self.max));
                    Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        LimitExceeded::Bytes(self.max).to_string(),
                    ))
                }
            };
        }
        let want = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let k = self.inner.read(&mut buf[..want])?;
        self.left -= k as u64;
        Ok(k)
    }
}

// ------------------------------------------------ bounded deserialisers

/// A list whose every item is counted against [`Limits::max_items`]
/// before it is stored (`#[serde(deserialize_with = "limits::list")]`).
pub fn list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    d.deserialize_seq(ListVisitor::<T>(0, PhantomData))
}

/// Observations: each counted against [`Limits::max_observations`]
/// before it is stored.
pub fn observations<'de, D>(d: D) -> Result<Vec<f64>, D::Error>
where
    D: Deserializer<'de>,
{
    d.deserialize_seq(ListVisitor::<f64>(1, PhantomData))
}

/// `Option<Vec<T>>` counted as [`list`].
pub fn option_list<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Opt<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Opt<T> {
        type Value = Option<Vec<T>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list or null")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            list(d).map(Some)
        }
    }
    d.deserialize_option(Opt::<T>(PhantomData))
}

struct ListVisitor<T>(u8, PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let observations = self.0 == 1;
        let mut v = Vec::new();
        loop {
            let ok = if observations {
                charge(1, 0)
            } else {
                charge(0, 1)
            };
            if !ok {
                return Err(over());
            }
            match seq.next_element()? {
                Some(x) => v.push(x),
                None => break,
            }
        }
        v.shrink_to_fit();
        Ok(v)
    }
}

/// A map of strings to free-form JSON, every entry and value counted.
pub fn value_map<'de, D>(d: D) -> Result<BTreeMap<String, serde_json::Value>, D::Error>
where
    D: Deserializer<'de>,
{
    struct M;
    impl<'de> Visitor<'de> for M {
        type Value = BTreeMap<String, serde_json::Value>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            loop {
                if !charge(0, 1) {
                    return Err(over());
                }
                let Some(k) = m.next_key::<String>()? else {
                    break;
                };
                let v = m.next_value_seed(Counted)?;
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(M)
}

/// Free-form JSON, every value counted.
pub fn value<'de, D>(d: D) -> Result<serde_json::Value, D::Error>
where
    D: Deserializer<'de>,
{
    Counted.deserialize(d)
}

/// A map of strings to strings, every entry counted.
pub fn string_map<'de, D>(d: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    struct M;
    impl<'de> Visitor<'de> for M {
        type Value = BTreeMap<String, String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of strings")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            loop {
                if !charge(0, 1) {
                    return Err(over());
                }
                let Some((k, v)) = m.next_entry::<String, String>()? else {
                    break;
                };
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(M)
}

/// A `serde_json::Value` built with every node counted.
#[derive(Clone, Copy)]
struct Counted;

impl<'de> DeserializeSeed<'de> for Counted {
    type Value = serde_json::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        if !charge(0, 1) {
            return Err(over());
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counted {
    type Value = serde_json::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<serde_json::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E>(self, v: &str) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }
    fn visit_none<E>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_unit<E>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        Counted.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<serde_json::Value, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = seq.next_element_seed(Counted)? {
            v.push(x);
        }
        Ok(serde_json::Value::Array(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<serde_json::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(k) = m.next_key::<String>()? {
            let v = m.next_value_seed(Counted)?;
            out.insert(k, v);
        }
        Ok(serde_json::Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug)]
    struct T {
        #[serde(deserialize_with = "observations")]
        obs: Vec<f64>,
        #[serde(deserialize_with = "list")]
        words: Vec<String>,
        #[serde(deserialize_with = "value")]
        free: serde_json::Value,
    }

    fn parse(text: &str, l: Limits) -> (Result<T, serde_json::Error>, Option<LimitExceeded>) {
        counted(l, || serde_json::from_str::<T>(text))
    }

    #[test]
    fn counts_stop_the_parse_before_storing_more() {
        let text = r#"{"obs":[1,2,3,4],"words":["a","b"],"free":{"x":[1,2,{"y":null}]}}"#;
        let (t, e) = parse(text, Limits::default());
        let t = t.unwrap();
        assert_eq!((t.obs.len(), t.words.len(), e), (4, 2, None));
        assert_eq!(t.free["x"][2]["y"], serde_json::Value::Null);
        let few = Limits {
            max_observations: 3,
            ..Limits::default()
        };
        let (t, e) = parse(text, few);
        assert!(t.unwrap_err().to_string().contains(ENV_OBSERVATIONS));
        assert_eq!(e, Some(LimitExceeded::Observations(3)));
        let items = Limits {
            max_items: 5,
            ..Limits::default()
        };
        let (t, e) = parse(text, items);
        assert!(t.is_err());
        assert_eq!(e, Some(LimitExceeded::Items(5)));
        // Outside `counted`, nothing is counted.
        assert!(serde_json::from_str::<T>(text).is_ok());
    }

    #[test]
    fn capped_reader_stops_after_the_limit_only_when_there_is_more() {
        let data = [b' '; 100];
        let mut exact = Capped::new(&data[..], 100);
        let mut sink = Vec::new();
        assert_eq!(exact.read_to_end(&mut sink).unwrap(), 100);
        let ((), e) = counted(Limits::default(), || {
            let mut short = Capped::new(&data[..], 99);
            assert!(short.read_to_end(&mut Vec::new()).is_err());
        });
        assert_eq!(e, Some(LimitExceeded::Bytes(99)));
        assert!(LimitExceeded::Bytes(256 << 20)
            .to_string()
            .contains("256 MiB"));
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("256M"), Some(256 << 20));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("x"), None);
    }
}
