//! The local peer of the `net` benchmarks and of `fs.remote`: a thread of
//! the benchmark's own process, pinned to another CPU than the benchmark
//! when there is one (so the two ends run at once, as two hosts would), to
//! the same CPU otherwise.

use yamba_core::affinity::{other_cpu, pin_current_thread};
use yamba_core::{Ctx, Kind, Setting};

/// `--set net.peer_cpu`: where a local peer thread runs (read by every
/// benchmark that starts one, `fs.remote` too).
pub const PEER_CPU: Setting = Setting {
    key: "net.peer_cpu",
    kind: Kind::Choice(&["other", "same"]),
    default: "other",
    help: "CPU of the local peer: another than the benchmark's, or the same",
    aliases: &[],
};

/// The CPU peer threads are pinned to, if pinning is on. By default
/// another CPU than the benchmark's (`affinity::other_cpu`), so both ends
/// run at once as on two hosts; `--set net.peer_cpu=same` puts the peer on
/// the benchmark's CPU (no cross-CPU wake-ups).
pub fn cpu(ctx: &Ctx) -> Result<Option<usize>, String> {
    let same = ctx.choice(PEER_CPU.key)? == Some("same");
    let Some(own) = ctx.cpu() else {
        return Ok(None);
    };
    if same {
        return Ok(Some(own));
    }
    Ok(Some(other_cpu(own).unwrap_or(own)))
}

/// Says where the peer runs, for the result's params.
pub fn placement(ctx: &Ctx) -> String {
    let asked_same = ctx.choice(PEER_CPU.key).ok().flatten() == Some("same");
    match (ctx.cpu(), cpu(ctx).ok().flatten()) {
        (Some(b), Some(p)) if b != p => format!("thread pinned to CPU {p} (benchmark on CPU {b})"),
        (Some(b), _) if asked_same => {
            format!("thread pinned to CPU {b}, the benchmark's own (net.peer_cpu=same)")
        }
        (Some(b), _) => {
            format!("thread pinned to CPU {b}, the benchmark's own (no other CPU allowed)")
        }
        _ => "thread, not pinned (--no-pin)".into(),
    }
}

/// Starts `f` in a thread pinned to `cpu` (when given).
pub fn spawn<T: Send + 'static>(
    cpu: Option<usize>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<std::thread::JoinHandle<T>, String> {
    std::thread::Builder::new()
        .name("yamba-peer".into())
        .spawn(move || {
            if let Some(c) = cpu {
                let _ = pin_current_thread(c);
            }
            f()
        })
        .map_err(|e| format!("cannot start the peer thread: {e}"))
}
