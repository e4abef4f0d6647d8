//! `yamba serve` for real, and the `net` benchmarks measuring it across
//! two network namespaces joined by a veth pair (10.77.0.1 ↔ 10.77.0.2,
//! inside namespaces these tests create and always delete):
//! - a token-bucket limit of 100 Mbit/s on the link is what the bandwidth
//!   benchmark measures, within 10%, both ways, and what reading a file
//!   from the agent achieves (`fs.remote.read`);
//! - a delay the agent adds on purpose raises the measured round trip by
//!   that delay, within 5%.
//!
//! The namespace tests need root and iproute2 (`ip`, `tc`); without them
//! they print why and skip.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use yamba_core::runner::run_one;
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Session, Status};
use yamba_suite::fs::remote::REMOTE_READ;
use yamba_suite::net::{bandwidth, rtt};
use yamba_suite::remote::{AgentError, Client};

// Strong enough for `yamba serve` (at least 128 bits).
const TOKEN: &str = "9c4f0e7a1b3d5f6e8a2c4b6d8f0e1a3c5b7d9f2e4a6c8b0d";

/// The tests of this file measure: one at a time, or they time each other.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip: {e} (apt-get install -y iproute2)"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Two namespaces joined by a veth pair; deleted on drop, whatever happened.
struct Netns {
    a: String,
    b: String,
    veth_a: String,
    veth_b: String,
}

impl Netns {
    /// Err: why the test cannot run here.
    fn create(tag: &str) -> Result<Netns, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("needs root to create network namespaces".into());
        }
        let pid = std::process::id();
        let n = Netns {
            a: format!("ymb{pid}{tag}a"),
            b: format!("ymb{pid}{tag}b"),
            veth_a: format!("yv{pid}{tag}a"),
            veth_b: format!("yv{pid}{tag}b"),
        };
        ip(&["netns", "add", &n.a])?;
        ip(&["netns", "add", &n.b])?;
        ip(&[
            "link", "add", &n.veth_a, "type", "veth", "peer", "name", &n.veth_b,
        ])?;
        for (ns, dev, addr) in [
            (&n.a, &n.veth_a, "10.77.0.1/24"),
            (&n.b, &n.veth_b, "10.77.0.2/24"),
        ] {
            ip(&["link", "set", dev, "netns", ns])?;
            ip(&["-n", ns, "addr", "add", addr, "dev", dev])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(n)
    }

    /// Limits what leaves `dev` (in `ns`) with a token bucket.
    fn rate_limit(ns: &str, dev: &str, rate: &str) -> Result<(), String> {
        let out = Command::new("ip")
            .args([
                "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf",
            ])
            .args(["rate", rate, "burst", "32kbit", "latency", "400ms"])
            .output()
            .map_err(|e| format!("cannot run tc: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tc: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(())
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end inside it, and its peer.
        let _ = ip(&["netns", "del", &self.a]);
        let _ = ip(&["netns", "del", &self.b]);
    }
}

/// A `yamba serve` process, killed on drop.
struct Serve {
    child: Child,
    addr: String,
    /// The rest of its stdout after the address line.
    stdout: BufReader<std::process::ChildStdout>,
    /// Its stderr so far, read by a thread of its own: the agent logs from a
    /// thread of its own too, so a line may come after the client saw the
    /// refusal it describes.
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

impl Serve {
    /// Starts `yamba serve ARGS`, in namespace `ns` when given, and waits
    /// for the address it prints.
    fn start(ns: Option<&str>, args: &[&str]) -> Serve {
        let bin = env!("CARGO_BIN_EXE_yamba");
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, bin]);
                c
            }
            None => Command::new(bin),
        };
        let mut child = cmd
            .arg("serve")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start yamba serve");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let addr = line
            .trim()
            .strip_prefix("yamba serve: listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Serve {
            child,
            addr,
            stdout,
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    /// Waits (up to 10 s) until what it wrote on stderr satisfies `wanted`,
    /// then stops it and returns all it wrote there.
    fn stop_when_logged(mut self, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !wanted(&self.stderr.lock().unwrap()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(t) = self.stderr_reader.take() {
            let _ = t.join();
        }
        let log = self.stderr.lock().unwrap().clone();
        log
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `f` in a thread that has joined network namespace `ns` (setns(2)
/// changes only the calling thread's namespace; its sockets stay there).
fn in_netns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            let f_ns = std::fs::File::open(format!("/run/netns/{ns}")).expect("open netns");
            // SAFETY: a valid namespace file descriptor.
            let rc =
                unsafe { libc::setns(std::os::fd::AsRawFd::as_raw_fd(&f_ns), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .unwrap()
    })
}

/// Runs a benchmark (quick) against the agent at `addr`, in this thread.
fn measure(addr: &str, bench: &'static Benchmark, settings: &[(&str, &str)]) -> Vec<BenchResult> {
    let mut cfg = RunConfig {
        remote: Some(addr.into()),
        remote_token: Some(TOKEN.into()),
        isolate: false,
        realtime: true,
        ..RunConfig::quick()
    };
    for (k, v) in settings {
        cfg.settings.insert(k.to_string(), v.to_string());
    }
    let dir = tempfile::tempdir().unwrap();
    let rs = run_one(&Session::prepare(cfg), bench, Mode::Hot, dir.path());
    for r in &rs {
        assert_eq!(
            r.status,
            Status::Ok,
            "{}: {:?} {:?}",
            r.id,
            r.reason,
            r.evidence
        );
    }
    rs
}

macro_rules! or_skip {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(why) => {
                println!("skipped: {why}");
                return;
            }
        }
    };
}

#[test]
fn token_bucket_limit_is_the_measured_bandwidth() {
    let _serial = serial();
    let ns = or_skip!(Netns::create("r"));
    or_skip!(Netns::rate_limit(&ns.a, &ns.veth_a, "100mbit"));
    or_skip!(Netns::rate_limit(&ns.b, &ns.veth_b, "100mbit"));
    // A file to read remotely, too: the seed's remote file read.
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f.dat"), vec![7u8; 2 << 20]).unwrap();
    let root_s = root.path().to_str().unwrap();
    let serve = Serve::start(
        Some(&ns.a),
        &[
            "--listen",
            "10.77.0.1:7077",
            "--token",
            TOKEN,
            "--realtime",
            "--root",
            root_s,
        ],
    );
    let limit_gbps = 100e6 / 8.0 / 1e9;
    let mut last = String::new();
    for attempt in 1..=3 {
        let rs = in_netns(&ns.b, || {
            let mut rs = measure(&serve.addr, &bandwidth::TCP_BW_1, &[("net.bytes", "4M")]);
            rs.extend(measure(
                &serve.addr,
                &REMOTE_READ,
                &[("fs.remote.file", "f.dat")],
            ));
            rs
        });
        let got: Vec<(String, f64)> = rs
            .iter()
            .map(|r| (r.id.clone(), r.median().unwrap()))
            .collect();
        last = format!("attempt {attempt}: limit {limit_gbps} GB/s, measured {got:?}");
        println!("{last}");
        assert_eq!(got.len(), 3, "both directions and the file read");
        if got
            .iter()
            .all(|(_, g)| (g / limit_gbps - 1.0).abs() <= 0.10)
        {
            return;
        }
    }
    panic!("bandwidth not within 10% of the limit: {last}");
}

#[test]
fn agent_delay_is_the_added_round_trip() {
    let _serial = serial();
    const X_US: f64 = 1000.0;
    let ns = or_skip!(Netns::create("d"));
    let plain = Serve::start(
        Some(&ns.a),
        &["--listen", "10.77.0.1:7077", "--token", TOKEN, "--realtime"],
    );
    let delay = X_US.to_string();
    let slow = Serve::start(
        Some(&ns.a),
        &[
            "--listen",
            "10.77.0.1:7078",
            "--token",
            TOKEN,
            "--realtime",
            "--test-delay-us",
            &delay,
        ],
    );
    let mut last = String::new();
    for attempt in 1..=3 {
        let (base, delayed) = in_netns(&ns.b, || {
            (
                measure(&plain.addr, &rtt::TCP_RTT, &[])[0]
                    .median()
                    .unwrap(),
                measure(&slow.addr, &rtt::TCP_RTT, &[])[0].median().unwrap(),
            )
        });
        let added_us = (delayed - base) / 1000.0;
        last = format!(
            "attempt {attempt}: round trip {:.1} µs, added {added_us:.1} µs for {X_US} µs",
            base / 1000.0
        );
        println!("{last}");
        if (added_us - X_US).abs() <= 0.05 * X_US {
            // The wrong-token client from the other namespace is refused and logged with its address.
            let err = in_netns(&ns.b, || {
                Client::connect(&plain.addr, "wrong", Duration::from_secs(5)).err()
            });
            assert!(matches!(err, Some(AgentError::Refused(_))), "{err:?}");
            let refused = |log: &str| {
                log.lines()
                    .any(|l| l.contains("refused 10.77.0.2:") && l.contains("wrong token"))
            };
            let log = plain.stop_when_logged(refused);
            assert!(refused(&log), "{log}");
            return;
        }
    }
    panic!("delay not seen in the round trip: {last}");
}

#[test]
fn serve_defaults_to_loopback_and_a_random_token() {
    let _serial = serial();
    let mut serve = Serve::start(None, &["--listen", "127.0.0.1:0", "--idle-timeout", "5"]);
    assert!(serve.addr.starts_with("127.0.0.1:"), "{}", serve.addr);
    let mut line = String::new();
    serve.stdout.read_line(&mut line).unwrap();
    let token = line
        .trim()
        .strip_prefix("token: ")
        .expect("a generated token")
        .to_string();
    assert!(
        token.len() >= 32 && token.chars().all(|c| c.is_ascii_hexdigit()),
        "{token}"
    );
    let mut c = Client::connect(&serve.addr, &token, Duration::from_secs(5)).unwrap();
    assert_eq!(c.echo(b"hi").unwrap(), b"hi");
    let why = c.stat("anything").unwrap_err().to_string();
    assert!(why.contains("serves no files"), "{why}");
    assert!(matches!(
        Client::connect(&serve.addr, "nope", Duration::from_secs(5)),
        Err(AgentError::Refused(_))
    ));
    let refused = |log: &str| {
        log.lines()
            .any(|l| l.contains("refused 127.0.0.1:") && l.contains("wrong token"))
    };
    let log = serve.stop_when_logged(refused);
    assert!(refused(&log), "{log}");

    // Bad options: one clear error line, no agent.
    let out = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(["serve", "--listen", "127.0.0.1:0", "--max-message", "lots"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--max-message"), "{err}");
}
