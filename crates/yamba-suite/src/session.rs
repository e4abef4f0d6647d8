//! The suite's part of a run session (`yamba_core::run_session`): the
//! noise check before anything is measured, which uses the `sched` area's
//! interruption recorder.

use std::time::Duration;
use yamba_core::run_session::{RunSession, SessionError, Start};
use yamba_core::Session;

/// Starts a run session with the noise check in its notes.
pub fn start(start: Start) -> Result<RunSession, SessionError> {
    RunSession::start(Start {
        noise_probe: Some(noise_note),
        ..start
    })
}

/// A short pass of the interruption recorder on the benchmarks' CPU
/// before anything is measured: says so when the machine is too noisy to
/// trust small numbers.
pub fn noise_note(session: &Session) -> Option<String> {
    let clock = session.clock.clone();
    let cpu = session.cpu;
    let duration = Duration::from_millis(if session.config.quick { 100 } else { 300 });
    std::thread::spawn(move || {
        if let Some(c) = cpu {
            let _ = yamba_core::affinity::pin_current_thread(c);
        }
        crate::sched::interruptions::noise_report(&clock, duration)
    })
    .join()
    .ok()?
    .note()
}
