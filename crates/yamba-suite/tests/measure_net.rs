//! A delay the agent adds on purpose shows up in the measured round trip,
//! against an in-process agent on loopback. A measurement check
//! (docs/testing.md): it decides on the median of independent runs.

mod support;

use yamba_core::affinity::{default_cpu, other_cpu};
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Status};
use yamba_suite::net::rtt;
use yamba_suite::remote::{Agent, AgentHandle, ServerConfig};
use yamba_testkit::{alone, check, Accept};

const TOKEN: &str = "net-test-token";

fn agent(delay_us: u64) -> AgentHandle {
    Agent::bind(ServerConfig {
        listen: "127.0.0.1:0".into(),
        token: TOKEN.into(),
        test_delay_us: delay_us,
        // A busy machine would otherwise delay a spinning agent's wake-ups
        // more than an idle one's (it has used up its share of the CPU).
        realtime: true,
        log_stderr: false,
        ..ServerConfig::default()
    })
    .unwrap()
    // On the CPU the benchmark is not pinned to, as a peer would be.
    .spawn_on(other_cpu(default_cpu()))
    .unwrap()
}

/// The round trip's median against agent `a`, or why it was not ok.
fn rtt_ns(a: &AgentHandle, bench: &'static Benchmark) -> Result<f64, String> {
    let config = RunConfig {
        remote: Some(a.addr().to_string()),
        remote_token: Some(TOKEN.into()),
        realtime: true,
        ..RunConfig::quick()
    };
    let rs: Vec<BenchResult> = support::run_config(config, bench, Mode::Hot);
    match (rs[0].status, rs[0].median()) {
        (Status::Ok, Some(m)) if rs[0].evidence.iter().all(|e| e.ok) => Ok(m),
        _ => Err(format!(
            "{}: {:?} {:?}",
            rs[0].id, rs[0].status, rs[0].reason
        )),
    }
}

/// Ground truth: an agent that spins 1000 µs before each reply raises the
/// measured TCP round trip by 1000 µs. Rule: the median added time / 1000
/// µs is 1 within 5%.
#[test]
fn agent_delay_raises_round_trip_by_that_delay() {
    let _alone = alone();
    const X_US: f64 = 1000.0;
    let plain = agent(0);
    let slow = agent(X_US as u64);
    check!("added round trip / 1000 µs", Accept::within(1.0, 0.05))
        .attempts(5, 15)
        .run(|| {
            let base = rtt_ns(&plain, &rtt::TCP_RTT)?;
            let delayed = rtt_ns(&slow, &rtt::TCP_RTT)?;
            let added_us = (delayed - base) / 1000.0;
            println!("base {:.1} µs, added {added_us:.1} µs", base / 1000.0);
            Ok::<f64, String>(added_us / X_US)
        });
}
