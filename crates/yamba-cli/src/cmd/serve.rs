//! `yamba serve`: the remote-measurement agent the `net` and `fs.remote`
//! benchmarks run against (`yamba run net fs.remote --remote HOST:PORT --token T`).
//! The protocol and its limits are documented in `yamba_suite::remote`.

use anyhow::{anyhow, bail};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use yamba_suite::remote::protocol::{random_token, DEFAULT_MAX_MESSAGE, DEFAULT_PORT};
use yamba_suite::remote::{Agent, ServerConfig};

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (loopback unless told otherwise).
    #[arg(long, value_name = "ADDR:PORT", default_value_t = format!("127.0.0.1:{DEFAULT_PORT}"))]
    pub listen: String,
    /// Directory whose regular files clients may read (nothing else; never writes). Default: no files.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Shared secret every connection must present (default: a random one, printed).
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    /// Connections served at once; more are refused.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_connections: usize,
    /// Largest message accepted, in bytes (suffixes K, M allowed).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE.to_string())]
    pub max_message: String,
    /// Close a connection silent for this many seconds.
    #[arg(long, value_name = "S", default_value_t = 60.0)]
    pub idle_timeout: f64,
    /// Serve at SCHED_FIFO priority (root or CAP_SYS_NICE), so other processes do not delay replies.
    #[arg(long)]
    pub realtime: bool,
    /// Test only: spin this many microseconds on the calibrated clock before each reply.
    #[arg(long, value_name = "X", default_value_t = 0, hide = true)]
    pub test_delay_us: u64,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let max_message = yamba_core::machine::parse_size(&args.max_message)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| anyhow!("--max-message {}: not a size under 4 GiB", args.max_message))?;
    let idle_timeout = Duration::try_from_secs_f64(args.idle_timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            anyhow!(
                "--idle-timeout {}: must be a positive number of seconds",
                args.idle_timeout
            )
        })?;
    let (token, generated) = match args.token {
        Some(t) if t.is_empty() => bail!("--token: must not be empty"),
        Some(t) => (t, false),
        None => (random_token()?, true),
    };
    let agent = Agent::bind(ServerConfig {
        listen: args.listen.clone(),
        root: args.root.clone(),
        token: token.clone(),
        max_connections: args.max_connections,
        max_message,
        idle_timeout,
        test_delay_us: args.test_delay_us,
        realtime: args.realtime,
        log_stderr: true,
    })
    .map_err(|e| anyhow!(e))?;
    let addr = agent.local_addr()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "yamba serve: listening on {addr}")?;
    if generated {
        writeln!(out, "token: {token}")?;
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
        "limits: {} connections, {max_message}-byte messages, {} s idle",
        args.max_connections, args.idle_timeout
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
