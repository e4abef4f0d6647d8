//! The agent's server side: one thread accepting, one thread per
//! connection, every limit checked before any work is done.

use super::conn::{refuse, Conn};
use super::protocol::*;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use yamba_core::Clock;

/// How the agent is set up. `Default` is the safe configuration: loopback,
/// no files served, small limits.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on, e.g. `127.0.0.1:7077` (port 0: any free port).
    pub listen: String,
    /// Directory whose regular files may be read; `None` serves no files.
    pub root: Option<PathBuf>,
    /// The shared secret every connection must present.
    pub token: String,
    pub max_connections: usize,
    /// Largest frame payload accepted, in bytes.
    pub max_message: u32,
    /// A connection silent this long is closed.
    pub idle_timeout: Duration,
    /// Test only: microseconds spun on the calibrated clock before each reply.
    pub test_delay_us: u64,
    /// Serve at SCHED_FIFO priority (needs root or CAP_SYS_NICE), so a busy
    /// machine does not add its scheduling delays to the replies.
    pub realtime: bool,
    /// Print refusals on stderr (they are also kept for [`AgentHandle::refusals`]).
    pub log_stderr: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: format!("127.0.0.1:{DEFAULT_PORT}"),
            root: None,
            token: String::new(),
            max_connections: 16,
            max_message: DEFAULT_MAX_MESSAGE,
            idle_timeout: Duration::from_secs(60),
            test_delay_us: 0,
            realtime: false,
            log_stderr: true,
        }
    }
}

/// State shared by the accepting thread and the connections.
pub(super) struct Shared {
    pub(super) cfg: ServerConfig,
    /// The canonical root, if files are served.
    pub(super) root: Option<PathBuf>,
    active: AtomicUsize,
    stop: AtomicBool,
    refusals: Mutex<Vec<String>>,
    clock: Option<Clock>,
}

impl Shared {
    pub(super) fn refuse_log(&self, peer: SocketAddr, reason: &str) {
        let line = format!("refused {peer}: {reason}");
        if self.cfg.log_stderr {
            eprintln!("yamba serve: {line}");
        }
        let mut r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
        if r.len() < 10_000 {
            r.push(line);
        }
    }

    pub(super) fn delay(&self) {
        if let Some(c) = &self.clock {
            c.spin_ns(self.cfg.test_delay_us as f64 * 1000.0);
        }
    }
}

/// A bound agent, not yet serving.
pub struct Agent {
    listener: TcpListener,
    shared: Arc<Shared>,
}

impl Agent {
    /// Validates the configuration, canonicalizes the root and binds.
    pub fn bind(cfg: ServerConfig) -> Result<Agent, String> {
        if cfg.token.is_empty() {
            return Err("the agent needs a token".into());
        }
        if cfg.max_connections == 0 || cfg.max_message < 64 {
            return Err("max-connections must be ≥ 1 and max-message ≥ 64 bytes".into());
        }
        let root = match &cfg.root {
            Some(r) => {
                let c = r
                    .canonicalize()
                    .map_err(|e| format!("root {}: {e}", r.display()))?;
                if !c.is_dir() {
                    return Err(format!("root {} is not a directory", r.display()));
                }
                Some(c)
            }
            None => None,
        };
        let listener = TcpListener::bind(&cfg.listen)
            .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
        let clock = (cfg.test_delay_us > 0).then(|| Clock::detect(50));
        Ok(Agent {
            listener,
            shared: Arc::new(Shared {
                cfg,
                root,
                active: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
                refusals: Mutex::new(Vec::new()),
                clock,
            }),
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until stopped (for the command line: forever).
    pub fn serve(self) {
        if self.shared.cfg.realtime {
            // Connection threads inherit the policy of this thread.
            if let Err(e) = yamba_core::affinity::set_realtime() {
                eprintln!("yamba serve: not real-time: {e}");
            }
        }
        accept_loop(&self.listener, &self.shared);
    }

    /// Serves from a thread of its own; stopped when the handle is dropped.
    pub fn spawn(self) -> io::Result<AgentHandle> {
        self.spawn_on(None)
    }

    /// Like [`Agent::spawn`], the serving threads pinned to `cpu` (a local
    /// agent as a benchmark's peer).
    pub fn spawn_on(self, cpu: Option<usize>) -> io::Result<AgentHandle> {
        let addr = self.local_addr()?;
        let shared = self.shared.clone();
        let thread = std::thread::Builder::new()
            .name("yamba-agent".into())
            .spawn(move || {
                // Connection threads inherit this thread's affinity.
                if let Some(c) = cpu {
                    let _ = yamba_core::affinity::pin_current_thread(c);
                }
                self.serve()
            })?;
        Ok(AgentHandle {
            addr,
            shared,
            thread: Some(thread),
        })
    }
}

/// A running agent in this process.
pub struct AgentHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AgentHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every refusal so far, as logged.
    pub fn refusals(&self) -> Vec<String> {
        self.shared
            .refusals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Connections being served now.
    pub fn active(&self) -> usize {
        self.shared.active.load(Ordering::SeqCst)
    }
}

impl Drop for AgentHandle {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let stream = match conn {
            Ok(s) => s,
            Err(e) => {
                if shared.cfg.log_stderr {
                    eprintln!("yamba serve: accept failed: {e}");
                }
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let peer = match stream.peer_addr() {
            Ok(p) => p,
            Err(_) => continue,
        };
        let limit = shared.cfg.max_connections;
        if shared.active.fetch_add(1, Ordering::SeqCst) >= limit {
            shared.active.fetch_sub(1, Ordering::SeqCst);
            shared.refuse_log(peer, &format!("too many connections (limit {limit})"));
            refuse(
                stream,
                &format!("too many connections (limit {limit})"),
                Duration::from_millis(100),
            );
            continue;
        }
        let sh = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("yamba-agent-conn".into())
            .spawn(move || {
                let _slot = Slot(&sh.active);
                if let Ok(mut conn) = Conn::new(stream, peer, &sh) {
                    conn.serve();
                }
            });
        if spawned.is_err() {
            shared.active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A connection's place in the count, given back however its thread ends.
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
