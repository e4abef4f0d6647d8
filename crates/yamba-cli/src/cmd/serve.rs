//! `yamba serve`: the remote-measurement agent the `net` and `fs.remote`
//! benchmarks run against (`YAMBA_TOKEN=… yamba run net fs.remote --remote HOST:PORT`).
//! The protocol and its limits are documented in `yamba_suite::remote`.

use anyhow::{anyhow, bail};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use yamba_suite::remote::protocol::{
    check_token_strength, random_token, DEFAULT_MAX_MESSAGE, DEFAULT_PORT, MAX_MESSAGE_CEILING,
};
use yamba_suite::remote::server::MAX_TIMEOUT;
use yamba_suite::remote::token::{self, TOKEN_ENV};
use yamba_suite::remote::{raise_fd_limit, Agent, ServerConfig};

/// What `yamba serve --help` adds after the options.
const AFTER_HELP: &str = "\
The token: clients prove they know it (HMAC-SHA256 over random nonces); it never crosses the \
network. Give it in the environment (YAMBA_TOKEN=…) or in a file only you can read \
(--token-file FILE, mode 0600; created with a fresh token if missing). --token works too, but \
every local user can read it in the process list. A token you choose must carry at least 128 \
bits (e.g. `openssl rand -hex 32`); without one, the agent makes one and prints it.

What is served (--root): regular files under the root, read only, each request resolved beneath \
the root's descriptor (openat2 RESOLVE_BENEATH, or a component walk that follows no symlink), so \
no rename or symlink race leads outside. Refused: paths with '..' or absolute ones, symlinks \
leading outside the root, anything that is not a regular file (devices \
and FIFOs are looked at without being opened), files on pseudo file systems (procfs, sysfs, \
debugfs, … even bind-mounted inside the root), and files with more than one hard link (a hard \
link inside the root to a file outside it is that file, and no path check can tell).

Limits: a client must finish authenticating within --auth-timeout; handshakes in progress are \
bounded in all and per address (all of loopback is one; the oldest of an address gives way to its \
newest); an address that fails authentication 8 times waits a second per further try; only \
authenticated clients take one of the --max-connections slots. None of these applies to a client \
holding the token (its HELLO carries an identifier derived from it), so a local user cannot lock \
it out. Every frame after the handshake is authenticated (HMAC-SHA256, per-connection key, \
sequence numbers): protocol 3, the same yamba version on both ends. docs/threat-model.md says \
who can reach the agent and what each can do.";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Address to listen on (loopback unless told otherwise).
    #[arg(long, value_name = "ADDR:PORT", default_value_t = format!("127.0.0.1:{DEFAULT_PORT}"))]
    pub listen: String,
    /// Directory whose regular files clients may read (nothing else; never writes). Default: no files.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// A file holding the token (mode 0600; created with a fresh token if missing). Or set YAMBA_TOKEN.
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// The token itself (visible to every local user: prefer YAMBA_TOKEN or --token-file).
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    /// Authenticated connections served at once; more are refused.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_connections: usize,
    /// Handshakes in progress at once, from all addresses.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_pending: usize,
    /// Handshakes in progress at once from one address.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_pending_per_address: usize,
    /// Largest message accepted, in bytes (suffixes K, M allowed; at most 64M).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE.to_string())]
    pub max_message: String,
    /// Close an authenticated connection silent for this many seconds.
    #[arg(long, value_name = "S", default_value_t = 60.0)]
    pub idle_timeout: f64,
    /// A client must finish authenticating within this many seconds.
    #[arg(long, value_name = "S", default_value_t = 3.0)]
    pub auth_timeout: f64,
    /// Serve at SCHED_FIFO priority (root or CAP_SYS_NICE), so other processes do not delay replies.
    #[arg(long)]
    pub realtime: bool,
    /// Test only: spin this many microseconds on the calibrated clock before each reply.
    #[arg(long, value_name = "X", default_value_t = 0, hide = true)]
    pub test_delay_us: u64,
}

/// Seconds as a timeout: positive, at most a day.
fn seconds(what: &str, s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero() && *d <= MAX_TIMEOUT)
        .ok_or_else(|| {
            anyhow!(
                "{what} {s}: must be a number of seconds above 0 and at most {}",
                MAX_TIMEOUT.as_secs()
            )
        })
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let max_message = yamba_core::machine::parse_size(&args.max_message)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n <= MAX_MESSAGE_CEILING)
        .ok_or_else(|| {
            anyhow!(
                "--max-message {}: not a size of at most {} MiB",
                args.max_message,
                MAX_MESSAGE_CEILING >> 20
            )
        })?;
    let idle_timeout = seconds("--idle-timeout", args.idle_timeout)?;
    let auth_timeout = seconds("--auth-timeout", args.auth_timeout)?;
    // The token: chosen (then strong enough), or made here.
    let missing_file = args.token_file.as_ref().filter(|f| !f.exists()).cloned();
    let chosen = match &missing_file {
        Some(_) => None,
        None => token::from_options(args.token.as_deref(), args.token_file.as_deref())
            .map_err(|e| anyhow!(e))?,
    };
    let (token, announce) = match chosen {
        Some((t, source)) => {
            check_token_strength(&t).map_err(|e| anyhow!("{}: {e}", describe(&source)))?;
            if let Some(w) = token::command_line_warning(&source) {
                eprintln!("yamba serve: warning: {w}");
            }
            (t, None)
        }
        None => {
            let t = random_token()?;
            match &missing_file {
                Some(f) => {
                    token::create_file(f, &t).map_err(|e| anyhow!(e))?;
                    (
                        t,
                        Some(format!("token written to {} (mode 0600)", f.display())),
                    )
                }
                None => (t.clone(), Some(format!("token: {t}"))),
            }
        }
    };
    if args.max_pending == 0 || args.max_pending_per_address == 0 || args.max_connections == 0 {
        bail!("--max-connections, --max-pending and --max-pending-per-address must be at least 1");
    }
    raise_fd_limit();
    let agent = Agent::bind(ServerConfig {
        listen: args.listen.clone(),
        root: args.root.clone(),
        token,
        max_connections: args.max_connections,
        max_pending: args.max_pending,
        max_pending_per_address: args.max_pending_per_address,
        max_message,
        idle_timeout,
        auth_timeout,
        test_delay_us: args.test_delay_us,
        realtime: args.realtime,
        log_stderr: true,
    })
    .map_err(|e| anyhow!(e))?;
    let addr = agent.local_addr()?;
    let cfg = agent.config().clone();
    let mut out = std::io::stdout().lock();
    writeln!(out, "yamba serve: listening on {addr}")?;
    if let Some(line) = announce {
        writeln!(out, "{line}")?;
    }
    match &args.root {
        Some(r) => writeln!(
            out,
            "serving regular files under {} (read only)",
            r.display()
        )?,
        None => writeln!(out, "serving no files (no --root)")?,
    }
    writeln!(
        out,
        "limits: {} connections, {max_message}-byte messages, {} s idle; handshakes: {} s, {} at once, {} per address",
        cfg.max_connections,
        args.idle_timeout,
        args.auth_timeout,
        cfg.max_pending,
        cfg.max_pending_per_address
    )?;
    if args.test_delay_us > 0 {
        writeln!(
            out,
            "test delay: {} µs before each reply",
            args.test_delay_us
        )?;
    }
    out.flush()?;
    drop(out);
    if !addr.ip().is_loopback() {
        eprintln!("yamba serve: listening beyond loopback: anyone who can reach {addr} and knows the token can use this agent");
    }
    agent.serve();
    Ok(0)
}

fn describe(source: &token::Source) -> String {
    match source {
        token::Source::Flag => "--token".into(),
        token::Source::Env => TOKEN_ENV.into(),
        token::Source::File(f) => format!("--token-file {}", f.display()),
    }
}
