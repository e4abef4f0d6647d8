//! The results reader and the report, fuzzed through the binary with a
//! fixed seed (printed): mutations of real results files — bytes flipped,
//! cut, repeated; odd numbers; deep nesting; long strings; huge arrays;
//! types swapped; hostile strings — half of them zstd-compressed, some
//! with the compressed stream itself damaged, and small zstd bombs. For
//! every case `yamba summary` (the reader) and `yamba report` (the reader
//! and the page) must:
//! - end without a panic or a signal (exit 0, or 2 with a refusal);
//! - say why in one line when they refuse (warnings aside);
//! - stay under 4× the decompressed size in peak resident memory, above
//!   what the program takes for an empty file (plus 16 MiB: the zstd
//!   decoder's window, the page, the allocator's slack) — 4× is what
//!   observations written `0,` cost by themselves (8 bytes from 2);
//! - finish within 30 s.
//!
//! Deterministic: the same seed, the same cases, the same verdicts.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SEED: u64 = 0x5eed_2027_0027;
const CASES: usize = 160;

const BASES: &[&str] = &[
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../yamba-report/tests/data/quick-both.json"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../yamba-results/tests/files/run-v0.1.0.json"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../yamba-results/tests/files/stone-v0.1.0.json"
    ),
];

/// SplitMix64: small, fixed, enough for choosing mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Byte offsets of every JSON number and string start in `t` (rough:
/// enough to aim mutations at values).
fn value_starts(t: &[u8], what: u8) -> Vec<usize> {
    let mut v = Vec::new();
    let mut in_str = false;
    let mut i = 0;
    while i < t.len() {
        let c = t[i];
        if in_str {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
            if what == b'"' {
                v.push(i);
            }
        } else if what == b'0'
            && (c.is_ascii_digit() || c == b'-')
            && i > 0
            && b":[, ".contains(&t[i - 1])
        {
            v.push(i);
        }
        i += 1;
    }
    v
}

/// The end of the number or string starting at `at`.
fn token_end(t: &[u8], at: usize) -> usize {
    if t[at] == b'"' {
        let mut i = at + 1;
        while i < t.len() && t[i] != b'"' {
            if t[i] == b'\\' {
                i += 1;
            }
            i += 1;
        }
        (i + 1).min(t.len())
    } else {
        let mut i = at + 1;
        while i < t.len() && (t[i].is_ascii_digit() || b".eE+-".contains(&t[i])) {
            i += 1;
        }
        i
    }
}

fn replace(t: &[u8], a: usize, b: usize, with: &[u8]) -> Vec<u8> {
    let mut v = t[..a].to_vec();
    v.extend_from_slice(with);
    v.extend_from_slice(&t[b..]);
    v
}

/// One mutation of `t`, and its name.
fn mutate(r: &mut Rng, t: &[u8]) -> (Vec<u8>, &'static str) {
    match r.below(10) {
        0 => {
            let mut v = t.to_vec();
            for _ in 0..1 + r.below(20) {
                let i = r.below(v.len());
                v[i] = r.next() as u8;
            }
            (v, "bytes flipped")
        }
        1 => (t[..r.below(t.len())].to_vec(), "cut"),
        2 => {
            let a = r.below(t.len());
            let b = (a + r.below(4096)).min(t.len());
            let at = r.below(t.len());
            let mut v = t[..at].to_vec();
            for _ in 0..1 + r.below(50) {
                v.extend_from_slice(&t[a..b]);
            }
            v.extend_from_slice(&t[at..]);
            (v, "chunk repeated")
        }
        3 => {
            let nums = value_starts(t, b'0');
            let at = nums[r.below(nums.len())];
            let odd: &[&[u8]] = &[
                b"1e400",
                b"-1e400",
                b"1e-400",
                b"18446744073709551616",
                b"-9223372036854775809",
                b"NaN",
                b"0.0000000000000000000000000000001",
                b"-0",
                b"\"12\"",
                b"null",
                b"true",
            ];
            (
                replace(t, at, token_end(t, at), odd[r.below(odd.len())]),
                "odd number",
            )
        }
        4 => {
            let nums = value_starts(t, b'0');
            let at = nums[r.below(nums.len())];
            let k = 100 + r.below(20_000);
            let mut deep = "[".repeat(k).into_bytes();
            deep.extend_from_slice(&"]".repeat(k).into_bytes());
            (replace(t, at, token_end(t, at), &deep), "deep nesting")
        }
        5 => {
            let strs = value_starts(t, b'"');
            let at = strs[r.below(strs.len())];
            let n = 1 + r.below(4 << 20);
            let mut s = b"\"".to_vec();
            s.extend(std::iter::repeat_n(b'x', n));
            s.push(b'"');
            (replace(t, at, token_end(t, at), &s), "long string")
        }
        6 => {
            // A huge array of small numbers where an array of observations is.
            let key = b"\"observations\":[";
            match t.windows(key.len()).position(|w| w == key) {
                Some(p) => {
                    let a = p + key.len();
                    let b = a + t[a..].iter().position(|&c| c == b']').unwrap_or(0);
                    let n = 1000 + r.below(2_000_000);
                    let mut big = b"0".to_vec();
                    for _ in 1..n {
                        big.extend_from_slice(b",0");
                    }
                    (replace(t, a, b, &big), "huge array")
                }
                None => (t.to_vec(), "unchanged"),
            }
        }
        7 => {
            let swaps: &[(&[u8], &[u8])] = &[
                (b"\"results\":[", b"\"results\":{"),
                (b"\"results\":[", b"\"results\":\"x\",\"y\":["),
                (b"\"machine\":{", b"\"machine\":["),
                (b"\"schema_version\":1", b"\"schema_version\":999"),
                (b"\"schema\":\"yamba-results\"", b"\"schema\":\"other\""),
                (b"\"mode\":\"hot\"", b"\"mode\":\"lukewarm\""),
                (b"\"unit\":\"ns\"", b"\"unit\":7"),
                (b"\"status\":", b"\"status\":{},\"x\":"),
            ];
            let (a, b) = swaps[r.below(swaps.len())];
            match t.windows(a.len()).position(|w| w == a) {
                Some(p) => (replace(t, p, p + a.len(), b), "type swapped"),
                None => (t.to_vec(), "unchanged"),
            }
        }
        8 => {
            let strs = value_starts(t, b'"');
            let mut v = t.to_vec();
            for _ in 0..1 + r.below(30) {
                let s = value_starts(&v, b'"');
                let at = s[r.below(s.len())];
                let end = token_end(&v, at);
                let hostile: &[&[u8]] = &[
                    b"\"\\u001b]0;x\\u0007\\u001b[2J<script>alert(1)</script>\"",
                    b"\"\\\"><img src=x onerror=alert(1)>\"",
                    b"\"\\ud800\"",
                    b"\"\\u0000\\u202e\"",
                ];
                v = replace(&v, at, end, hostile[r.below(hostile.len())]);
            }
            let _ = strs;
            (v, "hostile strings")
        }
        _ => {
            // Valid, with whitespace padding (the bomb's way) inside.
            let at = r.below(t.len());
            let mut v = t[..at].to_vec();
            v.extend(std::iter::repeat_n(b' ', r.below(8 << 20)));
            v.extend_from_slice(&t[at..]);
            (v, "padded")
        }
    }
}

fn zstd(bytes: &[u8], level: i32) -> Vec<u8> {
    zstd::stream::encode_all(bytes, level).unwrap()
}

fn vm_hwm(pid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Ran {
    status: std::process::ExitStatus,
    err: String,
    rss: u64,
    took: Duration,
}

/// Runs yamba with `args`, polling its peak RSS (bytes), killed after 30 s.
fn run(args: &[&str], env_cap: &str) -> Ran {
    let t0 = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(args)
        .env("YAMBA_MAX_RESULTS_SIZE", env_cap)
        // The tests' own history, inside target/: see security.rs.
        .env(
            "YAMBA_HISTORY",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/fuzz-history.sqlite"),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut se = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    });
    let mut peak = 0;
    let status = loop {
        if let Some(h) = vm_hwm(pid) {
            peak = peak.max(h);
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ran {
        status,
        err: reader.join().unwrap(),
        rss: peak * 1024,
        took: t0.elapsed(),
    }
}

/// Peak RSS (bytes) of yamba started with `args`, reading standard input
/// that stays silent for 300 ms.
fn idle_rss(args: &[&str]) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let t0 = Instant::now();
    let mut peak = 0;
    while t0.elapsed() < Duration::from_millis(300) {
        if let Some(h) = vm_hwm(pid) {
            peak = peak.max(h);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(child.stdin.take());
    let _ = child.wait();
    peak * 1024
}

#[test]
fn the_reader_and_the_report_take_mutated_files_in_bounded_memory() {
    println!("fuzz seed {SEED:#x}, {CASES} cases");
    let dir = tempfile::tempdir().unwrap();
    let bases: Vec<Vec<u8>> = BASES.iter().map(|p| std::fs::read(p).unwrap()).collect();
    // What the program takes before it reads anything: each waits on an
    // open pipe for a moment while its peak RSS is read.
    let base_rss = [
        idle_rss(&["summary", "-"]),
        idle_rss(&[
            "report",
            "-",
            "-o",
            dir.path().join("t.html").to_str().unwrap(),
        ]),
    ];
    println!(
        "baseline peak RSS: summary {} KiB, report {} KiB",
        base_rss[0] / 1024,
        base_rss[1] / 1024
    );
    let mut r = Rng(SEED);
    let (mut ok, mut refused, mut compressed, mut worst) = (0, 0, 0, (0.0f64, String::new()));
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    let mut failures = Vec::new();
    for case in 0..CASES {
        let base = &bases[r.below(bases.len())];
        let (mut json, what) = mutate(&mut r, base);
        let mut what = what.to_string();
        if r.below(4) == 0 {
            let (again, w2) = mutate(&mut r, &json);
            json = again;
            what = format!("{what} + {w2}");
        }
        let decompressed = json.len() as u64;
        let mut bytes = json;
        let mut cap = "64M";
        let mut bound = decompressed;
        match r.below(6) {
            0 | 1 => {
                bytes = zstd(&bytes, 1 + r.below(5) as i32);
                what += ", zstd";
                compressed += 1;
            }
            2 => {
                bytes = zstd(&bytes, 3);
                for _ in 0..1 + r.below(8) {
                    let i = 4 + r.below(bytes.len() - 4);
                    bytes[i] = r.next() as u8;
                }
                what += ", zstd damaged";
                compressed += 1;
            }
            3 if case % 8 == 3 => {
                // A small bomb: the text, then 96 MiB of spaces, against a 16 MiB cap.
                let mut e = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
                e.write_all(&bytes).unwrap();
                let block = vec![b' '; 1 << 20];
                for _ in 0..96 {
                    e.write_all(&block).unwrap();
                }
                bytes = e.finish().unwrap();
                cap = "16M";
                bound = 16 << 20;
                what += ", zstd bomb";
                compressed += 1;
            }
            _ => {}
        }
        let f = dir.path().join(format!("case{case}.json"));
        std::fs::write(&f, &bytes).unwrap();
        let out = dir.path().join("r.html");
        for (k, args) in [
            vec!["summary", f.to_str().unwrap()],
            vec!["report", f.to_str().unwrap(), "-o", out.to_str().unwrap()],
        ]
        .iter()
        .enumerate()
        {
            let ran = run(args, cap);
            let errors: Vec<&str> = ran
                .err
                .lines()
                .filter(|l| !l.contains("warning:") && !l.starts_with("yamba: report of"))
                .collect();
            let extra = ran.rss.saturating_sub(base_rss[k]) as f64;
            let ratio = extra / bound.max(1) as f64;
            // 4× the text: 8-byte observations written as `0,` are exactly
            // that, the worst a file can ask for; the constant is the
            // decoder's window, the page and the allocator's own.
            let allowed = 4.0 * bound as f64 + (16 << 20) as f64;
            let label = format!("case {case} ({what}, {} bytes) {}", bytes.len(), args[0]);
            if ratio > worst.0 && bound > 1 << 20 {
                worst = (ratio, label.clone());
            }
            let verdict = match (ran.status.code(), ran.status.signal()) {
                (_, Some(sig)) => Err(format!("killed by signal {sig}")),
                (Some(0), _) => Ok(true),
                (Some(2), _) if errors.len() == 1 => Ok(false),
                (Some(c), _) => Err(format!(
                    "exit {c}, {} error lines: {}",
                    errors.len(),
                    ran.err
                )),
                _ => Err("no status".into()),
            };
            match verdict {
                Ok(true) => ok += 1,
                Ok(false) => {
                    refused += 1;
                    let why: String = errors[0]
                        .split(": ")
                        .skip(2)
                        .collect::<Vec<_>>()
                        .join(": ")
                        .chars()
                        .take(48)
                        .collect();
                    *reasons.entry(why).or_default() += 1;
                }
                Err(e) => failures.push(format!("{label}: {e}")),
            }
            if ran.err.contains("panicked") {
                failures.push(format!("{label}: panicked: {}", ran.err));
            }
            if extra > allowed {
                failures.push(format!(
                    "{label}: peak RSS {:.1} MB over the base, {ratio:.2}× the decompressed size",
                    extra / 1e6
                ));
            }
            if ran.took > Duration::from_secs(30) {
                failures.push(format!("{label}: took {:?}", ran.took));
            }
        }
    }
    println!(
        "{} runs ({compressed} compressed cases): {ok} read, {refused} refused with one line; worst memory above the base for inputs over 1 MiB: {:.2}× the decompressed size ({})",
        2 * CASES,
        worst.0,
        worst.1
    );
    for (why, n) in &reasons {
        println!("  {n:>4}  refused: {why}…");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        ok > 0 && refused > 0,
        "the cases did not exercise both paths"
    );
    let _ = Path::new(".");
}
