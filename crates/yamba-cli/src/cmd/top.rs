//! `yamba top`: the seed's CPU-states line at an interval, for a quick look
//! at whether the machine is busy (and whether the time is CPU or waiting).

use anyhow::Context;
use std::io::Write;
use std::time::Duration;
use yamba_core::cpustates::CpuTimes;

#[derive(clap::Args)]
pub struct Args {
    /// Seconds between lines (each line covers that interval).
    #[arg(long, short = 'i', default_value_t = 1.0, value_name = "S")]
    interval: f64,
    /// Lines to print; until interrupted when not given.
    #[arg(long, short = 'n', value_name = "N")]
    count: Option<u64>,
}

/// Shortest interval: /proc/stat counts in 10 ms ticks.
const MIN_INTERVAL: Duration = Duration::from_millis(10);
/// Longest interval: a day.
const MAX_INTERVAL: Duration = Duration::from_secs(86_400);

pub fn run(args: Args) -> anyhow::Result<i32> {
    let interval = Duration::try_from_secs_f64(args.interval)
        .ok()
        .filter(|d| (MIN_INTERVAL..=MAX_INTERVAL).contains(d))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--interval must be between {} and {} s (got {})",
                MIN_INTERVAL.as_secs_f64(),
                MAX_INTERVAL.as_secs(),
                args.interval
            )
        })?;
    if args.count == Some(0) {
        anyhow::bail!("--count must be at least 1");
    }
    let mut before = CpuTimes::read().context("cannot read /proc/stat")?;
    let mut printed = 0u64;
    let mut out = std::io::stdout();
    while !matches!(args.count, Some(c) if printed >= c) {
        std::thread::sleep(interval);
        let after = CpuTimes::read().context("cannot read /proc/stat")?;
        // A broken pipe (`yamba top | head -3`) ends quietly.
        if writeln!(out, "{}", before.states_until(&after).line()).is_err()
            || crate::out::stdout_gone()
        {
            break;
        }
        let _ = out.flush();
        before = after;
        printed += 1;
    }
    Ok(0)
}
