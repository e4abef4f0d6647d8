//! `yamba __bench ID MODE SCRATCH` (hidden): runs one benchmark in this
//! fresh process for a parent `yamba run`, which hands over its session on
//! standard input and reads the results, framed, from standard output.

use std::io::{Read, Write};
use yamba_core::bench::SessionState;
use yamba_core::{Mode, Session};

#[derive(clap::Args)]
pub struct Args {
    id: String,
    mode: String,
    scratch: std::path::PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;
    let state: SessionState = serde_json::from_slice(&input)
        .map_err(|e| anyhow::anyhow!("__bench: unreadable session on stdin: {e}"))?;
    let session = Session::from_state(state);
    let mode = match args.mode.as_str() {
        "hot" => Mode::Hot,
        "cold" => Mode::Cold,
        m => anyhow::bail!("__bench: unknown mode '{m}'"),
    };
    let bench = yamba_suite::all()
        .into_iter()
        .find(|b| b.id == args.id)
        .ok_or_else(|| anyhow::anyhow!("__bench: unknown benchmark '{}'", args.id))?;
    // The results go to the parent through the original stdout; anything a
    // benchmark prints goes to stderr instead, so it cannot corrupt them.
    // SAFETY: duplicating standard descriptors of this process.
    let results_fd = unsafe {
        let fd = libc::dup(1);
        libc::dup2(2, 1);
        fd
    };
    let results = std::panic::catch_unwind(|| {
        yamba_core::runner::run_here(&session, bench, mode, &args.scratch)
    });
    let Ok(results) = results else {
        return Ok(101);
    };
    // SAFETY: results_fd is the duplicate made above, owned here.
    let mut out = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(results_fd) };
    out.write_all(&yamba_core::isolate::frame(&results))?;
    Ok(0)
}
