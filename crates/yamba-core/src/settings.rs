//! Benchmark settings (`yamba run --set KEY=VALUE`), declared on the
//! benchmark that reads them: key, type, default, help. One naming scheme:
//! the area first (`mem.stride`, `net.bytes`, `proc.heavy_mib`); names
//! from before it are kept as deprecated aliases.
//!
//! A run checks every `--set` against the declarations before anything is
//! measured ([`resolve`]): an unknown key is an error naming the close
//! matches, an old name is renamed with a warning, a value of the wrong
//! type is an error. A benchmark reads its settings through the typed
//! accessors on [`crate::Ctx`] (`bytes`, `integer`, `number`, `choice`,
//! `list`, `text`), which parse and bound-check.

use crate::bench::Benchmark;
use std::collections::BTreeMap;

/// What is wrong with a `--set` option or a benchmark's reading of one:
/// one line each, naming the setting and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingError {
    /// An item that is not `KEY=VALUE`.
    #[error("--set {0}: expected KEY=VALUE")]
    NotAPair(String),
    /// A value of the wrong type or out of bounds.
    #[error("--set {key}={value}: expected {expected}")]
    BadValue {
        key: &'static str,
        value: String,
        expected: String,
    },
    /// A list with a word the setting does not know.
    #[error("--set {key}={value}: unknown '{item}'; expected {expected}")]
    UnknownWord {
        key: &'static str,
        value: String,
        item: String,
        expected: String,
    },
    /// A key no benchmark declares, with the close matches (best first).
    #[error("--set {name}: no benchmark has this setting{}", did_you_mean(.close))]
    UnknownKey {
        name: String,
        close: Vec<&'static str>,
    },
    /// One key given under two of its names.
    #[error("--set {0}: given twice (as {1} and under another name)")]
    GivenTwice(&'static str, String),
    /// A benchmark read a setting with another type's accessor.
    #[error("setting {key} is declared as {declared}, read as {asked} (a bug in the benchmark)")]
    WrongAccessor {
        key: &'static str,
        declared: String,
        asked: &'static str,
    },
}

fn did_you_mean(close: &[&str]) -> String {
    if close.is_empty() {
        " (see 'yamba list --settings')".into()
    } else {
        format!("; did you mean {}?", close.join(", "))
    }
}

/// A benchmark's settings error becomes its withheld or failed reason.
impl From<SettingError> for String {
    fn from(e: SettingError) -> String {
        e.to_string()
    }
}

/// The type of a setting's value, with its bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A size in bytes: `64`, `4K`, `8M`, `1G` (powers of 1024).
    Bytes { min: u64, max: u64 },
    /// A whole number.
    Integer { min: u64, max: u64 },
    /// A number, fractions allowed.
    Number { min: f64, max: f64 },
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Some of these words, separated by commas.
    List(&'static [&'static str]),
    /// Free text, such as a path.
    Text,
}

/// One setting a benchmark reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    /// Area first: `mem.stride`.
    pub key: &'static str,
    pub kind: Kind,
    /// The default, in words (it may depend on the machine or on `--quick`).
    pub default: &'static str,
    /// One line: what it changes.
    pub help: &'static str,
    /// Older names, still accepted with a warning.
    pub aliases: &'static [&'static str],
}

impl Setting {
    /// Whether `name` is this setting's key or one of its old names.
    pub fn answers_to(&self, name: &str) -> bool {
        self.key == name || self.aliases.contains(&name)
    }

    /// Checks `value` against the type and bounds; Err is one line naming
    /// the setting, the value and what was expected.
    pub fn check(&self, value: &str) -> Result<(), SettingError> {
        match self.kind {
            Kind::Bytes { .. } => self.parse_bytes(value).map(drop),
            Kind::Integer { .. } => self.parse_integer(value).map(drop),
            Kind::Number { .. } => self.parse_number(value).map(drop),
            Kind::Choice(_) => self.parse_choice(value).map(drop),
            Kind::List(_) => self.parse_list(value).map(drop),
            Kind::Text => Ok(()),
        }
    }

    fn bad(&self, value: &str) -> SettingError {
        SettingError::BadValue {
            key: self.key,
            value: value.to_string(),
            expected: self.kind.describe(),
        }
    }

    pub fn parse_bytes(&self, value: &str) -> Result<u64, SettingError> {
        let Kind::Bytes { min, max } = self.kind else {
            return Err(self.wrong_accessor("bytes"));
        };
        parse_size(value)
            .filter(|v| (min..=max).contains(v))
            .ok_or_else(|| self.bad(value))
    }

    pub fn parse_integer(&self, value: &str) -> Result<u64, SettingError> {
        let Kind::Integer { min, max } = self.kind else {
            return Err(self.wrong_accessor("integer"));
        };
        value
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|v| (min..=max).contains(v))
            .ok_or_else(|| self.bad(value))
    }

    pub fn parse_number(&self, value: &str) -> Result<f64, SettingError> {
        let Kind::Number { min, max } = self.kind else {
            return Err(self.wrong_accessor("number"));
        };
        value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && (min..=max).contains(v))
            .ok_or_else(|| self.bad(value))
    }

    pub fn parse_choice<'v>(&self, value: &'v str) -> Result<&'v str, SettingError> {
        let Kind::Choice(words) = self.kind else {
            return Err(self.wrong_accessor("choice"));
        };
        let v = value.trim();
        if words.contains(&v) {
            Ok(v)
        } else {
            Err(self.bad(value))
        }
    }

    pub fn parse_list<'v>(&self, value: &'v str) -> Result<Vec<&'v str>, SettingError> {
        let Kind::List(words) = self.kind else {
            return Err(self.wrong_accessor("list"));
        };
        let items: Vec<&str> = value.split(',').map(str::trim).collect();
        match items.iter().find(|i| !words.contains(i)) {
            Some(bad) => Err(SettingError::UnknownWord {
                key: self.key,
                value: value.to_string(),
                item: bad.to_string(),
                expected: self.kind.describe(),
            }),
            None => Ok(items),
        }
    }

    fn wrong_accessor(&self, asked: &'static str) -> SettingError {
        SettingError::WrongAccessor {
            key: self.key,
            declared: self.kind.describe(),
            asked,
        }
    }
}

impl Kind {
    /// What a value must be, in words: `a size in bytes from 8 B to 1 GiB`.
    pub fn describe(&self) -> String {
        match *self {
            Kind::Bytes { min, max } => {
                format!(
                    "a size in bytes (e.g. 64, 4K, 8M) from {} to {}",
                    size(min),
                    size(max)
                )
            }
            Kind::Integer { min, max } if max == u64::MAX => format!("a whole number ≥ {min}"),
            Kind::Integer { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Number { min, max } if max == f64::MAX => format!("a number ≥ {min}"),
            Kind::Number { min, max } => format!("a number from {min} to {max}"),
            Kind::Choice(words) => format!("one of {}", words.join(", ")),
            Kind::List(words) => format!("some of {}, comma-separated", words.join(", ")),
            Kind::Text => "text".into(),
        }
    }

    /// The type's short name for `yamba list --settings`.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Bytes { .. } => "bytes",
            Kind::Integer { .. } => "integer",
            Kind::Number { .. } => "number",
            Kind::Choice(_) => "choice",
            Kind::List(_) => "list",
            Kind::Text => "text",
        }
    }
}

/// `4096` → `4 KiB`, for bounds.
fn size(b: u64) -> String {
    match b {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// `--set KEY=VALUE` options as given, in one map (a later KEY wins);
/// checking them against the declarations is [`resolve`]'s work. The one
/// parser of `--set` for every command that takes it.
pub fn parse_pairs(items: &[String]) -> Result<BTreeMap<String, String>, SettingError> {
    items
        .iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(SettingError::NotAPair(s.clone())),
        })
        .collect()
}

/// Parses sizes such as "48K", "1024K", "2M", "64" (powers of 1024).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// Every setting the benchmarks declare, once per key, with the ids of
/// the benchmarks that read it.
pub fn declared(benches: &[&'static Benchmark]) -> Vec<(&'static Setting, Vec<&'static str>)> {
    let mut out: Vec<(&'static Setting, Vec<&'static str>)> = Vec::new();
    for b in benches {
        for s in b.settings {
            match out.iter_mut().find(|(d, _)| d.key == s.key) {
                Some((_, ids)) => ids.push(b.id),
                None => out.push((s, vec![b.id])),
            }
        }
    }
    out
}

/// `--set` pairs checked against what the benchmarks declare: old names
/// renamed to their keys (each with a warning), values checked. `all` is
/// every benchmark (a key must be one of theirs), `chosen` those that run
/// (a key none of them reads is warned about). Err is one line.
pub fn resolve(
    given: &BTreeMap<String, String>,
    all: &[&'static Benchmark],
    chosen: &[&'static Benchmark],
) -> Result<(BTreeMap<String, String>, Vec<String>), SettingError> {
    let known = declared(all);
    let mut out = BTreeMap::new();
    let mut warnings = Vec::new();
    for (name, value) in given {
        let Some((setting, _)) = known.iter().find(|(s, _)| s.answers_to(name)) else {
            return Err(unknown_key(name, &known));
        };
        if setting.key != name {
            warnings.push(format!(
                "--set {name}: an old name, read as {} (say {}={value})",
                setting.key, setting.key
            ));
        }
        setting.check(value)?;
        if out.insert(setting.key.to_string(), value.clone()).is_some() {
            return Err(SettingError::GivenTwice(setting.key, name.clone()));
        }
        if !chosen
            .iter()
            .any(|b| b.settings.iter().any(|s| s.key == setting.key))
        {
            warnings.push(format!(
                "--set {}: none of the benchmarks to run reads it",
                setting.key
            ));
        }
    }
    Ok((out, warnings))
}

/// The error for a key no benchmark declares, with close matches.
fn unknown_key(name: &str, known: &[(&'static Setting, Vec<&'static str>)]) -> SettingError {
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let mut scored: Vec<(f64, &str)> = known
        .iter()
        .flat_map(|(s, _)| {
            std::iter::once(s.key)
                .chain(s.aliases.iter().copied())
                .map(move |n| (n, s.key))
        })
        .map(|(n, key)| {
            let score = strsim::jaro_winkler(name, n)
                .max(strsim::jaro_winkler(&last(name), &last(n)))
                .max(if n.contains(name) || name.contains(n) {
                    0.9
                } else {
                    0.0
                });
            (score, key)
        })
        .filter(|(score, _)| *score >= 0.85)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    // The best match, and those nearly as close.
    let best = scored.first().map_or(0.0, |s| s.0);
    let mut close: Vec<&'static str> = Vec::new();
    for (score, key) in scored {
        if score >= best - 0.03 && !close.contains(&key) && close.len() < 3 {
            close.push(key);
        }
    }
    SettingError::UnknownKey {
        name: name.to_string(),
        close,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_pairs_split_at_the_first_equals_and_a_later_key_wins() {
        let given = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let m = parse_pairs(&given(&["a=1", "b=x=y", "a=2", "c="])).unwrap();
        assert_eq!(m["a"], "2");
        assert_eq!(m["b"], "x=y");
        assert_eq!(m["c"], "");
        assert_eq!(m.len(), 3);
        assert_eq!(
            parse_pairs(&given(&["a=1", "novalue"]))
                .unwrap_err()
                .to_string(),
            "--set novalue: expected KEY=VALUE"
        );
        assert_eq!(
            parse_pairs(&given(&["=1"])).unwrap_err().to_string(),
            "--set =1: expected KEY=VALUE"
        );
    }

    const STRIDE: Setting = Setting {
        key: "mem.stride",
        kind: Kind::Bytes {
            min: 8,
            max: 1 << 30,
        },
        default: "the cache line",
        help: "bytes between elements",
        aliases: &["stride"],
    };
    const STREAMS: Setting = Setting {
        key: "net.streams",
        kind: Kind::Integer { min: 1, max: 64 },
        default: "4",
        help: "streams at once",
        aliases: &[],
    };
    const WHICH: Setting = Setting {
        key: "ipc.transports",
        kind: Kind::List(&["pipe", "futex"]),
        default: "all",
        help: "which transports",
        aliases: &["transports"],
    };
    static MEM: Benchmark = Benchmark {
        id: "mem.x",
        settings: &[STRIDE],
        ..Benchmark::TEMPLATE
    };
    static NET: Benchmark = Benchmark {
        id: "net.x",
        settings: &[STREAMS],
        ..Benchmark::TEMPLATE
    };
    static IPC: Benchmark = Benchmark {
        id: "ipc.x",
        settings: &[WHICH],
        ..Benchmark::TEMPLATE
    };

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_are_parsed_and_bounded() {
        assert_eq!(STRIDE.parse_bytes("4K"), Ok(4096));
        assert!(STRIDE
            .parse_bytes("4")
            .unwrap_err()
            .to_string()
            .contains("from 8 B to 1 GiB"));
        assert!(STRIDE
            .parse_bytes("lots")
            .unwrap_err()
            .to_string()
            .starts_with("--set mem.stride=lots: expected a size"));
        assert_eq!(STREAMS.parse_integer("8"), Ok(8));
        assert!(STREAMS.parse_integer("65").is_err());
        assert!(STREAMS.parse_integer("-1").is_err());
        assert_eq!(WHICH.parse_list("pipe, futex"), Ok(vec!["pipe", "futex"]));
        assert!(WHICH
            .parse_list("pipe,pigeon")
            .unwrap_err()
            .to_string()
            .contains("'pigeon'"));
        assert!(STREAMS
            .parse_bytes("1")
            .unwrap_err()
            .to_string()
            .contains("a bug in the benchmark"));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("99999999999999999G"), None);
    }

    #[test]
    fn an_unknown_key_names_close_matches() {
        let all = [&MEM, &NET, &IPC];
        let err = resolve(&given(&[("mem.strid", "64")]), &all, &all)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--set mem.strid: no benchmark has this setting; did you mean mem.stride?"
        );
        let err = resolve(&given(&[("net.stream", "2")]), &all, &all)
            .unwrap_err()
            .to_string();
        assert!(err.contains("did you mean net.streams?"), "{err}");
        let err = resolve(&given(&[("zzzz", "1")]), &all, &all)
            .unwrap_err()
            .to_string();
        assert!(err.contains("see 'yamba list --settings'"), "{err}");
        assert_eq!(err.lines().count(), 1);
    }

    #[test]
    fn old_names_are_renamed_with_a_warning_and_values_checked() {
        let all = [&MEM, &NET, &IPC];
        let (map, warnings) = resolve(
            &given(&[("stride", "128"), ("transports", "pipe")]),
            &all,
            &[&MEM],
        )
        .unwrap();
        assert_eq!(map.get("mem.stride").map(String::as_str), Some("128"));
        assert_eq!(map.get("ipc.transports").map(String::as_str), Some("pipe"));
        assert!(warnings
            .iter()
            .any(|w| w.contains("--set stride: an old name, read as mem.stride")));
        assert!(warnings
            .iter()
            .any(|w| w.contains("ipc.transports: none of the benchmarks to run reads it")));
        let err = resolve(&given(&[("net.streams", "0")]), &all, &all)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--set net.streams=0: expected a whole number from 1 to 64"
        );
        let err = resolve(
            &given(&[("stride", "64"), ("mem.stride", "128")]),
            &all,
            &all,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("given twice"), "{err}");
    }
}
