//! `yamba serve` as a child process, and network namespaces joined by a
//! veth pair, for the agent tests (measure_netns.rs, serve_cli.rs). Each
//! test file compiles this module and uses only some of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// Strong enough for `yamba serve` (at least 128 bits).
pub const TOKEN: &str = "9c4f0e7a1b3d5f6e8a2c4b6d8f0e1a3c5b7d9f2e4a6c8b0d";

pub fn ip(args: &[&str]) -> Result<(), String> {
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
pub struct Netns {
    pub a: String,
    pub b: String,
    pub veth_a: String,
    pub veth_b: String,
}

impl Netns {
    /// Err: why the test cannot run here.
    pub fn create(tag: &str) -> Result<Netns, String> {
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
    pub fn rate_limit(ns: &str, dev: &str, rate: &str) -> Result<(), String> {
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
pub struct Serve {
    child: Child,
    pub addr: String,
    /// The rest of its stdout after the address line.
    pub stdout: BufReader<std::process::ChildStdout>,
    /// Its stderr so far, read by a thread of its own: the agent logs from a
    /// thread of its own too, so a line may come after the client saw the
    /// refusal it describes.
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

impl Serve {
    /// Starts `yamba serve ARGS`, in namespace `ns` when given, and waits
    /// for the address it prints.
    pub fn start(ns: Option<&str>, args: &[&str]) -> Serve {
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
    pub fn stop_when_logged(mut self, wanted: impl Fn(&str) -> bool) -> String {
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
pub fn in_netns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> T {
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
